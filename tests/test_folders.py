"""`memorywiki export` and `memorywiki import folder` against real servers: a hub taken out and
brought into a fresh server and database, an Obsidian-style vault (tests/data/vault), and the
bad inputs (files that are not UTF-8, broken front matter, a zip that is no export, folders
that must not be written into)."""

from __future__ import annotations

import difflib
import io
import json
import re
import uuid
import zipfile
from pathlib import Path

import httpx
import pytest
from memorywiki.cli.main import app
from memorywiki.formats.frontmatter import read_front_matter
from typer.testing import CliRunner

runner = CliRunner()
VAULT = Path(__file__).parent / "data" / "vault"
# What may differ between the export of a hub and the export of its copy on another server:
# ids, the time of the export, the server's URL, and the importer id each copy keeps of the
# page it came from. Pages and bundles keep the dates they had.
MAY_DIFFER = re.compile(r"^[-+](id|exported_at|url|external_id): ")


class Server:
    """One server as the CLI sees it: its URL and a config file of its own."""

    def __init__(self, url: str, config: Path, monkeypatch):
        self.url, self.config, self.monkeypatch = url.rstrip("/"), config, monkeypatch

    def run(self, *args: str, ok: bool = True):
        self.monkeypatch.setenv("MEMORYWIKI_CONFIG", str(self.config))
        self.monkeypatch.setenv("MEMORYWIKI_URL", self.url)
        result = runner.invoke(app, list(args))
        assert "Traceback" not in result.output, result.output
        if ok:
            assert result.exit_code == 0, f"exit {result.exit_code}: {result.output}"
        return result

    def hub(self, slug: str | None = None) -> tuple[str, dict]:
        slug = slug or "h" + uuid.uuid4().hex[:10]
        self.run("hub", "create", slug)
        token = re.search(r'owner_token = "([^"]+)"', self.config.read_text()).group(1)
        return slug, {"Authorization": f"Bearer {token}"}

    def post(self, path: str, body: dict, owner: dict) -> dict:
        r = httpx.post(self.url + path, json=body, headers=owner)
        assert r.status_code in (200, 201), r.text
        return r.json()

    def get(self, path: str, **kwargs) -> httpx.Response:
        return httpx.get(self.url + path, **kwargs)


@pytest.fixture
def env(monkeypatch, tmp_path):
    for name in ("MEMORYWIKI_TOKEN", "MEMORYWIKI_HUB", "XDG_CONFIG_HOME", "MEMORYWIKI_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.fixture
def server_a(live_server, env, monkeypatch):
    return Server(live_server.url, env / "a.toml", monkeypatch)


@pytest.fixture
def server_b(second_live_server, env, monkeypatch):
    return Server(second_live_server.url, env / "b.toml", monkeypatch)


def tree(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def changed_lines(first: Path, second: Path) -> list[str]:
    """The lines a unified diff of the two folders adds or removes."""
    a, b = tree(first), tree(second)
    assert sorted(a) == sorted(b)
    lines = []
    for name in a:
        for line in difflib.unified_diff(a[name].splitlines(), b[name].splitlines(), lineterm="", n=0):
            if line.startswith(("+", "-")) and not line.startswith(("+++", "---")):
                lines.append(line)
    return lines


def fill(server: Server, slug: str, owner: dict) -> dict:
    """A hub with a page of each visibility, titles no file system takes as they are, links
    between pages, a bundle, a description and a listing."""
    made = {}
    made["intro"] = server.post(
        "/api/docs",
        {
            "hub": slug,
            "title": "Intro",
            "markdown": "Start with the basics.",
            "meta": {"tags": ["a", "b"], "n": 3},
            "source": "cli",
        },
        owner,
    )
    made["plans"] = server.post(
        "/api/docs",
        {
            "hub": slug,
            "title": "Plans: Q3/Q4?",
            "is_draft": True,
            "markdown": f"See [intro]({server.url}/{made['intro']['id']}#start).",
        },
        owner,
    )
    made["secret"] = server.post(
        "/api/docs", {"hub": slug, "title": "Intro", "markdown": "Behind a password.", "password": "hunter2"}, owner
    )
    made["people"] = server.post(
        "/api/docs",
        {
            "hub": slug,
            "title": "Für zwei · 二人",
            "markdown": "## Who\n\nTwo readers only.",
            "allowed_emails": ["a@example.org", "b@example.org"],
        },
        owner,
    )
    # a link to a page made after it: the import saves this page before that one exists
    made["late"] = server.post("/api/docs", {"hub": slug, "title": "CON", "markdown": "A Windows device name."}, owner)
    httpx.patch(
        f"{server.url}/api/docs/{made['intro']['id']}",
        headers=owner,
        json={"markdown": f"Start with the basics, then [the device]({server.url}/{made['late']['id']})."},
    )
    server.post(
        "/api/bundles",
        {
            "hub": slug,
            "title": "Reading order",
            "description": "Three steps.",
            "doc_ids": [made["people"]["id"], made["intro"]["id"], made["plans"]["id"]],
        },
        owner,
    )
    httpx.patch(f"{server.url}/api/hub/{slug}", json={"description": "Notes to move", "listed": True}, headers=owner)
    return made


def test_a_hub_moved_to_a_fresh_server_exports_the_same_folder(server_a, server_b, env):
    slug, owner_a = server_a.hub()
    fill(server_a, slug, owner_a)
    first, second = env / "from-a", env / "from-b"
    server_a.run("export", str(first))
    assert sorted(tree(first)) == sorted(
        [
            "bundles/Reading order.md",
            "index.md",
            "pages/CON_.md",
            "pages/Intro.md",
            "pages/Intro (2).md",
            "pages/Plans Q3 Q4.md",
            "pages/Für zwei · 二人.md",
        ]
    )

    _, _owner_b = server_b.hub(slug)
    moved = json.loads(server_b.run("import", "folder", str(first), "--json").stdout)
    assert moved["pages"] == {"created": 5, "updated": 0, "unchanged": 0, "deleted": 0}
    assert moved["bundles"]["created"] == 1 and moved["skipped"] == [] and moved["exported"] is True
    server_b.run("export", str(second))

    diff = changed_lines(first, second)
    assert diff and all(MAY_DIFFER.match(line) for line in diff), "\n".join(diff)
    # the index differs in its date and URL only; every page in ids and the importer id it came by
    assert {line.split(":")[0] for line in diff} == {
        "-id",
        "+id",
        "-exported_at",
        "+exported_at",
        "-url",
        "+url",
        "+external_id",
    }

    # visibility came along: a stranger on the new server sees the public pages only
    listing = server_b.get(f"/api/hub/{slug}").json()
    assert sorted(d["title"] for d in listing["docs"]) == ["CON", "Intro"]
    assert listing["description"] == "Notes to move"
    pages = {name: read_front_matter(text).fields for name, text in tree(second).items() if name.startswith("pages/")}
    for name in ("pages/Plans Q3 Q4.md", "pages/Für zwei · 二人.md"):
        assert server_b.get(f"/api/docs/{pages[name]['id']}").status_code == 404
    locked = pages["pages/Intro (2).md"]
    assert locked["visibility"] == "password"
    assert server_b.get(f"/api/docs/{locked['id']}").status_code == 404
    opened = server_b.get(f"/api/docs/{locked['id']}", headers={"X-Doc-Password": "hunter2"})
    assert opened.status_code == 200 and opened.json()["markdown"] == "Behind a password."

    # importing again changes nothing, from either folder, and neither does bringing the
    # export back into the hub it came from
    again = json.loads(server_b.run("import", "folder", str(first), "--json").stdout)
    assert again["pages"] == {"created": 0, "updated": 0, "unchanged": 5, "deleted": 0}
    assert again["bundles"] == {"created": 0, "updated": 0, "unchanged": 1}
    back = json.loads(server_b.run("import", "folder", str(second), "--json").stdout)
    assert back["pages"]["unchanged"] == 5 and back["bundles"]["unchanged"] == 1
    home = json.loads(server_a.run("import", "folder", str(first), "--json").stdout)
    assert home["pages"]["unchanged"] == 5 and home["bundles"]["unchanged"] == 1
    assert len(server_a.get(f"/api/hub/{slug}").json()["docs"]) == 2


def test_an_export_downloaded_as_a_zip_imports_the_same(server_a, server_b, env):
    slug, owner_a = server_a.hub()
    fill(server_a, slug, owner_a)
    archive = env / "export.zip"
    archive.write_bytes(server_a.get(f"/api/hub/{slug}/export", headers=owner_a).content)
    _, _ = server_b.hub(slug)
    moved = json.loads(server_b.run("import", "folder", str(archive), "--json").stdout)
    assert moved["pages"]["created"] == 5 and moved["bundles"]["created"] == 1


def test_export_with_versions_and_into_a_folder_that_holds_one(server_a, env):
    slug, owner = server_a.hub()
    made = fill(server_a, slug, owner)
    folder = env / "backup"
    out = server_a.run("export", str(folder), "--versions")
    assert out.stdout.strip() == str(folder)
    assert (folder / "pages" / "Intro.versions" / "1.md").read_text().endswith("Start with the basics.")
    (folder / ".obsidian").mkdir()
    (folder / ".obsidian" / "app.json").write_text("{}")
    httpx.delete(f"{server_a.url}/api/docs/{made['late']['id']}", headers=owner)
    again = server_a.run("export", str(folder))
    assert "replaced" in again.stderr
    assert not (folder / "pages" / "CON_.md").exists() and not (folder / "pages" / "Intro.versions").exists()
    assert (folder / ".obsidian" / "app.json").exists()  # what is not the export's stays

    mine = env / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    refused = server_a.run("export", str(mine), ok=False)
    assert refused.exit_code == 1 and "not empty" in refused.stderr
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]


def test_only_the_owner_can_export(server_a, env, monkeypatch):
    slug, _ = server_a.hub()
    server_a.config.write_text(f'hub = "{slug}"\n')
    refused = server_a.run("export", str(env / "out"), ok=False)
    assert refused.exit_code == 1 and "no owner token" in refused.stderr
    monkeypatch.setenv("MEMORYWIKI_TOKEN", "mwo_not_the_owner")
    refused = server_a.run("export", str(env / "out"), ok=False)
    assert refused.exit_code == 1 and "does not own" in refused.stderr
    assert not (env / "out").exists()


def test_an_obsidian_vault_becomes_pages_linked_to_each_other(server_a, env):
    slug, owner = server_a.hub()
    first = json.loads(server_a.run("import", "folder", str(VAULT), "--json").stdout)
    assert first["pages"]["created"] == 5 and first["exported"] is False
    assert first["unresolved"] == 1  # [[Someday]] names no note
    assert first["skipped"] == []
    found = server_a.post(
        f"/api/hub/{slug}/lookup",
        {
            "external_ids": [
                "file:Home.md",
                "file:Recall design.md",
                "file:Projects/Roadmap.md",
                "file:Projects/Meeting notes.md",
                "file:Archive/Meeting notes.md",
            ]
        },
        owner,
    )["docs"]
    url = {d["external_id"][5:]: d["url"] for d in found}

    def page(path: str) -> dict:
        return server_a.get(f"/api/docs/{url[path].rsplit('/', 1)[1]}", headers=owner).json()

    home = page("Home.md")
    assert home["title"] == "Home" and not home["markdown"].startswith("# Home")
    text = home["markdown"]
    assert (
        f"Read [Recall design]({url['Recall design.md']}) first, then [the roadmap]({url['Projects/Roadmap.md']})"
        in text
    )
    assert f"[Recall design > Fusion]({url['Recall design.md']}#fusion)" in text
    assert f"[Meeting notes]({url['Archive/Meeting notes.md']})" in text  # two notes of that name: the nearer
    assert f"\n[Recall design]({url['Recall design.md']})\n" in text  # an embed of a note becomes a link to it
    assert "![[diagram.png]]" in text and "[[Someday]]" in text and "`[[not a link]]`" in text
    assert f"[the roadmap file]({url['Projects/Roadmap.md']})" in text
    assert home["meta"] == {
        "tags": ["index", "start"],
        "aliases": ["Start here"],
        "created": "2024-03-01",
        "file_name": "Home.md",
    }
    design = page("Recall design.md")["markdown"]
    assert f"back to [Home]({url['Home.md']}) or [the start]({url['Home.md']})" in design  # an alias
    assert "# [[Home]] inside a fence stays as written" in design
    meeting = page("Projects/Meeting notes.md")
    assert meeting["is_draft"] is True  # publish: false
    assert f"[Roadmap]({url['Projects/Roadmap.md']})" in meeting["markdown"]
    assert server_a.get(f"/api/docs/{meeting['id']}").status_code == 404
    assert page("Projects/Roadmap.md")["title"] == "Roadmap"

    versions = {path: page(path)["version"] for path in url}
    again = json.loads(server_a.run("import", "folder", str(VAULT), "--json").stdout)
    assert again["pages"] == {"created": 0, "updated": 0, "unchanged": 5, "deleted": 0}
    assert {path: page(path)["version"] for path in url} == versions

    # the vault's pages come out as an export that imports back as it was
    out = env / "vault-export"
    server_a.run("export", str(out))
    assert "tags" in (out / "pages" / "Home.md").read_text()
    assert json.loads(server_a.run("import", "folder", str(out), "--json").stdout)["pages"]["unchanged"] == 5


def test_files_that_cannot_be_pages_are_named_and_the_rest_imported(server_a, env):
    slug, _ = server_a.hub()
    folder = env / "mixed"
    folder.mkdir()
    (folder / "good.md").write_text("A page worth keeping.", encoding="utf-8")
    (folder / "latin1.md").write_bytes("Caf\xe9 cr\xe8me".encode("latin-1"))
    (folder / "broken.md").write_text("---\ntitle: [unclosed\nvisibility: draft\n---\nSecret plans.\n")
    (folder / "empty.md").write_text("---\ntags: [x]\n---\n\n")
    (folder / "binary.md").write_bytes(b"text\x00\x01\x02")
    (folder / "fine.MARKDOWN").write_text("Upper-case extension, still markdown.")

    strict = server_a.run("import", "folder", str(folder), "--strict", ok=False)
    assert strict.exit_code == 1 and strict.stderr.startswith("error: nothing was imported: 4 files cannot be pages")
    assert server_a.get(f"/api/hub/{slug}").json()["docs"] == []

    result = server_a.run("import", "folder", str(folder))
    assert result.stdout.strip() == f"folder {folder} into hub {slug}: pages 2 created"
    assert "skipped latin1.md: is not UTF-8 text (byte 0xe9 at offset 3)" in result.stderr
    assert "skipped broken.md: the front matter is not valid YAML" in result.stderr
    assert "skipped empty.md: is empty" in result.stderr
    assert "skipped binary.md: holds NUL bytes" in result.stderr
    titles = sorted(d["title"] for d in server_a.get(f"/api/hub/{slug}").json()["docs"])
    assert titles == ["fine", "good"]  # nothing of the broken (perhaps private) file is shown


def test_a_zip_that_is_no_export_and_paths_that_are_nothing(server_a, env):
    server_a.hub()
    notes = io.BytesIO()
    with zipfile.ZipFile(notes, "w") as zf:
        zf.writestr("vault/a.md", "just notes")
        zf.writestr("vault/index.md", "---\ntitle: Index\n---\nan index, not an export's")
    (env / "notes.zip").write_bytes(notes.getvalue())
    (env / "not-a-zip.zip").write_text("hello")
    refused = server_a.run("import", "folder", str(env / "notes.zip"), ok=False)
    assert refused.exit_code == 1 and "notes.zip is not a Memory.Wiki export" in refused.stderr
    refused = server_a.run("import", "folder", str(env / "not-a-zip.zip"), ok=False)
    assert refused.exit_code == 1 and "not a readable zip archive" in refused.stderr
    missing = server_a.run("import", "folder", str(env / "nowhere"), ok=False)
    assert missing.exit_code == 1 and "no such folder" in missing.stderr
    tricky = io.BytesIO()
    with zipfile.ZipFile(tricky, "w") as zf:
        zf.writestr("x/index.md", "---\nmemorywiki_export: 1\nhub: x\n---\n")
        zf.writestr("../../evil.md", "climbs out")
    (env / "tricky.zip").write_bytes(tricky.getvalue())
    refused = server_a.run("import", "folder", str(env / "tricky.zip"), ok=False)
    assert refused.exit_code == 1 and "unsafe entry name" in refused.stderr
    assert not (env.parent / "evil.md").exists()


def test_a_stranger_cannot_import_into_a_hub(server_a, env, monkeypatch):
    slug, _ = server_a.hub()
    monkeypatch.setenv("MEMORYWIKI_TOKEN", "mwo_someone_else")
    refused = server_a.run("import", "folder", str(VAULT), ok=False)
    assert refused.exit_code == 1 and "does not own" in refused.stderr
    monkeypatch.delenv("MEMORYWIKI_TOKEN")
    assert server_a.get(f"/api/hub/{slug}").json()["docs"] == []


def test_a_large_folder_is_read_a_file_at_a_time(tmp_path):
    """Reading a folder before its import keeps a few fields per file, never the text:
    memory grows with the number of files, not with what they hold."""
    import tracemalloc

    from memorywiki.formats.vault import count_files, scan

    body = "A note linking to [[note 00000]].\n\n" + "\n".join(
        f"Line {n} of a long note. " + "Words. " * 60 for n in range(20)
    )
    for i in range(500):
        (tmp_path / f"note {i:05d}.md").write_text(f"# Note {i}\n\n{body}\n", encoding="utf-8")
    text_bytes = 500 * len(body)
    assert count_files(tmp_path) == 500
    seen: list[int] = []
    tracemalloc.start()
    try:
        folder = scan(tmp_path, seen.append)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(folder.pages) == 500 and seen == list(range(1, 501))
    assert "note 00000" in {p.title for p in folder.pages}
    assert peak < text_bytes / 4, f"{peak} bytes held while reading {text_bytes} bytes of text"


def test_an_export_with_a_bad_date_imports_nothing(server_a, server_b, env):
    slug, owner_a = server_a.hub()
    fill(server_a, slug, owner_a)
    folder = env / "edited"
    server_a.run("export", str(folder))
    page = folder / "pages" / "CON_.md"
    page.write_text(re.sub(r"(?m)^updated: .*$", "updated: last tuesday", page.read_text()))
    bundle = folder / "bundles" / "Reading order.md"
    bundle.write_text(re.sub(r"(?m)^created: .*$", "created: '2999-01-01T00:00:00+00:00'", bundle.read_text()))
    _, owner_b = server_b.hub(slug)
    refused = server_b.run("import", "folder", str(folder), ok=False)
    assert refused.exit_code == 1 and refused.stderr.startswith("error: nothing was imported: 2 files name a date")
    assert "pages/CON_.md 'updated' is not an ISO 8601 date" in refused.stderr
    assert "bundles/Reading order.md 'created' (2999-01-01T00:00:00+00:00) is after 'updated'" in refused.stderr
    assert server_b.get(f"/api/hub/{slug}", headers=owner_b).json()["docs"] == []


def test_only_an_import_by_the_owner_may_date_a_page(server_a, env):
    slug, owner = server_a.hub()
    page = {
        "hub": slug,
        "title": "Old note",
        "markdown": "Written long ago.",
        "created_at": "2020-05-01T08:00:00+02:00",
        "updated_at": "2021-01-02",
    }
    dated = server_a.post("/api/docs", {**page, "external_id": "file:old.md"}, owner)
    doc = server_a.get(f"/api/docs/{dated['id']}", headers=owner).json()
    assert (doc["created_at"], doc["updated_at"]) == ("2020-05-01T06:00:00+00:00", "2021-01-02T00:00:00+00:00")
    bundle = server_a.post(
        "/api/bundles",
        {
            "hub": slug,
            "title": "Old",
            "doc_ids": [dated["id"]],
            "external_id": "b",
            "created_at": "2020-06-01T00:00:00Z",
            "updated_at": "2020-06-02T00:00:00Z",
        },
        owner,
    )
    assert bundle["status"] == "created"

    def refused(path: str, body: dict, headers: dict | None = None) -> dict:
        r = httpx.post(server_a.url + path, json=body, headers=headers if headers is not None else owner)
        assert r.status_code in (400, 401, 403), r.text
        return r.json()["error"]

    # a capture, even the owner's, is dated now
    assert "need an 'external_id'" in refused("/api/docs", page)["message"]
    assert (
        "need an 'external_id'"
        in refused("/api/bundles", {"hub": slug, "title": "B", "created_at": "2020-01-01"})["message"]
    )
    assert refused("/api/docs", {**page, "hub": None, "external_id": None})["code"] == "missing_field"
    bad = refused("/api/docs", {**page, "external_id": "x", "updated_at": "2021-13-01"})
    assert bad["code"] == "invalid_field" and "'updated_at' is not an ISO 8601 date" in bad["message"]
    assert (
        "'created_at' is not an ISO 8601 date"
        in refused("/api/docs", {**page, "external_id": "x", "created_at": "9999-12-31T23:00:00-05:00"})["message"]
    )  # past 9999 in UTC
    late = refused("/api/docs", {**page, "external_id": "x", "created_at": "2022-01-01T00:00:00Z"})
    assert "'created_at' (2022-01-01T00:00:00Z) is after 'updated_at'" in late["message"]
    assert (
        refused(
            "/api/bundles",
            {"hub": slug, "title": "B", "external_id": "c", "updated_at": 20200101},
        )["code"]
        == "invalid_field"
    )
    # a member writes pages into the hub, but only its owner brings one in dated
    member = {"Authorization": f"Bearer {server_a.post(f'/api/hub/{slug}/members', {'name': 'ann'}, owner)['token']}"}
    assert refused("/api/docs", {**page, "external_id": "y"}, member)["code"] == "forbidden"
    assert [d["title"] for d in server_a.get(f"/api/hub/{slug}", headers=owner).json()["docs"]] == ["Old note"]
