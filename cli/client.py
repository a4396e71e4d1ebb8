"""A thin httpx client for the Memory.Wiki HTTP contract.

Every failure becomes a :class:`CLIError` with a one-line message: a refused connection says
the server is not running, a 4xx/5xx carries the server's ``{"error": {"message"}}`` text.
"""

from __future__ import annotations

import json as _json
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx

from .errors import APIError, CLIError

USER_AGENT = "memorywiki-cli/0.1"


def not_running_message(base_url: str) -> str:
    return f"Memory.Wiki server is not running at {base_url} — start it with `memorywiki serve`"


def seg(value: str) -> str:
    """Quote one path segment (ids and slugs come from the user)."""
    return quote(str(value), safe="")


def doc_id_from(ref: str) -> str:
    """A doc id from an id or a doc URL (its last path segment, without a ``.md`` suffix)."""
    ref = ref.strip()
    if "://" in ref or ref.startswith("/"):
        path = urlsplit(ref).path if "://" in ref else ref.split("?", 1)[0].split("#", 1)[0]
        parts = [p for p in path.split("/") if p]
        if not parts:
            raise CLIError(f"cannot find a doc id in {ref!r}")
        ref = parts[-1]
    if ref.endswith(".md"):
        ref = ref[: -len(".md")]
    if not ref:
        raise CLIError("empty doc id")
    return ref


def access_from(ref: str) -> str | None:
    """The ``?access=`` token of a shared doc URL, if any."""
    if "?" not in ref:
        return None
    values = parse_qs(urlsplit(ref.strip()).query).get("access")
    return values[0] if values else None


def _error_message(resp: httpx.Response) -> tuple[str | None, str]:
    code = None
    message = None
    try:
        body = resp.json()
    except (ValueError, UnicodeDecodeError):
        body = None
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            code = err.get("code")
            message = err.get("message") or code
        elif isinstance(err, str):
            message = err
        elif isinstance(body.get("detail"), str):
            message = body["detail"]
    if not message:
        text = (resp.text or "").strip().splitlines()
        snippet = text[0][:200] if text else ""
        message = f"HTTP {resp.status_code} {resp.reason_phrase}" + (f": {snippet}" if snippet else "")
    return code, str(message)


class Client:
    def __init__(self, base_url: str, timeout: float = 60.0, transport: httpx.BaseTransport | None = None):
        self.base_url = base_url.rstrip("/")
        kwargs: dict[str, Any] = {}
        if transport is not None:
            kwargs["transport"] = transport
        try:
            self._http = httpx.Client(
                base_url=self.base_url,
                timeout=timeout,
                headers={"User-Agent": USER_AGENT},
                follow_redirects=True,
                **kwargs,
            )
        except (httpx.InvalidURL, ValueError) as exc:
            raise CLIError(f"invalid server URL {base_url!r}: {exc}") from None

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
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
    ) -> httpx.Response:
        hdrs: dict[str, str] = {}
        if accept:
            hdrs["Accept"] = accept
        if token:
            hdrs["Authorization"] = f"Bearer {token}"
        if headers:
            hdrs.update(headers)
        try:
            resp = self._http.request(method, path, json=json, data=data, files=files, headers=hdrs)
        except httpx.ConnectError:
            raise CLIError(not_running_message(self.base_url)) from None
        except httpx.TimeoutException:
            raise CLIError(f"the server at {self.base_url} did not answer in time") from None
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise CLIError(f"invalid server URL {self.base_url!r}: {exc}") from None
        except httpx.HTTPError as exc:
            raise CLIError(f"request to {self.base_url} failed: {exc}") from None
        if resp.status_code >= 400:
            code, message = _error_message(resp)
            raise APIError(resp.status_code, code, message)
        return resp

    def json(self, method: str, path: str, **kwargs) -> Any:
        resp = self.request(method, path, **kwargs)
        if resp.status_code == 204 or not resp.content:
            return {}
        try:
            return resp.json()
        except (ValueError, UnicodeDecodeError):
            raise CLIError(f"the server sent a non-JSON answer to {method} {path}") from None

    # ---- the contract ------------------------------------------------------------------

    def create_hub(self, slug: str) -> dict:
        return self.json("POST", "/api/hubs", json={"slug": slug})

    def get_hub(self, slug: str, token: str | None = None) -> dict:
        return self.json("GET", f"/api/hub/{seg(slug)}", token=token)

    def create_doc(self, body: dict, token: str | None) -> dict:
        return self.json("POST", "/api/docs", json=body, token=token)

    def capture_url(self, body: dict, token: str | None) -> dict:
        return self.json("POST", "/api/capture", json=body, token=token)

    def capture_file(self, filename: str, content: bytes, mime: str, fields: dict, token: str | None) -> dict:
        form = {k: str(v) for k, v in fields.items() if v is not None}
        return self.json(
            "POST", "/api/capture/file", data=form, files={"file": (filename, content, mime)}, token=token
        )

    def import_export(self, kind: str, filename: str, fh: Any, mime: str, fields: dict, token: str | None) -> dict:
        return self.json(
            "POST", f"/api/import/{seg(kind)}", data=fields, files={"file": (filename, fh, mime)}, token=token
        )

    @property
    def timeout(self) -> httpx.Timeout:
        return self._http.timeout

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        self._http.timeout = httpx.Timeout(value)

    def recall(self, slug: str, body: dict, token: str | None = None) -> dict:
        return self.json("POST", f"/api/hub/{seg(slug)}/recall", json=body, token=token)

    def raw(self, doc_id: str, token: str | None = None, access: str | None = None) -> str:
        headers = {"X-Doc-Access": access} if access else None
        resp = self.request("GET", f"/raw/{seg(doc_id)}", token=token, accept="text/markdown", headers=headers)
        return resp.text

    def get_doc(self, doc_id: str, token: str | None = None, access: str | None = None) -> dict:
        headers = {"X-Doc-Access": access} if access else None
        return self.json("GET", f"/api/docs/{seg(doc_id)}", token=token, headers=headers)

    def patch_doc(self, doc_id: str, body: dict, token: str | None, if_match: str | None = None) -> dict:
        headers = {"If-Match": if_match} if if_match is not None else None
        return self.json("PATCH", f"/api/docs/{seg(doc_id)}", json=body, token=token, headers=headers)

    def delete_doc(self, doc_id: str, token: str | None) -> dict:
        return self.json("DELETE", f"/api/docs/{seg(doc_id)}", token=token)

    def embed(self, doc_id: str, token: str | None = None) -> dict:
        return self.json("POST", f"/api/embed/{seg(doc_id)}", token=token)

    def embed_bundle(self, bundle_id: str) -> dict:
        return self.json("POST", f"/api/embed/bundle/{seg(bundle_id)}")

    def create_bundle(self, body: dict, token: str | None) -> dict:
        return self.json("POST", "/api/bundles", json=body, token=token)


def dumps(value: Any) -> str:
    return _json.dumps(value, indent=2, ensure_ascii=False)
