-- The hub graph and cross-references (issue 11).
--
-- doc_edges: semantic neighbours within a hub, one row per pair (source < target), written by
-- the indexer when a doc's vector changes (server/store/graph.py): only that doc's rows are
-- replaced, never all pairs. links: the `/{id}` links a doc's markdown holds, rewritten on
-- every save of its body (server/store/links.py); `host` is the link's host ('' when relative),
-- so reads keep only links to this server.
--
-- Both are exactly as private as their docs: the public role sees a row only when row-level
-- security lets it see both docs, so a doc made private after it was linked or graphed drops
-- out of every edge and link list at once, and comes back if it is made public again.
CREATE TABLE doc_edges (
    source     text NOT NULL REFERENCES docs(id) ON DELETE CASCADE,
    target     text NOT NULL REFERENCES docs(id) ON DELETE CASCADE,
    hub_id     bigint NOT NULL,
    distance   real NOT NULL,
    PRIMARY KEY (source, target),
    CHECK (source < target)
);
CREATE INDEX doc_edges_target ON doc_edges (target);
CREATE INDEX doc_edges_hub ON doc_edges (hub_id);

CREATE TABLE links (
    source text NOT NULL REFERENCES docs(id) ON DELETE CASCADE,
    target text NOT NULL,
    host   text NOT NULL DEFAULT '',
    PRIMARY KEY (source, target, host)
);
CREATE INDEX links_target ON links (target);

ALTER TABLE doc_edges ENABLE ROW LEVEL SECURITY;
ALTER TABLE links ENABLE ROW LEVEL SECURITY;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        CREATE POLICY doc_edges_public ON doc_edges FOR SELECT TO memorywiki_public
            USING (EXISTS (SELECT 1 FROM docs d WHERE d.id = doc_edges.source)
               AND EXISTS (SELECT 1 FROM docs d WHERE d.id = doc_edges.target));
        CREATE POLICY links_public ON links FOR SELECT TO memorywiki_public
            USING (EXISTS (SELECT 1 FROM docs d WHERE d.id = links.source)
               AND EXISTS (SELECT 1 FROM docs d WHERE d.id = links.target));
        GRANT SELECT ON doc_edges, links TO memorywiki_public;
    END IF;
END
$$;
