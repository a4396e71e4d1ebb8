-- The embedding spaces a reset replaced (server/store/space.py). After an embedder change the
-- current space is empty until the first new vectors arrive; this row is how recall can tell
-- "re-indexing after an embedder change" from "vectors not ready yet" (a first start).
CREATE TABLE embedding_space_history (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    model       text NOT NULL,
    dim         integer NOT NULL,
    replaced_by text NOT NULL,
    replaced_at timestamptz NOT NULL DEFAULT now()
);
