-- The noun phrases each page holds (server/curation/terms.py), so a hub's concepts link every
-- page that names them, not only the pages that listed them among their own concepts. Written
-- with the enrichment, from the same text, and exactly as private as its doc.
CREATE TABLE doc_terms (
    doc_id   text NOT NULL REFERENCES docs(id) ON DELETE CASCADE,
    hub_id   bigint,
    key      text NOT NULL,     -- case-folded, its last word in the singular (terms.term_key)
    in_title boolean NOT NULL,
    PRIMARY KEY (doc_id, key)
);
CREATE INDEX doc_terms_hub_key ON doc_terms (hub_id, key);

ALTER TABLE doc_terms ENABLE ROW LEVEL SECURITY;
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        CREATE POLICY doc_terms_public ON doc_terms FOR SELECT TO memorywiki_public
            USING (EXISTS (SELECT 1 FROM docs d WHERE d.id = doc_terms.doc_id));
        REVOKE ALL ON doc_terms FROM memorywiki_public;
        GRANT SELECT ON doc_terms TO memorywiki_public;
    END IF;
END
$$;

-- Extractive enrichments are redone (no model call: only this server's CPU, in the background)
-- so existing pages get their terms and the concepts of the extraction that writes them.
-- A model's enrichment is kept; its page gets terms when it is next enriched.
UPDATE docs SET enriched_hash = NULL
WHERE enriched_hash IS NOT NULL AND id IN (SELECT doc_id FROM enrichments WHERE mode = 'extractive');
