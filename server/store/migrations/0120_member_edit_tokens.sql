-- Edit tokens handed out through a member end with the membership (server/services/access.py).
--
-- A page a member creates answers with the page's edit token, like any page. That token was
-- the member's to hold only while they are a member: docs.edit_token_member names the
-- membership (hub_members.id) it was minted through, and a check of an edit token counts it
-- only while that member is live (store/docs.py, edit_token_live). Removing a member (or
-- adding the name again, which is a new row) ends every such token at once; nothing is
-- deleted, so the page stays as it was for its owner.
ALTER TABLE hub_members ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY;
ALTER TABLE hub_members ADD CONSTRAINT hub_members_pkey PRIMARY KEY (id);

ALTER TABLE docs ADD COLUMN edit_token_member bigint;  -- no foreign key: a missing member is a dead token

-- Pages made through a member before this migration: the membership whose name the first
-- version records, live when it was saved.
UPDATE docs d SET edit_token_member = m.id
FROM (
    SELECT d2.id AS doc_id, coalesce(v.saved_via, d2.saved_via) AS via,
           coalesce(v.saved_at, d2.created_at) AS made_at
    FROM docs d2
    LEFT JOIN LATERAL (
        SELECT saved_via, saved_at FROM doc_versions WHERE doc_id = d2.id ORDER BY version LIMIT 1
    ) v ON true
) first
JOIN hub_members m ON first.via = 'member:' || m.name
WHERE d.id = first.doc_id AND m.hub_id = d.hub_id
  AND first.made_at >= m.created_at AND (m.revoked_at IS NULL OR first.made_at <= m.revoked_at);
