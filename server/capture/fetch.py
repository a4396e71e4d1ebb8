"""SSRF-safe URL fetching with httpx.

Every hop (the first URL and each redirect, followed by hand, at most 5) is checked:

* scheme must be http or https, a host must be present, no user:password part;
* the host is resolved here (``getaddrinfo``) and **every** address must be public:
  loopback, private (RFC 1918, ULA), link-local, multicast, reserved, unspecified,
  shared (100.64/10), documentation ranges, IPv4-mapped/6to4/NAT64 forms of those, and the
  cloud metadata addresses (169.254.169.254, fd00:ec2::254) are refused;
* the connection is then **pinned** to the checked address: the request goes to
  ``scheme://<checked-ip>:port/...`` with the original ``Host`` header and, for https,
  the original name as TLS SNI and certificate hostname (httpcore's ``sni_hostname``
  request extension). The name is never resolved a second time, so DNS rebinding between
  the check and the connect cannot send the request elsewhere.
* ``allow_loopback=True`` (tests; the server's ``Settings.fetch_allow_loopback``, from
  ``MEMORYWIKI_FETCH_ALLOW_LOOPBACK=1``) admits loopback addresses only; private and metadata
  addresses stay refused.

The body is streamed and cut at ``max_bytes`` (decoded size, so a gzip bomb stops too),
the whole fetch including redirects runs under one ``timeout`` deadline, and only
document-like content types are accepted.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from ..config import Settings
from ..errors import ApiError, BadRequest, Forbidden, TooLarge, Unprocessable, UnsupportedType

MAX_REDIRECTS = 5
USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36 memorywiki-capture"
)

ALLOWED_TYPES = {
    "text/html",
    "application/xhtml+xml",
    "application/json",
    "text/plain",
    "text/markdown",
    "text/x-markdown",
    "text/vtt",
    "application/x-subrip",
    "text/srt",
    "application/pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
}
# application/octet-stream is accepted only when the URL path names a document file
OCTET_EXTENSIONS = (".pdf", ".docx", ".pptx", ".vtt", ".srt", ".md", ".markdown", ".txt")

METADATA_ADDRESSES = {
    ipaddress.ip_address("169.254.169.254"),
    ipaddress.ip_address("fd00:ec2::254"),
    ipaddress.ip_address("169.254.170.2"),  # ECS task metadata
    ipaddress.ip_address("100.100.100.200"),  # Alibaba metadata
}
_EXTRA_BLOCKED = [
    ipaddress.ip_network("100.64.0.0/10"),  # shared address space (CGNAT)
    ipaddress.ip_network("192.0.0.0/24"),
    ipaddress.ip_network("198.18.0.0/15"),
    ipaddress.ip_network("64:ff9b:1::/48"),
]


@dataclass
class FetchedPage:
    final_url: str
    status: int
    content_type: str  # lower-case mime type without parameters, "" when absent
    body: bytes
    charset: str | None = None
    redirects: list[str] = field(default_factory=list)

    def text(self) -> str:
        for enc in filter(None, (self.charset, "utf-8")):
            try:
                return self.body.decode(enc)
            except (LookupError, UnicodeDecodeError):
                continue
        return self.body.decode("utf-8", errors="replace")


def address_problem(ip: ipaddress.IPv4Address | ipaddress.IPv6Address, allow_loopback: bool = False) -> str | None:
    """Why this address may not be fetched, or None when it is public."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in METADATA_ADDRESSES:
            return "a cloud metadata address"
        for embedded in (ip.ipv4_mapped, ip.sixtofour, ip.teredo[1] if ip.teredo else None):
            if embedded is not None:
                return address_problem(embedded, allow_loopback)
        if ip in ipaddress.ip_network("64:ff9b::/96"):
            return address_problem(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF), allow_loopback)
    if ip in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if ip.is_loopback:
        return None if allow_loopback else "a loopback address"
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_private:
        return "a private address"
    if ip.is_reserved:
        return "a reserved address"
    if any(ip in net for net in _EXTRA_BLOCKED if net.version == ip.version):
        return "a non-public address"
    if not ip.is_global:
        return "a non-public address"
    return None


def _blocked(url: str, host: str, why: str) -> ApiError:
    return Forbidden("blocked_address", f"Refusing to fetch {url}: {host} is {why}.")


async def resolve_checked(url: str, host: str, port: int, allow_loopback: bool) -> list[str]:
    """Resolve ``host`` and check every address; return the addresses (all allowed)."""
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        infos = [str(literal)]
    else:
        loop = asyncio.get_running_loop()
        try:
            res = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError, OSError) as exc:
            raise Unprocessable("fetch_failed", f"Cannot resolve host {host!r} ({exc}).") from exc
        infos = []
        for family, _t, _p, _c, sockaddr in res:
            if family in (socket.AF_INET, socket.AF_INET6):
                addr = str(sockaddr[0]).split("%", 1)[0]
                if addr not in infos:
                    infos.append(addr)
        if not infos:
            raise Unprocessable("fetch_failed", f"Host {host!r} has no address.")
    for addr in infos:
        why = address_problem(ipaddress.ip_address(addr), allow_loopback)
        if why:
            raise _blocked(url, host, why)
    return infos


def _check_url(url: str) -> tuple[str, str, int]:
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise BadRequest("bad_url", f"Not a valid URL: {url!r}.") from exc
    scheme = (parts.scheme or "").lower()
    if scheme not in ("http", "https"):
        raise BadRequest("bad_url", f"Only http and https URLs can be captured, not {scheme or 'this'}.")
    try:
        host = parts.hostname
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError as exc:
        raise BadRequest("bad_url", f"Not a valid URL: {url!r}.") from exc
    if not host:
        raise BadRequest("bad_url", f"URL has no host: {url!r}.")
    if parts.username or parts.password:
        raise BadRequest("bad_url", "URLs with a user name or password are not fetched.")
    return scheme, host.rstrip(".").lower(), port


def content_type_ok(mime: str, url: str) -> bool:
    if mime in ALLOWED_TYPES:
        return True
    if mime.startswith("text/") and mime not in ("text/javascript", "text/css"):
        return True
    if mime in ("application/octet-stream", "binary/octet-stream", ""):
        return urlsplit(url).path.lower().endswith(OCTET_EXTENSIONS)
    if mime.endswith("+json"):
        return True
    return False


async def fetch_url(
    url: str,
    *,
    allow_loopback: bool = False,
    max_bytes: int = Settings.fetch_max_bytes,
    timeout: float = Settings.fetch_timeout,
    accept: str = "text/html,application/xhtml+xml,application/json;q=0.9,application/pdf;q=0.8,*/*;q=0.5",
    headers: dict[str, Any] | None = None,
) -> FetchedPage:
    """GET ``url`` safely (see module doc). Raises ApiError on any refusal or failure."""
    try:
        async with asyncio.timeout(timeout):
            return await _fetch(url, allow_loopback, max_bytes, timeout, accept, headers or {})
    except TimeoutError as exc:
        raise Unprocessable("fetch_timeout", f"Fetching {url} took longer than {timeout:g} s.") from exc


async def _fetch(
    url: str, allow_loopback: bool, max_bytes: int, timeout: float, accept: str, extra: dict[str, Any]
) -> FetchedPage:
    redirects: list[str] = []
    current = url
    limits = httpx.Limits(max_connections=4, max_keepalive_connections=0)
    async with httpx.AsyncClient(
        follow_redirects=False, timeout=httpx.Timeout(timeout), trust_env=False, limits=limits
    ) as client:
        for _hop in range(MAX_REDIRECTS + 1):
            _scheme, host, port = _check_url(current)
            addrs = await resolve_checked(current, host, port, allow_loopback)
            resp_info = await _get_pinned(client, current, host, port, addrs, accept, extra, max_bytes)
            status, location, mime, charset, body = resp_info
            if status in (301, 302, 303, 307, 308) and location:
                redirects.append(current)
                current = urljoin(current, location)
                continue
            if status >= 400:
                raise Unprocessable("fetch_failed", f"{current} answered HTTP {status}.")
            if not content_type_ok(mime, current):
                raise UnsupportedType(
                    "unsupported_type", f"{current} is {mime or 'of unknown type'}, not a page or document."
                )
            return FetchedPage(current, status, mime, body, charset, redirects)
    raise Unprocessable("fetch_failed", f"Too many redirects (more than {MAX_REDIRECTS}) from {url}.")


async def _get_pinned(
    client: httpx.AsyncClient,
    url: str,
    host: str,
    port: int,
    addrs: list[str],
    accept: str,
    extra: dict[str, Any],
    max_bytes: int,
) -> tuple[int, str | None, str, str | None, bytes]:
    parts = urlsplit(url)
    last_exc: Exception | None = None
    for addr in addrs:
        ip_url = httpx.URL(url).copy_with(host=addr, port=port)
        host_header = host if parts.port is None else f"{host}:{parts.port}"
        if ":" in host and not host.startswith("["):
            host_header = f"[{host}]" if parts.port is None else f"[{host}]:{parts.port}"
        headers = {
            "Host": host_header,
            "User-Agent": USER_AGENT,
            "Accept": accept,
            "Accept-Language": "en;q=0.9,*;q=0.5",
        }
        headers.update(extra)
        extensions = {"sni_hostname": host} if parts.scheme.lower() == "https" else {}
        request = client.build_request("GET", ip_url, headers=headers, extensions=extensions)
        try:
            response = await client.send(request, stream=True)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            last_exc = exc
            continue
        except httpx.HTTPError as exc:
            raise Unprocessable("fetch_failed", f"Fetching {url} failed: {exc.__class__.__name__}.") from exc
        try:
            status = response.status_code
            location = response.headers.get("location")
            ctype = response.headers.get("content-type", "")
            mime = ctype.split(";", 1)[0].strip().lower()
            charset = None
            for param in ctype.split(";")[1:]:
                k, _, v = param.partition("=")
                if k.strip().lower() == "charset":
                    charset = v.strip().strip('"') or None
            if status in (301, 302, 303, 307, 308) or status >= 400:
                return status, location, mime, charset, b""
            if not content_type_ok(mime, url):
                return status, None, mime, charset, b""
            declared = response.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise TooLarge("too_large", f"{url} is larger than {max_bytes:,} bytes.")
            chunks, size = [], 0
            try:
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > max_bytes:
                        raise TooLarge("too_large", f"{url} is larger than {max_bytes:,} bytes.")
                    chunks.append(chunk)
            except httpx.HTTPError as exc:
                raise Unprocessable("fetch_failed", f"Reading {url} failed: {exc.__class__.__name__}.") from exc
            return status, None, mime, charset, b"".join(chunks)
        finally:
            await response.aclose()
    raise Unprocessable(
        "fetch_failed", f"Cannot connect to {host}: {last_exc.__class__.__name__ if last_exc else 'no address'}."
    )
