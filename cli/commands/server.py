"""`memorywiki serve` and `memorywiki worker`: the only commands that import the server (lazily,
so every other command starts fast and works without the server's dependencies)."""

from __future__ import annotations

import errno
import socket
from pathlib import Path
from typing import Annotated

import typer
from memorywiki.adapters.install.launch import path_hint
from memorywiki.client import MemoryWikiError

from .. import output

DataDirOpt = Annotated[
    Path | None, typer.Option("--data-dir", help="Where the embedded database lives (default: user data dir).")
]


def _check_port_free(host: str, port: int) -> None:
    """Fail fast (before starting PostgreSQL) when the port is taken."""
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise MemoryWikiError(f"cannot resolve host {host!r}: {exc.strerror or exc}") from None
    family, _, _, _, addr = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(addr)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise MemoryWikiError(
                    f"port {port} on {host} is already in use (is Memory.Wiki already running? "
                    f"try `memorywiki serve --port {port + 1}`)"
                ) from None
            raise MemoryWikiError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on.")] = 8000,
    data_dir: DataDirOpt = None,
) -> None:
    """Run the Memory.Wiki server (embedded PostgreSQL unless DATABASE_URL is set) until Ctrl-C."""
    hint = path_hint()
    if hint:  # e.g. started by scripts/serve.sh, whose .venv is not on the user's PATH
        output.note(hint)
    _check_port_free(host, port)
    try:
        from memorywiki.server.app import run_server
    except ImportError as exc:
        raise MemoryWikiError(f"the server cannot start: {exc}") from None
    try:
        run_server(host=host, port=port, data_dir=data_dir)
    except KeyboardInterrupt:
        pass


def worker(data_dir: DataDirOpt = None) -> None:
    """Run an indexing worker in this process (for MEMORYWIKI_WORKER=external deployments)."""
    try:
        from memorywiki.server.worker import run_worker
    except ImportError as exc:
        raise MemoryWikiError(f"the worker cannot start: {exc}") from None
    try:
        run_worker(data_dir=data_dir)
    except KeyboardInterrupt:
        pass


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.command()(worker)
