-- A bundle's vector comes from its title, description and public member titles;
-- its source_hash follows them, so a renamed or now-private member makes it owed.
CREATE OR REPLACE FUNCTION bundle_source_hash(p_bundle text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT encode(sha256(convert_to(
        b.title || E'\n' || b.description || E'\n' || coalesce((
            SELECT string_agg(d.title, E'\n' ORDER BY bd.position)
            FROM bundle_docs bd JOIN docs d ON d.id = bd.doc_id
            WHERE bd.bundle_id = b.id AND doc_is_public(d)), ''),
        'UTF8')), 'hex')
    FROM bundles b WHERE b.id = p_bundle
$$;

CREATE OR REPLACE FUNCTION docs_touch_bundles() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE bundles SET source_hash = bundle_source_hash(id)
    WHERE id IN (SELECT bundle_id FROM bundle_docs WHERE doc_id = NEW.id);
    RETURN NEW;
END
$$;

-- Whether strangers see a bundle at all: live, and holding at least one public page. A bundle
-- emptied of pages, or whose pages are all private, is on no public surface (hub page, its
-- markdown, llms.txt, the bundle's URL, recall, digest): the bundles_public policy calls this.
-- SECURITY DEFINER: the public role may not read the docs columns the gates look at; the
-- answer is one boolean about a bundle row the caller already holds.
CREATE OR REPLACE FUNCTION bundle_is_public(b bundles) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
    SELECT b.deleted_at IS NULL AND EXISTS (
        SELECT 1 FROM bundle_docs bd JOIN docs d ON d.id = bd.doc_id
        WHERE bd.bundle_id = b.id AND doc_is_public(d))
$$;
