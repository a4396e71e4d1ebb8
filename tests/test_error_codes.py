"""Every error code the API can answer is declared once (server/errors.py CODES) with its status
and meaning, and docs/api.md lists them: a code raised anywhere without its entry, or with
another status than its entry's, fails here. Read from the source, so a code on a path no test
reaches counts as well."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from memorywiki.client import errors as client_errors
from memorywiki.server import errors
from memorywiki.server.errors import CODES
from memorywiki.server.web.errors import _HTTP_CODES

ROOT = Path(__file__).resolve().parents[1]

# the classes of server/errors.py that fix a status, by name
KINDS = {
    cls.__name__: cls.status_code
    for cls in vars(errors).values()
    if isinstance(cls, type) and issubclass(cls, errors.ApiError) and hasattr(cls, "status_code")
}

# (file, code, status) raised with another status than the code's entry: to be made one in the
# files that own them. The list only shrinks.
MISMATCHED = {
    ("server/services/versions.py", "unknown_version", 400),  # the diff page's unknown version
}


def raised(root: str) -> list[tuple[str, int, str, int | None]]:
    """(file, line, code, status) of every error made with a literal code under `root`: the
    kinds of server/errors.py, ApiError(status, code, ...), FormatError(code, ...), and the
    CSRF middleware's refusals (_refuse(..., status, code, ...)). status None: a FormatError."""
    found = []
    for path in sorted((ROOT / root).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            args = [a.value if isinstance(a, ast.Constant) else None for a in node.args]
            where = str(path.relative_to(ROOT))
            if name in KINDS and isinstance(args[0], str):
                found.append((where, node.lineno, args[0], KINDS[name]))
            elif name == "ApiError" and len(args) > 1 and isinstance(args[1], str):
                found.append((where, node.lineno, args[1], args[0]))
            elif name == "FormatError" and isinstance(args[0], str):
                found.append((where, node.lineno, args[0], None))
            elif name == "_refuse" and len(args) > 4 and isinstance(args[4], str):
                found.append((where, node.lineno, args[4], args[3]))
    return found


def test_the_scan_finds_the_errors_the_server_raises():
    codes = {code for _, _, code, _ in raised("server")}
    assert {"unknown_hub", "csrf_failed", "invalid_json", "version_conflict", "rate_limited"} <= codes
    assert {"bad_archive", "bad_front_matter"} <= {code for _, _, code, _ in raised("formats")}


def test_every_code_the_server_raises_is_declared_with_its_status():
    wrong = []
    for where, line, code, status in raised("server"):
        entry = CODES.get(code)
        if entry is None:
            wrong.append(f"{where}:{line}: {code!r} is not in server/errors.py CODES")
        elif status is not None and status != entry.status and (where, code, status) not in MISMATCHED:
            wrong.append(f"{where}:{line}: {code!r} raised as {status}, declared as {entry.status}")
    assert not wrong, "\n".join(wrong)


def test_the_mismatch_list_names_only_mismatches_that_are_still_there():
    still = {(where, code, status) for where, _, code, status in raised("server")}
    assert MISMATCHED <= still, "a mismatch was made one: drop it from MISMATCHED"


def test_every_code_a_converter_raises_is_declared():
    """memorywiki.formats' errors reach the API as 422 with their code."""
    missing = [f"{where}:{line}: {code!r}" for where, line, code, _ in raised("formats") if code not in CODES]
    assert not missing, "\n".join(missing)


def test_starlette_errors_get_declared_codes():
    for status, code in _HTTP_CODES.items():
        assert CODES[code].status == status, code
    assert "http_error" in CODES and "internal" in CODES


def test_the_codes_clients_branch_on_are_declared():
    """client/errors.py names the server's codes the CLI and MCP act on."""
    source = (ROOT / "client" / "errors.py").read_text(encoding="utf-8")
    server_part = source.split("# codes of failures the client finds itself")[0]
    names = re.findall(r"^([A-Z_]+) = ", server_part, re.M)
    assert names
    for name in names:
        assert getattr(client_errors, name) in CODES, name


def test_each_code_is_declared_once_and_says_what_it_means():
    assert all(code == entry.code for code, entry in CODES.items())
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", code) for code in CODES)
    assert all(400 <= entry.status < 600 and entry.meaning.strip() for entry in CODES.values())


def test_the_api_reference_lists_every_code_with_its_status():
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    for entry in CODES.values():
        assert f"| `{entry.code}` | {entry.status} |" in text, entry.code
