"""How something outside this process starts memorywiki. An MCP client does not share the
user's shell, and a coding tool may run commands in a shell of its own (Codex: a login shell,
which resets PATH from the profile), so a venv's bin directory is not on their PATH: they get an
absolute command. A user whose `memorywiki` lives in a venv they have not activated gets the
one line that fixes that."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path


def memorywiki_executable() -> Path | None:
    """The absolute `memorywiki` console script of the running installation, if it has one."""
    # not resolved: a venv's python is a symlink out of the venv, the script sits beside the link
    bindir = Path(sys.executable).absolute().parent
    found = shutil.which("memorywiki", path=str(bindir))
    return Path(found).absolute() if found else None


def cli_command() -> list[str]:
    """The command (absolute) that runs this installation's CLI: the console script, else this
    interpreter running the CLI module."""
    exe = memorywiki_executable()
    if exe is not None:
        return [str(exe)]
    return [str(Path(sys.executable).absolute()), "-m", "memorywiki.cli"]


def shell_command() -> str:
    """cli_command() as a shell command line starts, for the skill files' commands."""
    return shlex.join(cli_command())


def mcp_server_command() -> list[str]:
    """The command (absolute) that starts the MCP server over stdio."""
    return [*cli_command(), "mcp"]


def path_hint() -> str | None:
    """A one-line tip when `memorywiki` is not on PATH (e.g. run as .venv/bin/memorywiki by
    scripts/serve.sh); None when the command already resolves to this installation."""
    exe = memorywiki_executable()
    if exe is None:
        return None
    on_path = shutil.which("memorywiki")
    if on_path and Path(on_path).resolve() == exe.resolve():
        return None
    activate = exe.parent / "activate"
    line = (
        f"source {shlex.quote(str(activate))}"
        if activate.is_file()
        else f'export PATH={shlex.quote(str(exe.parent))}:"$PATH"'
    )
    return f"tip: the memorywiki command is not on your PATH; in another shell, run:  {line}"
