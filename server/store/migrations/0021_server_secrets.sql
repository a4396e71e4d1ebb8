-- Server secrets (issue 10, item 7): the key that signs CSRF tokens, made once per database
-- (server/store/secrets.py), so every server process on this database accepts the tokens
-- any of them issued. Never readable by the public role.
CREATE TABLE server_secrets (
    name       text PRIMARY KEY,
    value      text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        REVOKE ALL ON server_secrets FROM memorywiki_public;
    END IF;
END
$$;
