"""A hub as a folder of markdown files: the one layout the export writes and the import reads.

```
<slug>/
  index.md                      the hub: front matter (format, slug, description, listing), then
                                links to every bundle and page
  pages/<title>.md              one page: front matter (title, id, visibility, ...), then its markdown
  pages/<title>.versions/<n>.md its earlier versions (with --versions)
  bundles/<title>.md            one bundle: front matter (title, id, description), then its
                                reading order as a numbered list of links to the pages
```

Links between pages of the hub are relative links between the files (`[x](Other.md)`), so
the folder reads as a vault in Obsidian or on GitHub, and the import turns them back into
the new pages' URLs. No token is ever written; a password-protected page carries its argon2
hash (docs/export.md says why), which only its owner's export holds.
"""

from __future__ import annotations

import datetime
import posixpath
from dataclasses import dataclass, field
from typing import Any

from .frontmatter import write_front_matter
from .mdlinks import href, link_text
from .model import FormatError

FORMAT = 1
MARKER = "memorywiki_export"  # the index's first field: the format's version
INDEX = "index.md"
PAGES = "pages"
BUNDLES = "bundles"
VERSIONS = ".versions"  # a page's versions live in "<page stem>.versions/"
OWN_ID = "memorywiki:"  # an importer id naming an exported page or bundle by its id
VISIBILITIES = ("public", "draft", "password", "people")


def visibility(is_draft: bool, password_hash: str | None, allowed_emails: list[str] | None) -> str:
    """What the owner's view calls a page: the strongest gate that applies to it."""
    if is_draft:
        return "draft"
    if password_hash:
        return "password"
    if allowed_emails:
        return "people"
    return "public"


def _when(value: Any) -> str | None:
    if hasattr(value, "isoformat"):
        return str(value.isoformat())
    return None if value is None else str(value)


def page_path(name: str) -> str:
    return f"{PAGES}/{name}"


def versions_dir(page_name: str) -> str:
    return f"{PAGES}/{posixpath.splitext(page_name)[0]}{VERSIONS}"


def bundle_path(name: str) -> str:
    return f"{BUNDLES}/{name}"


def page_file(doc: dict[str, Any], body: str) -> str:
    """A page's file: its front matter, then `body` (its markdown, links already relative)."""
    return (
        write_front_matter(
            {
                "title": doc["title"],
                "id": doc["id"],
                "external_id": doc.get("external_id"),
                "visibility": visibility(doc["is_draft"], doc.get("password_hash"), doc.get("allowed_emails")),
                "allowed_emails": list(doc.get("allowed_emails") or []) or None,
                "password_hash": doc.get("password_hash"),
                "source": doc.get("source"),
                "created": _when(doc["created_at"]),
                "updated": _when(doc["updated_at"]),
                "meta": doc.get("meta") or None,
            }
        )
        + body
    )


def version_file(version: dict[str, Any], body: str) -> str:
    """One earlier version of a page: how it was made, then its markdown."""
    return (
        write_front_matter(
            {
                "title": version["title"],
                "version": version["version"],
                "saved": _when(version["saved_at"]),
                "saved_via": version.get("saved_via"),
                "saved_action": version.get("saved_action"),
                "restored_from": version.get("restored_from"),
                "deleted": version.get("deleted") or None,
                "source": version.get("source"),
                "meta": version.get("meta") or None,
            }
        )
        + body
    )


def bundle_file(bundle: dict[str, Any], members: list[tuple[str, str]]) -> str:
    """A bundle's file; `members`: (title, path from the bundle's folder) in reading order."""
    lines = [f"{i}. [{link_text(title)}]({href(path)})" for i, (title, path) in enumerate(members, 1)]
    return (
        write_front_matter(
            {
                "title": bundle["title"],
                "id": bundle["id"],
                "external_id": bundle.get("external_id"),
                "description": bundle.get("description") or None,
                "created": _when(bundle["created_at"]),
                "updated": _when(bundle["updated_at"]),
            }
        )
        + "Reading order:\n\n"
        + "".join(f"{line}\n" for line in lines)
    )


@dataclass(frozen=True)
class IndexEntry:
    title: str
    path: str  # from the folder's root
    visibility: str | None = None  # pages only


def index_file(
    hub: dict[str, Any], exported_at: Any, pages: list[IndexEntry], bundles: list[IndexEntry], *, versions: bool
) -> str:
    """The hub's index: what the folder is, then a link to every bundle and page."""
    head = write_front_matter(
        {
            MARKER: FORMAT,
            "hub": hub["slug"],
            "url": hub.get("url"),
            "description": hub.get("description") or None,
            "listed": bool(hub.get("listed")),
            "exported_at": _when(exported_at),
            "pages": len(pages),
            "bundles": len(bundles),
            "versions": versions,
        }
    )
    lines = [f"# {hub['slug']}", ""]
    if hub.get("description"):
        lines += [f"> {' '.join(hub['description'].split())}", ""]
    if bundles:
        lines += ["## Bundles", ""] + [f"- [{link_text(b.title)}]({href(b.path)})" for b in bundles] + [""]
    lines += ["## Pages", ""]
    lines += [
        f"- [{link_text(p.title)}]({href(p.path)})" + (f" · {p.visibility}" if p.visibility != "public" else "")
        for p in pages
    ]
    return head + "\n".join(lines) + "\n"


# ---- reading ---------------------------------------------------------------------------


@dataclass
class Privacy:
    """The privacy fields an import names (None: not named, so an existing page keeps its
    own), and what the owner must still do."""

    is_draft: bool | None = None
    password_hash: str | None = None
    allowed_emails: list[str] | None = None
    names_password: bool = False  # password_hash is named (None then clears it)
    notes: list[str] = field(default_factory=list)

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.is_draft is not None:
            out["is_draft"] = self.is_draft
        if self.names_password:
            out["password_hash"] = self.password_hash
        if self.allowed_emails is not None:
            out["allowed_emails"] = self.allowed_emails
        return out


def _emails(value: Any) -> list[str] | None:
    if value is None:
        return None
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return sorted({str(e).strip().lower() for e in items if str(e).strip()})


def _false(value: Any) -> bool:
    return value is False or (isinstance(value, str) and value.strip().lower() in ("false", "no", "off", "0"))


def _true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() in ("true", "yes", "on", "1"))


def page_privacy(fields: dict[str, Any], *, exported: bool, all_drafts: bool = False) -> Privacy:
    """What a page file says about who may read it. An export's page names every field, so
    the page comes back exactly as it left. Any other file names only what it says: a
    `visibility`, `allowed_emails`, or the drafts of Obsidian Publish, Jekyll and Hugo
    (`publish: false`, `published: false`, `draft: true`). When the fields disagree the
    stricter wins, and a page that asks for a gate it cannot have (a password with no hash,
    people with no emails, a word this format does not know) becomes a draft."""
    privacy = Privacy()
    seen = fields.get("visibility")
    shown = str(seen).strip().lower() if seen is not None else None
    emails = _emails(fields.get("allowed_emails"))
    hashed = fields.get("password_hash")
    hashed = hashed.strip() if isinstance(hashed, str) and hashed.strip() else None
    if exported:
        privacy.is_draft, privacy.allowed_emails = False, emails or []
        privacy.password_hash, privacy.names_password = hashed, True
    else:
        if emails is not None:
            privacy.allowed_emails = emails
        if hashed:
            privacy.password_hash, privacy.names_password = hashed, True
        if shown is not None:
            privacy.is_draft = False
        for key in ("publish", "published"):
            if key in fields:
                privacy.is_draft = bool(privacy.is_draft) or _false(fields[key])
        if "draft" in fields:
            privacy.is_draft = bool(privacy.is_draft) or _true(fields["draft"])
    if shown is not None:
        if shown == "draft":
            privacy.is_draft = True
        elif shown == "password" and not hashed:
            privacy.is_draft = True
            privacy.notes.append(
                "password-protected, but no password hash came with it: imported as a draft; "
                "give it a new password and publish it"
            )
        elif shown == "people" and not emails:
            privacy.is_draft = True
            privacy.notes.append("shared with people, but no allowed_emails came with it: imported as a draft")
        elif shown not in VISIBILITIES:
            privacy.is_draft = True
            privacy.notes.append(f"visibility {seen!r} is not one of {', '.join(VISIBILITIES)}: imported as a draft")
    if all_drafts:
        privacy.is_draft = True
    return privacy


def import_key(fields: dict[str, Any], relative_path: str, *, exported: bool) -> str:
    """The importer id a page or bundle file is saved under: its own importer id, else (in
    an export) its id on the server it came from, else its path in the folder."""
    if exported:
        external = fields.get("external_id")
        if isinstance(external, str) and external.strip():
            return external.strip()[:300]
        own = fields.get("id")
        if isinstance(own, str) and own.strip():
            return f"{OWN_ID}{own.strip()}"[:300]
    return f"file:{relative_path}"[:300]


def own_id(key: str) -> str | None:
    """The id an importer id of the form "memorywiki:<id>" names, else None."""
    return key[len(OWN_ID) :] if key.startswith(OWN_ID) else None


def parse_when(value: Any, name: str) -> datetime.datetime | None:
    """A date an export names (`created`, `updated`) as a time: ISO 8601, a date alone being
    its midnight and a time without an offset UTC; None when not named. FormatError (naming
    the field) for anything else: a page must not come in dated at some guess."""
    if value is None:
        return None
    try:
        when = datetime.datetime.fromisoformat(value.strip()) if isinstance(value, str) else None
        if when is not None:  # in UTC, as the database keeps it (years 1 to 9999 only)
            utc = datetime.UTC
            when = when.astimezone(utc) if when.tzinfo is not None else when.replace(tzinfo=utc)
    except (ValueError, OverflowError):
        when = None
    if when is None:
        raise FormatError(
            "bad_date",
            f"{name!r} is not an ISO 8601 date of the years 1 to 9999 (such as "
            "2024-03-01T09:30:00+00:00): "
            f"{str(value)[:60]!r}",
        )
    return when


def parse_dates(
    created: Any, updated: Any, names: tuple[str, str] = ("created", "updated")
) -> tuple[datetime.datetime | None, datetime.datetime | None]:
    """(created, updated) as times (parse_when), once `created` is not after `updated`."""
    made, changed = parse_when(created, names[0]), parse_when(updated, names[1])
    if made is not None and changed is not None and made > changed:
        raise FormatError("bad_date", f"{names[0]!r} ({created}) is after {names[1]!r} ({updated})")
    return made, changed


def is_index(fields: dict[str, Any]) -> bool:
    """Whether these are the front matter fields of an export's index."""
    return fields.get(MARKER) == FORMAT
