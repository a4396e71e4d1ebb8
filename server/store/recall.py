"""Recall queries: vector, full text (BM25) and their fusion, for chunks or docs.

Every query here runs on the public pool, as the memorywiki_public role, so row-level
security decides what exists; the SQL itself never needs to remember the gates.
Both rankers and the fusion run in one statement, one round trip; a hybrid recall may read the
full-text pool first, while its question is embedded, and hand it to that statement.

Fusion is a sum of normalised scores, not of ranks. Each ranker's score counts as its distance
above the floor of that ranker's own candidate pool, in standard deviations of the pool (a
z-score, Montague & Aslam 2001, shifted so the floor is 0). A ranker that singles out a
candidate (full text on a rare name, vectors on a paraphrase) then weighs more for that
question than one whose candidates all look alike (MiniLM on chit-chat, BM25 on common words),
which rank fusion (RRF) cannot tell apart: on LoCoMo, RRF with MiniLM fell below full text
alone (recall@10 0.692 vs 0.731), this never does on SciFact or LoCoMo (bench/results/
ranking-study.md). A doc is ranked by its best section: the fusion runs over chunks and each
doc takes the place, and the section, of its best chunk.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pgvector import Vector
from psycopg import sql

from . import highlight, identifiers
from .connection import Conn
from .hubs import HUB_FOR_RECALL

# Candidates per ranker: 4 per result wanted, and never fewer than POOL_MIN, so the pool that
# normalises a ranker's scores is a sample of its distribution, not just its top few.
POOL_MIN = 40
# Doc level: a doc's sections compete for the same candidate slots, so read DOC_POOL_FACTOR
# times as many chunks (as bm25_search_docs does: 5 chunks per doc wanted).
DOC_POOL_FACTOR = 5

# The two rankers' candidate pools over chunks: vector top n_vec, BM25 top n_fts, each ranked.
POOLS = """
WITH vec AS (
    SELECT id, doc_id, row_number() OVER (ORDER BY dist, id) AS rank, 1 - dist AS similarity
    FROM ((
        SELECT c.id, c.doc_id, c.embedding::vector({dim}) <=> %(qvec)s::vector({dim}) AS dist
        FROM chunks c
        WHERE c.hub_id = {hub} AND c.embedding IS NOT NULL{no_vectors}
        ORDER BY dist
        LIMIT {n_vec}
    ){doc_vectors}) v
),
fts AS (   -- OFFSET 0 keeps the doc_id lookup a primary-key probe per candidate
    SELECT s.chunk_id AS id, c.doc_id, s.rank, s.score
    FROM (SELECT chunk_id, score, row_number() OVER (ORDER BY score DESC, chunk_id) AS rank
          FROM {fts_source}) s
    CROSS JOIN LATERAL (SELECT c.doc_id FROM chunks c WHERE c.id = s.chunk_id OFFSET 0) c
)"""

# The default fusion: a ranker's score above its pool's floor, in standard deviations of the
# pool (a pool of equal scores counts 1; absent from a pool counts 0), weighed (WEIGHTS) and
# summed. Full text's pool is exhaustive when it is short: a chunk it did not return shares no
# word with the question, so its BM25 is 0, not unknown. Such a pool is read as what it is, its
# matches among zeros, up to the vectors' pool size (the hub's chunks, when fewer): the floor is
# 0 and the deviation counts the chunks that did not match. A word only one chunk holds (an
# identifier) then stands n / sqrt(n - 1) deviations out (6.4 in a pool of 40) instead of the
# flat 1 that a pool of one gave, while the vectors' top reaches 3 to 4. A full pool, the usual
# case on prose, is normalised exactly as before. A pool whose scores differ only by rounding
# (every chunk holds the question's words equally: the same BM25 up to the last bit) is a pool
# of equal scores, not one of 1e-17 deviations that would blow the rounding up to whole ones.
ZSCORE = """,
vz AS (SELECT vec.*, CASE WHEN stddev_pop(similarity) OVER () > {flat} * max(abs(similarity)) OVER ()
                          THEN (similarity - min(similarity) OVER ()) / stddev_pop(similarity) OVER ()
                          ELSE 1 END AS z
       FROM vec),
fpool AS (SELECT fts.*, count(*) OVER () AS m,
                 greatest(count(*) OVER (), (SELECT count(*) FROM vec)) AS n,
                 sum(score) OVER () AS s1, sum(score * score) OVER () AS s2,
                 min(score) OVER () AS lo, max(score) OVER () AS hi, stddev_pop(score) OVER () AS sd
          FROM fts),
fz AS (SELECT fpool.*,
              CASE WHEN n > m   -- matches among the zeros of the chunks that did not match
                   THEN CASE WHEN s2 / n - (s1 / n) ^ 2 > 0 THEN score / sqrt(s2 / n - (s1 / n) ^ 2) ELSE 1 END
                   WHEN sd > {flat} * greatest(abs(lo), abs(hi)) THEN (score - lo) / sd
                   ELSE 1 END AS z
       FROM fpool),
held AS (   -- the candidates whose text holds one of the question's identifiers, per identifier
    SELECT i.pattern, c.id
    FROM unnest(%(id_patterns)s::text[]) AS i(pattern)
    CROSS JOIN (SELECT id FROM vec WHERE id IS NOT NULL UNION SELECT id FROM fts) cand
    JOIN chunks c ON c.id = cand.id
    WHERE c.markdown ~* i.pattern
),
iz AS (    -- one ranker per identifier: 1 if held, 0 if not, over the pool, as above; summed
    SELECT h.id, sum(CASE WHEN t.held < p.n
                          THEN 1 / sqrt((t.held::float8 / p.n) * (1 - t.held::float8 / p.n))
                          ELSE 1 END) AS z
    FROM held h
    JOIN (SELECT pattern, count(*) AS held FROM held GROUP BY pattern
          HAVING bool_or(id = (SELECT id FROM fts WHERE rank = 1))) t   -- full text's top holds it
      ON t.pattern = h.pattern
    CROSS JOIN (SELECT greatest((SELECT count(*) FROM vec), (SELECT count(*) FROM fts)) AS n) p
    GROUP BY h.id
),
weights AS ({weights}),
fused AS (
    SELECT coalesce(v.id, f.id) AS id, coalesce(v.doc_id, f.doc_id) AS doc_id,
           v.rank AS vector_rank, f.rank AS fts_rank, v.similarity, f.score AS fts_score,
           w.vector * coalesce(v.z, 0) + w.fts * (coalesce(f.z, 0) + coalesce(i.z, 0)) AS score
    FROM vz v
    FULL JOIN fz f ON f.id = v.id
    LEFT JOIN iz i ON i.id = coalesce(v.id, f.id)
    CROSS JOIN weights w
)"""

# Exact identifiers (server/store/identifiers.py): an embedder reads INC-20417 and INC-20471 as
# one point, and full text's lexemes cut them into pieces that look-alike records share. So each
# identifier the question names is one more ranker of the candidates, 1 for a chunk whose text
# holds it whole and 0 for one that does not, normalised as full text's short pool is (its
# holders among the zeros of the pool: a lone holder stands n / sqrt(n - 1) deviations out,
# one held by half the pool 1, one every candidate holds tells nothing and counts 1 for all),
# and counted with full text. It counts only when full text's own top candidate holds it: full
# text reads the identifier too, and when it ranks a chunk without it first, the identifier is
# not what the question turns on (an alias: FoxO3a asked, FOXO3 written in the answer, on
# SciFact). A question naming none (nearly every question in prose) is fused exactly as without
# it; a lone ranker (hybrid off, or no vectors) is never touched.
# A pool's deviation below this share of its largest score is rounding, not spread.
FLAT = 1e-9

# Full text always counts fully; the vectors count fully too, unless the embedder cannot read
# the question's script (server/embedding/scripts.py): then 0, and full text alone ranks.
WEIGHTS = "SELECT %(vector_weight)s::float8 AS vector, 1.0::float8 AS fts"

# Reciprocal Rank Fusion as the seeds define it: 1 / (60 + rank) in each ranker's top k*4, summed.
RRF_K = 60
RRF_DEPTH = 4
RRF = """,
fused AS (
    SELECT coalesce(v.id, f.id) AS id, coalesce(v.doc_id, f.doc_id) AS doc_id,
           v.rank AS vector_rank, f.rank AS fts_rank, v.similarity, f.score AS fts_score,
           coalesce(1.0::float8 / ({rrf_k} + v.rank), 0) + coalesce(1.0::float8 / ({rrf_k} + f.rank), 0) AS score
    FROM vec v
    FULL JOIN fts f ON f.id = v.id
)"""

# Doc level only: a doc with no section (an empty page saved before bodies were required) is
# embedded by its title; it competes by that vector (id NULL: it has no chunk to return).
DOC_VECTORS = """
    UNION ALL
    SELECT NULL::bigint, d.id, d.dist
    FROM (SELECT d.id, d.embedding::vector({dim}) <=> %(qvec)s::vector({dim}) AS dist
          FROM docs d
          WHERE d.hub_id = {hub} AND d.embedding IS NOT NULL{no_vectors}
          ORDER BY dist
          LIMIT {n_vec}) d
    WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.doc_id = d.id)"""

# The top k is taken before joining, so only k rows are looked up by primary key (otherwise
# the planner, misjudging the privacy gate, hashes every public chunk against its doc).
CHUNK_RECALL = """,
top AS (
    SELECT * FROM fused
    ORDER BY score DESC, vector_rank NULLS LAST, fts_rank NULLS LAST, id
    LIMIT {k}
)
SELECT c.id AS chunk_id, c.doc_id, d.title, c.heading_path, c.markdown, c.ordinal,
       f.score::float8 AS score, f.vector_rank, f.fts_rank,
       f.similarity::float8 AS similarity, f.fts_score::float8 AS fts_score
FROM top f
JOIN chunks c ON c.id = f.id
JOIN docs d ON d.id = c.doc_id
ORDER BY f.score DESC, f.vector_rank NULLS LAST, f.fts_rank NULLS LAST, f.id
"""

# One row per doc, at its best fused section (returned with it). vector_rank / fts_rank are the
# doc's ranks among docs in that ranker's list, where each doc sits at its best chunk.
DOC_RECALL = """,
best AS (
    SELECT DISTINCT ON (doc_id) *,
           min(vector_rank) OVER (PARTITION BY doc_id) AS vector_best,
           min(fts_rank) OVER (PARTITION BY doc_id) AS fts_best
    FROM fused
    ORDER BY doc_id, score DESC, vector_rank NULLS LAST, fts_rank NULLS LAST, id
),
top AS (
    SELECT b.*,
           CASE WHEN vector_best IS NOT NULL THEN rank() OVER (ORDER BY vector_best NULLS LAST) END AS doc_vector_rank,
           CASE WHEN fts_best IS NOT NULL THEN rank() OVER (ORDER BY fts_best NULLS LAST) END AS doc_fts_rank
    FROM best b
    ORDER BY score DESC, vector_rank NULLS LAST, fts_rank NULLS LAST, id
    LIMIT {k}
)
SELECT d.id AS doc_id, d.title, d.markdown, f.score::float8 AS score,
       f.doc_vector_rank AS vector_rank, f.doc_fts_rank AS fts_rank,
       f.similarity::float8 AS similarity, f.fts_score::float8 AS fts_score,
       c.id AS chunk_id, c.heading_path, c.markdown AS section_markdown
FROM top f
JOIN docs d ON d.id = f.doc_id
LEFT JOIN chunks c ON c.id = f.id
ORDER BY f.score DESC, f.vector_rank NULLS LAST, f.fts_rank NULLS LAST, f.id
"""

# RRF at doc level ranks docs, not chunks: each ranker's docs in the order of their best chunk
# in its pool, the top k*4 of them fused; the doc comes with its best section by the chunks' RRF.
DOC_RRF_RECALL = """,
doc_ranks AS (
    SELECT coalesce(v.doc_id, f.doc_id) AS doc_id,
           CASE WHEN v.rank <= {top} THEN v.rank END AS vector_rank,
           CASE WHEN f.rank <= {top} THEN f.rank END AS fts_rank
    FROM (SELECT doc_id, row_number() OVER (ORDER BY min(rank)) AS rank FROM vec GROUP BY doc_id) v
    FULL JOIN (SELECT doc_id, row_number() OVER (ORDER BY min(rank)) AS rank FROM fts GROUP BY doc_id) f
           ON f.doc_id = v.doc_id
),
top AS (
    SELECT doc_id, vector_rank, fts_rank,
           coalesce(1.0::float8 / ({rrf_k} + vector_rank), 0) + coalesce(1.0::float8 / ({rrf_k} + fts_rank), 0) AS score
    FROM doc_ranks
    WHERE vector_rank IS NOT NULL OR fts_rank IS NOT NULL
    ORDER BY score DESC, vector_rank NULLS LAST, fts_rank NULLS LAST, doc_id
    LIMIT {k}
),
section AS (
    SELECT DISTINCT ON (doc_id) * FROM fused
    WHERE doc_id IN (SELECT doc_id FROM top)
    ORDER BY doc_id, score DESC, vector_rank NULLS LAST, fts_rank NULLS LAST, id
)
SELECT d.id AS doc_id, d.title, d.markdown, t.score::float8 AS score, t.vector_rank, t.fts_rank,
       s.similarity::float8 AS similarity, s.fts_score::float8 AS fts_score,
       c.id AS chunk_id, c.heading_path, c.markdown AS section_markdown
FROM top t
JOIN docs d ON d.id = t.doc_id
LEFT JOIN section s ON s.doc_id = t.doc_id
LEFT JOIN chunks c ON c.id = s.id
ORDER BY t.score DESC, t.vector_rank NULLS LAST, t.fts_rank NULLS LAST, t.doc_id
"""

# Bundles are ranked as pages are, in one statement of their own: BM25 over each bundle's text
# (its title, description and its public members' titles, read by the full-text analyzer, the
# question's terms OR-ed), so a bundle is found the moment it is saved or edited, and with
# vectors the bundles' embeddings too, the two fused as chunks are (z-scores above each pool's
# floor, summed; or "rrf"). A hub holds tens of bundles, not millions of chunks: BM25 is
# computed here over all of them, with no postings table. A pool of a few bundles has no
# spread to tell the close from the far, so the vector side offers only bundles closer than
# the embedding space's limit (the hub graph's): an unrelated bundle, alone in the pool, would
# otherwise weigh as much as the one whose words match.
BUNDLE_RECALL = """
WITH q AS (SELECT DISTINCT lexeme FROM unnest(bm25_tsvector(%(question)s))),
texts AS (
    SELECT b.id, bm25_tsvector(concat_ws(' ', b.title, b.description,
                                         string_agg(d.title, ' ' ORDER BY bd.position))) AS tsv
    FROM bundles b
    LEFT JOIN bundle_docs bd ON bd.bundle_id = b.id
    LEFT JOIN docs d ON d.id = bd.doc_id
    WHERE b.hub_id = %(hub)s
    GROUP BY b.id
),
terms AS (
    SELECT t.id, u.lexeme, coalesce(array_length(u.positions, 1), 1) AS tf
    FROM texts t CROSS JOIN LATERAL unnest(t.tsv) u
),
lens AS (SELECT t.id, coalesce(sum(m.tf), 0) AS len FROM texts t LEFT JOIN terms m ON m.id = t.id GROUP BY t.id),
stats AS (SELECT count(*)::float8 AS n, greatest(avg(len), 1)::float8 AS avgdl FROM lens),
df AS (SELECT lexeme, count(*)::float8 AS df FROM terms WHERE lexeme IN (SELECT lexeme FROM q) GROUP BY lexeme),
fts AS (
    SELECT s.id, s.score, row_number() OVER (ORDER BY s.score DESC, s.id) AS rank
    FROM (SELECT m.id, sum(ln(1 + (st.n - df.df + 0.5) / (df.df + 0.5))
                            * m.tf * (%(k1)s + 1) / (m.tf + %(k1)s * (1 - %(b)s + %(b)s * l.len / st.avgdl))) AS score
          FROM terms m JOIN df ON df.lexeme = m.lexeme JOIN lens l ON l.id = m.id CROSS JOIN stats st
          GROUP BY m.id) s
    ORDER BY s.score DESC, s.id
    LIMIT %(pool)s
),
vec AS (
    SELECT v.id, 1 - v.dist AS similarity, row_number() OVER (ORDER BY v.dist, v.id) AS rank
    FROM (SELECT b.id, b.embedding::vector({dim}) <=> %(qvec)s::vector({dim}) AS dist
          FROM bundles b
          WHERE b.hub_id = %(hub)s AND b.embedding IS NOT NULL{vector_dims}
          ORDER BY dist
          LIMIT %(pool)s) v
    WHERE v.dist < %(max_distance)s
),
vz AS (SELECT vec.*, CASE WHEN stddev_pop(similarity) OVER () > 0
                          THEN (similarity - min(similarity) OVER ()) / stddev_pop(similarity) OVER ()
                          ELSE 1 END AS z
       FROM vec),
fz AS (SELECT fts.*, CASE WHEN stddev_pop(score) OVER () > 0
                          THEN (score - min(score) OVER ()) / stddev_pop(score) OVER ()
                          ELSE 1 END AS z
       FROM fts),
fused AS (
    SELECT coalesce(v.id, f.id) AS id, v.rank AS vector_rank, f.rank AS fts_rank,
           v.similarity, f.score AS fts_score,
           coalesce(1.0::float8 / ({rrf_k} + v.rank), 0) + coalesce(1.0::float8 / ({rrf_k} + f.rank), 0) AS rrf_score,
           coalesce(v.z, 0) + coalesce(f.z, 0) AS z
    FROM vz v FULL JOIN fz f ON f.id = v.id
)
SELECT b.id AS bundle_id, b.title, b.description, f.vector_rank, f.fts_rank,
       -- every result's cosine when vectors ran, below the pool's floor too: what its vector says
       coalesce(f.similarity, {similarity})::float8 AS similarity,
       f.fts_score::float8 AS fts_score, f.rrf_score::float8 AS rrf_score,
       (CASE WHEN %(fusion)s = 'rrf' THEN f.rrf_score ELSE f.z END)::float8 AS score
FROM fused f JOIN bundles b ON b.id = f.id
ORDER BY score DESC, f.vector_rank NULLS LAST, f.fts_rank NULLS LAST, b.id
LIMIT %(k)s
"""


LEVELS = {"chunk": ("", CHUNK_RECALL), "doc": (DOC_VECTORS, DOC_RECALL)}
FUSIONS = ("zscore", "rrf")  # the first is the default

# Where the full-text ranker's candidates come from: the search itself, or the list that
# hub_and_fulltext read beforehand (the same rows: the fusion is the same either way).
FTS_SEARCH = "bm25_search({hub}, %(question)s, %(n_fts)s, %(k1)s, %(b)s)"
FTS_READ_BEFORE = "unnest(%(fts_ids)s::bigint[], %(fts_scores)s::float8[]) AS t(chunk_id, score)"


@lru_cache(maxsize=512)
def statement(
    level: str, dim: int, fts_read_before: bool = False, fusion: str = "zscore", *, hub: int, k: int, n_vec: int
) -> sql.Composed:
    """The fused recall statement of one hub's chunks or docs, vectors cast to `dim`, returning
    `k` rows from a vector pool of `n_vec`, fused by `fusion` (FUSIONS).

    The hub and the two LIMITs are written into the statement, not sent as parameters, so that
    PostgreSQL plans it once per connection and reuses the plan (a prepared statement's generic
    plan), planned for that hub. With the LIMITs as parameters the generic plan guessed a large
    LIMIT, joined every public chunk to its doc and so was never chosen, and each recall planned
    the statement again. The hub is in the plan because a small hub among large ones needs a
    different plan (read its few rows, not the vector index). Full text alone (`n_vec` 0) says
    `AND false` where the vectors are read, so its plan too is costed without the vector index."""
    doc_vectors, final = LEVELS[level]
    if fusion == "rrf" and level == "doc":
        final = DOC_RRF_RECALL
    fuse = RRF if fusion == "rrf" else ZSCORE.replace("{weights}", WEIGHTS)
    text = (
        POOLS.replace("{doc_vectors}", doc_vectors).replace(
            "{fts_source}", FTS_READ_BEFORE if fts_read_before else FTS_SEARCH
        )
        + fuse
        + final
    )
    return sql.SQL(text).format(
        dim=sql.Literal(dim),
        hub=sql.Literal(hub),
        k=sql.Literal(k),
        n_vec=sql.Literal(n_vec),
        no_vectors=sql.SQL(" AND false" if n_vec == 0 else ""),
        flat=sql.Literal(FLAT),
        rrf_k=sql.Literal(RRF_K),
        top=sql.Literal(RRF_DEPTH * k),
    )


def pool_size(level: str, k: int, hybrid: bool, fusion: str = "zscore") -> int:
    """Candidates each ranker reads. A lone ranker at chunk level needs only its top k; RRF
    reads each ranker's top k*4, as the seeds define it."""
    if level == "chunk" and not hybrid:
        return k
    per_level = DOC_POOL_FACTOR if level == "doc" else 1
    if fusion == "rrf":
        return RRF_DEPTH * k * per_level
    return max(4 * k, POOL_MIN) * per_level


# Full text's pool as PostgreSQL wrote it: the chunk ids and their BM25 scores, best first, as two
# array literals ("{12,7,...}", "{5.28,1.72,...}"), handed back to the fusion statement as they
# came, rather than read into Python lists and dumped again element by element; a float8 written
# as text reads back the same number (PostgreSQL 12+ writes the shortest exact form), so the
# fusion is bit for bit the same.
FulltextCandidates = tuple[str, str]

# A hybrid recall's first statement: the hub and the recorded embedding space (the store's
# HUB_FOR_RECALL) and, when that space is this server's model so that the question's vector
# will be usable, full text's candidate pool (BM25 needs no vector): read on one round trip
# while the question is being embedded. Otherwise bm25_search is asked for 0 rows and returns
# at once.
HUB_AND_FULLTEXT = f"""
SELECT h.id, h.slug, h.model, h.dim, h.model IS NOT DISTINCT FROM %(model)s AS fts_read,
       coalesce(f.ids::text, '{{}}') AS fts_ids, coalesce(f.scores::text, '{{}}') AS fts_scores
FROM ({HUB_FOR_RECALL}) h
CROSS JOIN LATERAL (
    SELECT array_agg(b.chunk_id ORDER BY b.n) AS ids, array_agg(b.score ORDER BY b.n) AS scores
    FROM bm25_search(h.id, %(question)s,
                     CASE WHEN h.model IS NOT DISTINCT FROM %(model)s THEN %(n_fts)s ELSE 0 END,
                     %(k1)s, %(b)s) WITH ORDINALITY AS b(chunk_id, score, n)
) f
"""


async def hub_and_fulltext(
    conn: Conn,
    *,
    slug: str,
    model: str,
    question: str,
    level: str,
    k: int,
    k1: float,
    b: float,
    fusion: str = "zscore",
) -> tuple[dict[str, Any] | None, FulltextCandidates | None]:
    """The hub ({"id", "slug", "model", "dim"}, None if unknown) and, when its embedding space is
    `model`, the full-text pool of a hybrid recall of it (else None), in one round trip. The
    recall route reads them while the question is embedded and hands the pool to recall_chunks /
    recall_docs (`fts=`): the embedding's wait overlaps BM25's instead of adding to it."""
    params = {
        "slug": slug,
        "model": model,
        "question": question,
        "n_fts": pool_size(level, k, True, fusion),
        "k1": k1,
        "b": b,
    }
    row = await (await conn.execute(HUB_AND_FULLTEXT, params)).fetchone()
    if row is None:
        return None, None
    hub = {key: row[key] for key in ("id", "slug", "model", "dim")}
    return hub, ((row["fts_ids"], row["fts_scores"]) if row["fts_read"] else None)


def fused_query(
    level: str,
    *,
    hub_id: int,
    question: str,
    k: int,
    qvec: list[float] | None,
    dim: int | None,
    hybrid: bool,
    k1: float,
    b: float,
    fts: FulltextCandidates | None = None,
    fusion: str = "zscore",
    vector_weight: float = 1.0,
) -> tuple[sql.Composed, dict[str, Any]]:
    """The statement and parameters of a recall (recall_chunks / recall_docs run them).
    `vector_weight`: the vectors' say in the z-score fusion (0: the embedder cannot read the
    question; RRF ignores it, being the seeds' recipe)."""
    use_vec = qvec is not None and dim is not None
    n = pool_size(level, k, hybrid and use_vec, fusion)
    read_before = fts is not None and hybrid and use_vec
    params = {
        "question": question,
        "k1": k1,
        "b": b,
        # as a pgvector Vector (sent in binary), not a list of 384 floats each dumped as text
        "qvec": Vector(qvec) if use_vec and qvec is not None else None,
        "n_fts": n if hybrid or not use_vec else 0,
        "vector_weight": float(vector_weight),
    }
    if read_before and fts is not None:
        params["fts_ids"], params["fts_scores"] = fts
    # the question's identifiers count only where both rankers ran
    both = hybrid and use_vec
    params["id_patterns"] = [identifiers.pattern(t) for t in identifiers.identifiers(question)] if both else []
    return statement(level, int(dim or 1), read_before, fusion, hub=hub_id, k=k, n_vec=n if use_vec else 0), params


async def _fused(conn: Conn, level: str, **query: Any) -> list[dict[str, Any]]:
    """Hybrid: both rankers' pools, fused. Otherwise vector alone, or full text when there is
    no query vector (a lone ranker's order is its own: the normalisation keeps it).
    `fts`: a hybrid's full-text pool read beforehand by hub_and_fulltext (same k and level)."""
    return await (await conn.execute(*fused_query(level, **query))).fetchall()


async def recall_chunks(conn: Conn, **query: Any) -> list[dict[str, Any]]:
    return await _fused(conn, "chunk", **query)


async def recall_docs(conn: Conn, **query: Any) -> list[dict[str, Any]]:
    return await _fused(conn, "doc", **query)


async def recall_bundles(
    conn: Conn,
    *,
    hub_id: int,
    question: str,
    k: int,
    qvec: list[float] | None,
    dim: int | None,
    hybrid: bool = True,
    k1: float = 1.2,
    b: float = 0.75,
    fusion: str = "zscore",
    max_distance: float = 2.0,
) -> list[dict[str, Any]]:
    """The hub's bundles for a question: full text always (with vectors unless `hybrid` is
    off), vectors when `qvec` is given (bundles closer than `max_distance`), fused."""
    with_vectors = qvec is not None and dim is not None
    query = sql.SQL(BUNDLE_RECALL).format(
        dim=sql.Literal(int(dim) if with_vectors and dim is not None else 1),
        vector_dims=sql.SQL("" if with_vectors else " AND false"),
        similarity=sql.SQL(
            "1 - (b.embedding::vector({dim}) <=> %(qvec)s::vector({dim}))".format(dim=int(dim or 1))
            if with_vectors
            else "NULL"
        ),
        rrf_k=sql.Literal(RRF_K),
    )
    params = {
        "hub": hub_id,
        "question": question,
        "k": k,
        "pool": max(RRF_DEPTH * k, POOL_MIN),
        "qvec": Vector(qvec) if with_vectors and qvec is not None else None,
        "k1": k1,
        "b": b,
        "fusion": fusion,
        "max_distance": max_distance,
    }
    rows = await (await conn.execute(query, params)).fetchall()
    if with_vectors and not hybrid:  # vectors alone: what full text found alone is no answer
        rows = [r for r in rows if r["vector_rank"] is not None]
        rows.sort(key=lambda r: r["vector_rank"])
    return rows


# Highlighted snippets for the hub page's search results: Postgres's own headline, with the
# question's English lexemes OR-ed (as the full-text ranker reads them). The marks are
# private-use characters, so the caller escapes the text first and only then turns them into <mark>.
# A text with Han, Kana or Hangul in it is one ts_headline cannot cut (it sees whole clauses as
# words, never a bigram): for it the statement returns the offsets of the bigrams it shares with
# the question, and the whole text with the English words marked (those scripts blanked out, one
# space per character, so that a word touching them is seen and offsets stay put); highlight.py
# cuts and marks it.
MARK_START, MARK_END = "\ue000", "\ue001"
HEADLINES = """
WITH q AS (
    SELECT (string_agg(quote_literal(lexeme), ' | ') FILTER (WHERE lexeme !~ bm25_cjk_class()))::tsquery AS query,
           coalesce(array_agg(lexeme) FILTER (WHERE lexeme ~ bm25_cjk_class()), '{}') AS bigrams
    FROM unnest(bm25_tsvector(%(question)s))
)
SELECT t.ord, s.snippet, s.marked,
       coalesce(array_agg(b.start - 1 ORDER BY b.start) FILTER (WHERE b.term = ANY (q.bigrams)), '{}') AS starts,
       coalesce(array_agg(b.start - 1 + char_length(b.term) ORDER BY b.start)
                FILTER (WHERE b.term = ANY (q.bigrams)), '{}') AS ends
FROM unnest(%(texts)s::text[]) WITH ORDINALITY AS t(text, ord)
CROSS JOIN q
CROSS JOIN LATERAL (SELECT t.text ~ bm25_cjk_class() AS cjk) c
CROSS JOIN LATERAL (
    SELECT CASE WHEN NOT c.cjk THEN coalesce(ts_headline('english', t.text, q.query, %(options)s),
                                             left(t.text, 300)) END AS snippet,
           CASE WHEN c.cjk THEN ts_headline('english', regexp_replace(t.text, bm25_cjk_class(), ' ', 'g'),
                                            q.query, %(mark_all)s) END AS marked
) s
LEFT JOIN LATERAL bm25_cjk_terms(CASE WHEN c.cjk THEN t.text END) b ON true
GROUP BY t.ord, s.snippet, s.marked
ORDER BY t.ord
"""
HEADLINE_OPTIONS = (
    f'StartSel={MARK_START}, StopSel={MARK_END}, MaxWords=40, MinWords=18, MaxFragments=2, FragmentDelimiter=" … "'
)
MARK_ALL = f"StartSel={MARK_START}, StopSel={MARK_END}, HighlightAll=true"


async def headlines(conn: Conn, question: str, texts: list[str]) -> list[str]:
    """Each text cut to the parts that match the question, matches between the marks."""
    if not texts:
        return []
    cleaned = [t.replace(MARK_START, "").replace(MARK_END, "") for t in texts]
    rows = await (
        await conn.execute(
            HEADLINES, {"question": question, "texts": cleaned, "options": HEADLINE_OPTIONS, "mark_all": MARK_ALL}
        )
    ).fetchall()
    out = []
    for text, r in zip(cleaned, rows, strict=True):
        if r["snippet"] is not None:
            out.append(r["snippet"])
            continue
        words = highlight.marked_spans(r["marked"], len(text), MARK_START, MARK_END) if r["marked"] is not None else []
        out.append(
            highlight.snippet(text, words + list(zip(r["starts"], r["ends"], strict=True)), MARK_START, MARK_END)
        )
    return out
