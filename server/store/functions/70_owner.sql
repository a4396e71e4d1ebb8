-- The owner's view: whether a credential owns a hub, checked inside the statements that read
-- or change the hub as its owner (server/store/hubs.py), and what a page's visibility is.

-- The hub's owner token (its sha256), or one of a browser's session ids (their sha256) naming
-- a live owner session of this hub. Never run by the public role: it cannot read either table.
CREATE OR REPLACE FUNCTION hub_owned(p_hub bigint, p_token_hash text, p_sessions text[]) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM hubs h WHERE h.id = p_hub AND h.owner_token_hash = p_token_hash)
        OR EXISTS (SELECT 1 FROM sessions s
                   WHERE s.hub_id = p_hub AND s.id_hash = ANY (coalesce(p_sessions, '{}'))
                     AND s.kind = 'owner' AND s.revoked_at IS NULL AND s.expires_at > now())
$$;
REVOKE ALL ON FUNCTION hub_owned(bigint, text, text[]) FROM PUBLIC;

-- Who may read a page, in one word: the strictest gate it has. A draft with a password is a
-- draft: nobody but its editors reads it, whatever the password.
CREATE OR REPLACE FUNCTION doc_visibility(d docs) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN d.is_draft THEN 'draft'
                WHEN d.password_hash IS NOT NULL THEN 'password'
                WHEN cardinality(d.allowed_emails) > 0 THEN 'people'
                ELSE 'public' END
$$;
