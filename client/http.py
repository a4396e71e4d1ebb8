"""The one httpx client of the Memory.Wiki HTTP contract, used by the CLI and the MCP server.

Every failure becomes a :class:`MemoryWikiError` with a one-line message: a refused
connection says the server is not running, a 4xx/5xx becomes an :class:`ApiError` carrying
the server's ``{"error": {"code", "message"}}``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, BinaryIO

import httpx
from memorywiki.formats.storable import first_unstorable

from .errors import UNREACHABLE, ApiError, MemoryWikiError
from .refs import seg

DEFAULT_USER_AGENT = "memorywiki-client/0.1"


def not_running_message(base_url: str, env: Mapping[str, str] = os.environ, origin: str | None = None) -> str:
    """Why a connection was refused; `origin` says where the URL came from (a flag, the
    environment, the config file, the default). Inside Codex's sandbox (it sets
    CODEX_SANDBOX_NETWORK_DISABLED=1) the server is usually fine and the sandbox is the cause:
    "start the server" would send the user the wrong way."""
    if env.get("CODEX_SANDBOX_NETWORK_DISABLED") == "1":
        return (
            f"cannot reach the Memory.Wiki server at {base_url}: Codex's sandbox blocks network "
            "access; allow it (network_access = true under [sandbox_workspace_write] in "
            "~/.codex/config.toml) or approve running memorywiki outside the sandbox"
        )
    where = f"{base_url} ({origin})" if origin else base_url
    return f"Memory.Wiki server is not running at {where} — start it with `memorywiki serve`"


def _api_error(resp: httpx.Response) -> ApiError:
    code = None
    message = None
    details: dict[str, Any] = {}
    try:
        body = resp.json()
    except (ValueError, UnicodeDecodeError):
        body = None
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            code = err.get("code")
            message = err.get("message") or code
            details = {k: v for k, v in err.items() if k not in ("code", "message")}
        elif isinstance(err, str):
            message = err
        elif isinstance(body.get("detail"), str):
            message = body["detail"]
    if not message:
        text = (resp.text or "").strip().splitlines()
        snippet = text[0][:200] if text else ""
        message = f"HTTP {resp.status_code} {resp.reason_phrase}" + (f": {snippet}" if snippet else "")
    return ApiError(resp.status_code, code, str(message), details)


def _refuse_undecodable(body: Any) -> None:
    """Python reads a non-UTF-8 byte of an argument or a file as a lone surrogate, which no
    request can carry: name the field before anything is sent (a NUL the server names itself)."""
    bad = first_unstorable(body) if body is not None else None
    if bad and bad.what != "NUL characters":
        shown = bad.text[:60].encode("utf-8", "backslashreplace").decode()
        raise MemoryWikiError(
            f"'{bad.where}' is not valid UTF-8 text ('{shown}': a byte your terminal or a file "
            "did not encode as UTF-8); nothing was sent"
        )


class Client:
    def __init__(
        self, base_url: str, timeout: float = 60.0, user_agent: str = DEFAULT_USER_AGENT, origin: str | None = None
    ):
        self.base_url = base_url.rstrip("/")
        self.origin = origin  # where base_url came from, named when the server cannot be reached
        try:
            self._http = httpx.Client(
                base_url=self.base_url,
                timeout=timeout,
                headers={"User-Agent": user_agent},
                follow_redirects=True,
            )
        except (httpx.InvalidURL, ValueError) as exc:
            raise MemoryWikiError(f"invalid server URL {base_url!r}: {exc}") from None

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        token: str | None = None,
        json: Any = None,
        data: dict[str, Any] | None = None,
        files: Any = None,
        headers: dict[str, str] | None = None,
        accept: str | None = "application/json",
        params: dict[str, Any] | None = None,
    ) -> httpx.Response:
        hdrs: dict[str, str] = {}
        if accept:
            hdrs["Accept"] = accept
        if token:
            hdrs["Authorization"] = f"Bearer {token}"
        if headers:
            hdrs.update(headers)
        _refuse_undecodable(json)
        with self._transport_errors():
            resp = self._http.request(method, path, json=json, data=data, files=files, headers=hdrs, params=params)
        if resp.status_code >= 400:
            raise _api_error(resp)
        return resp

    @contextmanager
    def _transport_errors(self) -> Iterator[None]:
        """httpx's failures to reach the server, as one line each."""
        try:
            yield
        except httpx.ConnectError:
            raise MemoryWikiError(not_running_message(self.base_url, origin=self.origin), UNREACHABLE) from None
        except httpx.TimeoutException:
            raise MemoryWikiError(f"the server at {self.base_url} did not answer in time", UNREACHABLE) from None
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise MemoryWikiError(f"invalid server URL {self.base_url!r}: {exc}", UNREACHABLE) from None
        except httpx.HTTPError as exc:
            raise MemoryWikiError(f"request to {self.base_url} failed: {exc}", UNREACHABLE) from None

    def download(
        self,
        path: str,
        out: BinaryIO,
        *,
        token: str | None = None,
        params: dict[str, Any] | None = None,
        progress: Callable[[int], None] = lambda done: None,
    ) -> int:
        """Stream a binary answer into `out`; the number of bytes written. Failures as request()'s."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        written = 0
        with self._transport_errors(), self._http.stream("GET", path, headers=headers, params=params) as resp:
            if resp.status_code >= 400:
                resp.read()
                raise _api_error(resp)
            for chunk in resp.iter_bytes():
                out.write(chunk)
                written += len(chunk)
                progress(written)
        return written

    def json(self, method: str, path: str, **kwargs) -> Any:
        resp = self.request(method, path, **kwargs)
        if resp.status_code == 204 or not resp.content:
            return {}
        try:
            return resp.json()
        except (ValueError, UnicodeDecodeError):
            raise MemoryWikiError(f"the server sent a non-JSON answer to {method} {path}") from None

    # ---- the contract ------------------------------------------------------------------

    def health(self) -> dict:
        return self.json("GET", "/healthz")

    def create_hub(self, slug: str) -> dict:
        return self.json("POST", "/api/hubs", json={"slug": slug})

    def _all_pages(self, path: str, token: str | None) -> dict:
        """A paged listing with every page's docs: the server pages them, this follows `next`."""
        first = self.json("GET", path, token=token)
        docs = list(first.get("docs") or [])
        page = first
        while page.get("next"):
            page = self.json("GET", path, token=token, params={"page": page["page"] + 1, "per_page": page["per_page"]})
            docs += page.get("docs") or []
        first["docs"] = docs
        first.pop("next", None)
        return first

    def get_hub(self, slug: str, token: str | None = None) -> dict:
        """The hub with all of its docs: the public ones, or with its owner token every live one."""
        return self._all_pages(f"/api/hub/{seg(slug)}", token)

    def get_trash(self, slug: str, token: str | None) -> dict:
        """The hub's deleted docs, newest deletion first (owner token)."""
        return self._all_pages(f"/api/hub/{seg(slug)}/trash", token)

    def undelete(self, doc_id: str, token: str | None) -> dict:
        return self.json("POST", f"/api/docs/{seg(doc_id)}/undelete", json={}, token=token)

    def set_hub(self, slug: str, body: dict, token: str | None) -> dict:
        """List or unlist a hub on the home page and /llms.txt, or set its description."""
        return self.json("PATCH", f"/api/hub/{seg(slug)}", json=body, token=token)

    def add_member(self, slug: str, name: str, token: str | None) -> dict:
        """A new member of the hub; the answer holds their token, shown once (owner token)."""
        return self.json("POST", f"/api/hub/{seg(slug)}/members", json={"name": name}, token=token)

    def list_members(self, slug: str, token: str | None) -> dict:
        return self.json("GET", f"/api/hub/{seg(slug)}/members", token=token)

    def remove_member(self, slug: str, name: str, token: str | None) -> dict:
        return self.json("DELETE", f"/api/hub/{seg(slug)}/members/{seg(name)}", token=token)

    def raw_hub(self, slug: str, token: str | None = None) -> str:
        return self.request("GET", f"/raw/hub/{seg(slug)}", token=token, accept="text/markdown").text

    def create_doc(self, body: dict, token: str | None) -> dict:
        return self.json("POST", "/api/docs", json=body, token=token)

    def capture_url(self, body: dict, token: str | None) -> dict:
        return self.json("POST", "/api/capture", json=body, token=token)

    def capture_file(self, filename: str, content: bytes, mime: str, fields: dict, token: str | None) -> dict:
        form = {k: str(v) for k, v in fields.items() if v is not None}
        return self.json("POST", "/api/capture/file", data=form, files={"file": (filename, content, mime)}, token=token)

    def recall(self, slug: str, body: dict, token: str | None = None) -> dict:
        return self.json("POST", f"/api/hub/{seg(slug)}/recall", json=body, token=token)

    def raw(self, doc_id: str, token: str | None = None, access: str | None = None, curation: bool = False) -> str:
        """The doc as markdown; without `curation`, as saved (no appended enrichment), so a
        pulled page can be edited and pushed back."""
        headers = {"X-Doc-Access": access} if access else None
        path = f"/raw/{seg(doc_id)}" + ("" if curation else "?curation=0")
        resp = self.request("GET", path, token=token, accept="text/markdown", headers=headers)
        return resp.text

    def get_doc(self, doc_id: str, token: str | None = None, access: str | None = None) -> dict:
        headers = {"X-Doc-Access": access} if access else None
        return self.json("GET", f"/api/docs/{seg(doc_id)}", token=token, headers=headers)

    def patch_doc(self, doc_id: str, body: dict, token: str | None, if_match: str | None = None) -> dict:
        headers = {"If-Match": if_match} if if_match is not None else None
        return self.json("PATCH", f"/api/docs/{seg(doc_id)}", json=body, token=token, headers=headers)

    def versions(self, doc_id: str, token: str | None = None, access: str | None = None) -> dict:
        headers = {"X-Doc-Access": access} if access else None
        return self.json("GET", f"/api/docs/{seg(doc_id)}/versions", token=token, headers=headers)

    def version(self, doc_id: str, number: int, token: str | None = None, access: str | None = None) -> dict:
        headers = {"X-Doc-Access": access} if access else None
        return self.json("GET", f"/api/docs/{seg(doc_id)}/versions/{number}", token=token, headers=headers)

    def restore(self, doc_id: str, number: int, token: str | None, if_match: str | None = None) -> dict:
        headers = {"If-Match": if_match} if if_match is not None else None
        return self.json(
            "POST", f"/api/docs/{seg(doc_id)}/restore", json={"version": number}, token=token, headers=headers
        )

    def delete_doc(self, doc_id: str, token: str | None) -> dict:
        return self.json("DELETE", f"/api/docs/{seg(doc_id)}", token=token)

    def embed(self, doc_id: str, token: str | None = None) -> dict:
        return self.json("POST", f"/api/embed/{seg(doc_id)}", token=token)

    def embed_bundle(self, bundle_id: str) -> dict:
        return self.json("POST", f"/api/embed/bundle/{seg(bundle_id)}")

    def create_bundle(self, body: dict, token: str | None) -> dict:
        return self.json("POST", "/api/bundles", json=body, token=token)

    def delete_bundle(self, bundle_id: str, token: str | None) -> dict:
        return self.json("DELETE", f"/api/bundles/{seg(bundle_id)}", token=token)

    # ---- a hub as files ----------------------------------------------------------------

    def export_hub(
        self,
        slug: str,
        out: BinaryIO,
        token: str | None,
        *,
        versions: bool = False,
        progress: Callable[[int], None] = lambda done: None,
    ) -> int:
        """The hub's export zip (owner token), streamed into `out`."""
        return self.download(
            f"/api/hub/{seg(slug)}/export",
            out,
            token=token,
            params={"versions": "1"} if versions else None,
            progress=progress,
        )

    def lookup(self, slug: str, external_ids: list[str], token: str | None) -> dict:
        """Which of these importer ids already name a page of the hub."""
        return self.json("POST", f"/api/hub/{seg(slug)}/lookup", json={"external_ids": external_ids}, token=token)

    # ---- curation ----------------------------------------------------------------------

    def related(self, doc_id: str, k: int = 5, token: str | None = None) -> dict:
        return self.json("GET", f"/api/docs/{seg(doc_id)}/related?k={int(k)}", token=token)

    def digest(self, slug: str, token: str | None = None) -> dict:
        return self.json("GET", f"/api/hub/{seg(slug)}/digest", token=token)

    def digest_markdown(self, slug: str, compact: bool = False, token: str | None = None) -> str:
        query = "?digest=1" + ("&compact=1" if compact else "")
        return self.request("GET", f"/raw/hub/{seg(slug)}{query}", token=token, accept="text/markdown").text

    def suggestions(self, slug: str, token: str | None = None) -> dict:
        return self.json("GET", f"/api/hub/{seg(slug)}/suggestions", token=token)

    def accept_suggestion(self, slug: str, suggestion_id: str, body: dict, token: str | None) -> dict:
        return self.json(
            "POST", f"/api/hub/{seg(slug)}/suggestions/{seg(suggestion_id)}/accept", json=body, token=token
        )

    def dismiss_suggestion(self, slug: str, suggestion_id: str, token: str | None) -> dict:
        return self.json("POST", f"/api/hub/{seg(slug)}/suggestions/{seg(suggestion_id)}/dismiss", json={}, token=token)

    def suggest_topic(self, slug: str, intent: str, k: int = 8, token: str | None = None) -> dict:
        return self.json("POST", "/api/bundles/suggest", json={"hub": slug, "intent": intent, "k": k}, token=token)
