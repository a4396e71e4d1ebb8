-- A bundle an importer knows by an id of its own, like docs.external_id: importing a hub's
-- folder again updates its bundles instead of making them twice. Unique among a hub's live
-- bundles (an import makes a deleted one again). Not granted to the public role
-- (0006_privacy.sql grants bundles' columns one by one).
ALTER TABLE bundles ADD COLUMN external_id text;
CREATE UNIQUE INDEX bundles_hub_external ON bundles (hub_id, external_id)
    WHERE external_id IS NOT NULL AND deleted_at IS NULL;
