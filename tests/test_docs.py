"""The documentation stays true to the code: generated files are current, links lead somewhere.

docs/api.md is generated from the OpenAPI document (scripts/gen-api-docs.py); a route added or
changed without regenerating it fails here with the command to run.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_api_docs", ROOT / "scripts" / "gen-api-docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_md_is_generated_from_the_current_spec():
    gen = _generator()
    expected = gen.render(gen.load_spec())
    assert (ROOT / "docs" / "api.md").read_text(encoding="utf-8") == expected, (
        "docs/api.md is stale: run python scripts/gen-api-docs.py"
    )


def test_api_md_lists_every_operation_of_the_router():
    from memorywiki.server.app import create_app
    from starlette.routing import Route

    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^### (\w+ \S+)$", text, re.MULTILINE))
    converter = re.compile(r"{(\w+):\w+}")  # /{doc_id:str} is /{doc_id} in the document
    served = {
        method + " " + converter.sub(r"{\1}", route.path)
        for route in create_app().routes
        if isinstance(route, Route)
        for method in route.methods or ()
        if method != "HEAD"
    }
    assert headings == served


def test_api_md_check_mode_reports_a_stale_file(tmp_path, monkeypatch, capsys):
    gen = _generator()
    stale = tmp_path / "api.md"
    stale.write_text("# old\n", encoding="utf-8")
    monkeypatch.setattr(gen, "TARGET", stale)
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    assert gen.main(["--check"]) == 1
    assert "api.md is stale" in capsys.readouterr().err
    assert gen.main([]) == 0 and gen.main(["--check"]) == 0


def _links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    return re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)


def test_relative_links_of_the_readme_and_docs_lead_to_files():
    pages = [
        ROOT / "README.md",
        ROOT / "CHANGELOG.md",
        *sorted((ROOT / "docs").glob("*.md")),
        ROOT / "bench" / "results" / "README.md",
    ]
    broken = [
        f"{page.relative_to(ROOT)} -> {link}"
        for page in pages
        for link in _links(page)
        if not re.match(r"[a-z]+:", link) and not (page.parent / link).exists()
    ]
    assert not broken, "\n".join(broken)


def _layout_block() -> str:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Layout", 1)[1]
    return section.split("```", 2)[1]


def _names_in(block: str) -> set[str]:
    """Every folder (`name/`) and module (`name.py`) the layout block names."""
    return set(re.findall(r"(?<![\w.])([\w-]+/|[\w-]+\.py)(?![\w/])", block))


def test_the_architecture_names_every_package_and_every_part_of_the_server():
    """docs/architecture.md tells where things are: a package, a folder of server/ or of a
    client package, or a module of server/ that it does not name fails here."""
    named = _names_in(_layout_block())
    wanted = {
        f"{p.name}/"
        for p in ROOT.iterdir()
        if p.is_dir() and not p.name.startswith(".") and p.name not in ("build", "dist") and "egg-info" not in p.name
    }
    for package in ("server", "client", "cli", "adapters", "adapters/mcp"):
        wanted |= {f"{p.name}/" for p in (ROOT / package).iterdir() if p.is_dir() and p.name != "__pycache__"}
    wanted |= {p.name for p in (ROOT / "server").glob("*.py") if p.name != "__init__.py"}
    missing = sorted(wanted - named)
    assert not missing, f"docs/architecture.md's Layout does not name {missing}"


def test_the_layout_check_reads_names():
    assert _names_in("server/  app.py worker.py  routes/ a/b.py\n  mcp/\n") >= {"server/", "app.py", "routes/", "mcp/"}
