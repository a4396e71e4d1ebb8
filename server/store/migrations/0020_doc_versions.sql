-- Version history (issue 10, item 3): nothing is lost on edit.
-- needs: functions
--
-- docs keeps the current version; doc_versions keeps every earlier one. A trigger archives
-- the old row whenever docs.version moves (any save path: the API, imports, restores, the
-- editor), so route code cannot forget it. How each version was made is recorded on the doc
-- row by the save (saved_via: the credential, saved_action: what it did) and travels with it
-- into doc_versions. Rows saved before this migration have neither (NULL: "unknown").
--
-- Privacy: a version is exactly as private as its doc. The public role sees a doc's versions
-- only where row-level security lets it see the doc itself (the policy's subquery runs under
-- the docs policy), the same gate as bundle_docs in 0006_privacy.sql.

ALTER TABLE docs ADD COLUMN saved_via text;
ALTER TABLE docs ADD COLUMN saved_action text;
ALTER TABLE docs ADD COLUMN restored_from integer;  -- the version a restore copied

CREATE TABLE doc_versions (
    doc_id     text NOT NULL REFERENCES docs(id) ON DELETE CASCADE,
    version    integer NOT NULL,
    hub_id     bigint,  -- the doc's hub then: a future distribution key, like chunks.hub_id
    title      text NOT NULL,
    markdown   text NOT NULL,
    meta       jsonb NOT NULL DEFAULT '{}'::jsonb,
    source     text,
    saved_at   timestamptz NOT NULL,  -- when this version was made (the doc's updated_at then)
    saved_via  text,                  -- owner | edit_token | anonymous (NULL: before versions existed)
    saved_action text,                -- create | edit | import | restore | delete
    restored_from integer,            -- for a restore: the version it copied
    deleted    boolean NOT NULL DEFAULT false,  -- this version was the doc's deleted state
    archived_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (doc_id, version)
);

CREATE TRIGGER docs_keep_version AFTER UPDATE OF version ON docs
    FOR EACH ROW WHEN (NEW.version IS DISTINCT FROM OLD.version)
    EXECUTE FUNCTION docs_keep_version();

ALTER TABLE doc_versions ENABLE ROW LEVEL SECURITY;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        CREATE POLICY doc_versions_public ON doc_versions FOR SELECT TO memorywiki_public
            USING (EXISTS (SELECT 1 FROM docs d WHERE d.id = doc_versions.doc_id));
        REVOKE ALL ON doc_versions FROM memorywiki_public;
        GRANT SELECT (doc_id, version, title, markdown, meta, source, saved_at, saved_via, saved_action,
                      restored_from, deleted)
            ON doc_versions TO memorywiki_public;
        GRANT SELECT (saved_via, saved_action, restored_from) ON docs TO memorywiki_public;
    END IF;
END
$$;
