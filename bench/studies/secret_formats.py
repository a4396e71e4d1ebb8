"""Build bench/data/secret-formats.jsonl: real secret formats from two detectors' own fixtures.

    python -m bench.studies.secret_formats --gitleaks DIR --kingfisher DIR

DIR is a checkout (or an unpacked snapshot) of each project; nothing of their code is kept,
only the example credentials their rule tests hold, one JSON object a line:
`{"source", "rule", "provider", "example", "secret", "pattern"}`, where `example` is the
fixture as published (the credential in its context, e.g. `client_secret=...`), `secret` the
part of it the source rule itself captures (what must not be stored) and `pattern` that rule's
regex (what a credential of that format looks like).

- gitleaks (MIT): the literal true positives of each rule's test in
  cmd/generate/config/rules/*.go (those built from random characters at test time are not
  literal and are left out), `secret` from the rule's regex and secretGroup in
  config/gitleaks.toml.
- Kingfisher (Apache-2.0): the `examples:` of each rule in data/rules/*.yml, `secret` from the
  rule's pattern; rules the catalog marks `visible: false` (ids, hosts: components of
  another rule) are left out, they are no secrets.

Kingfisher's own rules are not what `kingfisher-secret-scanner` ships (its catalog is
Betterleaks' and Veles'), so its examples test the redactor from outside; gitleaks' are
Betterleaks' ancestors, and Betterleaks allow-lists some of them as known examples, which is
why bench/suite/secrets.py also plants each one with fresh characters.
"""

from __future__ import annotations

import argparse
import json
import re
import tomllib
from pathlib import Path

import regex
import yaml

from ..common import ROOT, log

OUT = ROOT / "bench" / "data" / "secret-formats.jsonl"
GO_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"|`([^`]*)`')


def _go_literal(match: re.Match[str]) -> str:
    if match.group(2) is not None:
        return match.group(2)
    return bytes(match.group(1), "utf-8").decode("unicode_escape")


def gitleaks(root: Path) -> list[dict[str, str]]:
    rules = {r["id"]: r for r in tomllib.loads((root / "config" / "gitleaks.toml").read_text())["rules"]}
    out = []
    for path in sorted((root / "cmd" / "generate" / "config" / "rules").glob("*.go")):
        for function in re.split(r"\nfunc ", path.read_text())[1:]:
            rule_id = re.search(r'RuleID:\s*"([^"]+)"', function)
            if not rule_id or rule_id.group(1) not in rules or "tps" not in function:
                continue
            rule = rules[rule_id.group(1)]
            try:
                pattern = regex.compile(rule["regex"])
            except (KeyError, regex.error):  # a rule by path alone, or Go syntax Python cannot read
                continue
            start = function.index("tps")
            end = function.find("fps", start)
            block = re.sub(r"//[^\n]*", "", function[start : end if end > 0 else len(function)])
            for literal in map(_go_literal, GO_STRING.finditer(block)):
                found = pattern.search(literal) if len(literal) >= 8 else None
                if not found:
                    continue
                group = rule.get("secretGroup")
                secret = found.group(group) if group else next((g for g in found.groups() if g), found.group(0))
                if secret:
                    out.append(
                        {
                            "source": "gitleaks",
                            "rule": rule["id"],
                            "provider": path.stem,
                            "example": literal,
                            "secret": secret,
                            "pattern": rule["regex"],
                        }
                    )
    return out


def kingfisher(root: Path) -> list[dict[str, str]]:
    out = []
    for path in sorted((root / "data" / "rules").glob("*.yml")):
        for rule in yaml.safe_load(path.read_text()).get("rules", []):
            if rule.get("visible") is False:
                continue
            pattern = regex.compile(rule["pattern"])
            for example in rule.get("examples") or []:
                found = pattern.search(example)
                if not found:
                    continue
                groups = [g for g in found.groups() if g]
                secret = max(groups, key=len) if groups else found.group(0)
                out.append(
                    {
                        "source": "kingfisher",
                        "rule": rule["id"],
                        "provider": path.stem,
                        "example": example,
                        "secret": secret,
                        "pattern": rule["pattern"],
                    }
                )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.studies.secret_formats", description=__doc__)
    parser.add_argument("--gitleaks", type=Path, required=True, help="a gitleaks checkout")
    parser.add_argument("--kingfisher", type=Path, required=True, help="a Kingfisher checkout")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    rows, seen, patterns = [], set(), set()
    for row in gitleaks(args.gitleaks) + kingfisher(args.kingfisher):
        key = (row["rule"], row["example"])
        if key not in seen:
            seen.add(key)
            if row["rule"] in patterns:  # a rule's pattern is written once, on its first example
                del row["pattern"]
            patterns.add(row["rule"])
            rows.append(row)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    log(f"{len(rows)} examples of {len({r['rule'] for r in rows})} rules -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
