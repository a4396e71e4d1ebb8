-- Secrets never reach storage: every write is redacted unless the hub's owner turned it off
-- for a hub that wants raw text. On by default, for every hub that exists now too. Only the
-- owner's pool reads it (the public role has no grant on the column).
ALTER TABLE hubs ADD COLUMN redact_secrets boolean NOT NULL DEFAULT true;
