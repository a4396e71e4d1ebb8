"""Real processes for the crash, outage and scale-out tests: `memorywiki serve` and
`memorywiki worker` as subprocesses, configured only through their environment, as an
operator would run them."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx

from tests.polling import wait_until

MEMORYWIKI = str(Path(sys.executable).parent / "memorywiki")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(embedding_url: str | None, **extra: str) -> dict[str, str]:
    """The environment of a server or worker that embeds through the test embedding server
    (`MEMORYWIKI_EMBEDDER=none` when `embedding_url` is None)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYWIKI_", "OPENAI_")) and k != "DATABASE_URL"}
    if embedding_url is None:
        env["MEMORYWIKI_EMBEDDER"] = "none"
    else:
        env.update(
            {
                "MEMORYWIKI_EMBEDDER": "openai",
                "MEMORYWIKI_OPENAI_MODEL": "test-embed",
                "OPENAI_API_KEY": "test-key",
                "OPENAI_BASE_URL": embedding_url,
                "MEMORYWIKI_EMBED_RETRIES": "0",
            }
        )
    env.update(extra)
    return env


class Process:
    """A `memorywiki serve` (with a port) or `memorywiki worker` subprocess, its output in a file."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path):
        self.log = log
        self._out = open(log, "ab")
        self.popen = subprocess.Popen([MEMORYWIKI, *args], env=env, stdout=self._out, stderr=subprocess.STDOUT)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def output(self) -> str:
        self._out.flush()
        return self.log.read_text(errors="replace")

    def kill9(self) -> None:
        self.popen.send_signal(signal.SIGKILL)
        self.popen.wait(timeout=30)
        self._out.close()

    stop_signal = signal.SIGTERM  # what a service manager sends

    def stop(self, timeout: float = 30) -> int:
        """Stop it cleanly; the exit status."""
        if self.popen.poll() is None:
            self.popen.send_signal(self.stop_signal)
            try:
                self.popen.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        self._out.close()
        return self.popen.returncode


class Server(Process):
    # Ctrl-C: uvicorn re-raises a SIGTERM it handled (exit status -15); SIGINT ends in exit 0
    stop_signal = signal.SIGINT

    def __init__(self, env: dict[str, str], log: Path, *, port: int | None = None, data_dir: Path | None = None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        args = ["serve", "--port", str(self.port)]
        if data_dir is not None:
            args += ["--data-dir", str(data_dir)]
        super().__init__(args, {**env, "MEMORYWIKI_PUBLIC_URL": self.url}, log)

        def healthy() -> bool:
            if self.popen.poll() is not None:
                raise AssertionError(f"memorywiki serve exited with {self.popen.returncode}:\n{self.output()}")
            try:
                return httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(healthy, f"memorywiki serve on port {self.port}", timeout=120, interval=0.2)


class Worker(Process):
    def __init__(self, env: dict[str, str], log: Path):
        super().__init__(["worker"], env, log)
