-- Version history: the trigger function that archives a doc's previous version
-- (the trigger: migrations/0020_doc_versions.sql), with the visibility it had while it was
-- current (migrations/0121_private_versions.sql): a draft's versions stay private after it is
-- published.

CREATE OR REPLACE FUNCTION docs_keep_version() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO doc_versions (doc_id, version, hub_id, title, markdown, meta, source, saved_at,
                              saved_via, saved_action, restored_from, deleted, visibility)
    VALUES (OLD.id, OLD.version, OLD.hub_id, OLD.title, OLD.markdown, OLD.meta, OLD.source,
            OLD.updated_at, OLD.saved_via, OLD.saved_action, OLD.restored_from, OLD.deleted_at IS NOT NULL,
            doc_visibility(OLD))
    ON CONFLICT (doc_id, version) DO NOTHING;
    RETURN NEW;
END
$$;
