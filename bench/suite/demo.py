"""A small demo hub for the page benchmark and the README's screenshots: three topics a
person's AI memory might hold (a Postgres migration, a vegetable garden, a trip), so the
graph has clusters, plus a bundle and links between pages."""

from __future__ import annotations

HUB = "field-notes"
DESCRIPTION = "What I learned moving our app to PostgreSQL, growing vegetables and planning a trip to Japan."

DOCS: list[tuple[str, str]] = [
    (
        "Postgres upgrade plan",
        """PostgreSQL database migration notes. Moving the app database from PostgreSQL 15 to 18 with **pg_upgrade --link**, one
maintenance window, and a rollback path.

## Steps

1. Take a base backup and check the WAL archive.
2. Run `pg_upgrade --check` against a restored copy.
3. Stop the app, upgrade with `--link`, run `vacuumdb --analyze-in-stages`.

```bash
pg_upgrade -b /usr/lib/postgresql/15/bin -B /usr/lib/postgresql/18/bin \\
  -d /srv/pg15 -D /srv/pg18 --link --check
```

## Rollback

Before the new cluster starts, the old one is untouched: start PostgreSQL 15 again.
After that, restore the base backup. See [HNSW index tuning](/DOC1) for what to rebuild.
""",
    ),
    (
        "HNSW index tuning",
        """PostgreSQL database migration notes. Vector search in pgvector uses HNSW. Build parameters trade recall for build time.

## Parameters

| parameter | default | what it does |
|---|---|---|
| `m` | 16 | links per node: more is better recall, more memory |
| `ef_construction` | 64 | candidate list while building |
| `hnsw.ef_search` | 40 | candidate list while searching |

## Filtered queries

With a `WHERE hub_id = …` filter, set `hnsw.iterative_scan = relaxed_order` so the index keeps
scanning until it has enough rows.

```sql
SET hnsw.iterative_scan = relaxed_order;
SELECT id FROM chunks WHERE hub_id = 7 ORDER BY embedding <=> $1 LIMIT 10;
```
""",
    ),
    (
        "Vacuum and bloat",
        """PostgreSQL database migration notes. Autovacuum keeps PostgreSQL tables from bloating; on busy tables it needs help.

## Signs of bloat

Table size grows while the row count stays flat, and index scans slow down.

## Fixes

- Lower `autovacuum_vacuum_scale_factor` on the busiest tables.
- Run `VACUUM (VERBOSE, ANALYZE)` after bulk deletes.
- `REINDEX CONCURRENTLY` an index that grew too large.
""",
    ),
    (
        "Connection pooling with psycopg",
        """PostgreSQL database migration notes. The app opens a `psycopg_pool.AsyncConnectionPool` per role, so a burst of
requests waits for a connection instead of overwhelming PostgreSQL.

```python
pool = AsyncConnectionPool(url, min_size=1, max_size=10, open=False)
await pool.open(wait=True)
async with pool.connection() as conn:
    await conn.execute("SELECT 1")
```

Size the pool to the database's cores, not to the number of requests.
""",
    ),
    (
        "Tomato seedlings",
        """Vegetable garden notes: soil, plants, water. Start tomato seeds indoors six to eight weeks before the last frost.

## Light and warmth

Seedlings need 14 hours of light and soil around 24 °C to germinate well. Leggy seedlings want
more light, not more water.

## Hardening off

A week before planting out, put the tomato seedlings outside for a few hours a day, longer each
day. See [raised bed soil](/DOC5).
""",
    ),
    (
        "Raised bed soil",
        """Vegetable garden notes: soil, plants, water. A raised bed filled with one third compost, one third topsoil and one third coarse material drains
well and stays loose.

## Feeding the soil

Top up with compost every spring; mulch with straw in summer to keep moisture in the soil.
Tomatoes and squash are heavy feeders: add well-rotted manure before planting.
""",
    ),
    (
        "Watering schedule",
        """Vegetable garden notes: soil, plants, water. Water the garden deeply twice a week rather than a little every day: deep watering sends roots
down. Morning is best, so leaves dry before night.

- Tomatoes: at the base, never on the leaves.
- Lettuce: little and often in heat.
- Squash: deeply, then let the soil dry a little.
""",
    ),
    (
        "Composting basics",
        """Vegetable garden notes: soil, plants, water. Compost needs greens (kitchen scraps, grass clippings) and browns (dry leaves, cardboard) in
roughly equal parts, air and some moisture.

## Troubleshooting

- Smells bad: too wet, add browns and turn it.
- Nothing happens: too dry or too many browns, add greens and water.

Finished compost goes into the [raised bed soil](/DOC5).
""",
    ),
    (
        "Kyoto in three days",
        """Japan trip notes: trains, temples, Kyoto. Three days in Kyoto: temples early, markets at noon, quiet streets at dusk.

## Day 1

Fushimi Inari at sunrise, before the crowds; Nishiki market for lunch.

## Day 2

Arashiyama bamboo grove, then the Okochi Sanso garden.

## Day 3

Walk the Philosopher's Path to Ginkaku-ji. See [the rail pass notes](/DOC9).
""",
    ),
    (
        "Japan rail pass",
        """Japan trip notes: trains, temples, Kyoto. The nationwide rail pass pays off for Tokyo – Kyoto – Hiroshima in a week; for a Kyoto-only trip,
buy single shinkansen tickets instead.

| route | one way | pass covers |
|---|---|---|
| Tokyo – Kyoto | ¥14,000 | yes (not Nozomi) |
| Kyoto – Hiroshima | ¥11,000 | yes (not Nozomi) |

Reserve seats at the ticket machines; the pass covers Hikari and Kodama trains.
""",
    ),
    (
        "Packing list for Japan",
        """Japan trip notes: trains, temples, Kyoto. Pack light: trains have little room for large suitcases, and hotels forward luggage cheaply.

- A coin purse: many shops and temples take cash only.
- Slip-on shoes for temples and ryokan.
- A pocket Wi-Fi or an eSIM, booked before the trip.
""",
    ),
]

BUNDLE = ("Database migration runbook", "Read in this order before the upgrade weekend.", [0, 2, 1])
SEARCH = "how do I roll back the upgrade"
# The word-hash embedder the demo runs with (tests/embedding_server.py) puts related texts
# further apart than a real model does: its graph joins pages closer than this instead of 0.42.
MAX_DISTANCE = 0.775
