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
