"""The five pages of tests/data/small-hub, captured into a hub: a new user's first hub."""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).parent / "data" / "small-hub"
NAMES = ("postgres-vacuum", "postgres-pooling", "postgres-backups", "node-upgrade", "onboarding")


def pages() -> list[tuple[str, str]]:
    """(title, markdown) of each page, the title from its `# ` line."""
    out = []
    for name in NAMES:
        markdown = (FOLDER / f"{name}.md").read_text()
        out.append((markdown.splitlines()[0].removeprefix("# ").strip(), markdown))
    return out


def make_small_hub(client, slug: str = "small") -> tuple[dict[str, str], dict[str, str]]:
    """Create the hub and capture its pages with `client` (a TestClient or an httpx.Client with
    a base URL): (the owner's auth header, page id by title)."""
    r = client.post("/api/hubs", json={"slug": slug})
    assert r.status_code == 201, r.text
    owner = {"Authorization": f"Bearer {r.json()['owner_token']}"}
    ids = {}
    for title, markdown in pages():
        r = client.post("/api/docs", json={"hub": slug, "title": title, "markdown": markdown}, headers=owner)
        assert r.status_code == 201, r.text
        ids[title] = r.json()["id"]
    return owner, ids
