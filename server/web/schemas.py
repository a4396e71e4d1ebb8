"""Schemas of the contract that more than one route module answers with (server/web/openapi.py)."""

from __future__ import annotations

from .openapi import NULLABLE_TEXT, TEXT, obj

DOC = obj(["id", "url", "title", "markdown", "hub", "source", "meta", "version", "created_at", "updated_at"],
          id=TEXT, url=TEXT, title=TEXT, markdown=TEXT, hub=NULLABLE_TEXT, source=NULLABLE_TEXT,
          meta={"type": "object"}, version={"type": "integer"}, created_at=TEXT, updated_at=TEXT,
          is_draft={"type": "boolean"}, has_password={"type": "boolean"},
          allowed_emails={"type": "array", "items": TEXT}, indexed={"type": "boolean"})
READ_HEADERS = {"X-Doc-Password": TEXT, "X-Doc-Access": TEXT, "X-Edit-Token": TEXT}
