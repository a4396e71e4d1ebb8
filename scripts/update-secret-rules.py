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

Kingfisher reports, and checks the entropy of, a rule's first capture group. In a few of its
rules that group is an identifier beside the secret (a Discord webhook's URL before its token,
an Azure account's name before its key, a URL's user before the password), so the secret was
never reported and the identifier's low entropy dropped the finding: SECRET_GROUPS names, for
those rules, the groups that hold the secret (read from each pattern); the others are made
non-capturing.

standalone.yml, from the installed kingfisher-secret-scanner: copies of bundled rules run
without what the catalog adds around them (STANDALONE): a companion it wants beside them (an
Azure AD client secret only with its tenant and client ids near it, an AWS access key id only
with its secret key), an allow-list of published values (Google API keys that apps ship) or a
test-mode exclusion (Stripe's `sk_test_`). A redactor wants a credential gone whether or not
its companions were pasted too, and a published or test key is still a key. Then CUSTOM: two
rules of our own, for credentials that no provider format marks, only where they stand in a
URL (RFC 3986's userinfo password, CWE-598's secret in a query string).

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
# bundled rule -> what changes in its copy (nothing: the same pattern, without its companions
# or filters). Stripe: keys are up to 255 characters (https://docs.stripe.com/keys, "API key
# formats"), the bundled pattern stops at 99 after the prefix.
STANDALONE: dict[str, dict[str, str]] = {  # "pattern": a new one; "ignore_if_contains": a filter kept
    "betterleaks.azure-ad-client-secret": {},
    "betterleaks.aws-access-token": {"ignore_if_contains": "EXAMPLE"},  # AWS's documented example ids
    "betterleaks.gcp-api-key": {},
    "betterleaks.stripe-access-token": {
        "pattern": r"\b((?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,247})(?:\\?['\"\x60]|[\s;]|\\[nr]|$)"
    },
}
# Kingfisher rule -> the capture groups (1-based) that hold the secret; every other group of
# its pattern becomes non-capturing.
SECRET_GROUPS: dict[str, tuple[int, ...]] = {
    "kingfisher.azure.1": (2,),  # AccountName=(name); AccountKey=(key)
    "kingfisher.azure.2": (3,),  # (endpoint);Id=(id);Secret=(secret)
    "kingfisher.blynk.8": (2,),  # (client id) : (client secret)
    "kingfisher.blynk.9": (2,),
    "kingfisher.credentials.1": (2,),  # https://(user):(password)@(host)(path)
    "kingfisher.discord.1": (2,),  # (https://discord.com/api/webhooks/id)/(token)
    "kingfisher.google.6": (2, 3),  # (client id) ... (GOCSPX secret) | (legacy secret)
    "kingfisher.netrc.1": (3,),  # (machine host) login (user) password (password)
    "kingfisher.odbc.1": (2,),  # Uid=(user); Pwd=(password)
    "kingfisher.psexec.1": (2,),  # -u (user) -p (password)
}
# Our own rules: a credential in a URL, whatever its format.
CUSTOM: list[dict[str, object]] = [
    {
        # scheme://user:password@host (RFC 3986, 3.2.1): the password, unless it is a template;
        # up to the authority's last `@` (a password with an `@` left unescaped)
        "name": "Password in a URL's userinfo",
        "id": "custom.url-password",
        "pattern": r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^:/@\s'\"\x60<>]{0,128}:([^/?#\s'\"\x60<>]{1,256})@(?:\[[0-9a-f:.%]+\]|[a-z0-9])",
        "min_entropy": 0.0,
        "confidence": "medium",
        "pattern_requirements": {"ignore_if_contains": ["${", "{{", "****", "..."]},
    },
    {
        # ?token=... (CWE-598, "Use of GET Request Method With Sensitive Query Strings")
        "name": "Secret in a URL's query string",
        "id": "custom.url-query-secret",
        "pattern": (
            r"(?i)[?&](?:access[_-]?token|auth[_-]?token|id[_-]?token|refresh[_-]?token|private[_-]?token|"
            r"api[_-]?key|apikey|key|token|secret|client[_-]?secret|password|passwd|pwd|sig|signature)"
            r"=([^&#\s'\"\x60<>]{12,512})"
        ),
        "min_entropy": 3.0,
        "confidence": "medium",
        "pattern_requirements": {"ignore_if_contains": ["${", "{{"]},
    },
]
KEEP = ("name", "id", "pattern", "min_entropy", "confidence", "visible", "depends_on_rule", "pattern_requirements")
LEFT_OUT = {"generic.yml"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkout", type=Path, help="a Kingfisher checkout (its data/rules/ is read)")
    parser.add_argument("--commit", default="", help="the checkout's commit, where it is no git work tree")
    args = parser.parse_args(argv)
    folder = args.checkout / "data" / "rules"
    if not folder.is_dir():
        parser.error(f"no data/rules/ in {args.checkout}")
    rules = []
    for path in sorted(folder.glob("*.yml")):
        if path.name in LEFT_OUT:
            continue
        for rule in yaml.safe_load(path.read_text(encoding="utf-8")).get("rules", []):
            kept = {k: rule[k] for k in KEEP if k in rule}
            if rule["id"] in SECRET_GROUPS:
                kept["pattern"] = only_groups(rule["pattern"], SECRET_GROUPS[rule["id"]])
            rules.append(kept)
    commit = (
        subprocess.run(
            ["git", "-C", str(args.checkout), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        or args.commit
    )
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
    for rule_id, changes in STANDALONE.items():
        detail = bundled.detail(rule_id)
        rules.append(
            {
                "name": f"{detail['name']} (on its own)",
                "id": "custom." + rule_id.split(".", 1)[1],
                "pattern": changes.get("pattern", detail["pattern"]),
                "min_entropy": 3.0,
                "confidence": "medium",
            }
            | (
                {"pattern_requirements": {"ignore_if_contains": [changes["ignore_if_contains"]]}}
                if "ignore_if_contains" in changes
                else {}
            )
        )
    rules += CUSTOM
    head = (
        f"# Rules of kingfisher-secret-scanner {version('kingfisher-secret-scanner')}'s bundled catalog, run without the\n"
        "# companions, allow-lists and exclusions it reports them with, and two rules of our own for a credential\n"
        "# in a URL. Written by scripts/update-secret-rules.py: do not edit by hand.\n"
    )
    STANDALONE_OUT.write_text(head + yaml.safe_dump({"rules": rules}, sort_keys=False, width=1000), encoding="utf-8")
    print(f"{len(rules)} rules -> {STANDALONE_OUT.relative_to(ROOT)}", file=sys.stderr)


def only_groups(pattern: str, keep: tuple[int, ...]) -> str:
    """The pattern with every capture group but those numbered in `keep` made non-capturing
    (escapes and character classes are skipped; named groups lose their name)."""
    out: list[str] = []
    i = number = 0
    in_class = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            out.append(c)
            i += 1
            if pattern[i : i + 1] == "^":
                out.append("^")
                i += 1
            if pattern[i : i + 1] == "]":  # a literal ] first in a class
                out.append("]")
                i += 1
            continue
        elif c == "(":
            rest = pattern[i + 1 :]
            named = rest.startswith(("?P<", "?<")) and not rest.startswith(("?<=", "?<!"))
            if named or not rest.startswith("?"):
                number += 1
                if number not in keep:
                    out.append("(?:")
                    i += 1 + (rest.index(">") + 1 if named else 0)
                    continue
        out.append(c)
        i += 1
    return "".join(out)


if __name__ == "__main__":
    raise SystemExit(main())
