"""A user's machine in miniature for the real coding tools: a temp HOME, a project dir, the
`memorywiki` CLI of this checkout on PATH, configured for a live server and a hub, and the
scripted model server the tools are pointed at.

The environment is built from scratch rather than inherited, so variables of whatever runs
the tests (a Claude Code or Codex session id, API keys, a CODEX_HOME) cannot leak into the
tool under test.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.agents.model_server import ModelServer
from tests.agents.skill_model import SkillModel

VENV_BIN = Path(sys.executable).parent  # where this checkout's `memorywiki` is installed
CLI = shlex.quote(str(VENV_BIN / "memorywiki"))  # how the installed skill runs it
# A home's profile as Debian's skeleton writes it: it knows ~/bin and ~/.local/bin, not a venv.
PROFILE = (
    'if [ -d "$HOME/bin" ] ; then PATH="$HOME/bin:$PATH"; fi\n'
    'if [ -d "$HOME/.local/bin" ] ; then PATH="$HOME/.local/bin:$PATH"; fi\n'
)


@dataclass
class Workspace:
    home: Path
    project: Path
    server_url: str
    hub: str
    live: Any  # the live_server fixture (its app, for waiting on the indexer)
    env: dict[str, str] = field(default_factory=dict)

    def run(
        self,
        argv: list[str],
        *,
        stdin: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 120,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess:
        """Run a command as the user would, in the project dir; stdin is closed unless given."""
        return subprocess.run(
            argv,
            cwd=cwd or self.project,
            env={**self.env, **(env or {})},
            text=True,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
        )

    def memorywiki(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        out = self.run([str(VENV_BIN / "memorywiki"), *args], stdin=stdin)
        assert out.returncode == 0, f"memorywiki {' '.join(args)} failed:\n{out.stdout}\n{out.stderr}"
        return out

    def doc(self, url: str) -> dict:
        """The page at `url`, as the API returns it (owner token of the hub)."""
        import httpx

        doc_id = url.rstrip("/").rsplit("/", 1)[-1]
        token = self.owner_token()
        resp = httpx.get(f"{self.server_url}/api/docs/{doc_id}", headers={"Authorization": f"Bearer {token}"})
        assert resp.status_code == 200, f"{url}: {resp.status_code} {resp.text}"
        return resp.json()

    def owner_token(self) -> str:
        import tomllib

        cfg = tomllib.loads((self.home / ".config" / "memorywiki" / "config.toml").read_text())
        return cfg["hubs"][self.hub]["owner_token"]

    def wait_indexed(self, *doc_ids: str) -> None:
        """Recall finds a page only once the background worker has indexed it."""
        from tests.polling import wait_indexed

        wait_indexed(self.live, doc_ids=doc_ids)

    def page_exists(self, url: str) -> bool:
        """`url` is a page of this server that a browser can open."""
        import httpx

        if not url.startswith(self.server_url + "/"):
            return False
        return httpx.get(url, headers={"Accept": "text/html"}).status_code == 200


def make_workspace(tmp_path: Path, live, hub: str = "agents") -> Workspace:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    path = os.pathsep.join([str(VENV_BIN), "/usr/local/bin", "/usr/bin", "/bin"])
    env = {
        "HOME": str(home),
        "PATH": path,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "TMPDIR": str(tmp_path),
        "USER": os.environ.get("USER", "user"),
        "SHELL": "/bin/bash",
    }
    # Codex runs commands in a login shell (bash -lc), which resets PATH from /etc/profile and
    # this profile; like most users' own, it does not know the venv, so the installed skill
    # has to name `memorywiki` by its full path.
    (home / ".profile").write_text(PROFILE, encoding="utf-8")
    ws = Workspace(home, project, live.url, hub, live, env)
    ws.memorywiki("config", "--set-server", live.url)
    ws.memorywiki("hub", "create", hub)
    return ws


def git_init(directory: Path, branch: str = "main") -> None:
    """A git repo with one commit on `branch`, as a real project has."""
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
        "HOME": str(directory),
        "PATH": os.environ.get("PATH", ""),
    }
    for argv in (["git", "init", "-q", "-b", branch], ["git", "commit", "-q", "--allow-empty", "-m", "start"]):
        subprocess.run(argv, cwd=directory, env=env, check=True, capture_output=True)


@pytest.fixture
def workspace(live_server, tmp_path) -> Workspace:
    return make_workspace(tmp_path, live_server)


@pytest.fixture
def model_server():
    """The scripted model (`.model`, a SkillModel) behind a loopback model server."""
    server = ModelServer(SkillModel()).start()
    yield server
    server.stop()


def assert_model_clean(server: ModelServer) -> None:
    """The scripted model met nothing it did not expect, and the tool called nothing else."""
    model = server.model
    assert not server.errors, "the scripted model crashed:\n" + "\n".join(server.errors)
    assert not model.problems, "the scripted model saw problems:\n" + "\n".join(model.problems)
    assert not server.unknown, f"the tool called unknown model endpoints: {server.unknown}"


# An answer with everything a shell would expand or a heredoc could break on, so a capture
# shows the skill's quoting kept it verbatim.
ANSWER = (
    "Build the HNSW index after the bulk load: `SET maintenance_work_mem = '1GB'`, keep "
    '$PGDATA and $(hostname) as typed, a backslash \\n stays, and "double quotes" too.'
)
QUESTION = "Why did the HNSW index build deadlock?"
