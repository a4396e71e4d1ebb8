"""The credential matrix: what every credential may do with every operation, as data.

tests/test_credential_matrix.py runs every cell against a live server, and docs/credentials.md
is this table rendered (`python -m tests.credential_matrix > docs/credentials.md`; the test
fails when the committed file differs). A new route fails the test until it has a row here,
or is named in CREDENTIAL_FREE with why no credential can change its answer.

Each cell is one of:
- "yes": allowed, and it happened (a read shows the private text, a change is there when the
  owner looks);
- "no": a clear 4xx, nothing private in the answer, nothing changed;
- "public": an answer, but only what anyone gets (the same public view strangers see).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Credential:
    key: str
    name: str
    how: str
    ended: bool = False  # a credential replayed after its grant ended


CREDENTIALS = (
    Credential("owner_token", "owner token", "`Authorization: Bearer mwo_…`, the hub's owner token"),
    Credential("owner_session", "owner session", "a browser signed in as the owner: the `mw_session` cookie"),
    Credential("member_token", "member token", "`Authorization: Bearer mwm_…` of a member of the hub"),
    Credential(
        "reader_session",
        "reader session",
        "a browser signed in from a mailed link, as ann, whom the people page is shared with",
    ),
    Credential(
        "edit_token", "edit token", "`X-Edit-Token` (or Bearer): the page's own edit token, which its creator got"
    ),
    Credential("password", "password", "`X-Doc-Password` (or the password form): the page's password"),
    Credential("access_link", "access link", "`?access=` (or `X-Doc-Access`): a link the owner issued ann"),
    Credential("anonymous", "anonymous", "nothing"),
    Credential(
        "removed_member", "removed member", "the token of a member who made the page, then was removed", ended=True
    ),
    Credential(
        "removed_member_edit_token",
        "removed member's edit token",
        "the page's edit token, handed to a member who made it, then was removed",
        ended=True,
    ),
    Credential("signed_out", "signed-out session", "the owner's session cookie, replayed after sign-out", ended=True),
    Credential(
        "removed_reader",
        "removed reader",
        "a reader's session (bea), replayed after her address was taken off the page",
        ended=True,
    ),
)
KEYS = tuple(c.key for c in CREDENTIALS)
OWNER = frozenset({"owner_token", "owner_session"})
WRITERS = OWNER | {"member_token"}  # write pages into the hub
EDITORS = WRITERS | {"edit_token"}  # edit a page
ALL = frozenset(KEYS)
NONE: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Operation:
    key: str
    section: str
    what: str
    method: str
    route: str  # the app's path template
    yes: frozenset[str] = NONE
    public: frozenset[str] = NONE
    note: str = ""
    cells: dict[str, str] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        assert not (self.yes & self.public), self.key
        cells = {k: "yes" if k in self.yes else "public" if k in self.public else "no" for k in KEYS}
        object.__setattr__(self, "cells", cells)


def op(key, section, what, route, *, yes=NONE, public=NONE, note="") -> Operation:
    method, path = route.split(" ", 1)
    return Operation(key, section, what, method, path, frozenset(yes), frozenset(public), note)


PAGES = "Reading a page"
HISTORY = "History"
WRITING = "Writing pages"
HUB = "Running the hub"
SIGNING_IN = "Signing in"
PUBLIC = "Public surfaces"
AGENTS = "Coding tools' hooks"
READERS = EDITORS | {"reader_session", "access_link"}  # a page shared with ann

OPERATIONS = (
    # ---- reading a page, by who may read it
    op("read_public", PAGES, "read a public page", "GET /api/docs/{doc_id}", yes=ALL),
    op("read_draft", PAGES, "read a draft", "GET /api/docs/{doc_id}", yes=EDITORS),
    op("page_draft", PAGES, "open a draft's page (HTML)", "GET /{doc_id}", yes=EDITORS),
    op("read_password", PAGES, "read a password page (markdown)", "GET /raw/{doc_id}", yes=EDITORS | {"password"}),
    op(
        "password_form",
        PAGES,
        "send the password form of a password page",
        "POST /{doc_id}",
        yes=EDITORS | {"password"},
    ),
    op("read_people", PAGES, "read a page shared with ann", "GET /api/docs/{doc_id}", yes=READERS),
    op("twin_people", PAGES, "read a page shared with ann (markdown twin)", "GET /{doc_id}.md", yes=READERS),
    op("page_people", PAGES, "open a page shared with ann (HTML)", "GET /{doc_id}", yes=READERS),
    op("related_draft", PAGES, "a draft's related pages", "GET /api/docs/{doc_id}/related", yes=EDITORS),
    op("enrichment_draft", PAGES, "a draft's enrichment", "GET /api/docs/{doc_id}/enrichment", yes=EDITORS),
    op(
        "editor_draft",
        PAGES,
        "open a draft in the editor",
        "GET /{doc_id}/edit",
        public=ALL,
        note="the page never holds a private page's text; its script loads it with the browser's token",
    ),
    op(
        "embed_draft",
        PAGES,
        "re-index a draft",
        "POST /api/embed/{doc_id}",
        yes=EDITORS,
        note="anyone else gets the 404 of an unknown id",
    ),
    # ---- history
    op("versions_draft", HISTORY, "list a draft's versions", "GET /api/docs/{doc_id}/versions", yes=EDITORS),
    op("history_people", HISTORY, "the history page of a page shared with ann", "GET /{doc_id}/history", yes=READERS),
    op("history_twin_draft", HISTORY, "a draft's history (markdown)", "GET /{doc_id}/history.md", yes=EDITORS),
    op(
        "draft_era_version",
        HISTORY,
        "read a version written while a now public page was a draft",
        "GET /api/docs/{doc_id}/versions/{version}",
        yes=EDITORS,
        note="publishing shows the current text; earlier drafts stay with its editors",
    ),
    op(
        "versions_deleted",
        HISTORY,
        "list a deleted page's versions",
        "GET /api/docs/{doc_id}/versions",
        yes=OWNER,
    ),
    op(
        "version_deleted",
        HISTORY,
        "read a version of a deleted page",
        "GET /api/docs/{doc_id}/versions/{version}",
        yes=OWNER,
    ),
    op("restore_live", HISTORY, "restore an earlier version", "POST /api/docs/{doc_id}/restore", yes=EDITORS),
    op(
        "restore_deleted",
        HISTORY,
        "restore a version of a deleted page",
        "POST /api/docs/{doc_id}/restore",
        yes=OWNER,
    ),
    op("undelete", HISTORY, "undelete a page", "POST /api/docs/{doc_id}/undelete", yes=OWNER),
    # ---- writing pages
    op("create_in_hub", WRITING, "create a page in the hub", "POST /api/docs", yes=WRITERS),
    op("create_hubless", WRITING, "create a page in no hub", "POST /api/docs", yes=ALL, note="open to anyone"),
    op("capture_url", WRITING, "capture a web page into the hub", "POST /api/capture", yes=WRITERS),
    op("capture_file", WRITING, "capture a file into the hub", "POST /api/capture/file", yes=WRITERS),
    op("import_export", WRITING, "import a chat export into the hub", "POST /api/import/{kind}", yes=OWNER),
    op("edit", WRITING, "edit a draft", "PATCH /api/docs/{doc_id}", yes=EDITORS),
    op("share", WRITING, "share a page with an address", "PATCH /api/docs/{doc_id}", yes=EDITORS),
    op("move_out", WRITING, "move a page out of the hub", "PATCH /api/docs/{doc_id}", yes=OWNER),
    op(
        "move_away",
        WRITING,
        "move a page into another hub",
        "PATCH /api/docs/{doc_id}",
        yes=OWNER,
        note="sent beside the other hub's owner token: only the page's own hub owner may let it go",
    ),
    op(
        "adopt",
        WRITING,
        "move a page of no hub into the hub",
        "PATCH /api/docs/{doc_id}",
        yes=WRITERS,
        note="sent beside the page's own edit token, which alone cannot",
    ),
    op("delete", WRITING, "delete a page", "DELETE /api/docs/{doc_id}", yes=EDITORS),
    op("issue_access", WRITING, "issue an access link for ann", "POST /api/docs/{doc_id}/access", yes=EDITORS),
    # ---- running the hub
    op("hub_view", HUB, "the hub's listing", "GET /api/hub/{slug}", yes=OWNER, public=ALL - OWNER),
    op("hub_page", HUB, "the hub's page (HTML)", "GET /hub/{slug}", yes=OWNER, public=ALL - OWNER),
    op("trash", HUB, "the trash", "GET /api/hub/{slug}/trash", yes=OWNER),
    op("settings", HUB, "list or describe the hub", "PATCH /api/hub/{slug}", yes=OWNER),
    op("members_list", HUB, "list members", "GET /api/hub/{slug}/members", yes=OWNER),
    op("members_add", HUB, "add a member", "POST /api/hub/{slug}/members", yes=OWNER),
    op("members_remove", HUB, "remove a member", "DELETE /api/hub/{slug}/members/{name}", yes=OWNER),
    op("export", HUB, "export the hub", "GET /api/hub/{slug}/export", yes=OWNER),
    op("lookup", HUB, "look up importer ids", "POST /api/hub/{slug}/lookup", yes=OWNER),
    op("bundle_create", HUB, "create a bundle", "POST /api/bundles", yes=OWNER),
    op("bundle_edit", HUB, "edit a bundle", "PATCH /api/bundles/{bundle_id}", yes=OWNER),
    op("bundle_delete", HUB, "delete a bundle", "DELETE /api/bundles/{bundle_id}", yes=OWNER),
    op("bundle_editor", HUB, "open a bundle in the editor", "GET /b/{bundle_id}/edit", yes=OWNER),
    op("bundle_new", HUB, "open the editor for a new bundle", "GET /hub/{slug}/bundles/new", yes=OWNER),
    op(
        "suggestion_accept",
        HUB,
        "accept a suggested bundle",
        "POST /api/hub/{slug}/suggestions/{suggestion_id}/accept",
        yes=OWNER,
    ),
    op(
        "suggestion_dismiss",
        HUB,
        "dismiss a suggested bundle",
        "POST /api/hub/{slug}/suggestions/{suggestion_id}/dismiss",
        yes=OWNER,
    ),
    op("create_hub", HUB, "create a hub", "POST /api/hubs", yes=ALL, note="open to anyone"),
    # ---- signing in
    op(
        "sign_in",
        SIGNING_IN,
        "sign a browser in as the owner, offering the credential as the token",
        "POST /api/hub/{slug}/session",
        yes={"owner_token"},
        note="only the owner token opens an owner session",
    ),
    op(
        "session_status",
        SIGNING_IN,
        "whether this browser is signed in",
        "GET /api/hub/{slug}/session",
        yes={"owner_session", "reader_session", "removed_reader"},
        public=ALL - {"owner_session", "reader_session", "removed_reader"},
        note="a reader stays signed in to the hub; which pages she reads is checked page by page, at each read",
    ),
    op("sign_out", SIGNING_IN, "sign this browser out", "DELETE /api/hub/{slug}/session", yes=ALL),
    op("signin_page", SIGNING_IN, "the hub's sign-in page", "GET /hub/{slug}/signin", public=ALL),
    op(
        "ask_link",
        SIGNING_IN,
        "ask for a sign-in link for ann",
        "POST /api/docs/{doc_id}/access/request",
        yes=ALL,
        note="the same answer for any address; mail only to a listed one",
    ),
    op("ask_link_form", SIGNING_IN, "ask for a sign-in link (the form)", "POST /{doc_id}/access", yes=ALL),
    op("reader_signin_page", SIGNING_IN, "the page a mailed link opens", "GET /{doc_id}/signin", public=ALL),
    op(
        "reader_link",
        SIGNING_IN,
        "sign in with ann's mailed link",
        "POST /api/docs/{doc_id}/access/session",
        yes=ALL,
        note="the link is the credential: it works once, from any browser",
    ),
    op(
        "reader_link_used",
        SIGNING_IN,
        "sign in with a link used already",
        "POST /api/docs/{doc_id}/access/session",
    ),
    # ---- the coding tools' hooks (server/routes/agent_memory.py)
    op(
        "agent_capture",
        AGENTS,
        "save a coding session as its page",
        "PUT /api/hub/{slug}/agent-sessions/{tool}/{session_id}",
        yes=WRITERS,
    ),
    op(
        "agent_context",
        AGENTS,
        "the memory a session starts with (its project's drafts)",
        "POST /api/hub/{slug}/agent-context",
        yes=WRITERS,
        public=ALL - WRITERS - {"removed_member"},
        note="a bearer token that neither owns the hub nor is a member's is refused, so a hook with a wrong "
        "or ended token says so; no bearer token gets what strangers get, and a page's own credentials "
        "(edit token, password, access link, a reader's sign-in) do not open the hub's drafts",
    ),
    op(
        "agent_usage",
        AGENTS,
        "what the hooks injected (calls and tokens per day)",
        "GET /api/hub/{slug}/agent-context/usage",
        yes=WRITERS,
    ),
    # ---- public surfaces: what an AI reads is what strangers read, whoever asks
    op("recall", PUBLIC, "recall", "POST /api/hub/{slug}/recall", public=ALL),
    op("hub_twin", PUBLIC, "the hub as markdown", "GET /hub/{slug}.md", public=ALL),
    op("hub_raw", PUBLIC, "the hub as markdown (/raw)", "GET /raw/hub/{slug}", public=ALL),
    op("graph_api", PUBLIC, "the graph", "GET /api/hub/{slug}/graph", public=ALL),
    op("graph_twin", PUBLIC, "the graph as markdown", "GET /hub/{slug}/graph.md", public=ALL),
    op("graph_page", PUBLIC, "the graph page", "GET /hub/{slug}/graph", public=ALL),
    op("llms", PUBLIC, "/llms.txt", "GET /llms.txt", public=ALL),
    op("hub_llms", PUBLIC, "the hub's llms.txt", "GET /hub/{slug}/llms.txt", public=ALL),
    op("hub_llms_full", PUBLIC, "the hub's llms-full.txt", "GET /hub/{slug}/llms-full.txt", public=ALL),
    op("digest", PUBLIC, "the concept digest", "GET /api/hub/{slug}/digest", public=ALL),
    op("suggestions", PUBLIC, "suggested bundles", "GET /api/hub/{slug}/suggestions", public=ALL),
    op("cross_refs", PUBLIC, "cross-references", "GET /api/social/cross-refs", public=ALL),
    op("bundle_page", PUBLIC, "a bundle's page", "GET /b/{bundle_id}", public=ALL),
    op("bundle_twin", PUBLIC, "a bundle as markdown", "GET /b/{bundle_id}.md", public=ALL),
    op("bundle_raw", PUBLIC, "a bundle as markdown (/raw)", "GET /raw/b/{bundle_id}", public=ALL),
    op("reading_list", PUBLIC, "a topic's reading list", "POST /api/bundles/suggest", public=ALL),
    op("embed_bundle", PUBLIC, "re-index a bundle", "POST /api/embed/bundle/{bundle_id}", yes=ALL),
    op("home", PUBLIC, "the home page", "GET /", public=ALL),
    op("new_page", PUBLIC, "the editor for a new page", "GET /new", public=ALL),
    op("claim_page", PUBLIC, "the page that claims a hub", "GET /new-hub", public=ALL),
    op("render", PUBLIC, "render markdown (the editor's preview)", "POST /api/render", public=ALL),
)

# Routes whose answer no credential can change (tests/test_cache_headers.py holds them to
# that), with why; every other route of the app has a row above.
CREDENTIAL_FREE = {
    "GET /static/site.css": "the stylesheet",
    "MOUNT /static": "the static files (scripts)",
    "GET /healthz": "the server's health, the same for everyone",
    "GET /openapi.json": "the API's description",
    "GET /api/reference": "the API's description as a page",
    "GET /favicon.ico": "an empty answer",
}

SYMBOL = {"yes": "✓", "no": "✗", "public": "public"}


def markdown() -> str:
    head = "| operation | route | " + " | ".join(c.name for c in CREDENTIALS) + " |"
    rule = "|---|---|" + "---|" * len(CREDENTIALS)
    out = [
        "# Credentials and what each may do",
        "",
        "Every credential this server accepts, against every operation that reads or changes",
        "something: one table. It is generated from `tests/credential_matrix.py`",
        "(`python -m tests.credential_matrix > docs/credentials.md`), and",
        "`tests/test_credential_matrix.py` runs every cell against a live server (uvicorn), so",
        "the table is what the server does. A route added without a row fails that test.",
        "",
        f"{len(CREDENTIALS)} credentials × {len(OPERATIONS)} operations = {len(CREDENTIALS) * len(OPERATIONS)} cells.",
        "",
        "- **✓** allowed, and it happened: a read shows the private text, a change is there when the",
        "  owner looks.",
        "- **✗** refused with a clear 4xx (`401`, `403`, or the `404` of an unknown page, so a",
        "  private page's existence is not given away), nothing private in the answer, nothing changed.",
        "- **public**: an answer, but only what anyone gets; nothing private in it.",
        "",
        "## The credentials",
        "",
        'The pages are in one hub; "the page" is the one the operation acts on (a draft, a page with',
        "a password, a page shared with ann@example.com, a deleted page, as the operation says).",
        "",
        "| credential | what is sent |",
        "|---|---|",
    ]
    out += [f"| {c.name}{' (ended)' if c.ended else ''} | {c.how} |" for c in CREDENTIALS]
    out += [
        "",
        "The last four are credentials replayed after their grant ended: each is refused",
        "everything its grant gave, at once. A browser's session cookie counts only with the page's",
        "CSRF token (server/web/csrf.py), and every answer to a request that carries any of these",
        "is `Cache-Control: private, no-store` (server/web/caching.py).",
        "",
    ]
    section = None
    notes = []
    for o in OPERATIONS:
        if o.section != section:
            section = o.section
            out += ["", f"## {section}", "", head, rule]
        what = o.what
        if o.note:
            notes.append(o.note)
            what += f" [{len(notes)}]"
        cells = " | ".join(SYMBOL[o.cells[k]] for k in KEYS)
        out.append(f"| {what} | `{o.method} {o.route}` | {cells} |")
    out += ["", "## Notes", ""]
    out += [f"{i}. {n}" for i, n in enumerate(notes, 1)]
    out += [
        "",
        "## Routes no credential changes",
        "",
        *[f"- `{route}`: {why}" for route, why in CREDENTIAL_FREE.items()],
        "",
    ]
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(markdown())
