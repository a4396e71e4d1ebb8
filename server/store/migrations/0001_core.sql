-- Core schema: hubs, docs, chunks, bundles, access tokens.
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
    tsv          tsvector NOT NULL
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

-- ---------------------------------------------------------------------------
-- Privacy gates, in the database. Public reads go through these views with the
-- memorywiki_public role, which has no access to the base tables at all.
-- ---------------------------------------------------------------------------

CREATE VIEW public_docs WITH (security_barrier) AS
    SELECT id, hub_id, title, markdown, source, meta, embedding, version, created_at, updated_at
    FROM docs
    WHERE is_draft = false
      AND deleted_at IS NULL
      AND password_hash IS NULL
      AND cardinality(allowed_emails) = 0;

CREATE VIEW public_chunks WITH (security_barrier) AS
    SELECT c.id, c.doc_id, c.hub_id, c.ordinal, c.heading_path, c.markdown, c.embedding, c.tsv,
           d.title
    FROM chunks c
    JOIN docs d ON d.id = c.doc_id
    WHERE d.is_draft = false
      AND d.deleted_at IS NULL
      AND d.password_hash IS NULL
      AND cardinality(d.allowed_emails) = 0;

CREATE VIEW public_bundles WITH (security_barrier) AS
    SELECT id, hub_id, title, description, embedding, version, created_at, updated_at
    FROM bundles
    WHERE deleted_at IS NULL;

CREATE VIEW public_bundle_docs WITH (security_barrier) AS
    SELECT bd.bundle_id, bd.position, d.id AS doc_id, d.title, d.markdown, d.updated_at
    FROM bundle_docs bd
    JOIN docs d ON d.id = bd.doc_id
    JOIN bundles b ON b.id = bd.bundle_id AND b.deleted_at IS NULL
    WHERE d.is_draft = false
      AND d.deleted_at IS NULL
      AND d.password_hash IS NULL
      AND cardinality(d.allowed_emails) = 0;

CREATE VIEW public_hubs AS
    SELECT id, slug, created_at FROM hubs;

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        CREATE ROLE memorywiki_public NOLOGIN;
    END IF;
    EXECUTE format('GRANT memorywiki_public TO %I', current_user);
EXCEPTION WHEN insufficient_privilege THEN
    RAISE WARNING 'memorywiki: cannot create role memorywiki_public (%); public reads fall back to the views alone', SQLERRM;
END
$$;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        REVOKE ALL ON hubs, docs, chunks, bundles, bundle_docs, access_tokens FROM memorywiki_public;
        GRANT USAGE ON SCHEMA public TO memorywiki_public;
        GRANT SELECT ON public_docs, public_chunks, public_bundles, public_bundle_docs, public_hubs,
                        embedding_space TO memorywiki_public;
    END IF;
END
$$;
