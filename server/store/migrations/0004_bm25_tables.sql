-- BM25 tables: configuration, per-hub counters, forward index, postings, the commit queue.
-- replaces: 0001_core.sql 0002_bm25.sql
-- How they are kept and read: the bm25 files in server/store/functions/.

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

-- Changes are collected per transaction and applied once, at COMMIT (a deferred constraint
-- trigger), so a save that writes chunks one statement at a time costs about what one bulk
-- statement costs, and a chunk touched several times in a transaction is indexed once, in
-- its final state. Each row of bm25_queue holds the chunk ids one statement touched.
CREATE UNLOGGED TABLE bm25_queue (
    xid       xid8 NOT NULL DEFAULT pg_current_xact_id(),
    chunk_ids bigint[] NOT NULL
);
CREATE INDEX bm25_queue_xid ON bm25_queue (xid);
