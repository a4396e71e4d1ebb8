-- ---------------------------------------------------------------------------
-- Query
-- ---------------------------------------------------------------------------

-- Pruning knobs (session settings, mainly for the benchmark):
--   bm25.full_df  terms with df <= this are read completely            (default 3000)
--   bm25.top_n    other terms: only their top-N postings by impact     (default 300)
--   bm25.rescore  candidates re-scored exactly when something was pruned (default 100,
--                 at least 2 * p_limit)
--   bm25.exact    'on' disables pruning
-- A query lexeme counts once per occurrence in the question (its idf times how often the
-- question says it), as in Lucene and bm25s.
CREATE OR REPLACE FUNCTION bm25_search(p_hub bigint, p_query text, p_limit integer,
                            p_k1 float8 DEFAULT 1.2, p_b float8 DEFAULT 0.75)
RETURNS TABLE (chunk_id bigint, score float8)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    v_n       bigint;
    v_avgdl   float8;
    v_terms   text[];
    v_tfs     integer[];
    v_q_terms text[];
    v_q_df    bigint[];
    v_q_tf    integer[];
    v_q_idf   float8[];   -- each query term's idf, times how often the question says it
    v_k1      float8 := coalesce(greatest(p_k1, 0), 1.2);
    v_b       float8 := coalesce(least(greatest(p_b, 0), 1), 0.75);
    v_exact   boolean := coalesce(current_setting('bm25.exact', true), '') IN ('on', 'true', '1');
    v_full    integer := coalesce(nullif(current_setting('bm25.full_df', true), '')::integer, 3000);
    v_topn    integer := coalesce(nullif(current_setting('bm25.top_n', true), '')::integer, 300);
    v_rescore integer := coalesce(nullif(current_setting('bm25.rescore', true), '')::integer, 100);
    -- a posting's weight is idf * tf / (tf + k1 * (1 - b + b * len / avgdl)), written as
    -- idf * tf / (tf + v_c0 + v_c1 * len) with the constants folded once per query: the
    -- weight is computed for every posting read, thousands per question on a large hub
    v_c0      float8;
    v_c1      float8;
    v_p_terms text[];
    v_p_idf   float8[];
BEGIN
    IF p_hub IS NULL OR p_query IS NULL OR p_limit IS NULL OR p_limit <= 0 THEN
        RETURN;
    END IF;
    SELECT sum(h.n_chunks), sum(h.total_len)::float8 / nullif(sum(h.n_chunks), 0)
      INTO v_n, v_avgdl
      FROM bm25_hubs h WHERE h.hub_id = p_hub;
    IF coalesce(v_n, 0) <= 0 OR coalesce(v_avgdl, 0) <= 0 THEN
        RETURN;
    END IF;
    v_c0 := v_k1 * (1.0::float8 - v_b);
    v_c1 := v_k1 * v_b / v_avgdl;
    -- Any text is a query: the analyzer (25_bm25_analyzer.sql) never parses operators. Distinct
    -- terms (capped), each with how often the question says it: a term counts once per
    -- occurrence, as in Lucene and bm25s, so the words a long question repeats weigh more than
    -- the ones it mentions once.
    SELECT array_agg(lexeme), array_agg(cardinality(positions)) INTO v_terms, v_tfs
      FROM (SELECT lexeme, positions FROM unnest(bm25_tsvector(left(p_query, 20000))) LIMIT 256) x;
    IF v_terms IS NULL THEN
        RETURN;
    END IF;
    -- live df of the query terms in this hub (counters are delta rows: sum them)
    SELECT array_agg(t.term), array_agg(t.df), array_agg(v_tfs[array_position(v_terms, t.term)])
      INTO v_q_terms, v_q_df, v_q_tf
      FROM (SELECT term, sum(df) AS df FROM bm25_terms
             WHERE hub_id = p_hub AND term = ANY (v_terms)
             GROUP BY term HAVING sum(df) > 0) t;
    IF v_q_terms IS NULL THEN
        RETURN;
    END IF;
    SELECT array_agg(u.qtf * ln(1.0::float8 + (v_n - u.df + 0.5::float8) / (u.df + 0.5::float8)))
      INTO v_q_idf
      FROM unnest(v_q_df, v_q_tf) AS u(df, qtf);
    IF v_exact THEN
        v_full := 2147483647;
    END IF;
    v_rescore := greatest(v_rescore, 2 * p_limit);

    IF NOT EXISTS (SELECT 1 FROM unnest(v_q_df) AS d WHERE d > v_full) THEN
        -- every term's postings are read completely: exact
        RETURN QUERY
        SELECT p.chunk_id,
               sum(q.idf * p.tf / (p.tf + v_c0 + v_c1 * p.len)) AS score
          FROM unnest(v_q_terms, v_q_idf) AS q(term, idf)
          JOIN bm25_postings p ON p.hub_id = p_hub AND p.term = q.term
         GROUP BY p.chunk_id
         ORDER BY score DESC, p.chunk_id
         LIMIT p_limit;
        RETURN;
    END IF;

    -- Rare terms (df <= full_df) are read completely; frequent (low-idf) terms only down to
    -- their top_n postings by impact. The best `rescore` candidates by that partial score then
    -- get the exact contribution of the frequent terms from their forward index (bm25_chunks).
    SELECT array_agg(u.term), array_agg(u.idf)
      INTO v_p_terms, v_p_idf
      FROM unnest(v_q_terms, v_q_df, v_q_idf) AS u(term, df, idf)
     WHERE u.df > v_full;
    RETURN QUERY
    WITH q AS MATERIALIZED (
        SELECT u.term, u.df > v_full AS pruned, u.idf,
               CASE WHEN u.df > v_full THEN v_topn ELSE u.df END AS n
          FROM unnest(v_q_terms, v_q_df, v_q_idf) AS u(term, df, idf)
    ),
    cand AS MATERIALIZED (   -- each posting's weight computed once, summed twice
        SELECT w.chunk_id, sum(w.w) AS s, coalesce(sum(w.w) FILTER (WHERE NOT w.pruned), 0) AS s_exact
          FROM (SELECT p.chunk_id, q.pruned, q.idf * p.tf / (p.tf + v_c0 + v_c1 * p.len) AS w
                  FROM q
                  CROSS JOIN LATERAL (
                        SELECT p.chunk_id, p.tf, p.len
                          FROM bm25_postings p
                         WHERE p.hub_id = p_hub AND p.term = q.term
                         ORDER BY p.impact DESC
                         LIMIT q.n
                  ) p) w
         GROUP BY w.chunk_id
         ORDER BY s DESC
         LIMIT v_rescore
    )
    -- each pruned term's tf in the candidate: a key of its tf_map (binary search), or for a row
    -- written before the map (migration 0063) its position in the terms array
    SELECT c.chunk_id,
           c.s_exact + coalesce((
               SELECT sum(p.idf * t.tf / (t.tf + v_c0 + v_c1 * b.len))
                 FROM unnest(v_p_terms, v_p_idf) AS p(term, idf),
                      LATERAL (SELECT CASE WHEN b.tf_map IS NOT NULL THEN (b.tf_map ->> p.term)::float8
                                           ELSE b.tfs[array_position(b.terms, p.term)]::float8 END AS tf) t
                WHERE t.tf IS NOT NULL), 0) AS score
      FROM cand c
      JOIN bm25_chunks b ON b.chunk_id = c.chunk_id
     ORDER BY score DESC, c.chunk_id
     LIMIT p_limit;
END
$$;

-- Doc level: a doc scores as its best chunk (max), over the top chunks.
CREATE OR REPLACE FUNCTION bm25_search_docs(p_hub bigint, p_query text, p_limit integer,
                                 p_k1 float8 DEFAULT 1.2, p_b float8 DEFAULT 0.75)
RETURNS TABLE (doc_id text, score float8)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
    SELECT b.doc_id, max(s.score) AS score
      FROM bm25_search(p_hub, p_query, greatest(p_limit, 0) * 5 + 20, p_k1, p_b) s
      JOIN bm25_chunks b ON b.chunk_id = s.chunk_id
     GROUP BY b.doc_id
     ORDER BY score DESC, b.doc_id
     LIMIT greatest(p_limit, 0)
$$;

-- The public role gets EXECUTE on the two search functions (SECURITY DEFINER: they read the
-- index tables, which the public role cannot read directly) and nothing else.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        GRANT EXECUTE ON FUNCTION bm25_search(bigint, text, integer, float8, float8),
                                  bm25_search_docs(bigint, text, integer, float8, float8)
            TO memorywiki_public;
    END IF;
END
$$;
