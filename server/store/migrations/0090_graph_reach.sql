-- How far each doc reaches in its hub's graph, written with its edges (server/store/graph.py).
--
-- An edge joins two docs when either one reaches the other: a doc reaches the docs that are
-- close for its hub (well under its usual distance to the hub's other docs, and never past the
-- embedding space's limit), its nearest few at most. `reach` is the distance of the farthest
-- doc it chose (NULL: none), so a doc measured later can tell whether this one reaches it
-- without measuring this one again. `hub_docs` and `rule` say what it was measured against:
-- the indexing worker measures a doc again once its hub has changed size enough, or the rule
-- changed (an upgrade, a setting), from the stored vectors, with no embedding.
--
-- Only the server reads it: the public role has no grant, and row-level security is on with
-- no policy for it anyway.
CREATE TABLE doc_reach (
    doc_id   text PRIMARY KEY REFERENCES docs(id) ON DELETE CASCADE,
    hub_id   bigint NOT NULL,
    reach    real,
    hub_docs integer NOT NULL,
    rule     text NOT NULL
);
CREATE INDEX doc_reach_hub ON doc_reach (hub_id);

ALTER TABLE doc_reach ENABLE ROW LEVEL SECURITY;
