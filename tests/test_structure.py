"""Module rules, checked on the source: who may import what, and no import cycles."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
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
        "memorywiki.server.worker",
        "memorywiki.server.worker.run_worker",
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
                cycles.append(" -> ".join([*stack[stack.index(dep) :], dep]))
            elif dep not in state:
                visit(dep, [*stack, dep])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert not cycles, "\n".join(cycles)


# A path from the repository's root that a comment, docstring or document names, and a module
# of ours named by its import path. Paths need an extension (or a closing slash) to count: "docs/s"
# in "3 docs/s" is a rate.
REPO_PATH = re.compile(
    r"(?<![\w/.-])((?:server|formats|tests|bench|cli|client|adapters|docs|skill|scripts)/[\w./-]*?"
    r"(?:\.(?:py|sql|md|html|toml|sh|js|css|json|txt|yml|yaml|csv|zip)\b|/(?=[\s`'\"),.;:]|$)))"
)
# a module by its file's path and one of its names: formats/mdutil.render_turns
MODULE_PATH = re.compile(
    r"(?<![\w/.-])((?:server|formats|tests|bench|cli|client|adapters|skill)/[\w/]+)\.([A-Za-z_]\w*)"
)
OUR_MODULE = re.compile(r"\b(memorywiki(?:\.[A-Za-z_]\w*)+)")
WHEEL_PACKAGES = ("server", "client", "cli", "adapters", "formats", "skill")  # under memorywiki.
# Kept as they were written: released migrations are never edited, bench/results and the
# changelog are history, tests/data describes files as their upstream repositories name them.
NOT_CHECKED = ("server/store/migrations/0", "bench/results/", "CHANGELOG.md", "tests/data/")


def _prose(path: Path) -> str:
    """What a person reads in the file: a Python file's comments and docstrings, any other
    text file whole."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix != ".py":
        return text
    parts = [tok.string for tok in tokenize.generate_tokens(io.StringIO(text).readline) if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                parts.append(doc)
    return "\n".join(parts)


def _module_exists(parts: list[str]) -> bool:
    base = ROOT.joinpath(*parts)
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def stale_references(text: str) -> list[str]:
    """The repository paths and memorywiki.* modules `text` names that do not exist (a module
    may be followed by one attribute: memorywiki.server.app.create_app)."""
    stale = [ref for ref in REPO_PATH.findall(text) if not (ROOT / ref).exists()]
    stale += [
        f"{module}.{name}"
        for module, name in MODULE_PATH.findall(text)
        if name
        not in ("py", "sql", "md", "html", "toml", "sh", "js", "css", "json", "txt", "yml", "yaml", "csv", "zip")
        and not (ROOT / module).with_suffix(".py").is_file()
        and not (ROOT / f"{module}.{name}").exists()  # a file of another kind: results.tsv
    ]
    for name in OUR_MODULE.findall(text):
        parts = name.split(".")[1:]
        if parts[0] in ("bench", "tests"):  # run from a checkout, never under memorywiki.
            stale.append(name)
            continue
        if parts[0] not in WHEEL_PACKAGES:
            continue  # memorywiki.md, the skill's file
        known = max((n for n in range(1, len(parts) + 1) if _module_exists(parts[:n])), default=0)
        if known == 0 or len(parts) - known > 1:
            stale.append(name)
    return stale


def test_the_reference_check_finds_stale_paths_and_modules():
    text = (
        "see server/errors.py, server/nothere.py, docs/gone/, 5 docs/s, memorywiki.server.app.create_app,"
        " formats/mdutil.render_turns, server/ratelimit.RateLimited,"
        " memorywiki.server.ratelimit.RateLimited, memorywiki.bench.fulltext and memorywiki.md"
    )
    assert stale_references(text) == [
        "server/nothere.py",
        "docs/gone/",
        "server/ratelimit.RateLimited",
        "memorywiki.server.ratelimit.RateLimited",
        "memorywiki.bench.fulltext",
    ]


def test_no_comment_or_document_names_a_missing_path_or_module():
    """Every repository path and module of ours that a comment, docstring or document names
    exists: a file that moved leaves no pointer to where it was."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.split("\0")
    files = [f for f in tracked if f] or [  # a copy of the files without git (CI's)
        str(p.relative_to(ROOT))
        for p in ROOT.rglob("*")
        if not any(part.startswith(".") or part == "__pycache__" for part in p.relative_to(ROOT).parts)
    ]
    stale = []
    for name in files:
        path = ROOT / name
        if name.startswith(NOT_CHECKED) or path.suffix not in (".py", ".sql", ".md", ".sh", ".toml", ".html"):
            continue
        if path.is_file():
            stale += [f"{name} names {ref}" for ref in stale_references(_prose(path))]
    assert not stale, "\n".join(stale)


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


DOMAIN = tuple(
    f"memorywiki.server.{p}" for p in ("store", "indexing", "curation", "embedding", "capture", "mail", "worker")
)


def test_routes_import_no_other_route_and_no_store():
    """A route parses, calls one use case (server/services/) and shapes the answer: what two
    routes share is a service or a web helper, never one route reaching into another, nor the
    store or the domain beneath the services."""
    bad = []
    for name, path, target, line in _imports_of("routes"):
        if _within(target, "memorywiki.server.routes") and not _within(target, name):
            bad.append(f"{path.relative_to(ROOT)}:{line} imports the route {target}")
        if _within(target, "memorywiki.server.store"):
            bad.append(f"{path.relative_to(ROOT)}:{line} imports the store ({target}): call a service")
        elif any(_within(target, domain) for domain in DOMAIN):
            bad.append(f"{path.relative_to(ROOT)}:{line} imports {target}: call a service")
    assert not bad, "\n".join(bad)


def test_services_never_see_http():
    """Use cases take typed values and return data: no Starlette, no route, nothing of the web
    layer (what a use case and a page share, such as a page's summary, lives below both)."""
    assert any(name.startswith("memorywiki.server.services.") for name in modules("server"))
    bad = []
    for _name, path, target, line in _imports_of("services"):
        where = f"{path.relative_to(ROOT)}:{line}"
        if _within(target, "starlette"):
            bad.append(f"{where} imports {target}")
        elif _within(target, "memorywiki.server.routes") or _within(target, "memorywiki.server.web"):
            bad.append(f"{where} imports {target}")
    assert not bad, "\n".join(bad)


def test_only_the_http_layer_imports_starlette():
    """server/errors.py and everything below the routes speak no HTTP: routes/, web/ and the app
    that assembles them are the only modules that import Starlette."""
    http = ("memorywiki.server.routes", "memorywiki.server.web", "memorywiki.server.app")
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for name, path in modules("server").items()
        if not any(_within(name, layer) for layer in http)
        for target, line, _ in imports(name, path)
        if _within(target, "starlette")
    ]
    assert not bad, "\n".join(bad)


# (module, import) pairs that break a rule below and wait for the files other work is changing:
# the store still chunks a page's text itself (store/chunks.py, called from store/docs.py).
WAITING = {
    ("memorywiki.server.store.chunks", "memorywiki.server.indexing.chunker"),
}


def _module_of(target: str, ours: dict[str, Path]) -> str:
    """The module of ours an import names (`from .m import f` names m.f too)."""
    while target and target not in ours:
        target = target.rpartition(".")[0]
    return target


def test_the_store_imports_no_indexing_and_no_curation():
    """The store holds the SQL: what it writes is worked out before it is called (a page's links,
    its chunks), never by reaching up into indexing/ or curation/."""
    ours = modules("server")
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for name, path, target, line in _imports_of("store")
        if (_within(target, "memorywiki.server.indexing") or _within(target, "memorywiki.server.curation"))
        and (name, _module_of(target, ours)) not in WAITING
    ]
    assert not bad, "\n".join(bad)


def test_indexing_and_curation_import_nothing_of_each_other_but_the_shared_loop():
    """Both are loops of owed work (indexing/loop.py); the worker process that runs them
    together (server/worker.py) is above both, as the app is."""
    ours = modules("server")
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for package, other in (("indexing", "curation"), ("curation", "indexing"))
        for _name, path, target, line in _imports_of(package)
        if _within(target, f"memorywiki.server.{other}")
        and _module_of(target, ours) != "memorywiki.server.indexing.loop"
    ]
    assert not bad, "\n".join(bad)


# Module-level mutable state outside the settings, waiting for the files other work is
# changing: the store's chunk size (set once by open_database: chunking moves before the store)
# and the streamed imports' running tasks (server/web/progress.py).
STATE_WAITING = {"memorywiki.server.store.chunks._size", "memorywiki.server.web.progress._running"}
# What may be declared at module level although it is mutable: the settings' own declaration
# (server/setting.py reads the class body in order) and a lock, which guards, but holds, nothing.
STATE_ALLOWED = {"memorywiki.server.setting._section"}
_MUTABLE = ("dict", "list", "set", "defaultdict", "OrderedDict", "Counter", "deque", "WeakValueDictionary", "WeakSet")


def module_state(name: str, path: Path) -> list[tuple[str, int]]:
    """(module.name, line) of each mutable value a module keeps at its top level: a `global`
    statement's target, or a container bound to a lower-case name (an UPPER_CASE one is a
    constant table; `routes` and `__all__` are declarations)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            found += [(f"{name}.{target}", node.lineno) for target in node.names]
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        container = isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)) or (
            isinstance(value, ast.Call) and ast.unparse(value.func).rsplit(".", 1)[-1] in _MUTABLE
        )
        for target in targets:
            label = ast.unparse(target)
            if container and isinstance(target, ast.Name) and not label.lstrip("_").isupper():
                if label not in ("routes", "__all__"):
                    found.append((f"{name}.{label}", node.lineno))
    return found


def test_module_state_check_finds_state():
    source = "import x\nCACHE = {}\nroutes = []\n_seen = set()\ncounts = defaultdict(int)\ndef f():\n    global n\n"
    path = ROOT / "tests" / "data" / "_state_probe.py"
    try:
        path.write_text(source, encoding="utf-8")
        assert [label for label, _ in module_state("m", path)] == ["m.n", "m._seen", "m.counts"]
    finally:
        path.unlink(missing_ok=True)


def test_no_module_level_mutable_state_outside_the_settings():
    """A process's state lives in objects the app or the worker makes (and the database), so
    two apps in one process, or a test's, never share it."""
    found = [
        f"{path.relative_to(ROOT)}:{line} keeps {label}"
        for package in PACKAGES
        for name, path in modules(package).items()
        for label, line in module_state(name, path)
        if label not in STATE_WAITING | STATE_ALLOWED
    ]
    assert not found, "\n".join(found)
    still = {label for name, path in modules("server").items() for label, _ in module_state(name, path)}
    assert STATE_WAITING <= still, "state that is gone: drop it from STATE_WAITING"


def test_no_import_cycles_between_server_packages():
    """The packages of server/ form layers: app and worker -> routes -> web -> services ->
    curation, indexing -> store, with config and errors beneath all. A cycle between two of them
    means one reaches up. The cycles listed wait: config's properties build the chunker's and
    the graph's rule objects, and the store chunks (WAITING)."""
    waiting = {("config", "indexing"), ("config", "store"), ("indexing", "store")}
    top = {}
    for name, path in modules("server").items():
        parts = name.split(".")
        if len(parts) < 3:
            continue
        for target, _, _ in imports(name, path):
            tparts = target.split(".")
            if tparts[:2] == ["memorywiki", "server"] and len(tparts) > 2 and tparts[2] != parts[2]:
                top.setdefault(parts[2], set()).add(tparts[2])
    cycles = sorted(tuple(sorted((a, b))) for a, deps in top.items() for b in deps if a in top.get(b, set()) and a < b)
    assert set(cycles) - waiting == set(), cycles
    assert waiting <= set(cycles), "a waiting cycle is gone: drop it from the list"


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


# The longest a function of the product code may be; LONG_FUNCTIONS names any allowed longer
# for a while (the list only shrinks, and is empty now).
MAX_FUNCTION_LINES = 80
LONG_FUNCTIONS: set[str] = set()


def function_lengths() -> dict[str, int]:
    """file:function -> lines, for every function and method of the packages the wheel ships."""
    lengths = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None:
                    key = f"{path.relative_to(ROOT)}:{node.name}"
                    lengths[key] = max(lengths.get(key, 0), node.end_lineno - node.lineno + 1)
    return lengths


def test_no_function_is_longer_than_80_lines():
    long = {key: n for key, n in function_lengths().items() if n > MAX_FUNCTION_LINES}
    new = sorted(f"{key} has {n} lines" for key, n in long.items() if key not in LONG_FUNCTIONS)
    assert not new, "split these by step:\n" + "\n".join(new)
    done = LONG_FUNCTIONS - long.keys()
    assert not done, f"no longer over {MAX_FUNCTION_LINES} lines: drop them from LONG_FUNCTIONS: {sorted(done)}"
