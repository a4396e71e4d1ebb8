-- Email sign-in links and the mail outbox (server/store/signin_links.py, server/store/outbox.py).
--
-- A person on an email-restricted page asks for a link; the server keeps the link's sha256,
-- the address and the page it was asked from, and when it expires. Using it stamps used_at,
-- so it opens one session only. The mail goes through the outbox, which a background task
-- drains (retries with back-off); a sent mail's body (it holds the link) is blanked at once.
-- Neither table is ever readable by the public role.
CREATE TABLE signin_links (
    secret_hash text PRIMARY KEY,
    hub_id      bigint NOT NULL REFERENCES hubs(id) ON DELETE CASCADE,
    doc_id      text NOT NULL REFERENCES docs(id) ON DELETE CASCADE,
    email       text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz
);
CREATE INDEX signin_links_expires ON signin_links (expires_at);

CREATE TABLE mail_outbox (
    id              bigserial PRIMARY KEY,
    recipient       text NOT NULL,
    subject         text NOT NULL,
    body            text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    sent_at         timestamptz,
    failed_at       timestamptz,  -- gave up after the last retry
    last_error      text,         -- what the SMTP server or the network said, without addresses
    last_error_at   timestamptz
);
CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL AND failed_at IS NULL;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        REVOKE ALL ON signin_links FROM memorywiki_public;
        REVOKE ALL ON mail_outbox FROM memorywiki_public;
    END IF;
END
$$;
