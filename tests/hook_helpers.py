"""What the hook tests share: a user's machine with a hub configured, a project in git, the
hook run as the coding tool runs it, and Claude Code transcripts written as Claude Code does."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from memorywiki.adapters.install.hook_config import hook_command

from tests.polling import wait_until

REMOTE = "git@github.com:acme/api.git"


@dataclass
class Machine:
    home: Path
    project: Path
    server: str
    hub: str
    token: str | None
    env: dict[str, str] = field(default_factory=dict)

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    @property
    def state(self) -> Path:
        return self.home / ".local" / "state" / "memorywiki" / "hooks"

    def write_config(self, token: str | None = None, **hooks: float) -> None:
        hooks = hooks or {"start_timeout": 60, "prompt_timeout": 60}
        lines = [f'server = "{self.server}"', f'hub = "{self.hub}"', f"[hubs.{self.hub}]"]
        if token:
            lines.append(f'owner_token = "{token}"')
        if hooks:
            lines.append("[hooks]")
            lines += [f"{k} = {v}" for k, v in hooks.items()]
        path = self.home / ".config" / "memorywiki" / "config.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def hook(self, tool: str, event: str, payload: dict, env: dict | None = None, timeout: float = 60):
        """Run the hook as the tool does: its JSON on stdin, from the project directory."""
        started = time.monotonic()
        out = subprocess.run(
            shlex.split(hook_command(tool, event)),  # as installed: the lean entry, -I -S
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            cwd=self.project,
            env={**self.env, **(env or {})},
            timeout=timeout,
        )
        return out, time.monotonic() - started

    def session_pages(self) -> list[dict]:
        """The hub's pages captured from sessions, as its owner sees them."""
        docs = httpx.get(f"{self.server}/api/hub/{self.hub}", headers=self.headers).json()["docs"]
        pages = []
        for d in docs:
            full = httpx.get(f"{self.server}/api/docs/{d['id']}", headers=self.headers).json()
            if full["meta"].get("session_id"):
                pages.append(full)
        return pages

    def wait_page(self, session_id: str, turns: int | None = None, timeout: float = 120) -> dict:
        def found():
            for page in self.session_pages():
                if page["meta"]["session_id"] == session_id and (
                    turns is None or page["meta"]["capture"]["turns"] >= turns
                ):
                    return page
            return None

        return wait_until(found, f"the page of session {session_id}", timeout=timeout)

    def log(self) -> str:
        path = self.state / "hooks.log"
        return path.read_text(encoding="utf-8") if path.exists() else ""


def git_project(path: Path, remote: str = REMOTE) -> None:
    env = {"HOME": str(path), "PATH": os.environ.get("PATH", ""), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, env=env, check=True)
    subprocess.run(["git", "remote", "add", "origin", remote], cwd=path, env=env, check=True)


def make_machine(tmp_path: Path, server: str, hub: str, token: str | None) -> Machine:
    home, project = tmp_path / "home", tmp_path / "api"
    home.mkdir()
    project.mkdir()
    git_project(project)
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "TMPDIR": str(tmp_path),
    }
    machine = Machine(home, project, server, hub, token, env)
    # What these tests check is what a hook does, not how fast a test server answers: its first
    # recall (cold) can take seconds on a loaded machine. bench/ measures the latency.
    machine.write_config(token, start_timeout=60, prompt_timeout=60)
    return machine


def claude_transcript(path: Path, session_id: str, cwd: Path, turns: list[tuple[str, str]]) -> Path:
    """A transcript as Claude Code writes one: a user line, then the assistant's text block,
    chained by uuid / parentUuid."""
    path.parent.mkdir(parents=True, exist_ok=True)
    parent = None
    lines = []
    for i, (question, answer) in enumerate(turns):
        for role, text in (("user", question), ("assistant", answer)):
            uid = str(uuid.uuid4())
            message = (
                {"role": "user", "content": text}
                if role == "user"
                else {
                    "id": f"msg_{i}",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude",
                    "content": [{"type": "text", "text": text}],
                }
            )
            lines.append(
                json.dumps(
                    {
                        "type": role,
                        "uuid": uid,
                        "parentUuid": parent,
                        "sessionId": session_id,
                        "cwd": str(cwd),
                        "gitBranch": "main",
                        "version": "2.1.332",
                        "timestamp": "2026-08-30T10:00:00Z",
                        "message": message,
                    }
                )
            )
            parent = uid
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
