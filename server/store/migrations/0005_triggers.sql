-- Triggers: chunk privacy follows its doc, bundles follow their members, BM25 follows chunks.
-- replaces: 0001_core.sql 0002_bm25.sql
-- needs: functions

-- chunks.is_public mirrors the gates of its doc (doc_is_public()).
CREATE TRIGGER chunks_is_public BEFORE INSERT OR UPDATE OF doc_id ON chunks
    FOR EACH ROW EXECUTE FUNCTION chunks_set_is_public();

CREATE TRIGGER docs_chunk_privacy AFTER UPDATE OF is_draft, deleted_at, password_hash, allowed_emails ON docs
    FOR EACH ROW EXECUTE FUNCTION docs_sync_chunk_privacy();

-- A bundle's source_hash follows its title, description and public member titles.
CREATE TRIGGER docs_bundles AFTER UPDATE OF title, is_draft, deleted_at, password_hash, allowed_emails ON docs
    FOR EACH ROW EXECUTE FUNCTION docs_touch_bundles();

-- BM25: each statement that touches chunks (or a doc's gates or hub) queues the chunk ids;
-- the deferred constraint trigger indexes them once, at COMMIT.
CREATE CONSTRAINT TRIGGER bm25_flush AFTER INSERT ON bm25_queue
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION bm25_flush();

CREATE TRIGGER bm25_chunks_insert AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS bm25_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_chunks_inserted();

CREATE TRIGGER bm25_chunks_delete AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS bm25_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_chunks_deleted();

CREATE TRIGGER bm25_chunks_update AFTER UPDATE OF heading_path, markdown, hub_id, doc_id ON chunks
    FOR EACH ROW
    WHEN (OLD.heading_path IS DISTINCT FROM NEW.heading_path
          OR OLD.markdown IS DISTINCT FROM NEW.markdown
          OR OLD.hub_id IS DISTINCT FROM NEW.hub_id
          OR OLD.doc_id IS DISTINCT FROM NEW.doc_id)
    EXECUTE FUNCTION bm25_chunk_updated();

CREATE TRIGGER bm25_chunks_truncate AFTER TRUNCATE ON chunks
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_chunks_truncated();

CREATE TRIGGER bm25_docs_update
    AFTER UPDATE OF is_draft, deleted_at, password_hash, allowed_emails, hub_id ON docs
    FOR EACH ROW
    WHEN ((OLD.is_draft = false AND OLD.deleted_at IS NULL AND OLD.password_hash IS NULL
           AND cardinality(OLD.allowed_emails) = 0)
          IS DISTINCT FROM
          (NEW.is_draft = false AND NEW.deleted_at IS NULL AND NEW.password_hash IS NULL
           AND cardinality(NEW.allowed_emails) = 0)
          OR OLD.hub_id IS DISTINCT FROM NEW.hub_id)
    EXECUTE FUNCTION bm25_doc_updated();
