-- Browser sign-in: one row per session a browser holds (server/store/sessions.py).
--
-- The browser keeps a random session id in a signed HttpOnly cookie; the database keeps only
-- its sha256, the hub it opens and what kind of session it is: "owner" (signed in with the
-- hub's owner token), "reader" (a person on a page's email list, who signed in with a link
-- mailed to that address) or "member" (a co-author). Signing out or in again revokes a row
-- rather than deleting it, so a replayed cookie is recognised and refused with a reason.
-- The owner's reads prove a live owner session inside the statement (hub_owned(), in
-- functions/70_owner.sql). Never readable by the public role.
CREATE TABLE sessions (
    id_hash    text PRIMARY KEY,
    hub_id     bigint NOT NULL REFERENCES hubs(id) ON DELETE CASCADE,
    kind       text NOT NULL CHECK (kind IN ('owner', 'reader', 'member')),
    email      text,  -- the reader's address; a reader session has one, no other kind does
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz,
    CHECK ((kind = 'reader') = (email IS NOT NULL))
);
CREATE INDEX sessions_hub ON sessions (hub_id, kind);

-- The owner's trash: a hub's deleted pages, newest deletion first.
CREATE INDEX docs_hub_deleted ON docs (hub_id, deleted_at DESC) WHERE deleted_at IS NOT NULL;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        REVOKE ALL ON sessions FROM memorywiki_public;
    END IF;
END
$$;
