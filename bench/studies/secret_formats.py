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
  rule's pattern: its capture group, or for a rule of several, the group that holds the secret
  (scripts/update-secret-rules.py, SECRET_GROUPS: not a webhook's URL or an account's name
  beside it), and in a URL with a password, the password (not the host); rules the catalog
  marks `visible: false` (ids, hosts: components of another rule) are left out, they are no
  secrets.

    python -m bench.studies.secret_formats --refresh-secrets

recomputes `secret` of the Kingfisher rows in place from their stored example and pattern
(how the file was corrected when this reading changed).

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


def _secret_groups() -> dict[str, tuple[int, ...]]:
    """SECRET_GROUPS of scripts/update-secret-rules.py: the groups of Kingfisher's multi-group
    rules that hold the secret."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("update_secret_rules", ROOT / "scripts" / "update-secret-rules.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.SECRET_GROUPS)


# the password of a URL's userinfo, up to the authority's last `@`
USERINFO = regex.compile(r"[a-z][a-z0-9+.-]*://[^:/@\s]*:([^/?#\s]+)@", regex.IGNORECASE)


def kingfisher_secret(rule_id: str, found: regex.Match[str], groups: dict[str, tuple[int, ...]]) -> str:
    """What a Kingfisher rule's match holds that must not be stored."""
    if rule_id in groups:
        named = [found.group(i) for i in groups[rule_id] if found.group(i)]
        if named:
            return str(named[0])
    password = USERINFO.search(found.group(0))
    if password:
        return str(password.group(1))
    captured = [g for g in found.groups() if g]
    return str(max(captured, key=len) if captured else found.group(0))


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
    groups = _secret_groups()
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
                secret = kingfisher_secret(rule["id"], found, groups)
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


def refresh_secrets(path: Path) -> int:
    """`secret` of each Kingfisher row recomputed from its example and its rule's pattern."""
    groups = _secret_groups()
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    patterns = {r["rule"]: r["pattern"] for r in rows if "pattern" in r}
    changed = 0
    for row in rows:
        if row["source"] != "kingfisher":
            continue
        found = regex.compile(patterns[row["rule"]]).search(row["example"])
        secret = kingfisher_secret(row["rule"], found, groups) if found else row["secret"]
        changed += secret != row["secret"]
        row["secret"] = secret
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    log(f"{changed} secrets changed -> {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.studies.secret_formats", description=__doc__)
    parser.add_argument("--gitleaks", type=Path, help="a gitleaks checkout")
    parser.add_argument("--kingfisher", type=Path, help="a Kingfisher checkout")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--refresh-secrets", action="store_true", help="recompute the Kingfisher rows' secrets")
    args = parser.parse_args(argv)
    if args.refresh_secrets:
        return refresh_secrets(args.out)
    if not args.gitleaks or not args.kingfisher:
        parser.error("--gitleaks and --kingfisher are needed to build the corpus")
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
