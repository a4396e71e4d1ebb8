-- Curation: keeping enrichments, concepts and suggestions true to their docs.
-- Triggers in migrations/0041_curation_triggers.sql.

-- Every change that can move a suggested group marks the hub (insert-only: never waits on
-- another transaction); the curator regroups the hub once it has settled (store/suggestions.py).
CREATE OR REPLACE FUNCTION curation_mark_hub(p_hub bigint) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO curation_marks (hub_id) VALUES (p_hub)
$$;

-- An edited doc's enrichment (and the terms read with it) describes text that may be gone (a
-- pasted secret, removed): it is dropped in the same transaction, and the doc is owed a new
-- one. A doc moved to another hub takes its concepts along. Hub and privacy changes re-suggest
-- both hubs.
CREATE OR REPLACE FUNCTION curation_doc_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.source_hash IS DISTINCT FROM OLD.source_hash THEN
        DELETE FROM doc_concepts WHERE doc_id = NEW.id;
        DELETE FROM doc_terms WHERE doc_id = NEW.id;
        DELETE FROM enrichments WHERE doc_id = NEW.id;
    END IF;
    IF NEW.hub_id IS DISTINCT FROM OLD.hub_id THEN
        UPDATE doc_concepts SET hub_id = NEW.hub_id WHERE doc_id = NEW.id;
        UPDATE doc_terms SET hub_id = NEW.hub_id WHERE doc_id = NEW.id;
        UPDATE enrichments SET hub_id = NEW.hub_id WHERE doc_id = NEW.id;
    END IF;
    IF NEW.hub_id IS DISTINCT FROM OLD.hub_id
       OR doc_is_public(NEW) IS DISTINCT FROM doc_is_public(OLD) THEN
        PERFORM curation_mark_hub(h) FROM unnest(ARRAY[OLD.hub_id, NEW.hub_id]) AS h WHERE h IS NOT NULL;
    END IF;
    RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION curation_bundle_docs_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM curation_mark_hub(b.hub_id) FROM bundles b
    WHERE b.id = (CASE WHEN TG_OP = 'DELETE' THEN OLD.bundle_id ELSE NEW.bundle_id END);
    RETURN NULL;
END
$$;

-- What a bundle's analysis is computed from: its title, description and, in reading
-- order, each public member with the hash of its current enrichment.
CREATE OR REPLACE FUNCTION bundle_analysis_hash(p_bundle text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT encode(sha256(convert_to(
        b.title || E'\n' || b.description || E'\n' || coalesce((
            SELECT string_agg(d.id || ':' || coalesce(d.enriched_hash, ''), E'\n' ORDER BY bd.position)
            FROM bundle_docs bd JOIN docs d ON d.id = bd.doc_id
            WHERE bd.bundle_id = b.id AND doc_is_public(d)), ''),
        'UTF8')), 'hex')
    FROM bundles b WHERE b.id = p_bundle
$$;
