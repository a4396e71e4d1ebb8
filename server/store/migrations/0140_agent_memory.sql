-- What coding tools bring and take through their hooks (server/store/agent_memory.py).
--
-- context_usage counts what the hooks injected into sessions: one row per hub, day and kind
-- ("start": a session's opening context; "prompt": the passages added to a prompt), with the
-- calls and the tokens handed over, so a hub's owner sees what automatic recall costs.
-- Never readable by the public role.
CREATE TABLE context_usage (
    hub_id bigint NOT NULL REFERENCES hubs(id) ON DELETE CASCADE,
    day    date NOT NULL,
    kind   text NOT NULL CHECK (kind IN ('start', 'prompt')),
    calls  bigint NOT NULL DEFAULT 0,
    tokens bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (hub_id, day, kind)
);

-- A page tied to a project carries the project's keys in meta.project.keys
-- ("remote:github.com/acme/api", "path:/home/me/api", "name:api"; formats/project.py): a
-- session's opening context finds the project's latest pages by any of them.
CREATE INDEX docs_project_keys ON docs USING gin ((meta -> 'project' -> 'keys'))
    WHERE deleted_at IS NULL;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        REVOKE ALL ON context_usage FROM memorywiki_public;
    END IF;
END
$$;
