"""Schemas of the contract that more than one route module answers with (server/web/openapi.py)."""

from __future__ import annotations

from .openapi import NULLABLE_TEXT, TEXT, obj

# What a save says about the people a page is shared with (services/sharing.py, sharing_note)
SHARING = obj(
    ["allowed_emails", "mail", "mailed", "not_mailed", "message"],
    allowed_emails={"type": "array", "items": TEXT},
    mail={"type": "boolean", "description": "false: this server sends no mail (MEMORYWIKI_SMTP_URL is not set)"},
    mailed={
        "type": "array",
        "items": TEXT,
        "description": "addresses newly shared with: a one-time sign-in link is on its way to each",
    },
    not_mailed={"type": "array", "items": TEXT, "description": "addresses newly shared with that got no mail"},
    message=TEXT,
)
# What a write had redacted before it was stored (docs/secrets.md): never the values.
REDACTED = obj(
    ["secrets", "kinds", "private", "scanned"],
    secrets={"type": "integer", "description": "how many secrets were replaced by `[redacted: <kind>]`"},
    kinds={"type": "object", "additionalProperties": {"type": "integer"}, "description": "how many of each kind"},
    private={"type": "integer", "description": "how many `<private>…</private>` spans were dropped"},
    scanned={"type": "boolean", "description": "false: the hub's owner turned redaction of secrets off"},
)
DOC = obj(
    ["id", "url", "title", "markdown", "hub", "source", "meta", "version", "created_at", "updated_at"],
    id=TEXT,
    url=TEXT,
    title=TEXT,
    markdown=TEXT,
    hub=NULLABLE_TEXT,
    source=NULLABLE_TEXT,
    meta={"type": "object"},
    version={"type": "integer"},
    created_at=TEXT,
    updated_at=TEXT,
    is_draft={"type": "boolean"},
    has_password={"type": "boolean"},
    allowed_emails={"type": "array", "items": TEXT},
    indexed={"type": "boolean"},
    sharing={**SHARING, "description": "after an edit that shares the page or changes who it is shared with"},
    redacted={**REDACTED, "description": "an edit's answer: what it had redacted"},
)
READ_HEADERS = {"X-Doc-Password": TEXT, "X-Doc-Access": TEXT, "X-Edit-Token": TEXT}
# The dates a hub's owner may give the pages and bundles an import brings (docs/export.md)
IMPORT_DATES = {
    name: {
        "type": ["string", "null"],
        "format": "date-time",
        "maxLength": 100,
        "description": f"ISO 8601; with 'external_id', by the hub's owner only: the {what} on the server "
        "it came from (default: now)",
    }
    for name, what in (("created_at", "time it was made"), ("updated_at", "time it last changed"))
}
