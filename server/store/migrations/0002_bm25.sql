-- BM25 full-text ranking inside PostgreSQL (issue 6).
--
-- What it is
--   Okapi BM25, Lucene variant (same formula as bm25s / Lucene >= 8):
--     score(c, q) = sum over distinct query lexemes t present in chunk c of
--                   idf(t) * tf / (tf + k1 * (1 - b + b * len(c) / avgdl))
--     idf(t)      = ln(1 + (N - df + 0.5) / (df + 0.5))
--   Lexemes, stemming and stopwords come from to_tsvector('english', ...); tf of a lexeme is
--   its number of positions in the chunk body plus bm25_heading_weight() times its number of
--   positions in the heading path ("Doc title > Section"); len(c) is the sum of those tf.
--   N, avgdl and df are live, per hub, and count only chunks of PUBLIC docs.
--
-- How it stays correct
--   Triggers on chunks (INSERT / DELETE / TRUNCATE statement-level; UPDATE OF heading_path,
--   markdown, hub_id, doc_id row-level) and on docs (UPDATE OF the privacy gates and hub_id)
--   record which chunks a transaction touched (bm25_queue); a deferred constraint trigger
--   brings exactly those chunks' postings and the statistics to their final state at COMMIT,
--   inside the same transaction (a rollback undoes both; no nightly job, no drift). Nobody has
--   to call anything. Only chunks of public docs (doc_is_public() from 0001: is_draft = false
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
--   bm25_search_docs(hub, query, limit, k1, b) -> (doc_id, score), see below.
--   Postings are read through (hub_id, term, impact DESC) INCLUDE (chunk_id, tf, len), an
--   index-only scan: terms with df <= 3000 are read completely, more frequent (low-idf) terms
--   only down to their top 300 postings by impact; the best 100 candidates by that partial
--   score then get the frequent terms' exact contribution from the chunk's forward index
--   (bm25_chunks.terms / tfs). Returned scores are always exact BM25 (to float rounding); pruning can only make a
--   chunk miss the candidate list. With no term above the threshold the ranking is exact.
--   Measured in bench/results/fulltext.md (python -m memorywiki.bench.fulltext).

CREATE TABLE bm25_config (
    id             boolean PRIMARY KEY DEFAULT true CHECK (id),
    -- how many times a heading-path occurrence counts, relative to a body occurrence
    heading_weight integer NOT NULL DEFAULT 2 CHECK (heading_weight BETWEEN 0 AND 100)
);
INSERT INTO bm25_config DEFAULT VALUES;

-- Per hub: number of posted chunks and the sum of their lengths, as delta rows (sum them).
CREATE TABLE bm25_hubs (
    hub_id    bigint NOT NULL,
    n_chunks  bigint NOT NULL,
    total_len bigint NOT NULL
);
CREATE INDEX bm25_hubs_hub ON bm25_hubs (hub_id) INCLUDE (n_chunks, total_len);

-- Per hub and lexeme: document (chunk) frequency, as delta rows (sum them).
CREATE TABLE bm25_terms (
    hub_id bigint NOT NULL,
    term   text COLLATE "C" NOT NULL,
    df     integer NOT NULL
);
CREATE INDEX bm25_terms_hub_term ON bm25_terms (hub_id, term) INCLUDE (df);

-- Which chunks are posted (exactly the public chunks with a hub), with their length.
CREATE TABLE bm25_chunks (
    chunk_id bigint PRIMARY KEY,
    hub_id   bigint NOT NULL,
    doc_id   text NOT NULL,
    len      integer NOT NULL,
    -- the chunk's forward index: its lexemes, their tf and their posting's impact (same order).
    -- Unposting finds each posting by its full index key from here, and the search re-scores
    -- candidates from here, so bm25_postings needs no second index.
    terms    text[] COLLATE "C" NOT NULL,
    tfs      integer[] NOT NULL,
    impacts  real[] NOT NULL
);
CREATE INDEX bm25_chunks_doc ON bm25_chunks (doc_id);

-- One row per (chunk, lexeme). len is the chunk's length, copied so a posting scan never
-- joins; impact is the BM25 tf-part at k1 1.2, b 0.75 and the hub's avgdl when the chunk was
-- posted, used only to ORDER postings for pruning (scores are computed from tf and len).
CREATE TABLE bm25_postings (
    hub_id   bigint NOT NULL,
    term     text COLLATE "C" NOT NULL,
    impact   real NOT NULL,
    chunk_id bigint NOT NULL,
    tf       integer NOT NULL,
    len      integer NOT NULL
);
-- The only index. hub_id leads: hub scoping is in the index path, not a filter afterwards.
-- (bm25_chunks' primary key guards against posting a chunk twice.)
CREATE INDEX bm25_postings_hub_term_impact
    ON bm25_postings (hub_id, term, impact DESC, chunk_id) INCLUDE (tf, len);

-- ---------------------------------------------------------------------------
-- Maintenance
-- ---------------------------------------------------------------------------

-- Apply counter deltas (arrays: per hub, and per (hub, term)). Never waits; see the header.
CREATE OR REPLACE FUNCTION bm25_apply(p_hubs bigint[], p_hub_n bigint[], p_hub_len bigint[],
                                      p_t_hub bigint[], p_t_term text[], p_t_df integer[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_i   integer;
    v_hub bigint;
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
            WITH d AS (
                SELECT u.term, u.df FROM unnest(p_t_hub, p_t_term, p_t_df) AS u(hub_id, term, df)
                 WHERE u.hub_id = v_hub
            ),
            old AS (
                DELETE FROM bm25_terms t
                 WHERE t.hub_id = v_hub AND t.term = ANY (SELECT term FROM d)
                RETURNING t.term, t.df
            )
            INSERT INTO bm25_terms (hub_id, term, df)
            SELECT v_hub, term, df
              FROM (SELECT term, sum(df)::integer AS df
                      FROM (SELECT term, df FROM d UNION ALL SELECT term, df FROM old) x
                     GROUP BY term) m
             WHERE df <> 0
             ORDER BY term;
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
LANGUAGE plpgsql AS $$
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
           AND doc_is_public(d)          -- the gates, as defined in 0001
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
                                     THEN to_tsvector('english', s.markdown)
                                          || setweight(to_tsvector('english', s.heading_path), 'A')
                                     ELSE to_tsvector('english', s.markdown) END) u) y
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
        INSERT INTO bm25_chunks (chunk_id, hub_id, doc_id, len, terms, tfs, impacts)
        SELECT id, hub_id, doc_id, len, terms, tfs, impacts FROM fwd
    ),
    ins_p AS (
        INSERT INTO bm25_postings (hub_id, term, impact, chunk_id, tf, len)
        SELECT f.hub_id, u.term, u.impact, f.id, u.tf, f.len
          FROM fwd f
          CROSS JOIN LATERAL unnest(f.terms, f.tfs, f.impacts) AS u(term, tf, impact)
         ORDER BY f.hub_id, u.term   -- sorted: one pass over the (hub_id, term, ...) index
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
      FROM (SELECT array_agg(hub_id ORDER BY hub_id, term) AS t_hub,
                   array_agg(term ORDER BY hub_id, term) AS t_term,
                   array_agg(df ORDER BY hub_id, term) AS t_df
              FROM term_d) agg;
    PERFORM bm25_apply(v_hubs, v_hub_n, v_hub_len, v_t_hub, v_t_term, v_t_df);
END
$$;

-- Remove the given chunks' postings (those that have any).
CREATE OR REPLACE FUNCTION bm25_unpost(p_ids bigint[]) RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off AS $$
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

-- Changes are collected per transaction and applied once, at COMMIT (a deferred constraint
-- trigger), so a save that writes chunks one statement at a time costs about what one bulk
-- statement costs, and a chunk touched several times in a transaction is indexed once, in
-- its final state. Each row of bm25_queue holds the chunk ids one statement touched.
CREATE UNLOGGED TABLE bm25_queue (
    xid       xid8 NOT NULL DEFAULT pg_current_xact_id(),
    chunk_ids bigint[] NOT NULL
);
CREATE INDEX bm25_queue_xid ON bm25_queue (xid);

CREATE OR REPLACE FUNCTION bm25_enqueue(p_ids bigint[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF p_ids IS NOT NULL AND cardinality(p_ids) > 0 THEN
        PERFORM set_config('bm25.pending', 'on', true);   -- first: an IMMEDIATE flush fires
        INSERT INTO bm25_queue (chunk_ids) VALUES (p_ids);  -- at the end of this INSERT
    END IF;
END
$$;

-- Bring the given chunks' postings to the chunks' current state (idempotent).
CREATE OR REPLACE FUNCTION bm25_reconcile(p_ids bigint[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bm25_unpost(p_ids);
    PERFORM bm25_post(p_ids);
END
$$;

-- Fires at COMMIT once per queued statement; the first call does the work for all of them.
CREATE OR REPLACE FUNCTION bm25_flush() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    v_ids bigint[];
BEGIN
    IF coalesce(current_setting('bm25.pending', true), '') <> 'on' THEN
        RETURN NULL;
    END IF;
    PERFORM set_config('bm25.pending', 'off', true);
    WITH q AS (
        DELETE FROM bm25_queue WHERE xid = pg_current_xact_id() RETURNING chunk_ids
    )
    SELECT array_agg(DISTINCT id ORDER BY id) INTO v_ids FROM q, unnest(q.chunk_ids) AS id;
    PERFORM bm25_reconcile(v_ids);
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER bm25_flush AFTER INSERT ON bm25_queue
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION bm25_flush();

CREATE OR REPLACE FUNCTION bm25_chunks_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bm25_enqueue((SELECT array_agg(id) FROM bm25_new_rows));
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION bm25_chunks_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bm25_enqueue((SELECT array_agg(id) FROM bm25_old_rows));
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION bm25_chunk_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bm25_enqueue(ARRAY[NEW.id]);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION bm25_chunks_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE bm25_postings, bm25_chunks, bm25_terms, bm25_hubs;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION bm25_doc_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bm25_enqueue((SELECT array_agg(id) FROM (
        SELECT chunk_id AS id FROM bm25_chunks WHERE doc_id = OLD.id
        UNION
        SELECT id FROM chunks WHERE doc_id = NEW.id) x));
    RETURN NULL;
END
$$;

CREATE TRIGGER bm25_chunks_insert AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS bm25_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_chunks_inserted();

CREATE TRIGGER bm25_chunks_delete AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS bm25_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_chunks_deleted();

CREATE TRIGGER bm25_chunks_update AFTER UPDATE OF heading_path, markdown, hub_id, doc_id ON chunks
    FOR EACH ROW
    WHEN (OLD.heading_path IS DISTINCT FROM NEW.heading_path
          OR OLD.markdown IS DISTINCT FROM NEW.markdown
          OR OLD.hub_id IS DISTINCT FROM NEW.hub_id
          OR OLD.doc_id IS DISTINCT FROM NEW.doc_id)
    EXECUTE FUNCTION bm25_chunk_updated();

CREATE TRIGGER bm25_chunks_truncate AFTER TRUNCATE ON chunks
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_chunks_truncated();

CREATE TRIGGER bm25_docs_update
    AFTER UPDATE OF is_draft, deleted_at, password_hash, allowed_emails, hub_id ON docs
    FOR EACH ROW
    WHEN ((OLD.is_draft = false AND OLD.deleted_at IS NULL AND OLD.password_hash IS NULL
           AND cardinality(OLD.allowed_emails) = 0)
          IS DISTINCT FROM
          (NEW.is_draft = false AND NEW.deleted_at IS NULL AND NEW.password_hash IS NULL
           AND cardinality(NEW.allowed_emails) = 0)
          OR OLD.hub_id IS DISTINCT FROM NEW.hub_id)
    EXECUTE FUNCTION bm25_doc_updated();

-- Recompute everything from the chunks table (repair tool; also what the tests compare with).
-- Takes the hub locks like any save; not needed in normal operation.
CREATE OR REPLACE FUNCTION bm25_rebuild() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE bm25_postings, bm25_chunks, bm25_terms, bm25_hubs;
    PERFORM bm25_post((SELECT array_agg(id ORDER BY id) FROM chunks));
END
$$;

-- ---------------------------------------------------------------------------
-- Query
-- ---------------------------------------------------------------------------

-- Pruning knobs (session settings, mainly for the benchmark):
--   bm25.full_df  terms with df <= this are read completely            (default 3000)
--   bm25.top_n    other terms: only their top-N postings by impact     (default 300)
--   bm25.rescore  candidates re-scored exactly when something was pruned (default 100,
--                 at least 2 * p_limit)
--   bm25.exact    'on' disables pruning
CREATE OR REPLACE FUNCTION bm25_search(p_hub bigint, p_query text, p_limit integer,
                            p_k1 float8 DEFAULT 1.2, p_b float8 DEFAULT 0.75)
RETURNS TABLE (chunk_id bigint, score float8)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    v_n       bigint;
    v_avgdl   float8;
    v_terms   text[];
    v_q_terms text[];
    v_q_df    bigint[];
    v_k1      float8 := coalesce(greatest(p_k1, 0), 1.2);
    v_b       float8 := coalesce(least(greatest(p_b, 0), 1), 0.75);
    v_exact   boolean := coalesce(current_setting('bm25.exact', true), '') IN ('on', 'true', '1');
    v_full    integer := coalesce(nullif(current_setting('bm25.full_df', true), '')::integer, 3000);
    v_topn    integer := coalesce(nullif(current_setting('bm25.top_n', true), '')::integer, 300);
    v_rescore integer := coalesce(nullif(current_setting('bm25.rescore', true), '')::integer, 100);
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
    -- Any text is a query: to_tsvector never parses operators. Distinct lexemes, capped.
    SELECT array_agg(lexeme) INTO v_terms
      FROM (SELECT lexeme FROM unnest(to_tsvector('english', left(p_query, 20000))) LIMIT 256) x;
    IF v_terms IS NULL THEN
        RETURN;
    END IF;
    -- live df of the query terms in this hub (counters are delta rows: sum them)
    SELECT array_agg(t.term), array_agg(t.df) INTO v_q_terms, v_q_df
      FROM (SELECT term, sum(df) AS df FROM bm25_terms
             WHERE hub_id = p_hub AND term = ANY (v_terms)
             GROUP BY term HAVING sum(df) > 0) t;
    IF v_q_terms IS NULL THEN
        RETURN;
    END IF;
    IF v_exact THEN
        v_full := 2147483647;
    END IF;
    v_rescore := greatest(v_rescore, 2 * p_limit);

    IF NOT EXISTS (SELECT 1 FROM unnest(v_q_df) AS d WHERE d > v_full) THEN
        -- every term's postings are read completely: exact
        RETURN QUERY
        SELECT p.chunk_id,
               sum(q.idf * p.tf / (p.tf + v_k1 * (1.0::float8 - v_b + v_b * p.len / v_avgdl))) AS score
          FROM (SELECT u.term, ln(1.0::float8 + (v_n - u.df + 0.5::float8) / (u.df + 0.5::float8)) AS idf
                  FROM unnest(v_q_terms, v_q_df) AS u(term, df)) q
          JOIN bm25_postings p ON p.hub_id = p_hub AND p.term = q.term
         GROUP BY p.chunk_id
         ORDER BY score DESC, p.chunk_id
         LIMIT p_limit;
        RETURN;
    END IF;

    -- Rare terms (df <= full_df) are read completely; frequent (low-idf) terms only down to
    -- their top_n postings by impact. The best `rescore` candidates by that partial score then
    -- get the exact contribution of the frequent terms from their forward index (bm25_chunks).
    RETURN QUERY
    WITH q AS MATERIALIZED (
        SELECT u.term, u.df > v_full AS pruned,
               ln(1.0::float8 + (v_n - u.df + 0.5::float8) / (u.df + 0.5::float8)) AS idf,
               CASE WHEN u.df > v_full THEN v_topn ELSE u.df END AS n
          FROM unnest(v_q_terms, v_q_df) AS u(term, df)
    ),
    cand AS MATERIALIZED (
        SELECT p.chunk_id,
               sum(q.idf * p.tf / (p.tf + v_k1 * (1.0::float8 - v_b + v_b * p.len / v_avgdl))) AS s,
               coalesce(sum(q.idf * p.tf / (p.tf + v_k1 * (1.0::float8 - v_b + v_b * p.len / v_avgdl)))
                        FILTER (WHERE NOT q.pruned), 0) AS s_exact
          FROM q
          CROSS JOIN LATERAL (
                SELECT p.chunk_id, p.tf, p.len
                  FROM bm25_postings p
                 WHERE p.hub_id = p_hub AND p.term = q.term
                 ORDER BY p.impact DESC
                 LIMIT q.n
          ) p
         GROUP BY p.chunk_id
         ORDER BY s DESC
         LIMIT v_rescore
    )
    SELECT c.chunk_id,
           c.s_exact + coalesce((
               SELECT sum(q.idf * b.tfs[x.i] / (b.tfs[x.i] + v_k1 * (1.0::float8 - v_b + v_b * b.len / v_avgdl)))
                 FROM q
                 CROSS JOIN LATERAL (SELECT array_position(b.terms, q.term) AS i) x
                WHERE q.pruned AND x.i IS NOT NULL), 0) AS score
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
REVOKE ALL ON FUNCTION bm25_apply(bigint[], bigint[], bigint[], bigint[], text[], integer[]),
                       bm25_post(bigint[]), bm25_unpost(bigint[]), bm25_compact(bigint),
                       bm25_reconcile(bigint[]), bm25_rebuild() FROM PUBLIC;
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        REVOKE ALL ON bm25_config, bm25_hubs, bm25_terms, bm25_chunks, bm25_postings
            FROM memorywiki_public;
        GRANT EXECUTE ON FUNCTION bm25_search(bigint, text, integer, float8, float8),
                                  bm25_search_docs(bigint, text, integer, float8, float8)
            TO memorywiki_public;
    END IF;
END
$$;
