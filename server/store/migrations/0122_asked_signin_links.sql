-- Which sign-in links a visitor asked for (server/store/signin_links.py, REQUEST).
--
-- A link asked for on a page holds back another for the same address and page while it is
-- unused and younger than a link's lifetime: however many clients ask, the address gets one
-- mail, and its link works (no per-address budget that a stranger could spend instead). An
-- invitation mailed when a page is shared is no answer to asking, and holds nothing back.
-- Links kept before this migration are taken as invitations: they hold nothing back.
ALTER TABLE signin_links ADD COLUMN asked boolean NOT NULL DEFAULT false;
