-- Versions keep the privacy they were written under (functions/60_versions.sql).
--
-- A page's earlier versions used to be exactly as private as the page is now, so publishing
-- a draft published every draft before it. doc_versions.visibility records what the doc's
-- visibility was when that version was current (doc_visibility(): public, draft, password,
-- people); the public role reads a version only if it was public then and its doc is public
-- now. Versions archived before this migration have no record of it (NULL): they are shown to
-- the page's editors only, since nobody can tell whether they were drafts.
ALTER TABLE doc_versions ADD COLUMN visibility text;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        DROP POLICY IF EXISTS doc_versions_public ON doc_versions;
        CREATE POLICY doc_versions_public ON doc_versions FOR SELECT TO memorywiki_public
            USING (visibility = 'public' AND EXISTS (SELECT 1 FROM docs d WHERE d.id = doc_versions.doc_id));
        GRANT SELECT (visibility) ON doc_versions TO memorywiki_public;
    END IF;
END
$$;
