-- State every server on one database shares (server/web/ratelimit.py, server/store/replicas.py).
--
-- rate_hits: one row per counted attempt (a refused token, a wrong password, a re-index, a
-- sign-in link request), so a client's budget is one budget however many servers it reaches;
-- the moving window is `at > now() - window`. Counting takes an advisory lock on the key for
-- the transaction, so two servers racing on one limit never both let the last attempt through.
-- recent_writes: the WAL position of each client's last write, so whichever server it reads
-- from next sends its public reads to the primary until the replica it would use has replayed
-- past it (read-your-writes with read replicas).
--
-- Both are UNLOGGED: they live on the primary only (no replica reads them), a crash that
-- empties them costs a rate window or one read from a replica, and they take no WAL.
CREATE UNLOGGED TABLE rate_hits (
    kind text NOT NULL,
    key  text NOT NULL,
    at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX rate_hits_key ON rate_hits (kind, key, at);

CREATE UNLOGGED TABLE recent_writes (
    key text PRIMARY KEY,   -- sha256 of the credential, or the client's address
    lsn pg_lsn NOT NULL,
    at  timestamptz NOT NULL DEFAULT now()
);

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        REVOKE ALL ON rate_hits FROM memorywiki_public;
        REVOKE ALL ON recent_writes FROM memorywiki_public;
    END IF;
END
$$;
