-- The BM25 forward index (bm25_chunks.terms / tfs / impacts) stored uncompressed.
--
-- A search re-scores its best 100 candidates from these arrays (functions/40_bm25_search.sql),
-- once per pruned query term. A row over ~2 kB had its arrays pglz-compressed (37% of the
-- terms arrays of the 100k-chunk bench hub), so each of those reads decompressed them again.
-- Rows up to 8160 bytes (all but chunks with several hundred distinct lexemes) now stay plain
-- in the page: bm25_search p50 5.79 -> 5.40 ms at 100k chunks, the same results for all 300
-- SciFact questions, the table 178 -> 197 MB (bench/results/latency-100k.md).
ALTER TABLE bm25_chunks SET (toast_tuple_target = 8160);

-- Rows written before keep their compressed arrays until rewritten: rewrite them all now, each
-- array a new value, which the row then stores plain. ALTER COLUMN ... TYPE with USING writes
-- a new, compact table file (and rebuilds its indexes) in this transaction; an UPDATE would
-- leave every old row version behind (the 100k hub's table grew to 272 MB that way). Nothing
-- else moves: no trigger is on bm25_chunks, and postings and counters are untouched.
ALTER TABLE bm25_chunks
    ALTER COLUMN terms TYPE text[] COLLATE "C" USING terms || '{}'::text[],
    ALTER COLUMN tfs TYPE integer[] USING tfs || '{}'::integer[],
    ALTER COLUMN impacts TYPE real[] USING impacts || '{}'::real[];
