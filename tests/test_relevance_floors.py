"""What is offered as related or as an answer clears a floor: `related` never lists a page whose
meaning is farther than the hub graph's limit for the embedding space (a small hub's nearest
page may be unrelated, at a negative cosine), and the hub page's search shows the results that
answer first and the rest behind "more"."""

from __future__ import annotations

import math
import re

from tests.polling import wait_curated, wait_indexed
from tests.small_hub import make_small_hub

DIM = 256


def _unit(*weights: float) -> list[float]:
    vector = [0.0] * DIM
    for i, w in enumerate(weights):
        vector[i] = w
    norm = math.sqrt(sum(w * w for w in vector))
    return [w / norm for w in vector]


def test_related_pages_are_above_the_spaces_floor(client, embedding_server):
    owner = {"Authorization": f"Bearer {client.post('/api/hubs', json={'slug': 'zoo'}).json()['owner_token']}"}
    texts = {
        "Otters": "Otters hold hands while they sleep.",
        "Sea otters": "Sea otters crack shellfish with stones.",
        "Tax forms": "File the quarterly tax forms by the deadline.",
    }
    # what the test embedder is asked for: each one-section page's breadcrumb and text
    embedding_server.plant(
        {
            f"{title}\n\n{text}": vector
            for (title, text), vector in zip(
                texts.items(), [_unit(1.0), _unit(0.9, 0.44), _unit(-1.0, 0.1)], strict=True
            )
        }
    )
    try:
        ids = {}
        for title, text in texts.items():
            r = client.post("/api/docs", json={"hub": "zoo", "title": title, "markdown": text}, headers=owner)
            ids[title] = r.json()["id"]
        wait_indexed(client, list(ids.values()))
        wait_curated(client)
        related = client.get(f"/api/docs/{ids['Otters']}/related", params={"k": 5}).json()["results"]
    finally:
        embedding_server.plant({})
    assert [r["id"] for r in related] == [ids["Sea otters"]], related
    assert related[0]["via"] == "vector" and related[0]["similarity"] > 0.85
    page = client.get(f"/{ids['Otters']}").text
    assert "Tax forms" not in page, "the doc page's related list holds no unrelated page"


def test_the_hub_search_shows_answers_first_and_the_rest_behind_more(client):
    _, ids = make_small_hub(client)
    wait_indexed(client, list(ids.values()))
    html = client.get("/hub/small", params={"q": "WAL archiving"}).text
    results = html.split('<section class="search-results"', 1)[1].split("</section>", 1)[0]
    first, _, more = results.partition('<details class="more-results">')
    assert "Postgres backups" in first, "the page that says it comes first"
    shown = re.findall(r'<div class="crumb"><a href="[^"]+">([^<]+)</a>', first)
    assert shown == ["Postgres backups"], shown
    assert more and re.search(r"<summary>\d+ more, less close to the question</summary>", more)
    assert len(re.findall(r'<div class="crumb">', more)) >= 3, "the rest stays within reach"
