-- A reader's session: a person on a page's email list who signed in with a mailed link
-- (server/store/signin_links.py). Checked inside the read, on every read, so removing an
-- address from a page ends that reader's access to it at once.

-- The address of a live reader session (of the doc's hub, among these session hashes) that
-- the doc is shared with now; NULL otherwise. Never run by the public role.
CREATE OR REPLACE FUNCTION reader_email(p_doc text, p_sessions text[]) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT s.email FROM docs d JOIN sessions s ON s.hub_id = d.hub_id
    WHERE d.id = p_doc AND s.id_hash = ANY (coalesce(p_sessions, '{}'))
      AND s.kind = 'reader' AND s.revoked_at IS NULL AND s.expires_at > now()
      AND d.deleted_at IS NULL AND doc_visibility(d) = 'people'
      AND lower(s.email) IN (SELECT lower(e) FROM unnest(d.allowed_emails) AS e)
    LIMIT 1
$$;
REVOKE ALL ON FUNCTION reader_email(text, text[]) FROM PUBLIC;

-- An address taken off a page is no longer "told" (doc_invitations, migration 0126): adding it
-- again mails it a new sign-in link.
CREATE OR REPLACE FUNCTION docs_forget_invitations() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM doc_invitations i
    WHERE i.doc_id = NEW.id
      AND i.email <> ALL (ARRAY(SELECT lower(e) FROM unnest(NEW.allowed_emails) AS e));
    RETURN NULL;
END
$$;
