-- Capturing the same content into a hub twice returns the page it already has (issue 9,
-- item 13): a save looks its content up by (hub, source_hash) among live docs. Not unique:
-- a caller may still ask for a separate page ("dedupe": false), and an importer's upsert by
-- external_id may land on content that already exists.
CREATE INDEX docs_hub_source_hash ON docs (hub_id, source_hash) WHERE deleted_at IS NULL;
