-- A hub is unlisted until its owner lists it (issue 11): the home page and /llms.txt name only
-- listed hubs. The description is the one-line summary llms.txt quotes under the hub's name.
ALTER TABLE hubs ADD COLUMN listed boolean NOT NULL DEFAULT false;
ALTER TABLE hubs ADD COLUMN description text NOT NULL DEFAULT '';
CREATE INDEX hubs_listed ON hubs (slug) WHERE listed;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        GRANT SELECT (listed, description) ON hubs TO memorywiki_public;
    END IF;
END
$$;
