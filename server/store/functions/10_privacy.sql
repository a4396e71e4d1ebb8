-- Privacy gates: what makes a doc public, and the trigger functions that keep
-- chunks.is_public true to its doc (the triggers: migrations/0005_triggers.sql).

CREATE OR REPLACE FUNCTION doc_is_public(d docs) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT d.is_draft = false
       AND d.deleted_at IS NULL
       AND d.password_hash IS NULL
       AND cardinality(d.allowed_emails) = 0
$$;

CREATE OR REPLACE FUNCTION chunks_set_is_public() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    SELECT doc_is_public(d) INTO NEW.is_public FROM docs d WHERE d.id = NEW.doc_id;
    NEW.is_public := coalesce(NEW.is_public, false);
    RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION docs_sync_chunk_privacy() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF doc_is_public(NEW) IS DISTINCT FROM doc_is_public(OLD) THEN
        UPDATE chunks SET is_public = doc_is_public(NEW) WHERE doc_id = NEW.id;
    END IF;
    RETURN NEW;
END
$$;
