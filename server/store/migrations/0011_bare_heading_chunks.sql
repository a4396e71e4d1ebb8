-- A heading with no body is no longer a chunk of its own (issue 9, item 6; server/chunker.py):
-- such a chunk won recall with nothing to say. Docs chunked before that still hold them, and an
-- unchanged doc is never re-chunked, so they are removed here. A doc made only of headings keeps
-- its chunks (the chunker now makes its outline one chunk; its next save will).
-- Bare = one ATX heading line of level 1-3, or one setext heading (a line and its underline).
-- A touched doc is marked owed: its vector is the mean of its chunks', which the indexer
-- recomputes without embedding anything.

CREATE TEMP TABLE bare_chunks ON COMMIT DROP AS
SELECT c.id, c.doc_id
FROM chunks c
WHERE c.markdown ~ '^ {0,3}#{1,3}([ \t][^\n]*)?$'
   OR c.markdown ~ '^ {0,3}[^\s#>*+|`~0-9-][^\n]*\n {0,3}(=+|-+)[ \t]*$';

DELETE FROM bare_chunks b
WHERE NOT EXISTS (
    SELECT 1 FROM chunks o
    WHERE o.doc_id = b.doc_id AND o.id NOT IN (SELECT id FROM bare_chunks));

DELETE FROM chunks WHERE id IN (SELECT id FROM bare_chunks);

UPDATE chunks c SET ordinal = r.position
FROM (
    SELECT id, row_number() OVER (PARTITION BY doc_id ORDER BY ordinal) - 1 AS position
    FROM chunks
    WHERE doc_id IN (SELECT doc_id FROM bare_chunks)
) r
WHERE c.id = r.id AND c.ordinal <> r.position;

UPDATE docs SET embedded_hash = NULL
WHERE id IN (SELECT doc_id FROM bare_chunks) AND embedded_hash IS NOT NULL;
