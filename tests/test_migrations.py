"""Schema migrations (server/store/migrate.py), against the real embedded PostgreSQL.

A data dir made by the schema as released before checksums (0001/0002, kept verbatim in migrations/)
upgrades with its docs, chunks and BM25 postings intact; it ends with the same schema as a
fresh database; an edited migration stops the server; functions are re-applied at every start.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import shutil
from importlib import resources
from pathlib import Path

import psycopg
import pytest
from memorywiki.server.store.migrate import RELEASED, MigrationError, migrate

RELEASED_DIR = Path(str(resources.files("memorywiki.server.store") / "migrations"))
BASELINE = ["0003_core_tables.sql", "0004_bm25_tables.sql", "0005_triggers.sql", "0006_privacy.sql"]
# Migrations added after the baseline: they run on a fresh database and on an upgraded one alike.
LATER = sorted(p.name for p in RELEASED_DIR.glob("*.sql") if p.name > BASELINE[-1])
_names = itertools.count()


@pytest.fixture
def new_db(pg_server):
    """A function that makes an empty database and returns its URL."""

    def make() -> str:
        name = f"mw_migr_{next(_names)}"
        with psycopg.connect(pg_server._server.get_uri(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        return pg_server._server.get_uri(name)

    return make


@pytest.fixture
def store_copy(tmp_path) -> Path:
    """A copy of the package's migrations/ and functions/, to edit."""
    with resources.as_file(resources.files("memorywiki.server.store")) as store:
        for folder in ("migrations", "functions"):
            shutil.copytree(store / folder, tmp_path / folder)
    return tmp_path


def legacy_migrate(url: str) -> None:
    """The runner as released: every file once, recorded by name only."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for path in sorted(RELEASED_DIR / name for name in RELEASED):
            with conn.transaction():
                conn.execute(path.read_text(encoding="utf-8"))
                conn.execute("INSERT INTO schema_migrations (name) VALUES (%s)", (path.name,))


def run(coro):
    return asyncio.run(coro)


# ---------------------------------------------------------------- data written the old way

DOCS = [
    # id, hub slug, title, sections, gates
    (
        "pubdoc0001",
        "alpha",
        "Deploy notes",
        ["We deploy with a blue green switch.", "Rollbacks keep the previous release warm."],
        {},
    ),
    (
        "pubdoc0002",
        "alpha",
        "Postgres tuning",
        ["Vacuum keeps the visibility map current.", "BM25 ranks full text better than ts_rank."],
        {},
    ),
    ("pubdoc0003", "beta", "Roses", ["Roses need sun, water and patience in the garden."], {}),
    ("secret0001", "alpha", "Deploy secrets", ["The deploy key lives in the vault."], {"password_hash": "argon2-hash"}),
    ("draftdoc01", "alpha", "Draft deploy plan", ["A deploy plan nobody should see yet."], {"is_draft": True}),
    ("nohubdoc01", None, "Loose page", ["A deploy page outside any hub."], {}),
]

QUERIES = ["how do we deploy?", "vacuum visibility", "garden roses", "ranking full text", "vault"]


def seed(url: str) -> dict[str, int]:
    """Hubs, docs (public, private, draft, hubless), chunks and a bundle, written with plain SQL
    the way the released server did; BM25 postings come from the released triggers."""
    with psycopg.connect(url, autocommit=True) as conn:
        hubs = {
            slug: conn.execute(
                "INSERT INTO hubs (slug, owner_token_hash) VALUES (%s, 'h') RETURNING id", (slug,)
            ).fetchone()[0]
            for slug in ("alpha", "beta")
        }
        for doc_id, slug, title, sections, gates in DOCS:
            hub = hubs.get(slug)
            with conn.transaction():
                conn.execute(
                    "INSERT INTO docs (id, hub_id, title, markdown, edit_token_hash, source_hash, is_draft,"
                    " password_hash) VALUES (%s, %s, %s, %s, 'e', %s, %s, %s)",
                    (
                        doc_id,
                        hub,
                        title,
                        "\n\n".join(sections),
                        doc_id,
                        gates.get("is_draft", False),
                        gates.get("password_hash"),
                    ),
                )
                for ordinal, body in enumerate(sections):
                    heading = f"{title} > Part {ordinal}"
                    conn.execute(
                        "INSERT INTO chunks (doc_id, hub_id, ordinal, heading_path, markdown, hash, tsv)"
                        " VALUES (%s, %s, %s, %s, %s, md5(%s), setweight(to_tsvector('english', %s), 'A')"
                        " || setweight(to_tsvector('english', %s), 'B'))",
                        (doc_id, hub, ordinal, heading, body, body, heading, body),
                    )
        conn.execute("INSERT INTO bundles (id, hub_id, title) VALUES ('bundle0001', %s, 'Ops')", (hubs["alpha"],))
        conn.execute("INSERT INTO bundle_docs VALUES ('bundle0001', 'pubdoc0001', 0), ('bundle0001', 'pubdoc0002', 1)")
        conn.execute("UPDATE bundles SET source_hash = bundle_source_hash(id)")
    return hubs


def snapshot(url: str, hubs: dict[str, int]) -> dict:
    """Every row that matters, and what full-text search answers."""
    with psycopg.connect(url, autocommit=True) as conn:
        state = {
            table: conn.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()
            for table, order in [
                ("hubs", "id"),
                ("docs", "id"),
                ("chunks", "id"),
                ("bundles", "id"),
                ("bundle_docs", "bundle_id, position"),
                ("bm25_chunks", "chunk_id"),
                ("bm25_postings", "hub_id, term, chunk_id"),
                ("bm25_config", "id"),
            ]
        }
        state["bm25_terms"] = conn.execute(
            "SELECT hub_id, term, sum(df) FROM bm25_terms GROUP BY 1, 2 HAVING sum(df) <> 0 ORDER BY 1, 2"
        ).fetchall()
        state["bm25_hubs"] = conn.execute(
            "SELECT hub_id, sum(n_chunks), sum(total_len) FROM bm25_hubs GROUP BY 1 ORDER BY 1"
        ).fetchall()
        # The same hits in the same order with the same scores, to 12 places: the search functions
        # are re-applied at every start, and a rewrite of their arithmetic (the same sums in another
        # order) may move a score's last bit without changing what search answers.
        state["search"] = {
            (slug, q): tuple(
                [(hit, round(score, 12)) for hit, score in conn.execute(sql, (hub, q)).fetchall()]
                for sql in ("SELECT * FROM bm25_search(%s, %s, 10)", "SELECT * FROM bm25_search_docs(%s, %s, 10)")
            )
            for slug, hub in hubs.items()
            for q in QUERIES
        }
    return state


def assert_kept(before: dict, after: dict) -> None:
    """Every row keeps every value it had (later migrations may append columns)."""
    for part, rows in before.items():
        new = after[part]
        if isinstance(rows, list) and rows and isinstance(rows[0], tuple):
            assert len(new) == len(rows) and [row[: len(old)] for row, old in zip(new, rows, strict=True)] == rows, part
        else:
            assert new == rows, part


# ---------------------------------------------------------------- the schema, from the catalogs

CATALOG = {
    "relations": """
        SELECT c.relname, c.relkind::text, c.relpersistence::text, c.relrowsecurity,
               c.relforcerowsecurity, coalesce(c.relacl::text[], '{}')
        FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace ORDER BY 1""",
    "columns": """
        SELECT c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
               pg_get_expr(d.adbin, d.adrelid), a.attidentity::text, a.attgenerated::text,
               a.attcollation::regcollation::text, coalesce(a.attacl::text[], '{}')
        FROM pg_attribute a
        JOIN pg_class c ON c.oid = a.attrelid
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
          AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY 1, 2""",
    "indexes": "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1",
    "constraints": """
        SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid), condeferrable, condeferred
        FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2""",
    "functions": """
        SELECT p.proname, pg_get_function_identity_arguments(p.oid), pg_get_functiondef(p.oid),
               coalesce(p.proacl::text[], '{}')
        FROM pg_proc p
        WHERE p.pronamespace = 'public'::regnamespace
          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
        ORDER BY 1, 2""",
    "triggers": """
        SELECT tgrelid::regclass::text, tgname, pg_get_triggerdef(oid), tgenabled::text
        FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1, 2""",
    "policies": """
        SELECT tablename, policyname, permissive, roles::text[], cmd, qual, with_check
        FROM pg_policies WHERE schemaname = 'public' ORDER BY 1, 2""",
    "schema": "SELECT nspacl::text[] FROM pg_namespace WHERE nspname = 'public'",
    "extensions": "SELECT extname FROM pg_extension ORDER BY 1",
    "roles": "SELECT rolname FROM pg_roles WHERE rolname = 'memorywiki_public'",
}


def catalog(url: str) -> dict[str, list]:
    with psycopg.connect(url) as conn:
        return {name: conn.execute(sql).fetchall() for name, sql in CATALOG.items()}


def bodies(url: str) -> dict[str, str]:
    return {row[0]: row[2] for row in catalog(url)["functions"]}


# ---------------------------------------------------------------- tests


def test_released_copies_are_the_released_files():
    """The upgrade tests below start from exactly what was released."""
    for name, digest in RELEASED.items():
        assert hashlib.sha256((RELEASED_DIR / name).read_bytes()).hexdigest() == digest, name


def test_upgrade_keeps_docs_chunks_and_postings_searchable(new_db):
    url = new_db()
    legacy_migrate(url)
    hubs = seed(url)
    before = snapshot(url, hubs)
    assert before["bm25_postings"] and before["search"][("alpha", "how do we deploy?")][0]

    assert run(migrate(url)) == LATER  # the baseline replaces what is there; only newer files run
    assert_kept(before, snapshot(url, hubs))  # later files may append columns, never change a value

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT name, checksum, ran FROM schema_migrations ORDER BY name").fetchall()
        recorded = {name: (digest, ran) for name, digest, ran in rows}
        assert recorded["0001_core.sql"] == (RELEASED["0001_core.sql"], True)
        assert recorded["0002_bm25.sql"] == (RELEASED["0002_bm25.sql"], True)
        assert {n for n, (_, ran) in recorded.items() if not ran} >= {"0003_core_tables.sql", "0006_privacy.sql"}
        assert all(digest for digest, _ in recorded.values())
        # the upgraded schema keeps indexing new writes, and what it holds equals a rebuild
        # (impact, only an ordering key, depends on the hub's average length when posted)
        with conn.transaction():
            conn.execute(
                "INSERT INTO docs (id, hub_id, title, markdown, edit_token_hash, source_hash)"
                " VALUES ('newdoc0001', %s, 'Canary', 'canary deploys', 'e', 's')",
                (hubs["alpha"],),
            )
            conn.execute(
                "INSERT INTO chunks (doc_id, hub_id, ordinal, heading_path, markdown, hash, tsv)"
                " VALUES ('newdoc0001', %s, 0, 'Canary', 'canary deploys', 'h',"
                " to_tsvector('english', 'canary deploys'))",
                (hubs["alpha"],),
            )
        found = conn.execute(
            "SELECT b.doc_id FROM bm25_search(%s, 'canary', 5) s JOIN bm25_chunks b USING (chunk_id)", (hubs["alpha"],)
        ).fetchall()
        assert found == [("newdoc0001",)]
        postings = "SELECT hub_id, term, chunk_id, tf, len FROM bm25_postings ORDER BY 1, 2, 3"
        incremental = conn.execute(postings).fetchall()
        conn.execute("SELECT bm25_rebuild()")
        assert conn.execute(postings).fetchall() == incremental


def test_upgraded_data_dir_answers_recall(new_db):
    """Through the app: the upgraded database serves full-text recall behind the privacy gates."""
    from memorywiki.server.app import create_app
    from memorywiki.server.config import Settings
    from starlette.testclient import TestClient

    url = new_db()
    legacy_migrate(url)
    seed(url)
    # TestClient's Host is "testserver": the public URL makes it a trusted one
    with TestClient(create_app(Settings(database_url=url, embedder="none", public_url="http://testserver"))) as client:
        response = client.post("/api/hub/alpha/recall", json={"question": "how do we deploy?", "k": 5})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["mode"] == "fulltext"
        ids = {r["doc_id"] for r in body["results"]}
        assert "pubdoc0001" in ids
        assert not ids & {"secret0001", "draftdoc01", "nohubdoc01"}


def test_fresh_and_upgraded_databases_have_the_same_schema(new_db):
    fresh, upgraded = new_db(), new_db()
    assert run(migrate(fresh)) == BASELINE + LATER
    legacy_migrate(upgraded)
    seed(upgraded)
    run(migrate(upgraded))
    a, b = catalog(fresh), catalog(upgraded)
    # not two empty lists: the comparison covers the real schema
    assert len(a["policies"]) >= 5 and len(a["triggers"]) >= 9
    assert {"bm25_search", "doc_is_public", "bundle_source_hash"} <= {f[0] for f in a["functions"]}
    for part in CATALOG:
        assert a[part] == b[part], part


def test_edited_migration_refuses_to_start(new_db, store_copy):
    url = new_db()
    assert run(migrate(url, store_copy))
    edited = store_copy / "migrations" / "0005_triggers.sql"
    edited.write_text(edited.read_text() + "\nCREATE INDEX docs_title ON docs (title);\n")
    with pytest.raises(MigrationError) as err:
        run(migrate(url, store_copy))
    message = str(err.value)
    assert "0005_triggers.sql was edited after it was applied" in message
    assert "new migration file" in message
    with psycopg.connect(url) as conn:  # and nothing was applied
        assert conn.execute("SELECT to_regclass('docs_title')").fetchone()[0] is None


def test_the_server_refuses_to_start_on_a_mismatch(new_db):
    from memorywiki.server.app import create_app
    from memorywiki.server.config import Settings
    from starlette.testclient import TestClient

    url = new_db()
    run(migrate(url))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE schema_migrations SET checksum = repeat('0', 64) WHERE name = '0004_bm25_tables.sql'")
    with pytest.raises(MigrationError, match=r"0004_bm25_tables\.sql was edited"):
        with TestClient(create_app(Settings(database_url=url, embedder="none"))):
            pass


def test_a_database_from_a_newer_version_is_refused(new_db):
    url = new_db()
    run(migrate(url))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_migrations (name, checksum) VALUES ('0099_future.sql', 'x')")
    with pytest.raises(MigrationError, match=r"0099_future\.sql applied, which this version"):
        run(migrate(url))


def test_a_partly_released_database_is_refused(new_db):
    url = new_db()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        conn.execute((RELEASED_DIR / "0001_core.sql").read_text())
        conn.execute("INSERT INTO schema_migrations (name) VALUES ('0001_core.sql')")
    with pytest.raises(MigrationError, match=r"has 0001_core\.sql but not 0002_bm25\.sql"):
        run(migrate(url))


def test_crlf_checkout_is_not_an_edit(new_db, store_copy):
    url = new_db()
    run(migrate(url, store_copy))
    for path in (store_copy / "migrations").glob("*.sql"):
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert run(migrate(url, store_copy)) == []


def test_functions_are_reapplied_at_every_start(new_db, store_copy):
    """A changed body reaches an existing database with no migration; unchanged, nothing moves."""
    url = new_db()
    assert run(migrate(url, store_copy))
    first = catalog(url)
    assert run(migrate(url, store_copy)) == [] and catalog(url) == first  # idempotent

    index = store_copy / "functions" / "30_bm25_postings.sql"
    original = "SELECT coalesce((SELECT heading_weight FROM bm25_config), 2)"
    assert original in index.read_text()
    index.write_text(index.read_text().replace(original, "SELECT 5"))
    assert run(migrate(url, store_copy)) == []
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT bm25_heading_weight()").fetchone()[0] == 5
        assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len(BASELINE + LATER)
    assert run(migrate(url)) == []  # the package's body again
    assert bodies(url) == {row[0]: row[2] for row in first["functions"]}


def test_a_broken_function_file_is_named(new_db, store_copy):
    url = new_db()
    (store_copy / "functions" / "50_broken.sql").write_text(
        "CREATE OR REPLACE FUNCTION broken() RETURNS int LANGUAGE sql AS $$ SELECT nope FROM nowhere $$;"
    )
    with pytest.raises(MigrationError, match=r"function file 50_broken\.sql failed"):
        run(migrate(url, store_copy))


async def test_two_servers_starting_at_once(new_db):
    """Both wait their turn on the advisory lock: the schema is made once, on a fresh database
    and again on an existing one, and both servers can write."""
    from memorywiki.server.store.db import Database

    url = new_db()
    for round_ in range(2):
        dbs = [Database(url, min_size=1, max_size=2) for _ in range(2)]
        await asyncio.gather(*(db.open() for db in dbs))
        try:
            for i, db in enumerate(dbs):
                async with db.owner.connection() as conn:
                    rows = await (await conn.execute("SELECT name FROM schema_migrations ORDER BY name")).fetchall()
                    assert [r["name"] for r in rows] == BASELINE + LATER
                    await conn.execute(
                        "INSERT INTO hubs (slug, owner_token_hash) VALUES (%s, 'x')", (f"hub-{round_}-{i}",)
                    )
        finally:
            await asyncio.gather(*(db.close() for db in dbs))
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM hubs").fetchone()[0] == 4


def test_a_worker_refuses_with_one_line(new_db):
    """`memorywiki worker` on a database whose migration was edited: the reason, no traceback."""
    import os
    import subprocess
    import sys

    url = new_db()
    run(migrate(url))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE schema_migrations SET checksum = repeat('0', 64) WHERE name = '0005_triggers.sql'")
    env = {**os.environ, "DATABASE_URL": url, "MEMORYWIKI_EMBEDDER": "openai", "OPENAI_API_KEY": "x"}
    result = subprocess.run(
        [sys.executable, "-c", "from memorywiki.server.worker import run_worker; run_worker()"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .startswith("memorywiki worker: migration 0005_triggers.sql was edited after it was applied")
    )


def test_fresh_database_runs_the_baseline_not_the_superseded_release(new_db):
    """The released 0001/0002 stay on disk verbatim but a fresh database never runs them."""
    url = new_db()
    ran = run(migrate(url))
    assert "0001_core.sql" not in ran and "0002_bm25.sql" not in ran
    assert ran == BASELINE + LATER
    with psycopg.connect(url, autocommit=True) as conn:
        names = {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
    assert not names & set(RELEASED)
    assert run(migrate(url)) == []  # and a restart runs nothing, released files still skipped


def test_the_forward_index_is_rewritten_uncompressed_with_a_tf_map_and_the_same_search(new_db):
    """0062 and 0063: bm25_chunks rows compressed by the schema before them are stored plain and
    get a jsonb map from term to tf (the search re-scores from it once per pruned term); every
    search answers the same, and so does a row without the map (written by an older server)."""
    url = new_db()
    run(migrate(url))
    seed(url)
    # a chunk with 150 distinct lexemes: its forward index is ~3.5 kB, which the old schema
    # compressed (rows over ~2 kB) and the new one keeps plain (rows up to 8160 bytes)
    words = " ".join(f"lexeme{i:04d}x" for i in range(150))
    compressed = (
        "SELECT count(*) FROM bm25_chunks WHERE pg_column_compression(terms) IS NOT NULL"
        " OR pg_column_compression(tfs) IS NOT NULL OR pg_column_compression(impacts) IS NOT NULL"
    )
    forward = "SELECT chunk_id, terms, tfs, impacts FROM bm25_chunks ORDER BY chunk_id"
    questions = ["lexeme0007x lexeme0149x", "how do we deploy?", "rollback"]
    with psycopg.connect(url, autocommit=True) as conn:
        hub = conn.execute("SELECT id FROM hubs WHERE slug = 'alpha'").fetchone()[0]
        with conn.transaction():
            conn.execute(
                "INSERT INTO docs (id, hub_id, title, markdown, edit_token_hash, source_hash)"
                " VALUES ('longdoc001', %s, 'Glossary', %s, 'e', 's')",
                (hub, words),
            )
            conn.execute(
                "INSERT INTO chunks (doc_id, hub_id, ordinal, heading_path, markdown, hash, tsv)"
                " VALUES ('longdoc001', %s, 0, 'Glossary', %s, 'h', to_tsvector('english', %s))",
                (hub, words, words),
            )

        def answers() -> list:
            return [conn.execute("SELECT * FROM bm25_search(%s, %s, 10)", (hub, q)).fetchall() for q in questions]

        before = (conn.execute(forward).fetchall(), answers())
        assert before[1][0][0][0] == conn.execute("SELECT id FROM chunks WHERE doc_id = 'longdoc001'").fetchone()[0]
        # the table as the schema before 0062 left it: no map, and the long row compressed
        conn.execute("ALTER TABLE bm25_chunks DROP COLUMN tf_map")
        conn.execute("ALTER TABLE bm25_chunks RESET (toast_tuple_target)")
        conn.execute(
            "UPDATE bm25_chunks SET terms = terms || '{}'::text[], tfs = tfs || '{}'::integer[],"
            " impacts = impacts || '{}'::real[]"
        )
        conn.execute(
            "DELETE FROM schema_migrations WHERE name IN ('0062_bm25_forward_index_uncompressed.sql',"
            " '0063_bm25_forward_index_tf_map.sql')"
        )
        assert conn.execute(compressed).fetchone()[0] >= 1

    assert run(migrate(url)) == ["0062_bm25_forward_index_uncompressed.sql", "0063_bm25_forward_index_tf_map.sql"]
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute(compressed).fetchone()[0] == 0
        assert (conn.execute(forward).fetchall(), answers()) == before
        maps = "SELECT count(*) FROM bm25_chunks WHERE tf_map IS DISTINCT FROM jsonb_object(terms, tfs::text[])"
        assert conn.execute(maps).fetchone()[0] == 0
        long_row = " FROM bm25_chunks b JOIN chunks c ON c.id = b.chunk_id WHERE c.doc_id = 'longdoc001'"
        assert conn.execute("SELECT tf_map ->> 'lexeme0007x'" + long_row).fetchone()[0] == "1"
        # a row without the map, as a server from before 0063 writes it, is re-scored from its arrays
        conn.execute("UPDATE bm25_chunks SET tf_map = NULL")
        assert answers() == before[1]
        # and a row written from now on is plain and mapped from the start (150 lexemes, the
        # heading's and the new one)
        with conn.transaction():
            conn.execute(
                "UPDATE chunks SET markdown = markdown || ' lexeme9999x',"
                " tsv = to_tsvector('english', markdown || ' lexeme9999x') WHERE doc_id = 'longdoc001'"
            )
        assert conn.execute(compressed).fetchone()[0] == 0
        assert conn.execute("SELECT cardinality(terms), tf_map ->> 'lexeme9999x'" + long_row).fetchone() == (152, "1")


def test_an_upgrade_reposts_the_chunks_holding_cjk_and_nothing_else(new_db, store_copy):
    """0064: a data dir indexed by the analyzer before (every script through to_tsvector('english'),
    here the function files with bm25_tsvector defined as just that) re-posts the chunks holding
    Han, Kana or Hangul as bigrams; every other posting keeps every value, every doc and chunk
    stays, a private doc stays out of the index."""
    (store_copy / "migrations" / "0064_bm25_cjk_bigrams.sql").unlink()
    (store_copy / "functions" / "25_bm25_analyzer.sql").write_text(
        "CREATE OR REPLACE FUNCTION bm25_tsvector(p_text text) RETURNS tsvector LANGUAGE sql IMMUTABLE"
        " AS $$ SELECT to_tsvector('english', p_text) $$;\n"
    )
    url = new_db()
    run(migrate(url, store_copy))
    hubs = seed(url)
    cjk = [
        ("cjkdoc0001", "花园", "春天到了，院子里的玫瑰花开得特别鲜艳。", {}),
        ("cjkdoc0002", "Garden", "봄이 되자 마당의 장미꽃이 아주 예쁘게 피었습니다.", {}),
        ("cjkdoc0003", "庭", "春になって庭のバラがとてもきれいに咲きました。", {"is_draft": True}),
    ]
    with psycopg.connect(url, autocommit=True) as conn:
        for doc_id, title, body, gates in cjk:
            with conn.transaction():
                conn.execute(
                    "INSERT INTO docs (id, hub_id, title, markdown, edit_token_hash, source_hash, is_draft)"
                    " VALUES (%s, %s, %s, %s, 'e', 's', %s)",
                    (doc_id, hubs["alpha"], title, body, gates.get("is_draft", False)),
                )
                conn.execute(
                    "INSERT INTO chunks (doc_id, hub_id, ordinal, heading_path, markdown, hash, tsv)"
                    " VALUES (%s, %s, 0, %s, %s, 'h', ''::tsvector)",
                    (doc_id, hubs["alpha"], title, body),
                )
    questions = {"玫瑰什么时候开？": "cjkdoc0001", "장미는 언제 피나요?": "cjkdoc0002", "バラはいつ咲く？": None}
    found = "SELECT b.doc_id FROM bm25_search(%s, %s, 1) s JOIN bm25_chunks b USING (chunk_id)"
    others = (
        "SELECT p.* FROM bm25_postings p JOIN chunks c ON c.id = p.chunk_id"
        " WHERE c.doc_id NOT LIKE 'cjkdoc%%' ORDER BY p.hub_id, p.term, p.chunk_id"
    )
    with psycopg.connect(url, autocommit=True) as conn:
        assert all(conn.execute(found, (hubs["alpha"], q)).fetchall() == [] for q in questions)
        before = snapshot(url, hubs)
        kept = conn.execute(others).fetchall()

    assert run(migrate(url)) == ["0064_bm25_cjk_bigrams.sql"]
    after = snapshot(url, hubs)
    for table in ("hubs", "docs", "chunks", "bundles", "bundle_docs"):
        assert after[table] == before[table], table
    for (slug, question), hits in before["search"].items():
        # the English questions find the same chunks and docs in the same order; in the hub
        # that holds CJK their scores move, with its chunks' lengths and so its average length
        same = after["search"][(slug, question)]
        assert (
            same == hits if slug == "beta" else [[h[0] for h in r] for r in same] == [[h[0] for h in r] for r in hits]
        )
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute(others).fetchall() == kept
        for question, doc_id in questions.items():
            assert conn.execute(found, (hubs["alpha"], question)).fetchall() == ([(doc_id,)] if doc_id else []), (
                question
            )
        assert conn.execute("SELECT count(*) FROM bm25_chunks WHERE doc_id = 'cjkdoc0003'").fetchone()[0] == 0
        # what the upgrade left equals a rebuild from scratch (impact aside: an ordering key that
        # depends on the hub's average length when a chunk was posted)
        postings = "SELECT hub_id, term, chunk_id, tf, len FROM bm25_postings ORDER BY 1, 2, 3"
        counters = "SELECT hub_id, term, sum(df) FROM bm25_terms GROUP BY 1, 2 HAVING sum(df) <> 0 ORDER BY 1, 2"
        upgraded = (conn.execute(postings).fetchall(), conn.execute(counters).fetchall())
        conn.execute("SELECT bm25_rebuild()")
        assert (conn.execute(postings).fetchall(), conn.execute(counters).fetchall()) == upgraded
