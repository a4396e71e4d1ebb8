#!/usr/bin/env python3
"""Write server/redaction/rules/: Kingfisher's own rules, and the bundled rules that stand alone.

    python scripts/update-secret-rules.py PATH/TO/kingfisher     # its data/rules/*.yml

kingfisher.yml, from a checkout of Kingfisher (MongoDB, Apache-2.0):
The detector's package (kingfisher-secret-scanner) ships Betterleaks' and Veles' rules; this
adds Kingfisher's own rule set, as data: each rule's id, name, pattern, entropy floor,
confidence, visibility and dependencies, without its examples, references and the provider
calls that validate or revoke a credential (never used here). Left out: generic.yml, the
keyword-and-entropy rules (`password = ...`) that cost most false redactions on code
(bench/results/secrets.md).

standalone.yml, from the installed kingfisher-secret-scanner: copies of bundled rules that the
catalog reports only beside a companion (an Azure AD client secret only with its tenant and
client ids near it), for the few whose format is distinctive enough to be a secret on its own
(STANDALONE). A redactor wants the secret gone whether or not its companions were pasted too.

Run it when Kingfisher's rules or the package move on, then `python -m bench secrets` to see
what changed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "server" / "redaction" / "rules" / "kingfisher.yml"
STANDALONE_OUT = OUT.with_name("standalone.yml")
# the bundled rules whose format marks a secret by itself (an Azure AD client secret's `8Q~`)
STANDALONE = ("betterleaks.azure-ad-client-secret",)
KEEP = ("name", "id", "pattern", "min_entropy", "confidence", "visible", "depends_on_rule", "pattern_requirements")
LEFT_OUT = {"generic.yml"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkout", type=Path, help="a Kingfisher checkout (its data/rules/ is read)")
    args = parser.parse_args(argv)
    folder = args.checkout / "data" / "rules"
    if not folder.is_dir():
        parser.error(f"no data/rules/ in {args.checkout}")
    rules = []
    for path in sorted(folder.glob("*.yml")):
        if path.name in LEFT_OUT:
            continue
        for rule in yaml.safe_load(path.read_text(encoding="utf-8")).get("rules", []):
            rules.append({k: rule[k] for k in KEEP if k in rule})
    commit = subprocess.run(
        ["git", "-C", str(args.checkout), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    head = (
        "# Kingfisher's secret rules (https://github.com/mongodb/kingfisher, data/rules/*.yml"
        + (f" at {commit}" if commit else "")
        + "),\n# Copyright MongoDB, Inc., under the Apache License 2.0 (LICENSE-kingfisher.txt beside this file).\n"
        "# Reduced to what detection needs by scripts/update-secret-rules.py: do not edit by hand.\n"
    )
    OUT.write_text(
        head + yaml.safe_dump({"rules": rules}, sort_keys=False, width=1000, allow_unicode=True), encoding="utf-8"
    )
    print(f"{len(rules)} rules -> {OUT.relative_to(ROOT)}", file=sys.stderr)
    write_standalone()
    return 0


def write_standalone() -> None:
    from importlib.metadata import version

    from kingfisher_sdk import Rules

    bundled = Rules(confidence="low")
    rules = []
    for rule_id in STANDALONE:
        detail = bundled.detail(rule_id)
        rules.append(
            {
                "name": f"{detail['name']} (on its own)",
                "id": "custom." + rule_id.split(".", 1)[1],
                "pattern": detail["pattern"],
                "min_entropy": 3.0,
                "confidence": "medium",
            }
        )
    head = (
        f"# Rules of kingfisher-secret-scanner {version('kingfisher-secret-scanner')}'s bundled catalog, run without the\n"
        "# companions it reports them beside. Written by scripts/update-secret-rules.py: do not edit by hand.\n"
    )
    STANDALONE_OUT.write_text(head + yaml.safe_dump({"rules": rules}, sort_keys=False, width=1000), encoding="utf-8")
    print(f"{len(rules)} rules -> {STANDALONE_OUT.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
