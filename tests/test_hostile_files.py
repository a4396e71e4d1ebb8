"""Hostile files: YAML front matter built to hurt (an alias that holds itself, a billion laughs,
nesting past any sane depth, a date or a number the parser cannot build) is one skipped file
named with why, and the rest of the folder imports; a zip whose entries expand past the ratio
is refused whatever each entry's size, before anything is written or saved. Through the CLI's
real entry point against a live server, and at the parser itself."""

from __future__ import annotations

import io
import re
import tomllib
import uuid
import zipfile

import httpx
import pytest
from memorywiki.cli.main import app
from memorywiki.formats import FormatError
from memorywiki.formats.frontmatter import read_front_matter
from memorywiki.formats.ziputil import EXPORT_LIMITS, check_entries
from typer.testing import CliRunner

runner = CliRunner()

LAUGHS = (
    "---\n"
    + "\n".join(
        [
            'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
            *(
                f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]"
                for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
            ),
        ]
    )
    + "\n---\nlaughing\n"
)
HOSTILE = {
    "loop.md": ("---\nx: &a [*a]\n---\nA list that holds itself.\n", "contains itself"),
    "loop-map.md": ("---\nx: &a {y: *a}\n---\nA map that holds itself.\n", "contains itself"),
    "laughs.md": (LAUGHS, "too many values"),
    "deep.md": ("---\nx: " + "[" * 5000 + "]" * 5000 + "\n---\nDeep.\n", "nested deeper than"),
    "deepish.md": ("---\nx: " + "[" * 200 + "]" * 200 + "\n---\nDeep.\n", "nested deeper than"),
    "baddate.md": ("---\ncreated: 2020-02-30\n---\nNo such day.\n", "YAML cannot read"),
    "bignumber.md": ("---\nn: " + "9" * 5000 + "\n---\nA big number.\n", "YAML cannot read"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_front_matter_is_a_format_error(name):
    text, says = HOSTILE[name]
    with pytest.raises(FormatError) as err:
        read_front_matter(text)
    assert err.value.code == "bad_front_matter" and says in err.value.message


def test_an_alias_used_twice_side_by_side_is_fine():
    fields = read_front_matter("---\ntags: &t [a, b]\nalso: [*t, *t]\n---\nbody\n").fields
    assert fields == {"tags": ["a", "b"], "also": [["a", "b"], ["a", "b"]]}


@pytest.fixture
def cli(live_server, tmp_path, monkeypatch):
    for name in ("MEMORYWIKI_TOKEN", "MEMORYWIKI_HUB", "XDG_CONFIG_HOME", "MEMORYWIKI_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "config.toml"
    monkeypatch.setenv("MEMORYWIKI_CONFIG", str(config))
    monkeypatch.setenv("MEMORYWIKI_URL", live_server.url)
    monkeypatch.setenv("HOME", str(tmp_path))

    def run(*args: str, ok: bool = True):
        result = runner.invoke(app, list(args))
        assert "Traceback" not in result.output, result.output
        if ok:
            assert result.exit_code == 0, f"exit {result.exit_code}: {result.output}"
        return result

    slug = "h" + uuid.uuid4().hex[:8]
    run("hub", "create", slug)
    run.slug = slug
    run.url = live_server.url
    run.owner = {"Authorization": f"Bearer {tomllib.loads(config.read_text())['hubs'][slug]['owner_token']}"}
    return run


def titles(cli) -> list[str]:
    hub = httpx.get(f"{cli.url}/api/hub/{cli.slug}", headers=cli.owner, timeout=30).json()
    return sorted(d["title"] for d in hub["docs"])


def test_a_folder_with_hostile_front_matter_imports_the_rest(cli, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, (text, _) in HOSTILE.items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "good.md").write_text("---\ntags: [fine]\n---\nA page worth keeping.\n", encoding="utf-8")
    (folder / "plain.md").write_text("No front matter at all.\n", encoding="utf-8")

    result = cli("import", "folder", str(folder))
    assert result.stdout.strip() == f"folder {folder} into hub {cli.slug}: pages 2 created"
    for name, (_, says) in HOSTILE.items():
        assert re.search(rf"skipped {re.escape(name)}: the front matter .*{says}", result.stderr), (name, result.stderr)
    assert titles(cli) == ["good", "plain"]

    strict = cli("import", "folder", str(folder), "--strict", ok=False)
    assert strict.exit_code == 1 and "7 files cannot be pages" in strict.stderr
    assert titles(cli) == ["good", "plain"]  # nothing saved is lost, nothing half-saved


def _export_zip(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("hub/index.md", "---\nmemorywiki_export: 1\nhub: bomb\n---\n# bomb\n")
        for name, data in entries.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_small_entries_that_expand_past_the_ratio_are_a_bomb(cli, tmp_path):
    # forty entries of 1 MB of one byte each: every one at or under the size the checks once
    # let through unchecked; together 40 MB from a zip of about 40 KB
    data = _export_zip({f"hub/pages/p{i}.md": b"a" * 1_000_000 for i in range(40)})
    assert len(data) < 100_000
    bomb = tmp_path / "bomb.zip"
    bomb.write_bytes(data)
    before = titles(cli)
    refused = cli("import", "folder", str(bomb), ok=False)
    assert refused.exit_code == 1 and "zip bomb" in refused.stderr and "bomb.zip" in refused.stderr
    assert titles(cli) == before

    infos = zipfile.ZipFile(io.BytesIO(data)).infolist()
    with pytest.raises(FormatError) as err:
        check_entries(infos, EXPORT_LIMITS)
    assert "p0.md expands" in err.value.message


def test_many_tiny_entries_cannot_add_up_to_a_bomb():
    # each entry just within its own allowance, all together far past the archive's ratio
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(400):
            zf.writestr(f"pages/p{i}.md", b"a" * 5000)
    with pytest.raises(FormatError) as err:
        check_entries(zipfile.ZipFile(buf).infolist(), EXPORT_LIMITS)
    assert "together" in err.value.message


def test_ordinary_files_pass_the_checks():
    buf = io.BytesIO()
    text = "".join(f"Line {i}: a note about recall, indexing and the owner's view.\n" for i in range(20_000))
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("pages/long.md", text)
        zf.writestr("pages/rule.md", "=" * 3000)  # a small file of one character: within the allowance
        zf.writestr("pages/empty.md", "")
    check_entries(zipfile.ZipFile(buf).infolist(), EXPORT_LIMITS)
