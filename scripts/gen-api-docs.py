#!/usr/bin/env python3
"""Write docs/api.md from the OpenAPI document the server serves at /openapi.json.

    python scripts/gen-api-docs.py           # rewrite docs/api.md
    python scripts/gen-api-docs.py --check   # exit 1 if docs/api.md is not what the code gives

The document is built from the app's router (server/web/openapi.py), with no database and no
server started, so the page lists exactly the operations the server answers. tests/test_docs.py
fails when the committed file is stale.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "docs" / "api.md"

TAGS = {
    "api": "API",
    "curation": "Curation",
    "pages": "Pages (HTML for people, markdown for an AI)",
    "operations": "Operations",
    "assets": "Assets",
}

PREAMBLE = """\
The server publishes this contract as OpenAPI 3.1 at `/openapi.json` and as a page at
`/api/reference`. This file is generated from the same document by `scripts/gen-api-docs.py`:
do not edit it by hand.

- **Credentials.** `Authorization: Bearer <token>`: a hub's owner token (`mwo_...`, returned
  once by `POST /api/hubs`) or a doc's edit token (`mwe_...`, returned once when a doc is
  created); the server keeps only their sha256 hashes. `X-Edit-Token` carries an edit token beside an owner token (moving a
  doc into a hub); `X-Doc-Password` and `X-Doc-Access` (or `?access=`) open a protected doc.
  What each credential may do with each operation: [credentials.md](credentials.md). Every
  answer to a request that carries one is `Cache-Control: private, no-store`.
- **Errors** are JSON `{"error": {"code", "message"}}`; clients branch on `code`, never on the
  message. A field an endpoint does not know is refused by name (`unknown_field`, with
  `unknown` and `accepted` lists). Pages answer an error as a page (HTML, or markdown for an AI).
- **Every operation** can answer 503 while the database is unreachable (with `Retry-After`);
  one that checks a credential can answer 429 once a client spent its budget of refused
  credentials; every one that may change something answers 403 `csrf_failed` for a browser
  request that carries the session cookie (`mw_session`) but no `X-CSRF-Token` (and no token of
  its own, which then authorizes alone). A request whose `Host` is not one the server trusts
  gets 400 `untrusted_host` before any operation.
- **Content negotiation.** Pages are HTML for a browser and markdown for `Accept: text/markdown`,
  a `.md` suffix or `/raw/...`.
"""


def load_spec() -> dict[str, Any]:
    """The document /openapi.json serves, built from the app's routes without starting it."""
    from memorywiki.server.app import create_app
    from memorywiki.server.web.openapi import build_spec

    return build_spec(create_app().routes)


def type_of(schema: dict[str, Any] | None) -> str:
    """A short name for a schema: `string`, `integer or null`, `array of string`, `one of a, b`."""
    if not schema:
        return "any"
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "enum" in schema:
        return "one of " + ", ".join(
            f"`{json.dumps(value) if not isinstance(value, str) else value}`" for value in schema["enum"]
        )
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        kind = " or ".join(kind)
    if kind == "array":
        return f"array of {type_of(schema.get('items'))}"
    return kind


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def field_rows(schema: dict[str, Any] | None, prefix: str = "", depth: int = 0) -> list[tuple[str, str, bool, str]]:
    """(name, type, required, description) of an object schema's properties, and of the objects
    inside its arrays and objects one level down (`results[].score`)."""
    if not schema or "properties" not in schema:
        return []
    required = set(schema.get("required", ()))
    rows = []
    for name, field in schema["properties"].items():
        rows.append((prefix + name, type_of(field), name in required, field.get("description", "")))
        if depth < 1:
            inner = field.get("items") if field.get("type") == "array" else field
            suffix = "[]." if field.get("type") == "array" else "."
            rows += field_rows(inner, f"{prefix}{name}{suffix}", depth + 1)
    return rows


def _fields_table(rows: list[tuple[str, str, bool, str]], with_required: bool) -> list[str]:
    if with_required:
        out = ["| field | type | required | description |", "|---|---|---|---|"]
        out += [f"| `{n}` | {_cell(t)} | {'yes' if r else ''} | {_cell(d)} |" for n, t, r, d in rows]
    else:
        out = ["| field | type | description |", "|---|---|---|"]
        out += [f"| `{n}` | {_cell(t)} | {_cell(d)} |" for n, t, _, d in rows]
    return out


def _anchor(method: str, path: str) -> str:
    return "".join(c for c in f"{method} {path}".lower() if c.isalnum() or c in " -_").replace(" ", "-")


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    ops = [(method.upper(), path, op) for path, methods in spec["paths"].items() for method, op in methods.items()]
    order = list(TAGS)
    return sorted(
        ops, key=lambda o: (order.index(o[2]["tags"][0]) if o[2]["tags"][0] in order else len(order), o[1], o[0])
    )


def _operation(method: str, path: str, op: dict[str, Any]) -> list[str]:
    out = [f"### {method} {path}", "", _cell(op["summary"]) + ".", ""]
    if op.get("description"):
        out += [op["description"].strip(), ""]
    if "security" in op:
        out += ["Credential: `Authorization: Bearer <token>` (see above).", ""]
    params = op.get("parameters", [])
    if params:
        out += ["| parameter | in | type | description |", "|---|---|---|---|"]
        out += [
            f"| `{p['name']}` | {p['in']} | {_cell(type_of(p.get('schema')))} | {_cell(p.get('description', ''))} |"
            for p in params
        ]
        out.append("")
    for media_type, content in op.get("requestBody", {}).get("content", {}).items():
        rows = field_rows(content.get("schema"))
        out += [f"Request body (`{media_type}`):", ""]
        out += _fields_table(rows, with_required=True) if rows else ["any"]
        out.append("")
    statuses = []
    for status, response in op["responses"].items():
        if status.startswith(("4", "5")):
            continue
        media = ", ".join(f"`{m}`" for m in response.get("content", {})) or "no body"
        statuses.append(f"- **{status}** {_cell(response['description'])} ({media})")
    errors = [status for status in op["responses"] if status.startswith(("4", "5"))]
    out += statuses + ([f"- errors: {', '.join(errors)}"] if errors else []) + [""]
    for status, response in op["responses"].items():
        schema = response.get("content", {}).get("application/json", {}).get("schema")
        rows = field_rows(schema) if not status.startswith(("4", "5")) else []
        if rows:
            out += [f"{status} body:", "", *_fields_table(rows, with_required=False), ""]
    return out


def _by_status(code: dict[str, Any]) -> tuple[int, str]:
    return code["status"], code["code"]


def render(spec: dict[str, Any]) -> str:
    ops = _operations(spec)
    out = [f"# {spec['info']['title']} HTTP API", "", spec["info"]["description"], "", PREAMBLE]
    errors: dict[str, str] = {}
    for _, _, op in ops:
        for status, response in op["responses"].items():
            if status.startswith(("4", "5")):
                errors.setdefault(status, response["description"])
    out += ["| error status | meaning |", "|---|---|"]
    out += [f"| {status} | {_cell(text)} |" for status, text in sorted(errors.items())]
    out += [
        "",
        "## Error codes",
        "",
        "Every `code` an error can carry, with its status (clients branch on the code).",
        "",
    ]
    out += ["| code | status | meaning |", "|---|---|---|"]
    codes = spec["components"]["schemas"]["Error"]["x-error-codes"]
    out += [f"| `{c['code']}` | {c['status']} | {_cell(c['meaning'])} |" for c in sorted(codes, key=_by_status)]
    out += ["", "## Contents", ""]
    tag = None
    for method, path, op in ops:
        if op["tags"][0] != tag:
            tag = op["tags"][0]
            out += ["", f"**{TAGS.get(tag, tag)}**", ""]
        out.append(f"- [`{method} {path}`](#{_anchor(method, path)}): {_cell(op['summary'])}")
    tag = None
    for method, path, op in ops:
        if op["tags"][0] != tag:
            tag = op["tags"][0]
            out += ["", f"## {TAGS.get(tag, tag)}", ""]
        out += _operation(method, path, op)
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/api.md is stale; write nothing")
    args = parser.parse_args(argv)
    text = render(load_spec())
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET.relative_to(ROOT)} is stale: run python scripts/gen-api-docs.py", file=sys.stderr)
            return 1
        return 0
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
