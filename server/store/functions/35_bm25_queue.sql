-- BM25 at COMMIT: each statement that touches chunks queues their ids (bm25_queue, see
-- migrations/0004_bm25_tables.sql); the deferred constraint trigger bm25_flush brings them
-- to their final state once, at COMMIT (the triggers: migrations/0005_triggers.sql;
-- posting: 30_bm25_postings.sql).

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

-- Internal, like the posting functions.
REVOKE ALL ON FUNCTION bm25_reconcile(bigint[]) FROM PUBLIC;
