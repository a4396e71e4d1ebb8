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

-- ---------------------------------------------------------------------------
-- Privacy gates, in the database. Public reads run as the memorywiki_public role:
-- row-level security hides every row that fails the gates, and column grants hide
-- tokens and password hashes. Route code cannot widen this by mistake.
-- chunks.is_public mirrors the gates of its doc; triggers keep it true to the doc,
-- so the vector and full-text indexes can filter on it without a join.
-- ---------------------------------------------------------------------------

ALTER TABLE chunks ADD COLUMN is_public boolean NOT NULL DEFAULT false;

CREATE FUNCTION doc_is_public(d docs) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT d.is_draft = false
       AND d.deleted_at IS NULL
       AND d.password_hash IS NULL
       AND cardinality(d.allowed_emails) = 0
$$;

CREATE FUNCTION chunks_set_is_public() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    SELECT doc_is_public(d) INTO NEW.is_public FROM docs d WHERE d.id = NEW.doc_id;
    NEW.is_public := coalesce(NEW.is_public, false);
    RETURN NEW;
END
$$;
CREATE TRIGGER chunks_is_public BEFORE INSERT OR UPDATE OF doc_id ON chunks
    FOR EACH ROW EXECUTE FUNCTION chunks_set_is_public();

CREATE FUNCTION docs_sync_chunk_privacy() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF doc_is_public(NEW) IS DISTINCT FROM doc_is_public(OLD) THEN
        UPDATE chunks SET is_public = doc_is_public(NEW) WHERE doc_id = NEW.id;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER docs_chunk_privacy AFTER UPDATE OF is_draft, deleted_at, password_hash, allowed_emails ON docs
    FOR EACH ROW EXECUTE FUNCTION docs_sync_chunk_privacy();

-- A bundle's vector comes from its title, description and public member titles;
-- its source_hash follows them, so a renamed or now-private member makes it owed.
CREATE FUNCTION bundle_source_hash(p_bundle text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT encode(sha256(convert_to(
        b.title || E'\n' || b.description || E'\n' || coalesce((
            SELECT string_agg(d.title, E'\n' ORDER BY bd.position)
            FROM bundle_docs bd JOIN docs d ON d.id = bd.doc_id
            WHERE bd.bundle_id = b.id AND doc_is_public(d)), ''),
        'UTF8')), 'hex')
    FROM bundles b WHERE b.id = p_bundle
$$;

CREATE FUNCTION docs_touch_bundles() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE bundles SET source_hash = bundle_source_hash(id)
    WHERE id IN (SELECT bundle_id FROM bundle_docs WHERE doc_id = NEW.id);
    RETURN NEW;
END
$$;
CREATE TRIGGER docs_bundles AFTER UPDATE OF title, is_draft, deleted_at, password_hash, allowed_emails ON docs
    FOR EACH ROW EXECUTE FUNCTION docs_touch_bundles();

ALTER TABLE docs ENABLE ROW LEVEL SECURITY;
ALTER TABLE chunks ENABLE ROW LEVEL SECURITY;
ALTER TABLE bundles ENABLE ROW LEVEL SECURITY;
ALTER TABLE bundle_docs ENABLE ROW LEVEL SECURITY;
ALTER TABLE hubs ENABLE ROW LEVEL SECURITY;

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        CREATE ROLE memorywiki_public NOLOGIN;
    END IF;
    EXECUTE format('GRANT memorywiki_public TO %I', current_user);
EXCEPTION WHEN insufficient_privilege THEN
    RAISE WARNING 'memorywiki: cannot create role memorywiki_public (%); create it by hand, the server will not serve public reads without it', SQLERRM;
END
$$;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        CREATE POLICY docs_public ON docs FOR SELECT TO memorywiki_public
            USING (doc_is_public(docs));
        CREATE POLICY chunks_public ON chunks FOR SELECT TO memorywiki_public
            USING (is_public);
        CREATE POLICY bundles_public ON bundles FOR SELECT TO memorywiki_public
            USING (deleted_at IS NULL);
        CREATE POLICY bundle_docs_public ON bundle_docs FOR SELECT TO memorywiki_public
            USING (EXISTS (SELECT 1 FROM docs d WHERE d.id = bundle_docs.doc_id));
        CREATE POLICY hubs_public ON hubs FOR SELECT TO memorywiki_public USING (true);

        REVOKE ALL ON hubs, docs, chunks, bundles, bundle_docs, access_tokens FROM memorywiki_public;
        GRANT USAGE ON SCHEMA public TO memorywiki_public;
        GRANT SELECT (id, slug, created_at) ON hubs TO memorywiki_public;
        GRANT SELECT (id, hub_id, title, markdown, source, meta, embedding, version, created_at, updated_at)
            ON docs TO memorywiki_public;
        GRANT SELECT (id, doc_id, hub_id, ordinal, heading_path, markdown, embedding, tsv, is_public)
            ON chunks TO memorywiki_public;
        GRANT SELECT (id, hub_id, title, description, embedding, version, created_at, updated_at)
            ON bundles TO memorywiki_public;
        GRANT SELECT ON bundle_docs TO memorywiki_public;
        GRANT SELECT ON embedding_space TO memorywiki_public;
    END IF;
END
$$;
