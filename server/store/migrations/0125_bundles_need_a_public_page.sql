-- A bundle is public only while it holds a public page (bundle_is_public(), functions/20_bundles.sql).
-- needs: functions
--
-- The policy of 0006_privacy.sql let strangers see every live bundle, so a bundle emptied of
-- its pages, or whose pages all became private, still showed its title and description on the
-- hub page, its markdown, llms.txt and its own URL. The policy now asks the function, whose
-- body can change without another migration.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memorywiki_public') THEN
        DROP POLICY IF EXISTS bundles_public ON bundles;
        CREATE POLICY bundles_public ON bundles FOR SELECT TO memorywiki_public
            USING (bundle_is_public(bundles));
    END IF;
END
$$;
