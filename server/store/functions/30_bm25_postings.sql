-- BM25 full-text ranking inside PostgreSQL: keeping the index.
-- Tables: migrations/0004_bm25_tables.sql; triggers: migrations/0005_triggers.sql;
-- the commit queue: 35_bm25_queue.sql; search: 40_bm25_search.sql.
--
-- What it is
--   Okapi BM25, Lucene variant (same formula as bm25s / Lucene >= 8):
--     score(c, q) = sum over distinct query lexemes t present in chunk c of
--                   idf(t) * tf / (tf + k1 * (1 - b + b * len(c) / avgdl))
--     idf(t)      = ln(1 + (N - df + 0.5) / (df + 0.5))
--   Terms come from bm25_tsvector() (25_bm25_analyzer.sql): English lexemes, stemming and
--   stopwords from to_tsvector('english', ...), runs of Han, Kana and Hangul as character
--   bigrams. tf of a term is its number of positions in the chunk body plus
--   bm25_heading_weight() times its number of positions in the heading path ("Doc title >
--   Section"); len(c) is the sum of those tf.
--   N, avgdl and df are live, per hub, and count only chunks of PUBLIC docs.
--
-- How it stays correct
--   Triggers on chunks (INSERT / DELETE / TRUNCATE statement-level; UPDATE OF heading_path,
--   markdown, hub_id, doc_id row-level) and on docs (UPDATE OF the privacy gates and hub_id)
--   record which chunks a transaction touched (bm25_queue); a deferred constraint trigger
--   brings exactly those chunks' postings and the statistics to their final state at COMMIT,
--   inside the same transaction (a rollback undoes both; no nightly job, no drift). Nobody has
--   to call anything. Only chunks of public docs (doc_is_public() in 10_privacy.sql: is_draft = false
--   AND deleted_at IS NULL AND password_hash IS NULL AND cardinality(allowed_emails) = 0) with a
--   non-null chunks.hub_id are posted, so a private doc's terms can neither rank nor move
--   df / N / avgdl. Consequence of the deferral: inside the writing transaction, before COMMIT,
--   bm25_search still answers from the state before it (SET CONSTRAINTS bm25_flush IMMEDIATE
--   applies the changes at each statement end instead).
--
-- Concurrency: the counters never block, so they cannot deadlock
--   The counters (bm25_hubs: N and total length; bm25_terms: df) are delta rows: a flush
--   that posts or unposts chunks INSERTs (+n / -n) rows, which never waits on another
--   transaction. The true value is the sum of the visible rows, so concurrent saves can't lose
--   an update. To keep the sums short, the statement then tries (never waits for) a per-hub
--   advisory transaction lock; if it gets it, it folds all visible rows of the keys it touched
--   into one row (rows summing to 0 are dropped). Posting also takes FOR SHARE on the docs
--   rows it reads the gates of (in id order), so a concurrent "make private" is either seen
--   or waited for, never missed. Only the holder of a hub's lock ever deletes
--   that hub's counter rows, and writers never lock counter rows, so nobody waits on anyone:
--   saves in one hub, or moves across hubs, cannot deadlock and are not serialised.
--   bm25_compact(hub) folds everything (optional housekeeping, never needed for correctness).
--
-- Query
--   bm25_search(hub, query, limit, k1, b) -> (chunk_id, score) and
--   bm25_search_docs(hub, query, limit, k1, b) -> (doc_id, score), in 40_bm25_search.sql.
--   Postings are read through (hub_id, term, impact DESC) INCLUDE (chunk_id, tf, len), an
--   index-only scan: terms with df <= 3000 are read completely, more frequent (low-idf) terms
--   only down to their top 300 postings by impact; the best 100 candidates by that partial
--   score then get the frequent terms' exact contribution from the chunk's forward index
--   (bm25_chunks.tf_map, a jsonb map from term to tf). Returned scores are always exact BM25 (to float rounding); pruning can only make a
--   chunk miss the candidate list. With no term above the threshold the ranking is exact.
--   Measured in bench/results/fulltext.md (python -m bench.studies.fulltext).

-- ---------------------------------------------------------------------------
-- Maintenance
-- ---------------------------------------------------------------------------

-- Apply counter deltas (arrays: per hub, and per (hub, term)). Never waits; see the header.
CREATE OR REPLACE FUNCTION bm25_apply(p_hubs bigint[], p_hub_n bigint[], p_hub_len bigint[],
                                      p_t_hub bigint[], p_t_term text[], p_t_df integer[])
RETURNS void LANGUAGE plpgsql SET work_mem = '64MB' AS $$
DECLARE
    v_i     integer;
    v_hub   bigint;
    v_terms text[];
    v_dfs   integer[];
BEGIN
    IF p_hubs IS NULL THEN
        RETURN;
    END IF;
    FOR v_i IN 1 .. cardinality(p_hubs) LOOP
        v_hub := p_hubs[v_i];
        IF pg_try_advisory_xact_lock(1651323445, (v_hub % 2147483647)::integer) THEN
            -- this transaction compacts the hub: fold the touched keys into one row each
            WITH old AS (
                DELETE FROM bm25_hubs WHERE hub_id = v_hub RETURNING n_chunks, total_len
            )
            INSERT INTO bm25_hubs (hub_id, n_chunks, total_len)
            SELECT v_hub, n, len
              FROM (SELECT coalesce(sum(n_chunks), 0) + p_hub_n[v_i] AS n,
                           coalesce(sum(total_len), 0) + p_hub_len[v_i] AS len FROM old) x
             WHERE n <> 0 OR len <> 0;
            IF cardinality(p_hubs) = 1 THEN   -- the common case: every delta is this hub's
                v_terms := p_t_term;
                v_dfs := p_t_df;
            ELSE
                SELECT array_agg(u.term ORDER BY u.o), array_agg(u.df ORDER BY u.o) INTO v_terms, v_dfs
                  FROM unnest(p_t_hub, p_t_term, p_t_df) WITH ORDINALITY AS u(hub_id, term, df, o)
                 WHERE u.hub_id = v_hub;
            END IF;
            -- EXECUTE: planned for these arrays, so the planner knows how many terms there are
            -- (an index probe per term for a few, one hash join for a big page's thousands)
            EXECUTE $sql$
            WITH d AS (
                SELECT u.term, u.df FROM unnest($2::text[], $3::integer[]) AS u(term, df)
            ),
            old AS (
                DELETE FROM bm25_terms t
                 WHERE t.hub_id = $1 AND t.term = ANY (SELECT term FROM d)
                RETURNING t.term, t.df
            )
            INSERT INTO bm25_terms (hub_id, term, df)
            SELECT $1, term, df
              FROM (SELECT term, sum(df)::integer AS df
                      FROM (SELECT term, df FROM d UNION ALL SELECT term, df FROM old) x
                     GROUP BY term) m
             WHERE df <> 0
             ORDER BY term
            $sql$ USING v_hub, v_terms, v_dfs;
        ELSE
            -- another transaction is compacting this hub: just append the deltas
            INSERT INTO bm25_hubs (hub_id, n_chunks, total_len)
            VALUES (v_hub, p_hub_n[v_i], p_hub_len[v_i]);
            INSERT INTO bm25_terms (hub_id, term, df)
            SELECT u.hub_id, u.term, u.df FROM unnest(p_t_hub, p_t_term, p_t_df) AS u(hub_id, term, df)
             WHERE u.hub_id = v_hub;
        END IF;
    END LOOP;
END
$$;

-- Fold every counter row of a hub (waits for the hub's compaction lock). Optional.
CREATE OR REPLACE FUNCTION bm25_compact(p_hub bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(1651323445, (p_hub % 2147483647)::integer);
    WITH old AS (DELETE FROM bm25_hubs WHERE hub_id = p_hub RETURNING n_chunks, total_len)
    INSERT INTO bm25_hubs (hub_id, n_chunks, total_len)
    SELECT p_hub, n, len
      FROM (SELECT sum(n_chunks) AS n, sum(total_len) AS len FROM old) x
     WHERE n <> 0 OR len <> 0;
    WITH old AS (DELETE FROM bm25_terms WHERE hub_id = p_hub RETURNING term, df)
    INSERT INTO bm25_terms (hub_id, term, df)
    SELECT p_hub, term, df
      FROM (SELECT term, sum(df)::integer AS df FROM old GROUP BY term) m
     WHERE df <> 0
     ORDER BY term;
END
$$;

CREATE OR REPLACE FUNCTION bm25_heading_weight() RETURNS integer LANGUAGE sql STABLE AS $$
    SELECT coalesce((SELECT heading_weight FROM bm25_config), 2)
$$;

-- Post the given chunks if (and only if) they are public, have a hub and are not posted yet.
CREATE OR REPLACE FUNCTION bm25_post(p_ids bigint[]) RETURNS void
LANGUAGE plpgsql SET work_mem = '64MB' AS $$
DECLARE
    v_w integer := bm25_heading_weight();
    v_hubs bigint[]; v_hub_n bigint[]; v_hub_len bigint[];
    v_t_hub bigint[]; v_t_term text[]; v_t_df integer[];
BEGIN
    IF p_ids IS NULL OR cardinality(p_ids) = 0 THEN
        RETURN;
    END IF;
    -- A concurrent transaction making one of these docs private either committed already
    -- (the next statement sees it) or holds the row: wait for it, in id order.
    PERFORM 1 FROM docs d
      WHERE d.id IN (SELECT c.doc_id FROM unnest(p_ids) AS i(id)
                      CROSS JOIN LATERAL (SELECT c.doc_id FROM chunks c WHERE c.id = i.id) c)
      ORDER BY d.id FOR SHARE;
    WITH src AS (   -- LATERAL: per-id primary key lookups whatever the statistics say
        SELECT c.id, c.hub_id, c.doc_id, c.heading_path, c.markdown
          FROM unnest(p_ids) AS i(id)
          CROSS JOIN LATERAL (SELECT * FROM chunks c WHERE c.id = i.id) c
          CROSS JOIN LATERAL (SELECT * FROM docs d WHERE d.id = c.doc_id) d
         WHERE c.hub_id IS NOT NULL
           AND doc_is_public(d)          -- the gates (10_privacy.sql)
           AND NOT EXISTS (SELECT 1 FROM bm25_chunks b WHERE b.chunk_id = c.id)
    ),
    per AS (   -- one row per chunk: its lexemes, their weighted tf, and its length
        SELECT s.id, s.hub_id, s.doc_id, x.terms, x.tfs, x.len
          FROM src s
          CROSS JOIN LATERAL (
                SELECT array_agg(y.term) AS terms, array_agg(y.tf) AS tfs,
                       coalesce(sum(y.tf), 0)::integer AS len
                  FROM (SELECT u.lexeme AS term,
                               (cardinality(u.positions)
                                + (v_w - 1) * coalesce(cardinality(array_positions(u.weights, 'A')), 0)
                               )::integer AS tf
                          FROM unnest(   -- heading occurrences carry weight 'A'
                                CASE WHEN v_w > 0
                                     THEN bm25_tsvector(s.markdown)
                                          || setweight(bm25_tsvector(s.heading_path), 'A')
                                     ELSE bm25_tsvector(s.markdown) END) u) y
                 WHERE y.tf > 0
          ) x
    ),
    ref AS (   -- avgdl for the impact ordering key: the hub's current one, else this batch's
        SELECT p.hub_id,
               coalesce((SELECT sum(h.total_len)::float8 / nullif(sum(h.n_chunks), 0)
                           FROM bm25_hubs h WHERE h.hub_id = p.hub_id),
                        nullif(avg(p.len), 0)::float8, 1) AS avgdl
          FROM per p
         GROUP BY p.hub_id
    ),
    fwd AS MATERIALIZED (
        SELECT p.id, p.hub_id, p.doc_id, p.len,
               coalesce(p.terms, '{}') AS terms, coalesce(p.tfs, '{}') AS tfs,
               coalesce((SELECT array_agg((u.tf / (u.tf + 1.2::float8 * (0.25::float8
                                 + 0.75::float8 * p.len / r.avgdl)))::real ORDER BY u.o)
                           FROM unnest(p.tfs) WITH ORDINALITY AS u(tf, o)), '{}') AS impacts
          FROM ref r
          JOIN per p ON p.hub_id = r.hub_id
    ),
    ins_c AS (
        INSERT INTO bm25_chunks (chunk_id, hub_id, doc_id, len, terms, tfs, impacts, tf_map)
        SELECT id, hub_id, doc_id, len, terms, tfs, impacts, jsonb_object(terms, tfs::text[]) FROM fwd
    ),
    ins_p AS (
        INSERT INTO bm25_postings (hub_id, term, impact, chunk_id, tf, len)
        SELECT f.hub_id, u.term, u.impact, f.id, u.tf, f.len
          FROM fwd f
          CROSS JOIN LATERAL unnest(f.terms, f.tfs, f.impacts) AS u(term, tf, impact)
         ORDER BY f.hub_id, u.term, u.impact DESC, f.id   -- the index's order: one pass over it
    ),
    hub_d AS (
        SELECT hub_id, count(*) AS n, sum(len) AS len FROM per GROUP BY hub_id
    ),
    term_d AS (
        SELECT p.hub_id, u.term, count(*)::integer AS df
          FROM per p CROSS JOIN LATERAL unnest(p.terms) AS u(term)
         GROUP BY p.hub_id, u.term
    )
    SELECT (SELECT array_agg(hub_id ORDER BY hub_id) FROM hub_d),
           (SELECT array_agg(n ORDER BY hub_id) FROM hub_d),
           (SELECT array_agg(len ORDER BY hub_id) FROM hub_d),
           t_hub, t_term, t_df
      INTO v_hubs, v_hub_n, v_hub_len, v_t_hub, v_t_term, v_t_df
      FROM (SELECT array_agg(hub_id) AS t_hub, array_agg(term) AS t_term, array_agg(df) AS t_df
              FROM (SELECT * FROM term_d ORDER BY hub_id, term) sorted) agg;  -- one sort for the three
    PERFORM bm25_apply(v_hubs, v_hub_n, v_hub_len, v_t_hub, v_t_term, v_t_df);
END
$$;

-- Remove the given chunks' postings (those that have any).
CREATE OR REPLACE FUNCTION bm25_unpost(p_ids bigint[]) RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
                 SET work_mem = '64MB' AS $$
DECLARE
    v_hubs bigint[]; v_hub_n bigint[]; v_hub_len bigint[];
    v_t_hub bigint[]; v_t_term text[]; v_t_df integer[];
BEGIN
    IF p_ids IS NULL OR cardinality(p_ids) = 0 THEN
        RETURN;
    END IF;
    WITH gone_c AS (
        DELETE FROM bm25_chunks WHERE chunk_id = ANY (p_ids)
        RETURNING chunk_id, hub_id, len, terms, impacts
    ),
    keys AS MATERIALIZED (   -- each posting's full index key, from the forward index
        SELECT g.hub_id, u.term, u.impact, g.chunk_id
          FROM gone_c g CROSS JOIN LATERAL unnest(g.terms, g.impacts) AS u(term, impact)
    ),
    gone_p AS (
        DELETE FROM bm25_postings p
         USING keys k
         WHERE p.hub_id = k.hub_id AND p.term = k.term AND p.impact = k.impact
           AND p.chunk_id = k.chunk_id
    ),
    hub_d AS (
        SELECT hub_id, -count(*) AS n, -sum(len) AS len FROM gone_c GROUP BY hub_id
    ),
    term_d AS (
        SELECT hub_id, term, -count(*)::integer AS df FROM keys GROUP BY hub_id, term
    )
    SELECT (SELECT array_agg(hub_id ORDER BY hub_id) FROM hub_d),
           (SELECT array_agg(n ORDER BY hub_id) FROM hub_d),
           (SELECT array_agg(len ORDER BY hub_id) FROM hub_d),
           t_hub, t_term, t_df
      INTO v_hubs, v_hub_n, v_hub_len, v_t_hub, v_t_term, v_t_df
      FROM (SELECT array_agg(hub_id ORDER BY hub_id, term) AS t_hub,
                   array_agg(term ORDER BY hub_id, term) AS t_term,
                   array_agg(df ORDER BY hub_id, term) AS t_df
              FROM term_d) agg;
    PERFORM bm25_apply(v_hubs, v_hub_n, v_hub_len, v_t_hub, v_t_term, v_t_df);
END
$$;

-- Recompute everything from the chunks table (repair tool; also what the tests compare with).
-- Takes the hub locks like any save; not needed in normal operation.
CREATE OR REPLACE FUNCTION bm25_rebuild() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE bm25_postings, bm25_chunks, bm25_terms, bm25_hubs;
    PERFORM bm25_post((SELECT array_agg(id ORDER BY id) FROM chunks));
END
$$;

-- Internal: only the triggers (and an owner, for repairs) call these.
REVOKE ALL ON FUNCTION bm25_apply(bigint[], bigint[], bigint[], bigint[], text[], integer[]),
                       bm25_post(bigint[]), bm25_unpost(bigint[]), bm25_compact(bigint),
                       bm25_rebuild() FROM PUBLIC;
