"""Module rules, checked on the source: who may import what, and no import cycles."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("server", "formats", "client", "cli", "adapters", "skill")


def modules(package: str) -> dict[str, Path]:
    """memorywiki.<dotted name> -> file, for every module of a top-level folder."""
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found["memorywiki." + ".".join(parts)] = path
    return found


def imports(name: str, path: Path) -> list[tuple[str, int, bool]]:
    """(imported module, line, at module level) for each import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.append((target, node.lineno, id(node) in top))
            # `from . import x` / `from .pkg import module`: x may be a module itself
            out += [(f"{target}.{alias.name}", node.lineno, id(node) in top) for alias in node.names]
    return out


def test_clients_never_import_the_server():
    """cli/, client/ and adapters/ speak HTTP; only `serve` and `worker` start the server, and
    `config --server` lists its settings: they import it lazily, inside the command."""
    allowed = {
        "memorywiki.server.app",
        "memorywiki.server.app.run_server",
        "memorywiki.server.indexing.worker",
        "memorywiki.server.indexing.worker.run_worker",
        "memorywiki.server.config",
        "memorywiki.server.config.settings_listing",
        "memorywiki.server.config.cli_debug",
    }
    bad = []
    for package in ("cli", "client", "adapters"):
        for name, path in modules(package).items():
            for target, line, module_level in imports(name, path):
                if target == "memorywiki.server" or target.startswith("memorywiki.server."):
                    if module_level or target not in allowed:
                        bad.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not bad, "\n".join(bad)


def test_formats_import_without_the_server_or_its_dependencies():
    code = (
        "import sys, memorywiki.formats, memorywiki.formats.mdutil, memorywiki.formats.ziputil;"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('starlette', 'psycopg', 'psycopg_pool', 'uvicorn', 'openai', 'markitdown', 'trafilatura')"
        " or m.startswith('memorywiki.server'));"
        "print(heavy)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_formats_never_import_the_server():
    for name, path in modules("formats").items():
        for target, line, _ in imports(name, path):
            assert not target.startswith("memorywiki.server"), f"{path}:{line}"


def test_no_import_cycles_in_the_server():
    """Imports between our own modules form no cycle; one hidden in a function counts too."""
    ours = {**modules("server"), **modules("formats")}
    graph: dict[str, set[str]] = {}
    for name, path in ours.items():
        deps = set()
        for target, _line, _module_level in imports(name, path):  # function-level ones count too
            while target and target not in ours:
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + "."):
                deps.add(target)
        graph[name] = deps

    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                cycles.append(" -> ".join(stack[stack.index(dep) :] + [dep]))
            elif dep not in state:
                visit(dep, stack + [dep])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert not cycles, "\n".join(cycles)


def test_no_docstring_points_at_a_missing_file():
    """Paths named in the server's comments and docstrings exist in the repo."""
    import re

    # a path from the repo root, or a root document such as DESIGN.md (which is not in the repo)
    pattern = re.compile(
        r"\b((?:server|formats|tests|bench|cli|client|adapters|docs)/[\w./-]+\.(?:py|sql|md|html)"
        r"|[A-Z][A-Z_]+\.md)\b"
    )
    missing = []
    for package in ("server", "formats"):
        for path in (ROOT / package).rglob("*"):
            if path.suffix not in (".py", ".sql", ".md") or "__pycache__" in path.parts:
                continue
            if "migrations" in path.parts:  # released migrations are never edited, so may name old paths
                continue
            for ref in pattern.findall(path.read_text(encoding="utf-8")):
                if not (ROOT / ref).exists():
                    missing.append(f"{path.relative_to(ROOT)} names {ref}")
    assert not missing, "\n".join(missing)


def _imports_of(package: str) -> list[tuple[str, Path, str, int]]:
    """(module, file, imported module, line) for every import in a folder of server/."""
    return [
        (name, path, target, line)
        for name, path in modules("server").items()
        if name.startswith(f"memorywiki.server.{package}.")
        for target, line, _ in imports(name, path)
    ]


def _within(target: str, package: str) -> bool:
    return target == package or target.startswith(package + ".")


def test_routes_import_no_other_route_and_no_store():
    """A route parses, calls one use case (server/services/) and shapes the answer: what two
    routes share is a service or a web helper, never one route reaching into another."""
    bad = []
    for name, path, target, line in _imports_of("routes"):
        if _within(target, "memorywiki.server.routes") and not _within(target, name):
            bad.append(f"{path.relative_to(ROOT)}:{line} imports the route {target}")
        if _within(target, "memorywiki.server.store"):
            bad.append(f"{path.relative_to(ROOT)}:{line} imports the store ({target}): call a service")
    assert not bad, "\n".join(bad)


def _speaks_http(module: str, ours: dict[str, Path]) -> bool:
    return any(_within(target, "starlette") for target, _, _ in imports(module, ours[module]))


def test_services_never_see_http():
    """Use cases take typed values and return data: no Starlette, no route, and of the web
    layer only modules that do not speak HTTP themselves (markdown rendering, timing)."""
    ours = modules("server")
    assert any(name.startswith("memorywiki.server.services.") for name in ours)
    bad = []
    for name, path, target, line in _imports_of("services"):
        where = f"{path.relative_to(ROOT)}:{line}"
        if _within(target, "starlette"):
            bad.append(f"{where} imports {target}")
        elif _within(target, "memorywiki.server.routes"):
            bad.append(f"{where} imports the route {target}")
        elif _within(target, "memorywiki.server.web") and target in ours and _speaks_http(target, ours):
            bad.append(f"{where} imports {target}, which speaks HTTP")
    assert not bad, "\n".join(bad)


SQL_SHAPES = re.compile(
    r"\bSELECT\b[\s\S]*?\bFROM\b|\bINSERT\s+INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b"
    r"|\bWITH\s+\w+\s+AS\s*\("
)


def sql_strings(source: str) -> list[tuple[int, str]]:
    """(line, text) of each string constant that looks like SQL; docstrings are prose."""
    tree = ast.parse(source)
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and SQL_SHAPES.search(node.value)
    ]


def test_the_sql_check_finds_sql():
    source = (
        '"""SELECT a FROM b is prose here."""\n'
        'Q = "SELECT id FROM docs WHERE id = %s"\n'
        "def f(conn):\n"
        '    conn.execute("UPDATE docs SET title = %s", ("x",))\n'
        '    conn.execute("""WITH me AS (SELECT 1) DELETE FROM t""")\n'
        '    return "select the text from the page"\n'
    )
    assert [line for line, _ in sql_strings(source)] == [2, 4, 5]


def test_no_sql_outside_the_store():
    """Every statement lives in server/store/, one module per table family."""
    found = []
    for name, path in modules("server").items():
        if _within(name, "memorywiki.server.store"):
            continue
        for line, text in sql_strings(path.read_text(encoding="utf-8")):
            found.append(f"{path.relative_to(ROOT)}:{line}: {' '.join(text.split())[:80]}")
    assert not found, "SQL belongs in server/store/:\n" + "\n".join(found)
