-- Members: co-authors of a hub, each with a token of their own (server/store/members.py).
--
-- The owner adds a member by name; the member's token (shown once) writes pages into the hub
-- and every version it saves records "member:<name>" in saved_via. Revoking keeps the row
-- (revoked_at), so a revoked token is refused at once and the name can be added again.
-- Only the token's sha256 is kept. Never readable by the public role.
CREATE TABLE hub_members (
    hub_id     bigint NOT NULL REFERENCES hubs(id) ON DELETE CASCADE,
    name       text NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,39}$'),
    token_hash text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
-- one live member per name and hub; revoked rows stay as history
CREATE UNIQUE INDEX hub_members_live ON hub_members (hub_id, name) WHERE revoked_at IS NULL;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        REVOKE ALL ON hub_members FROM memorywiki_public;
    END IF;
END
$$;
