"""What a hook needs before it can answer, with the standard library only: the CLI's config
(server, hub, token: the same file and variables as the CLI, see client/config.py), the hook
settings, one bounded HTTP call, and the state directory (spool and log).

The CLI's own modules import httpx, typer and rich, which alone take longer to load than a
hook may take to answer; tests/test_hooks.py holds this reader to the CLI's answers. Even the
standard library is picked by what it costs to import (`python -X importtime`): paths are
os.path's (pathlib brings urllib.parse, ipaddress and fnmatch), the socket is `_socket`'s
(socket.py builds its enums at import), the time limit is a `_thread` lock (threading), JSON
is read and written by json's own C half, `_json` (the json package compiles regular
expressions at import, and brings re, enum and functools), and the config file, as the CLI
writes it, is read line by line; tomllib (which brings typing and datetime) reads only a file
written by hand past what those lines understand. Each falls back to the module it stands for.
"""

from __future__ import annotations

import _socket
import _thread
import os
import time

TYPE_CHECKING = False  # typing is not imported at run time: a hook's start is what the tool waits for
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
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


# ---- JSON, by json's C half ------------------------------------------------------------------


class _Scanning:
    """What `_json.make_scanner` reads of a json.JSONDecoder."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


def _unknown(value: object) -> object:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


_scan: Callable[[str, int], tuple[object, int]] | None
_encode: Callable[[object, int], Iterable[str]] | None
try:
    import _json

    _scan = _json.make_scanner(_Scanning())  # type: ignore[arg-type]  # it reads a decoder's attributes only
    _encode = _json.make_encoder(None, _unknown, _json.encode_basestring, None, ": ", ", ", False, False, True)
except (ImportError, AttributeError, TypeError):  # not CPython: the json package
    _scan = _encode = None


def loads(text: str | bytes) -> object:
    """json.loads; ValueError for what is not one JSON value."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if _scan is None:
        import json

        return json.loads(text)
    text = text.strip(" \t\r\n")
    try:
        value, end = _scan(text, 0)
    except StopIteration:
        raise ValueError("not JSON") from None
    if end != len(text):
        raise ValueError("extra data after the JSON value")
    return value


def dumps(value: object) -> str:
    """json.dumps(value, ensure_ascii=False)."""
    if _encode is None:
        import json

        return json.dumps(value, ensure_ascii=False)
    return "".join(_encode(value, 0))


# ---- the config --------------------------------------------------------------------------------


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def config_path(env: Mapping[str, str] = os.environ) -> str:
    explicit = env.get("MEMORYWIKI_CONFIG")
    if explicit:
        return os.path.expanduser(explicit)
    xdg = env.get("XDG_CONFIG_HOME")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(_home(env), ".config")
    return os.path.join(base, "memorywiki", "config.toml")


def state_dir(env: Mapping[str, str] = os.environ) -> str:
    """Where the hooks keep what they could not send yet, and their log."""
    xdg = env.get("XDG_STATE_HOME")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(_home(env), ".local", "state")
    return os.path.join(base, "memorywiki", "hooks")


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


class _NotPlain(Exception):
    """A line past what read_toml reads itself: tomllib reads the file."""


def _value(raw: str) -> object:
    if raw.startswith('"'):
        end = raw.find('"', 1)
        rest = raw[end + 1 :].strip() if end > 0 else ""
        if end < 0 or raw.startswith('"""') or "\\" in raw[:end] or (rest and not rest.startswith("#")):
            raise _NotPlain
        return raw[1:end]
    raw = raw.split("#", 1)[0].strip()
    if raw in ("true", "false"):
        return raw == "true"
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        return float(raw)
    except ValueError:
        raise _NotPlain from None


def _bare(key: str) -> str:
    key = key.strip()
    if not key or not all(ch.isascii() and (ch.isalnum() or ch in "-_") for ch in key):
        raise _NotPlain
    return key


def read_toml(text: str) -> dict[str, Any]:
    """A config file as tomllib reads it. The lines the CLI writes (tomli_w: `key = "text"`,
    numbers, booleans, `[table]` and `[table.sub]` of bare keys, comments) are read here; any
    other line (an escape, a quoted key, an array, an inline table) has tomllib read the whole
    file, with its errors."""
    try:
        data: dict[str, Any] = {}
        table = data
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("["):
                head = line.split("#", 1)[0].strip()
                if head.startswith("[[") or not head.endswith("]"):
                    raise _NotPlain
                table = data
                for part in head[1:-1].split("."):
                    found = table.setdefault(_bare(part), {})
                    if not isinstance(found, dict):
                        raise _NotPlain
                    table = found
                continue
            key, eq, raw = line.partition("=")
            if not eq:
                raise _NotPlain
            name = _bare(key)
            if name in table:
                raise _NotPlain  # tomllib's error to say
            table[name] = _value(raw.strip())
        return data
    except _NotPlain:
        import tomllib

        return tomllib.loads(text)


def load(env: Mapping[str, str] = os.environ) -> HookConfig:
    """The server, hub and token the CLI would use, and the hook settings."""
    path = config_path(env)
    data: dict[str, Any] = {}
    problem = None
    try:
        with open(path, encoding="utf-8") as fh:
            data = read_toml(fh.read())
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # tomllib.TOMLDecodeError is a ValueError
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
    """One request to the server, answered within `timeout` seconds whatever the server does:
    each socket call waits at most what is left until the deadline (a socket timeout alone
    bounds each read, not the sum), and a server named by a host name, whose look-up no
    timeout bounds, is asked from a thread. (status, JSON body); HookError for no answer in
    time, no server, or no JSON."""
    result: dict[str, object] = {}
    deadline = time.monotonic() + timeout

    def run() -> None:
        try:
            result["answer"] = _request(cfg, method, path, body, deadline)
        except BaseException as exc:  # handed to the caller's thread
            result["error"] = exc

    if _literal(_split(cfg.server)[1]):
        run()  # no name to look up: each socket call is bounded by what is left of the time
    else:  # a name's look-up has no time limit of its own: a thread bounds it
        done = _thread.allocate_lock()
        done.acquire()

        def run_then_release() -> None:
            try:
                run()
            finally:
                done.release()

        _thread.start_new_thread(run_then_release, ())
        if not done.acquire(timeout=max(timeout, 0.001)):
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


def _literal(host: str) -> bool:
    """An address, not a name to look up (localhost is in /etc/hosts)."""
    if host == "localhost":
        return True
    for family in (_socket.AF_INET, _socket.AF_INET6):
        try:
            _socket.inet_pton(family, host)
            return True
        except (OSError, ValueError):
            pass
    return False


def _request(
    cfg: HookConfig, method: str, path: str, body: dict[str, object] | None, deadline: float
) -> tuple[int, dict[str, object]]:
    """HTTP/1.1 over a socket, one request per connection. http.client would do, but its import
    (email's header parser) costs a hook more than the request itself."""
    scheme, host, port, prefix = _split(cfg.server)
    payload = dumps(body).encode("utf-8") if body is not None else b""
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
    request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload
    exchange = _exchange_tls if scheme == "https" else _exchange
    chunks = exchange(host, port, request, deadline)
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
        data = loads(content) if content.strip() else {}
    except ValueError:
        data = {}
    return int(parts[1]), data if isinstance(data, dict) else {}


def _left(deadline: float) -> float:
    """The seconds left until `deadline`; TimeoutError when none are."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("deadline passed")
    return left


def _connect(host: str, port: int, deadline: float) -> _socket.socket:
    """socket.create_connection, with `_socket` alone: each address the name has, in turn."""
    error: OSError | None = None
    # an ASCII name as bytes: a str goes through the idna codec, which imports re and unicodedata
    name: str | bytes = host.encode("ascii") if host.isascii() else host
    for family, kind, proto, _, address in _socket.getaddrinfo(name, port, 0, _socket.SOCK_STREAM):
        sock = _socket.socket(family, kind, proto)
        try:
            sock.settimeout(_left(deadline))
            sock.connect(address)
            return sock
        except OSError as exc:
            error = exc
            sock.close()
    raise error or OSError(f"no address for {host}")


def _exchange(host: str, port: int, data: bytes, deadline: float) -> list[bytes]:
    """Send `data`, read until the server closes: the answer's bytes, by the deadline."""
    sock = _connect(host, port, deadline)
    try:
        sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
        return _send_and_read(sock, data, deadline)
    finally:
        sock.close()


def _exchange_tls(host: str, port: int, data: bytes, deadline: float) -> list[bytes]:
    """The same over TLS: ssl wraps socket.py's sockets, whose import a hook then pays."""
    import socket
    import ssl

    with socket.create_connection((host, port), timeout=_left(deadline)) as raw:
        with ssl.create_default_context().wrap_socket(raw, server_hostname=host) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return _send_and_read(sock, data, deadline)


def _send_and_read(sock: Any, data: bytes, deadline: float) -> list[bytes]:
    """Send `data` on a plain or TLS socket, then read until the server closes, each wait
    bounded by what is left of the deadline."""
    sock.settimeout(_left(deadline))
    sock.sendall(data)
    chunks: list[bytes] = []
    while True:
        sock.settimeout(_left(deadline))
        chunk = sock.recv(65536)
        if not chunk:
            return chunks
        chunks.append(chunk)


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
    path = os.path.join(state_dir(env), "hooks.log")
    text = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n".encode()
    try:
        try:
            fh = open(path, "ab")
        except FileNotFoundError:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fh = open(path, "ab")
        with fh:
            fh.write(text)
            size = fh.tell()
        if size > LOG_LIMIT:
            with open(path, "rb") as old:
                old.seek(size - LOG_LIMIT // 2)
                tail = old.read()
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as new:
                new.write(tail[tail.find(b"\n") + 1 :])
            os.replace(tmp, path)
    except OSError:
        pass
