-- Which chunker made a doc's chunk rows: its rules and sizes (ChunkSize.version in
-- server/indexing/chunker.py). NULL: rows made before it was recorded. The indexing worker
-- re-chunks every doc whose rows another chunker made (store/chunks.py, rechunk_stale), deleted
-- ones too, so a restore finds them current; a chunk whose text is unchanged keeps its row and
-- its vector, so only new pieces are embedded.
ALTER TABLE docs ADD COLUMN chunker text;
