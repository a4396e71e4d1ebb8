-- Curation: per-doc enrichment (keyed by the doc's source hash, owed like embeddings),
-- the concepts it names, suggested bundles, bundle analyses and model usage totals.
-- Tables and privacy here; the triggers that keep them true to their docs in 0041, their
-- functions in ../functions/50_curation.sql.
-- Everything here is exactly as private as its docs: the policies below make a row
-- visible to memorywiki_public only while every doc it derives from is public, so a doc
-- made private leaves the digest, suggestions, related lists and analyses at once.

-- Owed enrichment is derived from the data, as for embeddings: a live doc whose
-- enriched_hash differs from its source_hash. Claims are leases of their own, so the
-- indexer and the curator never wait on each other.
ALTER TABLE docs
    ADD COLUMN enriched_hash        text,
    ADD COLUMN enrich_claimed_until timestamptz,
    ADD COLUMN enrich_claimed_by    integer,
    ADD COLUMN enrich_error         text;
CREATE INDEX docs_enrich_owed ON docs (updated_at)
    WHERE deleted_at IS NULL AND source_hash IS DISTINCT FROM enriched_hash;

CREATE TABLE enrichments (
    doc_id            text PRIMARY KEY REFERENCES docs(id) ON DELETE CASCADE,
    hub_id            bigint,
    source_hash       text NOT NULL,
    mode              text NOT NULL CHECK (mode IN ('model', 'extractive')),
    model             text,
    data              jsonb NOT NULL,
    missing           text[] NOT NULL DEFAULT '{}',  -- fields whose model output did not validate
    note              text,
    calls             integer NOT NULL DEFAULT 0,    -- model calls this enrichment took
    prompt_tokens     integer NOT NULL DEFAULT 0,
    completion_tokens integer NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX enrichments_hub ON enrichments (hub_id);

-- The concepts of a doc's current enrichment, one row each; `key` is the case-folded name
-- (plural and alias folding happen when a hub's concepts are merged).
CREATE TABLE doc_concepts (
    doc_id   text NOT NULL REFERENCES docs(id) ON DELETE CASCADE,
    hub_id   bigint,
    position integer NOT NULL,
    key      text NOT NULL,
    name     text NOT NULL,
    kind     text NOT NULL,
    gloss    text NOT NULL DEFAULT '',
    aliases  text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (doc_id, position)
);
CREATE INDEX doc_concepts_hub_key ON doc_concepts (hub_id, key);

-- Running totals of model use per job (enrich, suggest, analysis), for /healthz.
CREATE TABLE curation_usage (
    job               text PRIMARY KEY,
    calls             bigint NOT NULL DEFAULT 0,
    prompt_tokens     bigint NOT NULL DEFAULT 0,
    completion_tokens bigint NOT NULL DEFAULT 0
);

-- Suggested bundles. Every change that can move a group (an enrichment, a privacy or hub
-- change, a bundle membership change) appends a mark for its hub; the hub's suggestions are
-- owed while it has marks past suggested_mark. Marks are insert-only, so the transactions
-- that make them never wait on one another (a counter on the hub row deadlocked a bundle
-- insert's foreign-key locks against an enrichment write). The same docs keep the same
-- suggestion (signature), so a recompute never renames an offered group nor re-offers a
-- dismissed one.
CREATE TABLE curation_marks (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    hub_id    bigint NOT NULL,
    marked_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX curation_marks_hub ON curation_marks (hub_id, id);
ALTER TABLE hubs
    ADD COLUMN suggested_mark        bigint NOT NULL DEFAULT 0,
    ADD COLUMN suggest_claimed_until timestamptz,
    ADD COLUMN suggest_claimed_by    integer;

CREATE TABLE bundle_suggestions (
    id          text PRIMARY KEY,
    hub_id      bigint NOT NULL REFERENCES hubs(id) ON DELETE CASCADE,
    signature   text NOT NULL,
    title       text NOT NULL,
    description text NOT NULL DEFAULT '',
    doc_ids     text[] NOT NULL,
    mode        text NOT NULL,
    status      text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'accepted', 'dismissed')),
    bundle_id   text REFERENCES bundles(id),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (hub_id, signature)
);

-- A bundle's cross-doc analysis, computed from its public members' enrichments;
-- input_hash says from which (see bundle_analysis_hash), member_ids from whom.
CREATE TABLE bundle_analyses (
    bundle_id         text PRIMARY KEY REFERENCES bundles(id) ON DELETE CASCADE,
    input_hash        text NOT NULL,
    member_ids        text[] NOT NULL,
    mode              text NOT NULL,
    model             text,
    data              jsonb NOT NULL,
    missing           text[] NOT NULL DEFAULT '{}',
    calls             integer NOT NULL DEFAULT 0,
    prompt_tokens     integer NOT NULL DEFAULT 0,
    completion_tokens integer NOT NULL DEFAULT 0,
    updated_at        timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE bundles
    ADD COLUMN analysis_claimed_until timestamptz,
    ADD COLUMN analysis_claimed_by    integer;

-- ---------------------------------------------------------------------------
-- Privacy: public reads see a derived row only while its docs are public.
-- (Inside a policy, docs is itself filtered by docs_public for this role.)
-- ---------------------------------------------------------------------------

ALTER TABLE enrichments ENABLE ROW LEVEL SECURITY;
ALTER TABLE doc_concepts ENABLE ROW LEVEL SECURITY;
ALTER TABLE bundle_suggestions ENABLE ROW LEVEL SECURITY;
ALTER TABLE bundle_analyses ENABLE ROW LEVEL SECURITY;
ALTER TABLE curation_usage ENABLE ROW LEVEL SECURITY;
ALTER TABLE curation_marks ENABLE ROW LEVEL SECURITY;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        CREATE POLICY enrichments_public ON enrichments FOR SELECT TO memorywiki_public
            USING (EXISTS (SELECT 1 FROM docs d WHERE d.id = enrichments.doc_id));
        CREATE POLICY doc_concepts_public ON doc_concepts FOR SELECT TO memorywiki_public
            USING (EXISTS (SELECT 1 FROM docs d WHERE d.id = doc_concepts.doc_id));
        CREATE POLICY bundle_suggestions_public ON bundle_suggestions FOR SELECT TO memorywiki_public
            USING (NOT EXISTS (SELECT 1 FROM unnest(bundle_suggestions.doc_ids) AS m(id)
                               WHERE NOT EXISTS (SELECT 1 FROM docs d WHERE d.id = m.id)));
        CREATE POLICY bundle_analyses_public ON bundle_analyses FOR SELECT TO memorywiki_public
            USING (EXISTS (SELECT 1 FROM bundles b WHERE b.id = bundle_analyses.bundle_id)
                   AND NOT EXISTS (SELECT 1 FROM unnest(bundle_analyses.member_ids) AS m(id)
                                   WHERE NOT EXISTS (SELECT 1 FROM docs d WHERE d.id = m.id)));

        REVOKE ALL ON enrichments, doc_concepts, bundle_suggestions, bundle_analyses, curation_usage,
            curation_marks FROM memorywiki_public;
        GRANT SELECT (doc_id, hub_id, mode, model, data, missing, created_at) ON enrichments TO memorywiki_public;
        GRANT SELECT ON doc_concepts TO memorywiki_public;
        GRANT SELECT (id, hub_id, title, description, doc_ids, mode, status, bundle_id, created_at, updated_at)
            ON bundle_suggestions TO memorywiki_public;
        GRANT SELECT (bundle_id, member_ids, mode, model, data, missing, updated_at)
            ON bundle_analyses TO memorywiki_public;
    END IF;
END
$$;
