"""What a hook needs before it can answer, with the standard library only: the CLI's config
(server, hub, token: the same file and variables as the CLI, see client/config.py), the hook
settings, one bounded HTTP call, and the state directory (spool and log).

The CLI's own modules import httpx, typer and rich, which alone take longer to load than a
hook may take to answer; tests/test_hooks.py holds this reader to the CLI's answers.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import tomllib
from pathlib import Path

TYPE_CHECKING = False  # typing is not imported at run time: a hook's start is what the tool waits for
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

DEFAULT_SERVER = "http://127.0.0.1:8000"
USER_AGENT = "memorywiki-hook"
LOG_LIMIT = 1_000_000  # bytes of hooks.log kept (the newest)

# The hook settings: config.toml's [hooks] table, each overridden by its variable.
DEFAULTS = {
    "max_tokens": (0, "MEMORYWIKI_HOOK_MAX_TOKENS"),  # 0: the server's budget (MEMORYWIKI_HOOK_MAX_TOKENS there)
    "start_timeout": (2.0, "MEMORYWIKI_HOOK_START_TIMEOUT"),  # seconds a session's start may wait
    "prompt_timeout": (1.0, "MEMORYWIKI_HOOK_PROMPT_TIMEOUT"),  # seconds a prompt may wait
    "capture_timeout": (120.0, "MEMORYWIKI_HOOK_CAPTURE_TIMEOUT"),  # seconds the detached capture may wait
    "max_page_bytes": (3_500_000, "MEMORYWIKI_HOOK_MAX_PAGE_BYTES"),  # a transcript's size on the wire at most
}


def config_path(env: Mapping[str, str] = os.environ) -> Path:
    explicit = env.get("MEMORYWIKI_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg and os.path.isabs(xdg):
        base = Path(xdg)
    else:
        home = env.get("HOME")
        base = (Path(home) if home else Path.home()) / ".config"
    return base / "memorywiki" / "config.toml"


def state_dir(env: Mapping[str, str] = os.environ) -> Path:
    """Where the hooks keep what they could not send yet, and their log."""
    xdg = env.get("XDG_STATE_HOME")
    if xdg and os.path.isabs(xdg):
        base = Path(xdg)
    else:
        home = env.get("HOME")
        base = (Path(home) if home else Path.home()) / ".local" / "state"
    return base / "memorywiki" / "hooks"


class HookConfig:
    """Where to send, with what token, and the hook settings (not a dataclass: its import
    alone costs a hook a few milliseconds)."""

    def __init__(
        self, server: str, hub: str | None, token: str | None, settings: dict[str, float], problem: str | None = None
    ) -> None:
        self.server = server
        self.hub = hub
        self.token = token
        self.settings = settings
        self.problem = problem  # the config file could not be read: logged, then defaults


def load(env: Mapping[str, str] = os.environ) -> HookConfig:
    """The server, hub and token the CLI would use, and the hook settings."""
    path = config_path(env)
    data: dict[str, Any] = {}
    problem = None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        problem = f"cannot read {path}: {exc}"
    server = str(env.get("MEMORYWIKI_URL") or data.get("server") or DEFAULT_SERVER).strip().rstrip("/")
    if "://" not in server:
        server = "http://" + server
    hub = env.get("MEMORYWIKI_HUB") or data.get("hub") or None
    token = env.get("MEMORYWIKI_TOKEN") or None
    hubs: dict[str, Any] = data["hubs"] if isinstance(data.get("hubs"), dict) else {}
    entry = hubs.get(hub) if hub else None
    if token is None and isinstance(entry, dict) and entry.get("owner_token"):
        token = str(entry["owner_token"])
    table: dict[str, Any] = data["hooks"] if isinstance(data.get("hooks"), dict) else {}
    settings: dict[str, float] = {}
    for name, (default, variable) in DEFAULTS.items():
        raw = env.get(variable, table.get(name, default))
        try:
            settings[name] = float(raw)
        except (TypeError, ValueError):
            settings[name] = float(default)
    return HookConfig(server, str(hub) if hub else None, token, settings, problem)


class HookError(Exception):
    """The one line a hook says when it goes on without the server."""


def call(
    cfg: HookConfig, method: str, path: str, body: dict[str, object] | None, timeout: float
) -> tuple[int, dict[str, object]]:
    """One request to the server, answered within `timeout` seconds whatever the server does
    (a thread bounds the whole exchange: a socket timeout alone bounds each read, not the
    sum); (status, JSON body). HookError for no answer in time, no server, or no JSON."""
    result: dict[str, object] = {}

    def run() -> None:
        try:
            result["answer"] = _request(cfg, method, path, body, timeout)
        except BaseException as exc:  # handed to the caller's thread
            result["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise HookError(f"the server at {cfg.server} did not answer within {timeout:g} s")
    if "error" in result:
        exc = result["error"]
        if isinstance(exc, HookError):
            raise exc
        if isinstance(exc, TimeoutError):
            raise HookError(f"the server at {cfg.server} did not answer within {timeout:g} s")
        if isinstance(exc, OSError):
            raise HookError(f"the server at {cfg.server} is not reachable ({exc.strerror or exc})")
        raise HookError(f"the server at {cfg.server} answered something unexpected ({exc.__class__.__name__})")
    answer: tuple[int, dict[str, object]] = result["answer"]  # type: ignore[assignment]
    return answer


def quote(text: str) -> str:
    """`text` as one URL path segment (urllib.parse's quote, without importing urllib)."""
    safe = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
    return "".join(ch if ch in safe else "".join(f"%{b:02X}" for b in ch.encode("utf-8")) for ch in text)


def _split(server: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path prefix) of the server URL."""
    scheme, _, rest = server.partition("://")
    netloc, slash, prefix = rest.partition("/")
    netloc = netloc.rpartition("@")[2]
    host, port = netloc, 443 if scheme == "https" else 80
    if netloc.startswith("["):  # [::1]:8000
        host, _, tail = netloc[1:].partition("]")
        if tail.startswith(":") and tail[1:].isdigit():
            port = int(tail[1:])
    elif netloc.count(":") == 1:
        host, _, p = netloc.partition(":")
        if p.isdigit():
            port = int(p)
    return scheme.lower(), host, port, ("/" + prefix if slash else "").rstrip("/")


def _request(
    cfg: HookConfig, method: str, path: str, body: dict[str, object] | None, timeout: float
) -> tuple[int, dict[str, object]]:
    """HTTP/1.1 over a socket, one request per connection. http.client would do, but its import
    (email's header parser) costs a hook more than the request itself."""
    scheme, host, port, prefix = _split(cfg.server)
    payload = json.dumps(body, ensure_ascii=False).encode("utf-8") if body is not None else b""
    lines = [
        f"{method} {prefix}{path} HTTP/1.1",
        f"Host: {host if port in (80, 443) else f'{host}:{port}'}",
        f"User-Agent: {USER_AGENT}",
        "Accept: application/json",
        "Connection: close",
        f"Content-Length: {len(payload)}",
    ]
    if body is not None:
        lines.append("Content-Type: application/json")
    if cfg.token:
        lines.append(f"Authorization: Bearer {cfg.token}")
    sock = socket.create_connection((host, port), timeout=timeout)
    try:
        if scheme == "https":
            import ssl

            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        sock.close()
    raw = b"".join(chunks)
    head, _, content = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise HookError(f"the server at {cfg.server} did not answer HTTP")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines)}
    if "chunked" in headers.get("transfer-encoding", "").lower():
        content = _unchunk(content)
    try:
        data = json.loads(content) if content.strip() else {}
    except ValueError:
        data = {}
    return int(parts[1]), data if isinstance(data, dict) else {}


def _unchunk(content: bytes) -> bytes:
    out, pos = [], 0
    while pos < len(content):
        end = content.find(b"\r\n", pos)
        if end < 0:
            break
        size = int(content[pos:end].split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out.append(content[end + 2 : end + 2 + size])
        pos = end + 2 + size + 2
    return b"".join(out)


def hub_path(cfg: HookConfig, rest: str) -> str:
    return f"/api/hub/{quote(cfg.hub or '')}{rest}"


def error_text(status: int, data: dict[str, object]) -> str:
    found = data.get("error")
    err: dict[str, object] = found if isinstance(found, dict) else {}
    return str(err.get("message") or f"HTTP {status}")


def log(line: str, env: Mapping[str, str] = os.environ) -> None:
    """One line in the hooks' log (state_dir()/hooks.log), the newest kept; never raises."""
    try:
        path = state_dir(env) / "hooks.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > LOG_LIMIT:
            tail = path.read_bytes()[-LOG_LIMIT // 2 :]
            path.write_bytes(tail[tail.find(b"\n") + 1 :])
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n")
    except OSError:
        pass
