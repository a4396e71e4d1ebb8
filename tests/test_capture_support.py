"""A real HTTP server on 127.0.0.1 for the capture tests (no tests in this module)."""

from __future__ import annotations

import gzip
import http.server
import threading
import time
from collections.abc import Callable


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # body ends at close: lets a route omit Content-Length

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        self.server.hits.append(self.path)  # type: ignore[attr-defined]
        self.server.headers_seen.append(dict(self.headers))  # type: ignore[attr-defined]
        route = self.server.routes.get(path) or self.server.routes.get(self.path)  # type: ignore[attr-defined]
        if route is None:
            return self._send(404, "text/plain", b"not found")
        if callable(route):
            return route(self)
        status, ctype, body = route[:3]
        extra = route[3] if len(route) > 3 else {}
        return self._send(status, ctype, body, extra)

    def _send(self, status, ctype, body: bytes, extra: dict | None = None, length: bool = True):
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args):
        pass


class LocalServer:
    """``with LocalServer() as srv: srv.routes["/x"] = (200, "text/html", b"...")``.

    A route is ``(status, content_type, body[, headers])`` or ``callable(handler)``.
    """

    def __init__(self):
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.routes = {}
        self.httpd.hits = []
        self.httpd.headers_seen = []
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def routes(self) -> dict:
        return self.httpd.routes

    @property
    def hits(self) -> list:
        return self.httpd.hits

    @property
    def headers_seen(self) -> list:
        return self.httpd.headers_seen

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def streaming_body(ctype: str, chunk: bytes, count: int) -> Callable:
    """A route that streams ``count`` chunks with no Content-Length."""

    def route(h):
        h.send_response(200)
        h.send_header("Content-Type", ctype)
        h.end_headers()
        try:
            for _ in range(count):
                h.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass

    return route


def slow_body(ctype: str, delay: float) -> Callable:
    def route(h):
        h.send_response(200)
        h.send_header("Content-Type", ctype)
        h.end_headers()
        try:
            h.wfile.write(b"<html><body>")
            h.wfile.flush()
            time.sleep(delay)
            h.wfile.write(b"late</body></html>")
        except (BrokenPipeError, ConnectionResetError):
            pass

    return route


def gzip_bomb(ctype: str, size: int) -> Callable:
    payload = gzip.compress(b" " * size, compresslevel=9)

    def route(h):
        h._send(200, ctype, payload, {"Content-Encoding": "gzip"})

    return route
