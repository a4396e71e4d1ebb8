-- Privacy gates, in the database: row-level security, the public role, its policies, grants.
-- replaces: 0001_core.sql 0002_bm25.sql
-- needs: functions
--
-- Public reads run as the memorywiki_public role: row-level security hides every row that
-- fails the gates (doc_is_public()), and column grants hide tokens and password hashes.
-- Route code cannot widen this by mistake.

ALTER TABLE docs ENABLE ROW LEVEL SECURITY;
ALTER TABLE chunks ENABLE ROW LEVEL SECURITY;
ALTER TABLE bundles ENABLE ROW LEVEL SECURITY;
ALTER TABLE bundle_docs ENABLE ROW LEVEL SECURITY;
ALTER TABLE hubs ENABLE ROW LEVEL SECURITY;

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        CREATE ROLE memorywiki_public NOLOGIN;
    END IF;
    EXECUTE format('GRANT memorywiki_public TO %I', current_user);
EXCEPTION WHEN insufficient_privilege THEN
    RAISE WARNING 'memorywiki: cannot create role memorywiki_public (%); create it by hand, the server will not serve public reads without it', SQLERRM;
END
$$;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        CREATE POLICY docs_public ON docs FOR SELECT TO memorywiki_public
            USING (doc_is_public(docs));
        CREATE POLICY chunks_public ON chunks FOR SELECT TO memorywiki_public
            USING (is_public);
        CREATE POLICY bundles_public ON bundles FOR SELECT TO memorywiki_public
            USING (deleted_at IS NULL);
        CREATE POLICY bundle_docs_public ON bundle_docs FOR SELECT TO memorywiki_public
            USING (EXISTS (SELECT 1 FROM docs d WHERE d.id = bundle_docs.doc_id));
        CREATE POLICY hubs_public ON hubs FOR SELECT TO memorywiki_public USING (true);

        REVOKE ALL ON hubs, docs, chunks, bundles, bundle_docs, access_tokens FROM memorywiki_public;
        GRANT USAGE ON SCHEMA public TO memorywiki_public;
        GRANT SELECT (id, slug, created_at) ON hubs TO memorywiki_public;
        GRANT SELECT (id, hub_id, title, markdown, source, meta, embedding, version, created_at, updated_at)
            ON docs TO memorywiki_public;
        GRANT SELECT (id, doc_id, hub_id, ordinal, heading_path, markdown, embedding, tsv, is_public)
            ON chunks TO memorywiki_public;
        GRANT SELECT (id, hub_id, title, description, embedding, version, created_at, updated_at)
            ON bundles TO memorywiki_public;
        GRANT SELECT ON bundle_docs TO memorywiki_public;
        GRANT SELECT ON embedding_space TO memorywiki_public;
        -- the BM25 tables are read only through the SECURITY DEFINER search functions
        REVOKE ALL ON bm25_config, bm25_hubs, bm25_terms, bm25_chunks, bm25_postings
            FROM memorywiki_public;
    END IF;
END
$$;
