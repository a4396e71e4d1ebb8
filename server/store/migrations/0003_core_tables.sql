-- Core tables: hubs, docs, chunks, bundles, access tokens, the embedding space.
-- replaces: 0001_core.sql 0002_bm25.sql
-- Vectors are dimensionless columns; the HNSW indexes are built per embedding space
-- (see server/store/space.py) so switching embedders re-indexes instead of mixing dims.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE hubs (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    slug             text NOT NULL UNIQUE,
    owner_token_hash text NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE docs (
    id                    text PRIMARY KEY,
    hub_id                bigint REFERENCES hubs(id),
    title                 text NOT NULL,
    markdown              text NOT NULL,
    source                text,
    meta                  jsonb NOT NULL DEFAULT '{}'::jsonb,
    external_id           text,
    is_draft              boolean NOT NULL DEFAULT false,
    deleted_at            timestamptz,
    password_hash         text,
    allowed_emails        text[] NOT NULL DEFAULT '{}',
    edit_token_hash       text NOT NULL,
    source_hash           text NOT NULL,
    embedded_hash         text,
    embedded_chunk_hashes text[] NOT NULL DEFAULT '{}',
    embedding             vector,
    claimed_until         timestamptz,
    claimed_by            integer,  -- backend pid of the claiming worker's session
    index_error           text,
    version               integer NOT NULL DEFAULT 1,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX docs_hub_updated ON docs (hub_id, updated_at DESC);
CREATE UNIQUE INDEX docs_hub_external ON docs (hub_id, external_id) WHERE external_id IS NOT NULL;
-- Owed indexing work is derived from the data: this partial index keeps finding it cheap.
CREATE INDEX docs_owed ON docs (updated_at)
    WHERE deleted_at IS NULL AND source_hash IS DISTINCT FROM embedded_hash;

CREATE TABLE chunks (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    doc_id       text NOT NULL REFERENCES docs(id) ON DELETE CASCADE,
    hub_id       bigint,
    ordinal      integer NOT NULL,
    heading_path text NOT NULL,
    markdown     text NOT NULL,
    hash         text NOT NULL,
    embedding    vector,
    tsv          tsvector NOT NULL,
    -- mirrors the privacy gates of its doc (kept by triggers), so the vector and
    -- full-text indexes can filter on it without a join
    is_public    boolean NOT NULL DEFAULT false
);
CREATE INDEX chunks_doc ON chunks (doc_id, ordinal);
CREATE INDEX chunks_tsv ON chunks USING gin (tsv);

CREATE TABLE bundles (
    id              text PRIMARY KEY,
    hub_id          bigint NOT NULL REFERENCES hubs(id),
    title           text NOT NULL,
    description     text NOT NULL DEFAULT '',
    source_hash     text,
    embedded_hash   text,
    embedding       vector,
    claimed_until   timestamptz,
    claimed_by      integer,
    deleted_at      timestamptz,
    version         integer NOT NULL DEFAULT 1,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX bundles_hub ON bundles (hub_id);

CREATE TABLE bundle_docs (
    bundle_id text NOT NULL REFERENCES bundles(id) ON DELETE CASCADE,
    doc_id    text NOT NULL REFERENCES docs(id),
    position  integer NOT NULL,
    PRIMARY KEY (bundle_id, doc_id)
);
CREATE INDEX bundle_docs_doc ON bundle_docs (doc_id);

-- Access tokens an owner issues for an email-restricted doc (stored hashed).
CREATE TABLE access_tokens (
    token_hash text PRIMARY KEY,
    doc_id     text NOT NULL REFERENCES docs(id) ON DELETE CASCADE,
    email      text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Which embedder the stored vectors come from; one row.
CREATE TABLE embedding_space (
    id         boolean PRIMARY KEY DEFAULT true CHECK (id),
    model      text NOT NULL,
    dim        integer NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
