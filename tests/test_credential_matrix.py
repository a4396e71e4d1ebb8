"""The credential matrix (tests/credential_matrix.py, docs/credentials.md), every cell run
against a live server (uvicorn) and a real SMTP server, as each credential's holder would send
it: tokens in headers, browsers with their session cookie and the page's CSRF token.

A cell that says "yes" must succeed and its effect must be there when the database is looked
at (or the private text must be in the answer); "no" must be a 401, 403 or 404 that changed
nothing and shows nothing private; "public" must answer with nothing private in it. Private
pages carry unique words, and every answer of every cell is searched for all of them.

One server, hub and set of people serve the whole module; an operation that changes
something gets a page (or member, bundle, suggestion) of its own in each cell.
"""

from __future__ import annotations

import io
import json
import re
import secrets
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from memorywiki.server.app import create_app
from memorywiki.server.config import Settings
from memorywiki.server.tokens import new_id
from starlette.routing import Mount

from tests import credential_matrix as matrix
from tests.conftest import fresh_database, serving
from tests.polling import wait_until

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "data" / "fixtures"
ANN, BEA = "ann@example.com", "bea@example.com"
PASSWORD = "correct horse battery"
FAST = "1000000/minute"  # the cells come from one address: no budget may run out mid-matrix
LINK = re.compile(r"/(\w+)/signin#(mwl_[A-Za-z0-9_-]+)")
CSRF = re.compile(r'name="csrf-token" content="([^"]+)"')
SESSION_CREDENTIALS = ("owner_session", "reader_session", "signed_out", "removed_reader")
REMOVED = ("removed_member", "removed_member_edit_token")


def word() -> str:
    return "priv" + secrets.token_hex(5)


@dataclass
class Page:
    id: str
    kind: str
    edit_token: str | None
    marker: str  # the word only its readers may see ("" for a public page)
    member_token: str | None = None  # the member who made it (removed since, for REMOVED)
    access_token: str | None = None  # ann's access link, for a page shared with her


@dataclass
class Sent:
    """What a credential adds to a request."""

    client: httpx.Client
    headers: dict[str, str] = field(default_factory=dict)
    password: str = ""  # the password form's field
    token: str | None = None  # the token it could offer to sign in with


class World:
    def __init__(self, live, smtp, database_url: str):
        self.url, self.smtp, self.database_url = live.url, smtp, database_url
        self.private_words: set[str] = set()
        self.anon = self.client()
        self.owner_token = self.anon.post("/api/hubs", json={"slug": "h"}).json()["owner_token"]
        self.owner = {"Authorization": f"Bearer {self.owner_token}"}
        self.other_token = self.anon.post("/api/hubs", json={"slug": "other"}).json()["owner_token"]
        self.member_token = self.add_member("bob")
        self.public = self.page("public")
        self.second_public = self.page("public")
        self.shared = {"owner": {k: self.page(k) for k in ("draft", "password", "people", "deleted", "draft_era")}}
        carl = self.add_member("carl")  # makes pages, then is removed
        self.shared["removed"] = {
            k: self.page(k, member=carl) for k in ("draft", "password", "people", "deleted", "draft_era")
        }
        self.remove_member("carl")
        self.bundle = self.post_ok(
            "/api/bundles",
            json={"hub": "h", "title": "Reading", "doc_ids": [self.public.id, self.shared["owner"]["draft"].id]},
        )["id"]
        self.browsers = {
            "owner_session": self.owner_browser(also_other=True),
            "reader_session": self.reader_browser(ANN),
            "signed_out": self.signed_out_browser(),
            "removed_reader": self.reader_browser(BEA),
        }
        self.used_link = self.invited_link(self.people_page([ANN]), ANN)
        assert self.follow(self.client(), self.used_link).status_code == 200

    # ---- plumbing
    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60)

    def csrf(self, client: httpx.Client) -> str:
        if not hasattr(client, "mw_csrf"):
            page = client.get("/new-hub", headers={"Accept": "text/html"})
            client.mw_csrf = CSRF.search(page.text).group(1)  # type: ignore[attr-defined]
        return client.mw_csrf  # type: ignore[attr-defined]

    def post_ok(self, path: str, headers: dict | None = None, **kw) -> Any:
        r = self.anon.post(path, headers={**self.owner, **(headers or {})}, **kw)
        assert r.status_code in (200, 201), r.text
        return r.json()

    def row(self, sql: str, *args) -> dict | None:
        with psycopg.connect(self.database_url, row_factory=psycopg.rows.dict_row) as conn:
            return conn.execute(sql, args).fetchone()

    def doc(self, doc_id: str) -> dict:
        return self.row(
            "SELECT d.*, h.slug AS hub_slug FROM docs d LEFT JOIN hubs h ON h.id = d.hub_id WHERE d.id = %s", doc_id
        )

    def add_member(self, name: str) -> str:
        return self.post_ok("/api/hub/h/members", json={"name": name})["token"]

    def remove_member(self, name: str) -> None:
        assert self.anon.delete(f"/api/hub/h/members/{name}", headers=self.owner).status_code == 200

    # ---- pages
    def page(self, kind: str, *, member: str | None = None) -> Page:
        """A page of the hub (of no hub: "hubless"), made by the owner or by a member's token."""
        marker = "" if kind == "public" else word()
        by = {"Authorization": f"Bearer {member}"} if member else self.owner
        body: dict[str, Any] = {"hub": "h", "title": f"Page {marker or word()}", "markdown": f"Text {marker}."}
        body |= {
            "draft": {"is_draft": True},
            "draft_era": {"is_draft": True},
            "password": {"password": PASSWORD},
            "people": {"allowed_emails": [ANN, BEA]},
            # a deleted page, and one in no hub, are drafts too: brought back or moved in by a
            # cell, they stay private
            "deleted": {"is_draft": True},
            "hubless": {"hub": None, "is_draft": True},
        }.get(kind, {})
        r = self.anon.post("/api/docs", json=body, headers={} if kind == "hubless" else by)
        assert r.status_code == 201, r.text
        page = Page(r.json()["id"], kind, r.json()["edit_token"], marker, member_token=member)
        if kind == "people":  # bea's address was on it, and is no more
            self.owner_patch(page.id, {"allowed_emails": [ANN]})
            page.access_token = self.post_ok(f"/api/docs/{page.id}/access", json={"email": ANN})["access_token"]
        if kind == "deleted":
            assert self.anon.delete(f"/api/docs/{page.id}", headers=self.owner).status_code == 200
        if kind == "draft_era":  # published with new words: the draft's stay in version 1
            self.owner_patch(page.id, {"is_draft": False, "title": "Published", "markdown": "Published text."})
        if marker:
            self.private_words.add(marker)
        return page

    def target(self, kind: str, cred: str) -> Page:
        """A fresh page of this kind for the cell: made by a member removed since, for the
        credentials that replay such a member's grant."""
        if cred in REMOVED:
            name = "m" + secrets.token_hex(4)
            token = self.add_member(name)
            page = self.page(kind, member=token)
            self.remove_member(name)
            return page
        return self.page(kind)

    def shared_page(self, kind: str, cred: str) -> Page:
        return self.shared["removed" if cred in REMOVED else "owner"][kind]

    def people_page(self, emails: list[str]) -> str:
        marker = word()
        self.private_words.add(marker)
        r = self.anon.post(
            "/api/docs",
            json={"hub": "h", "title": f"For {marker}", "markdown": f"Text {marker}.", "allowed_emails": emails},
            headers=self.owner,
        )
        return r.json()["id"]

    def owner_patch(self, doc_id: str, changes: dict) -> None:
        r = self.anon.patch(f"/api/docs/{doc_id}", json=changes, headers=self.owner)
        assert r.status_code == 200, r.text

    # ---- browsers
    def signed_in(self, client: httpx.Client, slug: str, token: str) -> httpx.Client:
        r = client.post(f"/api/hub/{slug}/session", json={"token": token}, headers={"X-CSRF-Token": self.csrf(client)})
        assert r.status_code == 200, r.text
        return client

    def owner_browser(self, *, also_other: bool = False) -> httpx.Client:
        browser = self.signed_in(self.client(), "h", self.owner_token)
        return self.signed_in(browser, "other", self.other_token) if also_other else browser

    def signed_out_browser(self) -> httpx.Client:
        browser = self.owner_browser()
        cookie = browser.cookies.get("mw_session")
        assert browser.delete("/api/hub/h/session", headers={"X-CSRF-Token": self.csrf(browser)}).status_code == 200
        browser.cookies.set("mw_session", cookie)  # the cookie copied before the sign-out, replayed
        return browser

    def invited_link(self, doc_id: str, email: str) -> tuple[str, str]:
        """The sign-in link a page shared with `email` mailed it when it was shared."""

        def found() -> str | None:
            for mail in self.smtp.to(email):
                hit = LINK.search(mail.get_content())
                if hit and hit.group(1) == doc_id:
                    return hit.group(2)
            return None

        return doc_id, wait_until(found, f"the sign-in link mailed to {email} for {doc_id}")

    def follow(self, client: httpx.Client, link: tuple[str, str]) -> httpx.Response:
        doc_id, secret = link
        return client.post(
            f"/api/docs/{doc_id}/access/session", json={"link": secret}, headers={"X-CSRF-Token": self.csrf(client)}
        )

    def reader_browser(self, email: str) -> httpx.Client:
        """A browser signed in as a reader of the hub, from a link mailed to `email`."""
        browser = self.client()
        assert self.follow(browser, self.invited_link(self.people_page([email]), email)).status_code == 200
        return browser

    def fresh_browser(self, cred: str) -> httpx.Client:
        """A browser of its own for a cell that signs in or out (which would end the shared one's session)."""
        return {
            "owner_session": lambda: self.owner_browser(also_other=True),
            "reader_session": lambda: self.reader_browser(ANN),
            "signed_out": self.signed_out_browser,
            "removed_reader": lambda: self.reader_browser(BEA),
        }[cred]()

    # ---- what a credential sends
    def send(self, cred: str, page: Page | None = None, *, fresh: bool = False) -> Sent:
        """The client and headers of a request made with `cred`, for `page` (the one acted on;
        the credentials tied to a page use the hub's shared draft when none is given)."""
        page = page or self.shared_page("draft", cred)
        if cred in SESSION_CREDENTIALS:
            client = self.fresh_browser(cred) if fresh else self.browsers[cred]
            return Sent(client, {"X-CSRF-Token": self.csrf(client)})
        client = self.client() if fresh else self.anon
        people = page if page.access_token else self.shared["owner"]["people"]
        headers, token = {
            "owner_token": ({"Authorization": f"Bearer {self.owner_token}"}, self.owner_token),
            "member_token": ({"Authorization": f"Bearer {self.member_token}"}, self.member_token),
            "edit_token": ({"X-Edit-Token": page.edit_token}, page.edit_token),
            "password": ({"X-Doc-Password": PASSWORD}, None),
            "access_link": ({"X-Doc-Access": people.access_token}, None),
            "anonymous": ({}, None),
            "removed_member": ({"Authorization": f"Bearer {page.member_token}"}, page.member_token),
            "removed_member_edit_token": ({"X-Edit-Token": page.edit_token}, page.edit_token),
        }[cred]
        return Sent(
            client, {**headers, "X-CSRF-Token": self.csrf(client)}, PASSWORD if cred == "password" else "", token
        )


@dataclass
class Outcome:
    response: httpx.Response
    granted: bool


Runner = Callable[[World, str], Outcome]
RUNNERS: dict[str, Runner] = {}


def runs(*keys: str):
    def register(fn: Runner) -> Runner:
        for key in keys:
            RUNNERS[key] = fn
        return fn

    return register


def shows(r: httpx.Response, marker: str) -> Outcome:
    return Outcome(r, r.status_code == 200 and marker in r.text)


# ---- reading a page -----------------------------------------------------------------------

READS = {
    "read_draft": ("draft", "/api/docs/{id}", {}),
    "page_draft": ("draft", "/{id}", {"Accept": "text/html"}),
    "read_password": ("password", "/raw/{id}", {}),
    "read_people": ("people", "/api/docs/{id}", {}),
    "twin_people": ("people", "/{id}.md", {}),
    "page_people": ("people", "/{id}", {"Accept": "text/html"}),
    "versions_draft": ("draft", "/api/docs/{id}/versions", {}),
    "history_people": ("people", "/{id}/history", {"Accept": "text/html"}),
    "history_twin_draft": ("draft", "/{id}/history.md", {}),
    "draft_era_version": ("draft_era", "/api/docs/{id}/versions/1", {}),
    "versions_deleted": ("deleted", "/api/docs/{id}/versions", {}),
    "version_deleted": ("deleted", "/api/docs/{id}/versions/1", {}),
    "editor_draft": ("draft", "/{id}/edit", {"Accept": "text/html"}),
}


for _key, (_kind, _path, _accept) in READS.items():

    def _read(w: World, cred: str, kind=_kind, path=_path, accept=_accept) -> Outcome:
        page = w.shared_page(kind, cred)
        sent = w.send(cred, page)
        return shows(sent.client.get(path.format(id=page.id), headers={**sent.headers, **accept}), page.marker)

    RUNNERS[_key] = _read


@runs("read_public")
def read_public(w: World, cred: str) -> Outcome:
    sent = w.send(cred)
    r = sent.client.get(f"/api/docs/{w.public.id}", headers=sent.headers)
    return Outcome(r, r.status_code == 200 and r.json()["id"] == w.public.id)


@runs("password_form")
def password_form(w: World, cred: str) -> Outcome:
    page = w.shared_page("password", cred)
    sent = w.send(cred, page)
    form = {"password": sent.password, "csrf_token": w.csrf(sent.client)}
    headers = {k: v for k, v in sent.headers.items() if k != "X-Doc-Password"} | {"Accept": "text/html"}
    return shows(sent.client.post(f"/{page.id}", data=form, headers=headers), page.marker)


def _draft_api(suffix: str) -> Runner:
    def run(w: World, cred: str) -> Outcome:
        page = w.shared_page("draft", cred)
        sent = w.send(cred, page)
        r = sent.client.get(f"/api/docs/{page.id}/{suffix}", headers=sent.headers)
        return Outcome(r, r.status_code == 200 and r.json()["id"] == page.id)

    return run


RUNNERS["related_draft"] = _draft_api("related")
RUNNERS["enrichment_draft"] = _draft_api("enrichment")


@runs("embed_draft")
def embed_draft(w: World, cred: str) -> Outcome:
    page = w.shared_page("draft", cred)
    sent = w.send(cred, page)
    r = sent.client.post(f"/api/embed/{page.id}", headers=sent.headers)
    return Outcome(r, r.status_code == 200)


# ---- history --------------------------------------------------------------------------------


@runs("restore_live")
def restore_live(w: World, cred: str) -> Outcome:
    page = w.target("draft", cred)
    w.owner_patch(page.id, {"markdown": "Replaced text."})
    sent = w.send(cred, page)
    r = sent.client.post(f"/api/docs/{page.id}/restore", json={"version": 1}, headers=sent.headers)
    return Outcome(r, page.marker in w.doc(page.id)["markdown"])


def _bring_back(path: str, body: dict) -> Runner:
    def run(w: World, cred: str) -> Outcome:
        page = w.target("deleted", cred)
        sent = w.send(cred, page)
        r = sent.client.post(f"/api/docs/{page.id}/{path}", json=body, headers=sent.headers)
        return Outcome(r, w.doc(page.id)["deleted_at"] is None)

    return run


RUNNERS["restore_deleted"] = _bring_back("restore", {"version": 1})
RUNNERS["undelete"] = _bring_back("undelete", {})


# ---- writing pages --------------------------------------------------------------------------


def _created(w: World, r: httpx.Response, hub: str | None) -> bool:
    if r.status_code != 201:
        return False
    stored = w.doc(r.json()["id"])
    return stored is not None and stored["hub_slug"] == hub


def _create(hub: str | None) -> Runner:
    def run(w: World, cred: str) -> Outcome:
        sent = w.send(cred)
        body = {"title": f"New {word()}", "markdown": "Written in a cell.", **({"hub": hub} if hub else {})}
        r = sent.client.post("/api/docs", json=body, headers=sent.headers)
        return Outcome(r, _created(w, r, hub))

    return run


RUNNERS["create_in_hub"] = _create("h")
RUNNERS["create_hubless"] = _create(None)


@runs("capture_url")
def capture_url(w: World, cred: str) -> Outcome:
    sent = w.send(cred)
    body = {"url": f"{w.url}/raw/{w.public.id}?cell={word()}", "hub": "h", "dedupe": False}
    r = sent.client.post("/api/capture", json=body, headers=sent.headers)
    return Outcome(r, _created(w, r, "h"))


@runs("capture_file")
def capture_file(w: World, cred: str) -> Outcome:
    sent = w.send(cred)
    files = {"file": ("note.md", f"# Note {word()}\n\nCaptured in a cell.\n".encode())}
    r = sent.client.post("/api/capture/file", files=files, data={"hub": "h"}, headers=sent.headers)
    return Outcome(r, _created(w, r, "h"))


@runs("import_export")
def import_export(w: World, cred: str) -> Outcome:
    conversation = json.loads((FIXTURES / "chatgpt-export" / "native-conversation-v1.json").read_text())
    conversation["id"] = conversation["conversation_id"] = f"cell-{word()}"
    export = io.BytesIO()
    with zipfile.ZipFile(export, "w") as archive:
        archive.writestr("conversations.json", json.dumps([conversation]))
    sent = w.send(cred)
    files = {"file": ("export.zip", export.getvalue(), "application/zip")}
    r = sent.client.post("/api/import/chatgpt", files=files, data={"hub": "h"}, headers=sent.headers)
    made = r.json()["docs"] if r.status_code == 200 else []
    return Outcome(r, len(made) == 1 and w.doc(made[0]["id"])["hub_slug"] == "h")


def _patch(kind: str, changes: Callable[[World], dict], done: Callable[[World, Page, dict], bool], **extra) -> Runner:
    def run(w: World, cred: str) -> Outcome:
        page = w.target(kind, cred)
        sent = w.send(cred, page)
        headers = {**sent.headers, **extra.get("headers", lambda w, s, p: {})(w, sent, page)}
        wanted = changes(w)
        r = sent.client.patch(f"/api/docs/{page.id}", json=wanted, headers=headers)
        return Outcome(r, done(w, page, wanted))

    return run


RUNNERS["edit"] = _patch(
    "draft", lambda w: {"markdown": f"Edited {word()}."}, lambda w, p, c: w.doc(p.id)["markdown"] == c["markdown"]
)
RUNNERS["share"] = _patch(
    "draft",
    lambda w: {"allowed_emails": ["zed@example.com"]},
    lambda w, p, c: w.doc(p.id)["allowed_emails"] == ["zed@example.com"],
)
RUNNERS["move_out"] = _patch("draft", lambda w: {"hub": None}, lambda w, p, c: w.doc(p.id)["hub_slug"] is None)


def _beside_other_owner(w: World, sent: Sent, page: Page) -> dict:
    """The other hub's owner token as the bearer; the credential's own token, if any, beside it."""
    if "Authorization" not in sent.headers and "X-Edit-Token" not in sent.headers:
        return {}  # a browser: signed in to both hubs (the owner's), or to the other not at all
    own = sent.token
    return {"Authorization": f"Bearer {w.other_token}", **({"X-Edit-Token": own} if own else {})}


def _run_move_away(w: World, cred: str) -> Outcome:
    page = w.target("draft", cred)
    sent = w.send(cred, page)
    headers = {**sent.headers, **_beside_other_owner(w, sent, page)}
    if cred in ("password", "access_link", "anonymous"):
        headers["Authorization"] = f"Bearer {w.other_token}"
    r = sent.client.patch(f"/api/docs/{page.id}", json={"hub": "other"}, headers=headers)
    return Outcome(r, w.doc(page.id)["hub_slug"] == "other")


RUNNERS["move_away"] = _run_move_away


@runs("adopt")
def adopt(w: World, cred: str) -> Outcome:
    page = w.page("hubless")
    sent = w.send(cred, w.target("draft", cred) if cred in REMOVED else None)
    headers = dict(sent.headers)
    if cred == "edit_token":  # the page's own token, as the bearer too: it alone cannot
        headers = {"Authorization": f"Bearer {page.edit_token}", "X-CSRF-Token": headers["X-CSRF-Token"]}
    elif cred == "removed_member_edit_token":
        headers = {"Authorization": f"Bearer {sent.token}", "X-CSRF-Token": headers["X-CSRF-Token"]}
    headers["X-Edit-Token"] = page.edit_token
    r = sent.client.patch(f"/api/docs/{page.id}", json={"hub": "h"}, headers=headers)
    return Outcome(r, w.doc(page.id)["hub_slug"] == "h")


@runs("delete")
def delete(w: World, cred: str) -> Outcome:
    page = w.target("draft", cred)
    sent = w.send(cred, page)
    r = sent.client.delete(f"/api/docs/{page.id}", headers=sent.headers)
    return Outcome(r, w.doc(page.id)["deleted_at"] is not None)


@runs("issue_access")
def issue_access(w: World, cred: str) -> Outcome:
    page = w.target("people", cred)
    sent = w.send(cred, page)
    before = w.row("SELECT count(*) AS n FROM access_tokens WHERE doc_id = %s", page.id)["n"]
    r = sent.client.post(f"/api/docs/{page.id}/access", json={"email": ANN}, headers=sent.headers)
    after = w.row("SELECT count(*) AS n FROM access_tokens WHERE doc_id = %s", page.id)["n"]
    return Outcome(r, r.status_code == 201 and after == before + 1)


# ---- running the hub ------------------------------------------------------------------------


@runs("hub_view")
def hub_view(w: World, cred: str) -> Outcome:
    newest = w.page("draft")  # on the listing's first page, however many pages the cells made
    sent = w.send(cred)
    r = sent.client.get("/api/hub/h", headers=sent.headers)
    return Outcome(r, r.status_code == 200 and r.json()["view"] == "owner" and newest.marker in r.text)


@runs("hub_page")
def hub_page(w: World, cred: str) -> Outcome:
    newest = w.page("draft")
    sent = w.send(cred)
    r = sent.client.get("/hub/h", headers={**sent.headers, "Accept": "text/html"})
    return shows(r, newest.marker)


@runs("trash")
def trash(w: World, cred: str) -> Outcome:
    sent = w.send(cred)
    return shows(sent.client.get("/api/hub/h/trash", headers=sent.headers), w.shared["owner"]["deleted"].marker)


@runs("settings")
def settings_(w: World, cred: str) -> Outcome:
    sent = w.send(cred)
    description = f"About {word()}"
    r = sent.client.patch("/api/hub/h", json={"description": description}, headers=sent.headers)
    return Outcome(r, w.row("SELECT description FROM hubs WHERE slug = 'h'")["description"] == description)


@runs("members_list")
def members_list(w: World, cred: str) -> Outcome:
    sent = w.send(cred)
    r = sent.client.get("/api/hub/h/members", headers=sent.headers)
    return Outcome(r, r.status_code == 200 and '"bob"' in r.text)


@runs("members_add")
def members_add(w: World, cred: str) -> Outcome:
    sent = w.send(cred)
    name = "n" + secrets.token_hex(4)
    r = sent.client.post("/api/hub/h/members", json={"name": name}, headers=sent.headers)
    return Outcome(r, w.row("SELECT 1 FROM hub_members WHERE name = %s", name) is not None)


@runs("members_remove")
def members_remove(w: World, cred: str) -> Outcome:
    name = "r" + secrets.token_hex(4)
    w.add_member(name)
    sent = w.send(cred)
    r = sent.client.delete(f"/api/hub/h/members/{name}", headers=sent.headers)
    return Outcome(r, w.row("SELECT revoked_at FROM hub_members WHERE name = %s", name)["revoked_at"] is not None)


@runs("export")
def export(w: World, cred: str) -> Outcome:
    sent = w.send(cred)
    r = sent.client.get("/api/hub/h/export", headers=sent.headers)
    if r.status_code != 200:
        return Outcome(r, False)
    with zipfile.ZipFile(io.BytesIO(r.content)) as archive:
        text = "\n".join(archive.read(n).decode("utf-8", "replace") for n in archive.namelist())
    return Outcome(r, w.shared["owner"]["draft"].marker in text)


@runs("lookup")
def lookup(w: World, cred: str) -> Outcome:
    sent = w.send(cred)
    r = sent.client.post("/api/hub/h/lookup", json={"external_ids": ["nothing"]}, headers=sent.headers)
    return Outcome(r, r.status_code == 200 and r.json() == {"docs": []})


@runs("bundle_create")
def bundle_create(w: World, cred: str) -> Outcome:
    sent = w.send(cred)
    title = f"Bundle {word()}"
    body = {"hub": "h", "title": title, "doc_ids": [w.public.id]}
    r = sent.client.post("/api/bundles", json=body, headers=sent.headers)
    return Outcome(r, w.row("SELECT 1 FROM bundles WHERE title = %s", title) is not None)


@runs("bundle_edit")
def bundle_edit(w: World, cred: str) -> Outcome:
    sent = w.send(cred)
    description = f"Order {word()}"
    r = sent.client.patch(f"/api/bundles/{w.bundle}", json={"description": description}, headers=sent.headers)
    return Outcome(r, w.row("SELECT description FROM bundles WHERE id = %s", w.bundle)["description"] == description)


@runs("bundle_delete")
def bundle_delete(w: World, cred: str) -> Outcome:
    bundle = w.post_ok("/api/bundles", json={"hub": "h", "title": f"Gone {word()}", "doc_ids": [w.public.id]})["id"]
    sent = w.send(cred)
    r = sent.client.delete(f"/api/bundles/{bundle}", headers=sent.headers)
    return Outcome(r, w.row("SELECT deleted_at FROM bundles WHERE id = %s", bundle)["deleted_at"] is not None)


@runs("bundle_editor")
def bundle_editor(w: World, cred: str) -> Outcome:
    sent = w.send(cred)
    r = sent.client.get(f"/b/{w.bundle}/edit", headers={**sent.headers, "Accept": "text/html"})
    return shows(r, w.shared["owner"]["draft"].marker)


@runs("bundle_new")
def bundle_new(w: World, cred: str) -> Outcome:
    sent = w.send(cred)
    r = sent.client.get("/hub/h/bundles/new", headers={**sent.headers, "Accept": "text/html"})
    return shows(r, w.shared["owner"]["draft"].marker)


def _suggestion(w: World) -> str:
    sid = new_id()
    with psycopg.connect(w.database_url) as conn:
        conn.execute(
            "INSERT INTO bundle_suggestions (id, hub_id, signature, title, doc_ids, mode)"
            " SELECT %s, id, %s, 'Suggested', %s, 'extractive' FROM hubs WHERE slug = 'h'",
            (sid, sid, [w.public.id, w.second_public.id]),
        )
    return sid


def _decide(verb: str, status: str) -> Runner:
    def run(w: World, cred: str) -> Outcome:
        sid = _suggestion(w)
        sent = w.send(cred)
        r = sent.client.post(f"/api/hub/h/suggestions/{sid}/{verb}", json={}, headers=sent.headers)
        return Outcome(r, w.row("SELECT status FROM bundle_suggestions WHERE id = %s", sid)["status"] == status)

    return run


RUNNERS["suggestion_accept"] = _decide("accept", "accepted")
RUNNERS["suggestion_dismiss"] = _decide("dismiss", "dismissed")


@runs("create_hub")
def create_hub(w: World, cred: str) -> Outcome:
    sent = w.send(cred)
    slug = "c" + secrets.token_hex(4)
    r = sent.client.post("/api/hubs", json={"slug": slug}, headers=sent.headers)
    return Outcome(r, r.status_code == 201 and w.row("SELECT 1 FROM hubs WHERE slug = %s", slug) is not None)


# ---- signing in -----------------------------------------------------------------------------


@runs("sign_in")
def sign_in(w: World, cred: str) -> Outcome:
    sent = w.send(cred, fresh=True)
    token = sent.token or "not-a-token"
    r = sent.client.post("/api/hub/h/session", json={"token": token}, headers=sent.headers)
    return Outcome(r, r.status_code == 200 and r.json()["kind"] == "owner")


@runs("session_status")
def session_status(w: World, cred: str) -> Outcome:
    sent = w.send(cred)
    r = sent.client.get("/api/hub/h/session", headers=sent.headers)
    return Outcome(r, r.status_code == 200 and r.json()["signed_in"])


@runs("sign_out")
def sign_out(w: World, cred: str) -> Outcome:
    sent = w.send(cred, fresh=True)
    r = sent.client.delete("/api/hub/h/session", headers=sent.headers)
    return Outcome(r, r.status_code == 200 and r.json()["signed_in"] is False)


@runs("ask_link")
def ask_link(w: World, cred: str) -> Outcome:
    page = w.shared_page("people", cred)
    sent = w.send(cred, page)
    r = sent.client.post(f"/api/docs/{page.id}/access/request", json={"email": ANN}, headers=sent.headers)
    return Outcome(r, r.status_code == 202)


@runs("ask_link_form")
def ask_link_form(w: World, cred: str) -> Outcome:
    page = w.shared_page("people", cred)
    sent = w.send(cred, page)
    form = {"email": ANN, "csrf_token": w.csrf(sent.client)}
    r = sent.client.post(f"/{page.id}/access", data=form, headers={**sent.headers, "Accept": "text/html"})
    return Outcome(r, r.status_code == 202)


@runs("reader_link")
def reader_link(w: World, cred: str) -> Outcome:
    link = w.invited_link(w.people_page([ANN]), ANN)
    sent = w.send(cred, fresh=True)
    r = sent.client.post(f"/api/docs/{link[0]}/access/session", json={"link": link[1]}, headers=sent.headers)
    return Outcome(r, r.status_code == 200 and r.json()["kind"] == "reader")


@runs("reader_link_used")
def reader_link_used(w: World, cred: str) -> Outcome:
    sent = w.send(cred)
    doc_id, secret = w.used_link
    r = sent.client.post(f"/api/docs/{doc_id}/access/session", json={"link": secret}, headers=sent.headers)
    return Outcome(r, r.status_code == 200)


# ---- pages anyone may open, and public surfaces --------------------------------------------

GETS = {
    "signin_page": "/hub/h/signin",
    "reader_signin_page": "/{people}/signin",
    "hub_twin": "/hub/h.md",
    "hub_raw": "/raw/hub/h",
    "graph_api": "/api/hub/h/graph",
    "graph_twin": "/hub/h/graph.md",
    "graph_page": "/hub/h/graph",
    "llms": "/llms.txt",
    "hub_llms": "/hub/h/llms.txt",
    "hub_llms_full": "/hub/h/llms-full.txt",
    "digest": "/api/hub/h/digest",
    "suggestions": "/api/hub/h/suggestions",
    "cross_refs": "/api/social/cross-refs?hub=h",
    "bundle_page": "/b/{bundle}",
    "bundle_twin": "/b/{bundle}.md",
    "bundle_raw": "/raw/b/{bundle}",
    "home": "/",
    "new_page": "/new",
    "claim_page": "/new-hub",
}

for _key, _path in GETS.items():

    def _get(w: World, cred: str, path=_path) -> Outcome:
        sent = w.send(cred)
        url = path.format(people=w.shared_page("people", cred).id, bundle=w.bundle)
        r = sent.client.get(url, headers={**sent.headers, "Accept": "text/html"})
        return Outcome(r, any(m in r.text for m in w.private_words))

    RUNNERS[_key] = _get

# (path, body, what of the answer is searched: the reading list says back the topic it was asked)
POSTS = {
    "recall": (
        "/api/hub/h/recall",
        lambda w: {"question": " ".join(sorted(w.private_words)[:20]), "k": 50},
        lambda r: r.text,
    ),
    "reading_list": (
        "/api/bundles/suggest",
        lambda w: {"hub": "h", "intent": " ".join(sorted(w.private_words)[:5])},
        lambda r: json.dumps(r.json().get("docs")),
    ),
    "render": ("/api/render", lambda w: {"markdown": "# Preview"}, lambda r: r.text),
}

for _key, (_path, _body, _searched) in POSTS.items():

    def _post(w: World, cred: str, path=_path, body=_body, searched=_searched) -> Outcome:
        sent = w.send(cred)
        r = sent.client.post(path, json=body(w), headers=sent.headers)
        return Outcome(r, any(m in searched(r) for m in w.private_words))

    RUNNERS[_key] = _post


@runs("embed_bundle")
def embed_bundle(w: World, cred: str) -> Outcome:
    sent = w.send(cred)
    r = sent.client.post(f"/api/embed/bundle/{w.bundle}", headers=sent.headers)
    return Outcome(r, r.status_code == 200)


# ---- the coding tools' hooks --------------------------------------------------------------------

PROJECT_NAME = "matrix-proj"


def _session(marker: str) -> dict[str, Any]:
    return {
        "title": f"Session {marker}",
        "transcript": f"## User\n\nKeep the {marker} plan?\n\n## Assistant\n\nWe decided to keep the {marker} plan.\n",
        "project": {"name": PROJECT_NAME, "remote": None, "path": f"/srv/{PROJECT_NAME}"},
    }


@runs("agent_capture")
def agent_capture(w: World, cred: str) -> Outcome:
    sent = w.send(cred)
    sid = "s" + secrets.token_hex(4)
    marker = word()
    w.private_words.add(marker)
    r = sent.client.put(f"/api/hub/h/agent-sessions/claude-code/{sid}", json=_session(marker), headers=sent.headers)
    saved = w.row(
        "SELECT d.is_draft FROM docs d JOIN hubs h ON h.id = d.hub_id WHERE h.slug = 'h' AND d.external_id = %s",
        f"session:claude-code:{sid}",
    )
    return Outcome(r, saved is not None and saved["is_draft"])


def _project_draft(w: World) -> str:
    """A session of the project, captured by the owner: a draft only the hub's writers see."""
    if not hasattr(w, "agent_marker"):
        marker = word()
        w.private_words.add(marker)
        r = w.anon.put("/api/hub/h/agent-sessions/claude-code/matrix-draft", json=_session(marker), headers=w.owner)
        assert r.status_code == 201, r.text
        w.agent_marker = marker  # type: ignore[attr-defined]
    return w.agent_marker  # type: ignore[attr-defined]


@runs("agent_context")
def agent_context(w: World, cred: str) -> Outcome:
    marker = _project_draft(w)
    sent = w.send(cred)
    body = {"kind": "start", "project": {"name": PROJECT_NAME, "path": f"/srv/{PROJECT_NAME}"}}
    r = sent.client.post("/api/hub/h/agent-context", json=body, headers=sent.headers)
    return shows(r, marker)


@runs("agent_usage")
def agent_usage(w: World, cred: str) -> Outcome:
    sent = w.send(cred)
    r = sent.client.get("/api/hub/h/agent-context/usage", headers=sent.headers)
    return Outcome(r, r.status_code == 200 and r.json().get("hub") == "h" and "by_kind" in r.json())


# ---- the test -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def world(pg_server, template_db, embedding_server, smtp_server_session):
    smtp_server_session.reset()
    with fresh_database(pg_server, template_db) as url:
        settings = Settings(
            database_url=url,
            embedder="openai",
            openai_model="test-embed",
            openai_api_key="test-key",
            openai_base_url=embedding_server.base_url,
            embed_timeout=5.0,
            embed_max_retries=0,
            curation=False,  # no curator rewriting the suggestions the cells decide on
            smtp_url=smtp_server_session.url,
            fetch_allow_loopback=True,  # capture_url captures a page of this very server
            **{
                f"rate_{k}": FAST
                for k in ("password", "token_failures", "embed", "link_address", "link_client", "invite")
            },
        )
        with serving(settings) as live:
            yield World(live, smtp_server_session, url)
    smtp_server_session.reset()


CELLS = [(o.key, c) for o in matrix.OPERATIONS for c in matrix.KEYS]


@pytest.mark.parametrize(("operation", "credential"), CELLS, ids=[f"{o}-{c}" for o, c in CELLS])
def test_cell(world, operation, credential):
    expected = next(o for o in matrix.OPERATIONS if o.key == operation).cells[credential]
    outcome = RUNNERS[operation](world, credential)
    r = outcome.response
    said = f"{operation} as {credential}: {r.status_code} {r.text[:300]}"
    if expected == "yes":
        assert outcome.granted and 200 <= r.status_code < 300, said
        return
    assert not outcome.granted, said
    if operation != "reading_list":  # it says back the topic asked, private words and all
        assert not [m for m in world.private_words if m in r.text], said
    if expected == "public":
        assert r.status_code == 200, said
    else:
        assert r.status_code in (401, 403, 404), said


def _app_routes() -> set[str]:
    app = create_app(replace(Settings(), database_url="postgresql://unused"))
    out = set()
    for route in app.routes:
        if isinstance(route, Mount):
            out.add(f"MOUNT {route.path}")
            continue
        for method in sorted(route.methods - {"HEAD"}):
            out.add(f"{method} {route.path}")
    return out


def test_every_route_has_a_row_or_is_named_credential_free():
    rows = {f"{o.method} {o.route}" for o in matrix.OPERATIONS}
    routes = _app_routes()
    free = set(matrix.CREDENTIAL_FREE)
    assert routes - rows - free == set(), "routes with no row in tests/credential_matrix.py"
    assert (rows | free) - routes == set(), "rows for routes the app does not have"
    assert not rows & free
    assert set(RUNNERS) == {o.key for o in matrix.OPERATIONS}
    assert len({o.key for o in matrix.OPERATIONS}) == len(matrix.OPERATIONS)


def test_the_docs_table_is_the_matrix_the_test_runs():
    committed = (ROOT / "docs" / "credentials.md").read_text(encoding="utf-8")
    assert committed == matrix.markdown(), (
        "docs/credentials.md is stale: python -m tests.credential_matrix > docs/credentials.md"
    )
