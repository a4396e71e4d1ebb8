-- chunks.tsv held a second full-text analysis of every chunk that nothing reads: full text
-- ranks from the BM25 tables (functions/30_bm25_postings.sql), which analyze the chunk
-- themselves. Computing it and keeping its GIN index was most of the cost of inserting chunk
-- rows (a 5 MB page is thousands of rows). New rows leave it NULL; the column stays, nullable,
-- so a server of an earlier release that still writes it keeps working on this schema.
DROP INDEX IF EXISTS chunks_tsv;
ALTER TABLE chunks ALTER COLUMN tsv DROP NOT NULL;
