-- A session's opening context finds its project's latest pages by the project's keys
-- (docs_project_keys, 0140_agent_memory.sql) OR by the folder a session was captured in
-- (meta.cwd; server/store/agent_memory.py PROJECT_DOCS). Without an index on the folder too,
-- that OR read every live page of the hub; with both, it is a BitmapOr of two index scans.
CREATE INDEX docs_meta_cwd ON docs ((meta ->> 'cwd'))
    WHERE deleted_at IS NULL AND (meta ->> 'cwd') IS NOT NULL;
