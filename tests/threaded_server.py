"""A Starlette app served by uvicorn in a thread on loopback: the local stand-ins for the
embedding, chat, rerank and coding-tool model endpoints share this one way to start and stop."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn


class ThreadedServer:
    """Subclasses set `app`, and `name` / `url_path` for the thread name and `base_url`."""

    app: Any
    name = "local-server"
    url_path = ""  # e.g. "/v1": what clients put after host:port
    base_url = ""
    _server: uvicorn.Server | None = None
    _thread: threading.Thread | None = None

    def start(self, port: int = 0):
        """Listen on `port` (a free one by default; the port it had, to come back after stop())."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # accepted sockets inherit it
        sock.bind(("127.0.0.1", port))
        port = sock.getsockname()[1]
        config = uvicorn.Config(self.app, log_level="warning", access_log=False, lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name=self.name, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not start")
            time.sleep(0.01)
        self.base_url = f"http://127.0.0.1:{port}{self.url_path}"
        return self

    @property
    def port(self) -> int:
        return int(self.base_url.rsplit(":", 1)[1].split("/")[0])

    def stop(self) -> None:
        """Stop listening: clients then get "connection refused", as from a stopped server."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = self._thread = None
