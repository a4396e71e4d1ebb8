-- Who has been told that a page is shared with them (server/store/signin_links.py, invite()).
-- needs: functions
--
-- Sharing a page with an address mails that address its one-time sign-in link once, when the
-- page can open to it (live, in a hub, read by its listed people only); a row here says it was
-- done (`mailed`: false when the server sends no mail, or the page came in by an import).
-- Taking the address off the page drops its row (the trigger below), so adding it again mails
-- it again. Pages already shared when this table came are recorded as told, so an upgrade
-- mails nobody. Never readable by the public role.
CREATE TABLE doc_invitations (
    doc_id     text NOT NULL REFERENCES docs(id) ON DELETE CASCADE,
    email      text NOT NULL,  -- lower case
    invited_at timestamptz NOT NULL DEFAULT now(),
    mailed     boolean NOT NULL,
    PRIMARY KEY (doc_id, email)
);

INSERT INTO doc_invitations (doc_id, email, mailed)
SELECT DISTINCT d.id, lower(e), false
FROM docs d, unnest(d.allowed_emails) AS e
WHERE d.hub_id IS NOT NULL AND d.deleted_at IS NULL AND doc_visibility(d) = 'people'
ON CONFLICT DO NOTHING;

CREATE TRIGGER docs_invitations AFTER UPDATE OF allowed_emails ON docs
    FOR EACH ROW WHEN (OLD.allowed_emails IS DISTINCT FROM NEW.allowed_emails)
    EXECUTE FUNCTION docs_forget_invitations();

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        REVOKE ALL ON doc_invitations FROM memorywiki_public;
    END IF;
END
$$;
