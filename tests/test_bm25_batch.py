"""A page of many chunks posted at once (English, CJK, code): the BM25 rows the save leaves are
exactly what the formula gives for each chunk's analyzer terms, recounted here in Python, and
what a rebuild from the chunks gives; a second save into the same hub adds up, row for row."""

from __future__ import annotations

import struct

import psycopg

K1, B = 1.2, 0.75


def page() -> str:
    english = (
        "The harbour pilot guides each freighter past the shoals at dawn; pilots train for years "
        "and read the tide tables twice. "
    )
    chinese = "北京是中国的首都，长城很长。上海的港口很忙，船只来来往往。"
    japanese = "東京は日本の首都です。港には船が多い。"
    korean = "한국어 문장입니다 항구에는 배가 많습니다"
    code = "\n".join(f"def tide_{i}(level):\n    return level * {i}  # pilot table" for i in range(40))
    sections = []
    for n in range(12):
        sections.append(
            f"## Harbour {n} 港口\n\n"
            + english * (4 + n % 5)
            + "\n\n"
            + (chinese + japanese) * (3 + n % 4)
            + "\n\n"
            + korean
            + f" pilot{n}\n\n```python\n{code}\n```\n"
        )
    return "# Harbour log\n\n" + "\n".join(sections)


def real(x: float) -> float:
    """A number as PostgreSQL's real (float4) keeps it (psycopg reads a real as its shortest text)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def expected_rows(conn, hub: int) -> dict[int, tuple]:
    """chunk id -> (len, terms, tfs, impacts, tf_map), from the analyzer's terms of each chunk:
    tf = positions in the body + heading weight x positions in the heading path."""
    w = conn.execute("SELECT heading_weight FROM bm25_config").fetchone()[0]
    per = {}
    for cid, heading, body in conn.execute(
        "SELECT id, heading_path, markdown FROM chunks WHERE hub_id = %s ORDER BY id", (hub,)
    ).fetchall():
        terms = conn.execute(
            "SELECT lexeme, cardinality(positions), cardinality(array_positions(weights, 'A'))"
            " FROM unnest(bm25_tsvector(%s) || setweight(bm25_tsvector(%s), 'A'))",
            (body, heading),
        ).fetchall()
        tfs = [(t, n + (w - 1) * (a or 0)) for t, n, a in terms]
        per[cid] = [(t, tf) for t, tf in tfs if tf > 0]
    avgdl = sum(tf for terms in per.values() for _, tf in terms) / len(per)
    rows = {}
    for cid, terms in per.items():
        dl = sum(tf for _, tf in terms)
        impacts = [real(tf / (tf + K1 * ((1 - B) + B * dl / avgdl))) for _, tf in terms]
        rows[cid] = (dl, [t for t, _ in terms], [tf for _, tf in terms], impacts, dict(terms))
    return rows


def stored_rows(conn, hub: int) -> dict[int, tuple]:
    return {
        cid: (ln, terms, tfs, [real(x) for x in impacts], {t: int(v) for t, v in tf_map.items()})
        for cid, ln, terms, tfs, impacts, tf_map in conn.execute(
            "SELECT chunk_id, len, terms, tfs, impacts, tf_map FROM bm25_chunks WHERE hub_id = %s", (hub,)
        )
    }


def postings(conn, hub: int) -> list[tuple]:
    return [
        (t, real(imp), cid, tf, ln)
        for t, imp, cid, tf, ln in conn.execute(
            "SELECT term, impact, chunk_id, tf, len FROM bm25_postings WHERE hub_id = %s ORDER BY term, chunk_id",
            (hub,),
        )
    ]


def counters(conn, hub: int) -> tuple[tuple, dict[str, int]]:
    hub_row = conn.execute("SELECT sum(n_chunks), sum(total_len) FROM bm25_hubs WHERE hub_id = %s", (hub,)).fetchone()
    df = dict(
        conn.execute(
            "SELECT term, sum(df) FROM bm25_terms WHERE hub_id = %s GROUP BY term HAVING sum(df) <> 0", (hub,)
        ).fetchall()
    )
    return tuple(map(int, hub_row)), {t: int(n) for t, n in df.items()}


def save(client, headers: dict, markdown: str) -> str:
    r = client.post(
        "/api/docs",
        json={"hub": "tides", "title": "Harbour log", "markdown": markdown, "dedupe": False},
        headers=headers,
    )
    assert r.status_code == 201, r.text[:300]
    return r.json()["id"]


def test_a_page_of_many_chunks_posts_what_the_formula_gives(client, settings):
    r = client.post("/api/hubs", json={"slug": "tides"})
    assert r.status_code == 201, r.text
    headers = {"Authorization": f"Bearer {r.json()['owner_token']}"}
    markdown = page()
    first = save(client, headers, markdown)
    with psycopg.connect(settings.database_url, autocommit=True) as conn:
        hub = conn.execute("SELECT hub_id FROM docs WHERE id = %s", (first,)).fetchone()[0]
        scripts = conn.execute(
            "SELECT count(*) FILTER (WHERE markdown ~ bm25_cjk_class()), count(*) FROM chunks WHERE doc_id = %s",
            (first,),
        ).fetchone()
        assert scripts[0] >= 10 and scripts[1] >= 20  # many chunks, CJK in most

        expected = expected_rows(conn, hub)
        stored = stored_rows(conn, hub)
        assert stored.keys() == expected.keys()
        for cid, row in expected.items():
            assert stored[cid][:3] == row[:3] and stored[cid][4] == row[4], cid  # len, terms, tfs, tf_map
            assert stored[cid][3] == row[3], cid  # impacts, as real
        assert sorted(postings(conn, hub)) == sorted(
            (t, imp, cid, tf, row[0])
            for cid, row in expected.items()
            for t, tf, imp in zip(row[1], row[2], row[3], strict=True)
        )
        df: dict[str, int] = {}
        for row in expected.values():
            for t in row[1]:
                df[t] = df.get(t, 0) + 1
        total = sum(row[0] for row in expected.values())
        assert counters(conn, hub) == ((len(expected), total), df)
        ranked = conn.execute("SELECT chunk_id FROM bm25_search(%s, 'pilot7 长城', 3)", (hub,)).fetchall()
        assert ranked and "pilot7" in expected[ranked[0][0]][1]

        # a rebuild from the chunks gives the same rows; the counters fold to the same sums
        before = (stored_rows(conn, hub), postings(conn, hub), counters(conn, hub))
        with conn.transaction():
            conn.execute("SELECT bm25_rebuild()")
        assert (stored_rows(conn, hub), postings(conn, hub), counters(conn, hub)) == before

    # the same page again: every term's df and the hub's counts double, the first rows stay
    second = save(client, headers, markdown)
    with psycopg.connect(settings.database_url, autocommit=True) as conn:
        (n, total), df2 = counters(conn, hub)
        assert (n, total) == (2 * len(expected), 2 * before[2][0][1])
        assert df2 == {t: 2 * c for t, c in before[2][1].items()}
        kept = stored_rows(conn, hub)
        assert {cid: kept[cid] for cid in before[0]} == before[0]
        new = conn.execute("SELECT count(*) FROM bm25_chunks WHERE doc_id = %s", (second,)).fetchone()[0]
        assert new == len(expected)
