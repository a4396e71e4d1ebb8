"""BM25 inside PostgreSQL (the bm25 files in server/store/functions/), against the real embedded
server.

Rows are written with plain SQL, the way the indexer does: the triggers alone must keep the
postings and the statistics right.
"""

from __future__ import annotations

import math
import random
import threading

import psycopg
import pytest

K1, B = 1.2, 0.75


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def connect(url: str) -> psycopg.Connection:
    return psycopg.connect(url, autocommit=True)


def add_hub(conn, slug: str) -> int:
    return conn.execute("INSERT INTO hubs (slug, owner_token_hash) VALUES (%s, 'x') RETURNING id", (slug,)).fetchone()[
        0
    ]


def add_doc(conn, doc_id: str, hub: int | None, title: str, chunks: list[str], **gates) -> list[int]:
    """A doc with one chunk per body text; heading_path is the title. Returns chunk ids."""
    conn.execute(
        "INSERT INTO docs (id, hub_id, title, markdown, edit_token_hash, source_hash)"
        " VALUES (%s, %s, %s, %s, 'e', 's')",
        (doc_id, hub, title, "\n\n".join(chunks)),
    )
    if gates:
        set_gates(conn, doc_id, **gates)
    ids = []
    for i, body in enumerate(chunks):
        ids.append(add_chunk(conn, doc_id, hub, i, title, body))
    return ids


def add_chunk(conn, doc_id, hub, ordinal, heading, body) -> int:
    return conn.execute(
        "INSERT INTO chunks (doc_id, hub_id, ordinal, heading_path, markdown, hash, tsv)"
        " VALUES (%s, %s, %s, %s, %s, md5(%s), to_tsvector('english', %s || ' ' || %s))"
        " RETURNING id",
        (doc_id, hub, ordinal, heading, body, body, heading, body),
    ).fetchone()[0]


def set_gates(conn, doc_id, **cols):
    sets = ", ".join(f"{k} = %s" for k in cols)
    conn.execute(f"UPDATE docs SET {sets} WHERE id = %s", (*cols.values(), doc_id))


def search(conn, hub, query, limit=10, k1=K1, b=B) -> list[tuple[int, float]]:
    return conn.execute(
        "SELECT chunk_id, score FROM bm25_search(%s, %s, %s, %s, %s)", (hub, query, limit, k1, b)
    ).fetchall()


def lexemes(conn, text: str) -> dict[str, int]:
    """Lexeme -> number of positions, from Postgres' own English configuration."""
    rows = conn.execute(
        "SELECT lexeme, cardinality(positions) FROM unnest(to_tsvector('english', %s))", (text,)
    ).fetchall()
    return dict(rows)


def heading_weight(conn) -> int:
    return conn.execute("SELECT heading_weight FROM bm25_config").fetchone()[0]


def chunk_tf(conn, heading: str, body: str) -> dict[str, int]:
    w = heading_weight(conn)
    tf = dict(lexemes(conn, body))
    for t, n in lexemes(conn, heading).items():
        tf[t] = tf.get(t, 0) + w * n
    return {t: n for t, n in tf.items() if n > 0}


def expected_state(conn):
    """Recount from scratch, independently of the triggers: per hub N / total length / df,
    and every posting, from the public chunks that have a hub."""
    rows = conn.execute(
        "SELECT c.id, c.hub_id, c.heading_path, c.markdown FROM chunks c JOIN docs d ON d.id = c.doc_id"
        " WHERE c.hub_id IS NOT NULL AND d.is_draft = false AND d.deleted_at IS NULL"
        " AND d.password_hash IS NULL AND cardinality(d.allowed_emails) = 0"
    ).fetchall()
    hubs: dict[int, list[int]] = {}
    df: dict[tuple[int, str], int] = {}
    postings = {}
    for cid, hub, heading, body in rows:
        tf = chunk_tf(conn, heading, body)
        n, total = hubs.get(hub, [0, 0])
        hubs[hub] = [n + 1, total + sum(tf.values())]
        for t, n_t in tf.items():
            df[(hub, t)] = df.get((hub, t), 0) + 1
            postings[(cid, t)] = (hub, n_t, sum(tf.values()))
    return hubs, df, postings


def actual_state(conn):
    # the counters are delta rows: their sums are the values
    hubs = {
        h: [int(n), int(total)]
        for h, n, total in conn.execute(
            "SELECT hub_id, sum(n_chunks), sum(total_len) FROM bm25_hubs GROUP BY hub_id"
            " HAVING sum(n_chunks) <> 0 OR sum(total_len) <> 0"
        )
    }
    df = {
        (h, t): int(n)
        for h, t, n in conn.execute(
            "SELECT hub_id, term, sum(df) FROM bm25_terms GROUP BY hub_id, term HAVING sum(df) <> 0"
        )
    }
    postings = {
        (c, t): (h, tf, ln)
        for c, t, h, tf, ln in conn.execute("SELECT chunk_id, term, hub_id, tf, len FROM bm25_postings")
    }
    return hubs, df, postings


def assert_consistent(conn):
    exp, act = expected_state(conn), actual_state(conn)
    assert act[0] == exp[0], "N / total length per hub"
    assert act[1] == exp[1], "df per hub and term"
    assert act[2] == exp[2], "postings"
    n_chunks = conn.execute("SELECT count(*) FROM bm25_chunks").fetchone()[0]
    assert n_chunks == sum(v[0] for v in exp[0].values())


def python_bm25(docs: dict[int, dict[str, int]], query_terms: dict[str, int], k1=K1, b=B) -> dict[int, float]:
    """Okapi BM25, Lucene variant, by hand. docs: chunk id -> {term: tf}; query_terms: term ->
    how often the question says it (each occurrence counts, as in Lucene and bm25s)."""
    n = len(docs)
    avgdl = sum(sum(tf.values()) for tf in docs.values()) / n
    df: dict[str, int] = {}
    for tf in docs.values():
        for t in tf:
            df[t] = df.get(t, 0) + 1
    scores = {}
    for cid, tf in docs.items():
        dl = sum(tf.values())
        s = 0.0
        for t, qtf in query_terms.items():
            if t in tf:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s += qtf * idf * tf[t] / (tf[t] + k1 * (1 - b + b * dl / avgdl))
        if s > 0:
            scores[cid] = s
    return scores


CORPUS = [
    ("Cats", ["The cat sat on the mat. Cats like warm mats and naps.", "A cat chased another cat around the garden."]),
    ("Dogs", ["Dogs bark at cats. The dog sleeps on the mat all day long."]),
    ("Gardening > Roses", ["Roses need sun, water and patience; the garden rewards it."]),
    (
        "Postgres",
        [
            "PostgreSQL ranks full text with tsvector; BM25 ranks better than ts_rank.",
            "Vacuum keeps the visibility map current so index-only scans stay fast.",
        ],
    ),
    ("Misc", ["Nothing about any animal here, only words words words."]),
]


def load_corpus(conn, hub, prefix="d"):
    ids = {}
    for i, (title, bodies) in enumerate(CORPUS):
        for cid, body in zip(add_doc(conn, f"{prefix}{i}", hub, title, bodies), bodies, strict=True):
            ids[cid] = (title, body)
    return ids


# ---------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("k1,b", [(1.2, 0.75), (1.5, 0.75), (0.9, 0.4), (2.0, 1.0), (1.2, 0.0)])
def test_scores_equal_hand_computed_bm25(database_url, k1, b):
    with connect(database_url) as conn:
        hub = add_hub(conn, "h")
        ids = load_corpus(conn, hub)
        docs = {cid: chunk_tf(conn, title, body) for cid, (title, body) in ids.items()}
        for query in [
            "cat mat",
            "the garden of cats",
            "dogs bark",
            "BM25 ranking in postgres",
            "visibility map index scans",
            "words",
            "the cat, the cat and its mat: cats!",
        ]:
            expected = python_bm25(docs, lexemes(conn, query), k1, b)
            got = search(conn, hub, query, 100, k1, b)
            assert {c for c, _ in got} == set(expected)
            for cid, score in got:
                assert score == pytest.approx(expected[cid], abs=1e-6, rel=1e-9)
            scores = [s for _, s in got]
            assert scores == sorted(scores, reverse=True)
        # the limit cuts the ranking, it does not change it
        full = search(conn, hub, "cat mat garden", 100, k1, b)
        assert search(conn, hub, "cat mat garden", 2, k1, b) == full[:2]


def test_defaults_and_heading_weight(database_url):
    with connect(database_url) as conn:
        hub = add_hub(conn, "h")
        ids = load_corpus(conn, hub)
        # default k1 1.2, b 0.75
        assert conn.execute("SELECT count(*) FROM bm25_search(%s, 'cat', 10)", (hub,)).fetchone()[0] > 0
        w = heading_weight(conn)
        assert w >= 1
        # a heading occurrence counts w times: "roses" is in the heading and once in the body
        cid = next(c for c, (t, _) in ids.items() if t == "Gardening > Roses")
        tf = conn.execute("SELECT tf FROM bm25_postings WHERE chunk_id = %s AND term = 'rose'", (cid,)).fetchone()[0]
        assert tf == 1 + w
        # changing the weight and rebuilding re-derives everything
        conn.execute("UPDATE bm25_config SET heading_weight = 1")
        conn.execute("SELECT bm25_rebuild()")
        assert (
            conn.execute("SELECT tf FROM bm25_postings WHERE chunk_id = %s AND term = 'rose'", (cid,)).fetchone()[0]
            == 2
        )
        assert_consistent(conn)


def test_statistics_follow_every_change(database_url):
    with connect(database_url) as conn:
        hub = add_hub(conn, "h")
        load_corpus(conn, hub)
        assert_consistent(conn)
        before = actual_state(conn)

        # a new doc
        (extra,) = add_doc(conn, "x", hub, "Extra", ["Cats and dogs and roses, a garden zoo."])
        assert_consistent(conn)
        # edit the chunk text and its heading path
        conn.execute("UPDATE chunks SET markdown = 'Only elephants live here now' WHERE id = %s", (extra,))
        assert_consistent(conn)
        conn.execute("UPDATE chunks SET heading_path = 'Extra > Zoo animals' WHERE id = %s", (extra,))
        assert_consistent(conn)
        # an update that touches neither text nor hub changes nothing
        conn.execute("UPDATE chunks SET ordinal = 5 WHERE id = %s", (extra,))
        assert_consistent(conn)
        # each gate, then back to public
        for gate, private, public in [
            ("is_draft", True, False),
            ("deleted_at", "2024-01-01", None),
            ("password_hash", "argon2$x", None),
            ("allowed_emails", ["a@example.com"], []),
        ]:
            set_gates(conn, "x", **{gate: private})
            assert_consistent(conn)
            assert conn.execute("SELECT count(*) FROM bm25_postings WHERE chunk_id = %s", (extra,)).fetchone()[0] == 0
            set_gates(conn, "x", **{gate: public})
            assert_consistent(conn)
            assert conn.execute("SELECT count(*) FROM bm25_postings WHERE chunk_id = %s", (extra,)).fetchone()[0] > 0
        # two gates at once, lifted one at a time: public only when both are gone
        set_gates(conn, "x", is_draft=True, password_hash="h")
        set_gates(conn, "x", is_draft=False)
        assert_consistent(conn)
        set_gates(conn, "x", password_hash=None)
        assert_consistent(conn)
        # chunk deleted; doc deleted (cascade)
        conn.execute("DELETE FROM chunks WHERE id = %s", (extra,))
        assert_consistent(conn)
        add_chunk(conn, "x", hub, 0, "Extra", "A fresh chunk about cats")
        conn.execute("DELETE FROM docs WHERE id = 'x'")
        assert_consistent(conn)
        assert actual_state(conn) == before
        # chunk moved to no hub, then to another hub
        other = add_hub(conn, "other")
        conn.execute("UPDATE chunks SET hub_id = NULL WHERE doc_id = 'd0'")
        assert_consistent(conn)
        conn.execute("UPDATE chunks SET hub_id = %s WHERE doc_id = 'd0'", (other,))
        conn.execute("UPDATE docs SET hub_id = %s WHERE id = 'd0'", (other,))
        assert_consistent(conn)
        # several statements in one transaction, rolled back: nothing changes
        snapshot = actual_state(conn)
        with pytest.raises(RuntimeError):
            with conn.transaction():
                add_doc(conn, "y", hub, "Y", ["temporary words about cats"])
                conn.execute("DELETE FROM chunks WHERE doc_id = 'd1'")
                raise RuntimeError("roll back")
        assert actual_state(conn) == snapshot
        # bulk statements
        conn.execute("UPDATE docs SET is_draft = true WHERE hub_id = %s", (hub,))
        assert_consistent(conn)
        conn.execute("UPDATE docs SET is_draft = false WHERE hub_id = %s", (hub,))
        assert_consistent(conn)
        conn.execute("DELETE FROM chunks WHERE hub_id = %s", (hub,))
        assert_consistent(conn)
        assert conn.execute("SELECT count(*) FROM bm25_terms WHERE hub_id = %s", (hub,)).fetchone()[0] == 0
        conn.execute("TRUNCATE chunks")
        assert_consistent(conn)
        assert conn.execute("SELECT count(*) FROM bm25_postings").fetchone()[0] == 0


def test_private_doc_never_influences_public_scores(database_url):
    with connect(database_url) as conn:
        hub = add_hub(conn, "h")
        load_corpus(conn, hub)
        queries = ["cat mat", "garden roses", "zanzibar secret cat"]
        before = {q: search(conn, hub, q) for q in queries}
        add_doc(conn, "p1", hub, "Secret zanzibar", ["zanzibar cat cat cat garden"], is_draft=True)
        add_doc(conn, "p2", hub, "Secret", ["zanzibar mat"], password_hash="argon2$x")
        add_doc(conn, "p3", hub, "Secret", ["zanzibar roses"], allowed_emails=["a@b.c"])
        add_doc(conn, "p4", hub, "Secret", ["zanzibar"], deleted_at="2024-01-01")
        for q in queries:
            assert search(conn, hub, q) == before[q]
        # the private vocabulary is nowhere in the public-readable tables
        assert conn.execute("SELECT count(*) FROM bm25_terms WHERE term = 'zanzibar'").fetchone()[0] == 0
        # a public doc turned private: its terms disappear, scores return to before
        add_doc(conn, "p5", hub, "Was public", ["zanzibar cat"])
        assert search(conn, hub, "zanzibar")
        set_gates(conn, "p5", password_hash="h")
        assert search(conn, hub, "zanzibar") == []
        assert conn.execute("SELECT count(*) FROM bm25_terms WHERE term = 'zanzibar'").fetchone()[0] == 0
        for q in queries:
            assert search(conn, hub, q) == before[q]


def test_hub_scoping(database_url):
    with connect(database_url) as conn:
        a, b_ = add_hub(conn, "a"), add_hub(conn, "b")
        load_corpus(conn, a, prefix="a")
        load_corpus(conn, b_, prefix="b")
        before_b = search(conn, b_, "cat mat garden")
        # many new "cat" chunks in hub A change A's idf, not B's
        for i in range(5):
            add_doc(conn, f"more{i}", a, "Cats again", ["cat cat cat"])
        assert search(conn, b_, "cat mat garden") == before_b
        a_ids = {c for (c,) in conn.execute("SELECT id FROM chunks WHERE hub_id = %s", (a,))}
        b_ids = {c for (c,) in conn.execute("SELECT id FROM chunks WHERE hub_id = %s", (b_,))}
        assert {c for c, _ in search(conn, a, "cat", 100)} <= a_ids
        assert {c for c, _ in search(conn, b_, "cat", 100)} <= b_ids
        # a hub-only word finds nothing in the other hub; unknown hubs give nothing
        add_doc(conn, "onlya", a, "Unique", ["quokka"])
        assert search(conn, b_, "quokka") == []
        assert search(conn, 999999, "cat") == []
        assert search(conn, None, "cat") == []
        # a chunk without a hub is never posted
        add_doc(conn, "nohub", None, "No hub", ["cat"])
        assert (
            conn.execute(
                "SELECT count(*) FROM bm25_chunks c JOIN chunks x ON x.id = c.chunk_id WHERE x.doc_id = 'nohub'"
            ).fetchone()[0]
            == 0
        )
        # hub_id leads the postings index used by the search
        plan = "\n".join(
            r[0]
            for r in conn.execute("EXPLAIN SELECT chunk_id, tf FROM bm25_postings WHERE hub_id = 1 AND term = 'cat'")
        )
        assert "bm25_postings_hub_term_impact" in plan
        assert_consistent(conn)


HOSTILE = [
    "",
    " ",
    "(((( & | ! :*",
    "'",
    "''",
    '"',
    '"unterminated',
    "a & b | !c",
    "!!!",
    ":*",
    "cat:*",
    "cat & | dog",
    "'; DROP TABLE chunks; --",
    "1) OR 1=1 --",
    "\\",
    "%",
    "_",
    "<->",
    "cat <-> dog",
    "the and of to a",
    "why now",
    "\t\n",
    "🙂 émoji ünïcode 日本語",
    "x" * 5000,
    "cat " * 2000,
    "NULL",
    "null::text",
    "$1",
    "%s",
    "{cat}",
    "[cat]",
    "cat\u00a0mat",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_error(database_url, query):
    with connect(database_url) as conn:
        hub = add_hub(conn, "h")
        load_corpus(conn, hub)
        rows = search(conn, hub, query)
        assert all(s > 0 for _, s in rows)
        if not lexemes(conn, query):
            assert rows == []
        assert conn.execute("SELECT count(*) FROM chunks").fetchone()[0] > 0


def test_bad_arguments_give_zero_rows(database_url):
    with connect(database_url) as conn:
        hub = add_hub(conn, "h")
        load_corpus(conn, hub)
        assert search(conn, hub, None) == []
        assert search(conn, hub, "cat", 0) == []
        assert search(conn, hub, "cat", -5) == []
        assert search(conn, hub, "cat", None) == []
        # absurd k1 / b are clamped, not errors
        assert search(conn, hub, "cat", 10, -1, 7)
        assert search(conn, hub, "cat", 10, None, None)


def test_natural_language_question_is_not_anded(database_url):
    with connect(database_url) as conn:
        hub = add_hub(conn, "h")
        load_corpus(conn, hub)
        # no chunk holds all these words, yet chunks holding some of them rank
        rows = search(conn, hub, "which animal sleeps on a mat in the garden, zebra?")
        assert len(rows) >= 3


def test_a_term_the_question_repeats_weighs_more(database_url):
    """Two notes alike but for one word; the question names one word twice and the other once:
    the note with the repeated word ranks first, whichever way round (each occurrence counts)."""
    with connect(database_url) as conn:
        hub = add_hub(conn, "h")
        [about_mats] = add_doc(conn, "a", hub, "Note", ["Notes on the mat by the door."])
        [about_cats] = add_doc(conn, "b", hub, "Note", ["Notes on the cat by the door."])
        add_doc(conn, "c", hub, "Other", ["Nothing relevant at all here."])
        assert next(c for c, _ in search(conn, hub, "cat or mat? the cat, I mean")) == about_cats
        assert next(c for c, _ in search(conn, hub, "mat or cat? the mat, I mean")) == about_mats


def test_mcp_server_example(database_url):
    with connect(database_url) as conn:
        hub = add_hub(conn, "h")
        add_doc(
            conn,
            "why",
            hub,
            "Why now?",
            [
                "Why now? Every team is wiring agents to servers, tools and memory. The moment is "
                "right because models got cheap and the protocols are settling; a server for memory "
                "is what everyone will want, and the MCP ecosystem shows how fast things move."
            ],
        )
        (built,) = add_doc(
            conn,
            "log",
            hub,
            "Work log > March",
            ["Built the MCP server: recall, capture and read_doc tools over the HTTP contract."],
        )
        add_doc(conn, "other", hub, "Other", ["A server rack in the basement hums all day."])
        rows = search(conn, hub, "MCP server")
        assert rows[0][0] == built
        docs = conn.execute("SELECT doc_id FROM bm25_search_docs(%s, 'MCP server', 5)", (hub,)).fetchall()
        assert docs[0][0] == "log"


def test_doc_level_search(database_url):
    with connect(database_url) as conn:
        hub = add_hub(conn, "h")
        load_corpus(conn, hub)
        rows = conn.execute("SELECT doc_id, score FROM bm25_search_docs(%s, 'cat mat', 10)", (hub,)).fetchall()
        ids = [d for d, _ in rows]
        assert len(ids) == len(set(ids))
        # a doc scores as its best chunk
        best = {}
        for cid, s in search(conn, hub, "cat mat", 100):
            (doc,) = conn.execute("SELECT doc_id FROM chunks WHERE id = %s", (cid,)).fetchone()
            best[doc] = max(best.get(doc, 0), s)
        assert dict(rows) == pytest.approx(best)
        assert conn.execute("SELECT count(*) FROM bm25_search_docs(%s, '', 10)", (hub,)).fetchone()[0] == 0


def test_pruning_returns_exact_scores(database_url):
    """With pruning forced on, every returned score is still the exact BM25 score."""
    with connect(database_url) as conn:
        hub = add_hub(conn, "h")
        rng = random.Random(3)
        words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "lambda"]
        with conn.transaction():
            conn.execute(
                "INSERT INTO docs (id, hub_id, title, markdown, edit_token_hash, source_hash)"
                " VALUES ('bulk', %s, 'Bulk', '', 'e', 's')",
                (hub,),
            )
            bodies = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 30))) for _ in range(400)]
            conn.execute(
                "INSERT INTO chunks (doc_id, hub_id, ordinal, heading_path, markdown, hash, tsv)"
                " SELECT 'bulk', %s, o, 'Bulk', m, md5(m), to_tsvector('english', m)"
                " FROM unnest(%s::text[]) WITH ORDINALITY AS u(m, o)",
                (hub, bodies),
            )
        query = "alpha beta gamma omega"
        exact = dict(search(conn, hub, query, 1000))
        conn.execute("SET bm25.full_df = 20")
        conn.execute("SET bm25.top_n = 20")
        conn.execute("SET bm25.rescore = 40")
        pruned = search(conn, hub, query, 10)
        assert len(pruned) == 10
        for cid, s in pruned:
            assert s == pytest.approx(exact[cid], abs=1e-9)
        conn.execute("SET bm25.exact = on")
        assert search(conn, hub, query, 10) == sorted(exact.items(), key=lambda x: (-x[1], x[0]))[:10]
        assert_consistent(conn)


def test_public_role_can_search(database_url):
    with connect(database_url) as conn:
        hub = add_hub(conn, "h")
        load_corpus(conn, hub)
        owner = search(conn, hub, "cat mat")
        # the migrations create the role; without it public reads would have no gate to run under
        has_role = conn.execute("SELECT count(*) FROM pg_roles WHERE rolname = 'memorywiki_public'").fetchone()[0]
        assert has_role, "the migrations did not create the memorywiki_public role"
        conn.execute("SET ROLE memorywiki_public")
        assert search(conn, hub, "cat mat") == owner
        assert conn.execute("SELECT count(*) FROM bm25_search_docs(%s, 'cat', 5)", (hub,)).fetchone()[0] > 0
        # ... and can neither read nor write the index tables, nor call the maintenance functions
        for table in ("bm25_postings", "bm25_terms", "bm25_hubs", "bm25_chunks"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(f"SELECT * FROM {table} LIMIT 1")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DELETE FROM bm25_postings")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT bm25_post(ARRAY[1::bigint])")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT bm25_rebuild()")


def test_bulk_insert_posts_every_chunk(database_url):
    """One multi-row INSERT of 2,000 chunks: the triggers post every one of them.
    (How fast: `python -m bench.micro`.)"""
    with connect(database_url) as conn:
        hub = add_hub(conn, "h")
        rng = random.Random(1)
        vocab = [f"word{i}" for i in range(3000)] + ["the", "memory", "wiki", "server", "recall"]
        bodies = [" ".join(rng.choice(vocab) for _ in range(120)) for _ in range(2000)]
        with conn.transaction():
            conn.execute(
                "INSERT INTO docs (id, hub_id, title, markdown, edit_token_hash, source_hash)"
                " VALUES ('bulk', %s, 'Bulk', '', 'e', 's')",
                (hub,),
            )
            conn.execute(
                "INSERT INTO chunks (doc_id, hub_id, ordinal, heading_path, markdown, hash, tsv)"
                " SELECT 'bulk', %s, o, 'Bulk > Part', m, md5(m), ''::tsvector"
                " FROM unnest(%s::text[]) WITH ORDINALITY AS u(m, o)",
                (hub, bodies),
            )
        assert conn.execute("SELECT n_chunks FROM bm25_hubs WHERE hub_id = %s", (hub,)).fetchone()[0] == 2000
        assert_consistent(conn)


def test_concurrent_saves_keep_counts_exact(database_url):
    """Several connections save, edit, hide and delete docs in one hub (and a second hub) at once;
    afterwards the counters equal a recount from scratch and nobody deadlocked."""
    with connect(database_url) as conn:
        hubs = [add_hub(conn, "a"), add_hub(conn, "b")]
        load_corpus(conn, hubs[0])
    words = ["cat", "dog", "mat", "garden", "rose", "server", "memory", "wiki", "recall", "vector"]
    errors: list[BaseException] = []

    def worker(n: int):
        rng = random.Random(n)
        try:
            with psycopg.connect(database_url) as c:
                for _i in range(25):
                    hub = rng.choice(hubs)
                    doc = f"w{n}-{rng.randint(0, 6)}"
                    with c.transaction():
                        # chunks may land in either hub and docs move between hubs, so
                        # transactions touch both hubs in either order (no deadlock allowed)
                        exists = c.execute("SELECT hub_id FROM docs WHERE id = %s FOR UPDATE", (doc,)).fetchone()
                        op = rng.random()
                        if not exists:
                            c.execute(
                                "INSERT INTO docs (id, hub_id, title, markdown, edit_token_hash,"
                                " source_hash) VALUES (%s, %s, 'T', '', 'e', 's')",
                                (doc, hub),
                            )
                            for o in range(rng.randint(1, 3)):
                                body = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
                                add_chunk(c, doc, hub, o, "T > " + rng.choice(words), body)
                        elif op < 0.3:
                            # re-save: delete some chunks, insert new ones, in separate statements
                            c.execute(
                                "DELETE FROM chunks WHERE id IN (SELECT id FROM chunks"
                                " WHERE doc_id = %s ORDER BY ordinal LIMIT 1)",
                                (doc,),
                            )
                            body = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
                            add_chunk(c, doc, hub, 9, "T", body)
                            c.execute(
                                "UPDATE chunks SET markdown = markdown || ' ' || %s WHERE doc_id = %s",
                                (rng.choice(words), doc),
                            )
                        elif op < 0.6:
                            c.execute("UPDATE docs SET is_draft = NOT is_draft WHERE id = %s", (doc,))
                        elif op < 0.75:
                            c.execute(
                                "UPDATE docs SET password_hash = CASE WHEN password_hash IS NULL"
                                " THEN 'h' END WHERE id = %s",
                                (doc,),
                            )
                        elif op < 0.8:
                            c.execute("DELETE FROM docs WHERE id = %s", (doc,))
                        elif op < 0.9:
                            c.execute("UPDATE chunks SET hub_id = %s WHERE doc_id = %s", (hub, doc))
                            c.execute("UPDATE docs SET hub_id = %s WHERE id = %s", (hub, doc))
                        else:
                            c.execute(
                                "UPDATE chunks SET heading_path = %s WHERE doc_id = %s",
                                ("T > " + rng.choice(words), doc),
                            )
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    with connect(database_url) as conn:
        assert_consistent(conn)
        before = actual_state(conn)
        for hub in hubs:
            conn.execute("SELECT bm25_compact(%s)", (hub,))
        assert actual_state(conn) == before
        # compacted: one row per key, none that sums to zero
        assert (
            conn.execute(
                "SELECT count(*) FROM (SELECT 1 FROM bm25_terms GROUP BY hub_id, term HAVING count(*) > 1) x"
            ).fetchone()[0]
            == 0
        )
        assert conn.execute("SELECT count(*) FROM bm25_terms WHERE df <= 0").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM bm25_hubs").fetchone()[0] == len(hubs)


def test_changes_apply_at_commit_or_immediately_on_request(database_url):
    with connect(database_url) as conn:
        hub = add_hub(conn, "h")
        load_corpus(conn, hub)
        with conn.transaction():
            add_doc(conn, "new", hub, "Wombat", ["wombats dig burrows"])
            # deferred: the save's own transaction still sees the index as before
            assert search(conn, hub, "wombat") == []
        assert len(search(conn, hub, "wombat")) == 1
        with conn.transaction():
            conn.execute("SET CONSTRAINTS bm25_flush IMMEDIATE")
            add_doc(conn, "new2", hub, "Numbat", ["numbats eat termites"])
            assert len(search(conn, hub, "numbat")) == 1
        assert_consistent(conn)
