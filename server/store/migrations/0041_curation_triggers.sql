-- Curation triggers: derived rows follow their docs (functions in ../functions/50_curation.sql).
-- needs: functions

-- An edit drops the doc's enrichment and concepts; a move or a privacy change regroups.
CREATE TRIGGER docs_curation AFTER UPDATE OF source_hash, hub_id, is_draft, deleted_at, password_hash, allowed_emails
    ON docs FOR EACH ROW EXECUTE FUNCTION curation_doc_changed();

-- Bundle membership changes regroup the hub's suggestions.
CREATE TRIGGER bundle_docs_curation AFTER INSERT OR DELETE ON bundle_docs
    FOR EACH ROW EXECUTE FUNCTION curation_bundle_docs_changed();
