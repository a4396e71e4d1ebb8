"""`python -m memorywiki.adapters.hooks TOOL EVENT`: one hook run, as the tool starts it.

EVENT is `session-start` (the project's memory, as context), `prompt` (the passages that
bear on the prompt), `pre-compact` or `session-end` (the session saved as its page, by a
detached child). The tool's JSON comes on stdin; what it should inject goes to stdout in the
tool's own shape. A hook never fails the tool: whatever happens it exits 0, within its time
limit, and says in one line what it could not do.
"""

from __future__ import annotations

import os
import sys
import time

from . import lean
from .project import project_of

EVENTS = ("session-start", "prompt", "pre-compact", "session-end")
MAX_STDIN = 10 * 1024 * 1024  # the tool's JSON; a prompt is never larger
# What each tool calls its events (the installer writes these names), and how it takes context.
EVENT_NAMES = {
    "claude-code": {"session-start": "SessionStart", "prompt": "UserPromptSubmit"},
    "codex": {"session-start": "SessionStart", "prompt": "UserPromptSubmit"},
}
LABELS = {"claude-code": "Claude Code", "codex": "Codex CLI", "cursor": "Cursor"}


def _input() -> dict[str, object]:
    try:
        raw = sys.stdin.buffer.read(MAX_STDIN) if not sys.stdin.isatty() else b""
        data = lean.loads(raw) if raw.strip() else {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def session_id_of(tool: str, data: dict[str, object]) -> str | None:
    for key in ("session_id", "conversation_id", "thread_id"):
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def cwd_of(data: dict[str, object]) -> str:
    cwd = data.get("cwd")
    if isinstance(cwd, str) and cwd:
        return cwd
    roots = data.get("workspace_roots")  # Cursor
    if isinstance(roots, list) and roots and isinstance(roots[0], str):
        return roots[0]
    return os.getcwd()


def render(tool: str, event: str, text: str, message: str | None) -> str:
    """The hook's stdout in the tool's shape: Claude Code and Codex read hookSpecificOutput and
    show systemMessage to the person; Cursor reads additional_context."""
    if tool == "cursor":
        if event != "session-start":
            return ""
        return lean.dumps({"additional_context": text})
    out: dict[str, object] = {}
    if text and event in EVENT_NAMES.get(tool, {}):
        out["hookSpecificOutput"] = {"hookEventName": EVENT_NAMES[tool][event], "additionalContext": text}
    if message:
        out["systemMessage"] = message
    return lean.dumps(out) if out else ""


# ---- session start and prompts -------------------------------------------------------------------


def _context(tool: str, event: str, data: dict[str, object], cfg: lean.HookConfig) -> tuple[str, str | None]:
    if not cfg.hub:
        return "", "Memory.Wiki: no hub configured, so no memory (memorywiki hub use SLUG --token TOKEN)"
    project = project_of(cwd_of(data))
    if event == "session-start":
        body: dict[str, object] = {
            "kind": "start",
            "project": project,
            "tool": tool,
            "session_id": session_id_of(tool, data),
        }
        timeout = cfg.settings["start_timeout"]
    else:
        prompt = data.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return "", None
        body = {"kind": "prompt", "prompt": prompt[:4000], "project": project}
        timeout = cfg.settings["prompt_timeout"]
    if cfg.settings["max_tokens"] >= 1:
        body["max_tokens"] = int(cfg.settings["max_tokens"])
    status, answer = lean.call(cfg, "POST", lean.hub_path(cfg, "/agent-context"), body, timeout)
    if status != 200:
        raise lean.HookError(f"the server answered {status}: {lean.error_text(status, answer)}")
    found_text, found_tokens, found_sources = answer.get("text"), answer.get("tokens"), answer.get("sources")
    text = found_text if isinstance(found_text, str) else ""
    tokens = found_tokens if isinstance(found_tokens, int) else 0
    sources = found_sources if isinstance(found_sources, list) else []
    if not text:
        message = None
    elif event == "session-start":
        name = (project or {}).get("name") or "this project"
        message = f"Memory.Wiki: {tokens} tokens of memory for {name} from hub {cfg.hub} ({len(sources)} sources)"
    else:
        message = f"Memory.Wiki: +{tokens} tokens from hub {cfg.hub} ({len(sources)} passages)"
    if event == "session-start" and not cfg.token:
        message = (
            ((message + "; ") if message else "Memory.Wiki: ")
            + f"no token for hub {cfg.hub}: sessions are kept here until one is set (memorywiki hub use {cfg.hub} --token TOKEN)"
        )
    return text, message


# ---- session end and compaction: a detached capture --------------------------------------------


def spool_dir() -> str:
    return os.path.join(lean.state_dir(), "spool")


def _spool_name(tool: str, session_id: str) -> str:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in session_id)[:120]
    return f"{tool}--{safe}.json"


def spool(tool: str, event: str, data: dict[str, object]) -> str | None:
    """Keep what the capture needs (never the transcript: it stays in the tool's own file) until
    the capture has it on the server. A later event of the same session replaces it."""
    session_id = session_id_of(tool, data)
    if not session_id:
        return None
    folder = spool_dir()
    path = os.path.join(folder, _spool_name(tool, session_id))
    entry = {
        "tool": tool,
        "event": event,
        "session_id": session_id,
        "transcript_path": data.get("transcript_path") if isinstance(data.get("transcript_path"), str) else None,
        "cwd": cwd_of(data),
        "at": time.time(),
    }
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".{_spool_name(tool, session_id)}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(lean.dumps(entry))
    os.replace(tmp, path)
    return path


def capture_command(tool: str, *args: str) -> list[str]:
    """The capture's command: the package as installed, with everything it imports."""
    return [sys.executable, "-m", "memorywiki.adapters.hooks", tool, "capture-spooled", *args]


def detach(tool: str, *args: str, wait: bool = False) -> None:
    """Start the capture in a child of its own session: it outlives the tool's exit and the
    hook's time limit, and its output goes to the log, never to the tool. os.posix_spawn
    starts it; subprocess, whose import costs a hook more than the spawn, only where there is
    no posix_spawn."""
    folder = lean.state_dir()
    os.makedirs(folder, exist_ok=True)
    log_fd = os.open(os.path.join(folder, "hooks.log"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    command = capture_command(tool, *args)
    try:
        try:
            pid = os.posix_spawn(
                command[0],
                command,
                os.environ,
                file_actions=[
                    (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                    (os.POSIX_SPAWN_DUP2, log_fd, 1),
                    (os.POSIX_SPAWN_DUP2, log_fd, 2),
                ],
                setsid=True,
            )
        except (AttributeError, NotImplementedError, TypeError):  # no posix_spawn, or no setsid in it
            import subprocess

            child = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log_fd,
                stderr=log_fd,
                start_new_session=True,
                close_fds=True,
            )
            if wait:
                child.wait()
            return
        if wait:
            os.waitpid(pid, 0)
    finally:
        os.close(log_fd)


def _capture(tool: str, event: str, data: dict[str, object]) -> str | None:
    path = spool(tool, event, data)
    if path is None:
        return "Memory.Wiki: the tool gave no session id; this session is not captured"
    # MEMORYWIKI_HOOK_FOREGROUND, for debugging: the capture is done before the hook returns
    detach(tool, path, wait=bool(os.environ.get("MEMORYWIKI_HOOK_FOREGROUND")))
    return None


def _flush_spool_in_background(tool: str) -> None:
    """Captures left over (the server was down, no token was set): tried again, detached."""
    try:
        waiting = any(name.endswith(".json") for name in os.listdir(spool_dir()))
    except OSError:
        return
    if waiting:
        detach(tool, "--all")


# ---- the entry point ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) >= 2 and args[1] == "capture-spooled":
        if sys.flags.no_site:  # started as the lean entry (run.py): the capture needs the package
            os.execv(sys.executable, capture_command(*args[:1], *args[2:]))
        from .capture import run_spooled

        return run_spooled(args[2:])
    if len(args) < 2 or args[1] not in EVENTS:
        sys.stderr.write(f"usage: python -m memorywiki.adapters.hooks TOOL {{{','.join(EVENTS)}}} < hook-input.json\n")
        return 0
    tool, event = args[0], args[1]
    started = time.monotonic()
    data = _input()
    text, message = "", None
    try:
        cfg = lean.load()
        if cfg.problem:
            lean.log(f"{tool} {event}: {cfg.problem}")
        if event in ("session-start", "prompt"):
            text, message = _context(tool, event, data, cfg)
            if event == "session-start":
                _flush_spool_in_background(tool)
        else:
            message = _capture(tool, event, data)
    except lean.HookError as exc:
        message = f"Memory.Wiki: {exc}; going on without it"
    except Exception as exc:  # a hook must never break the tool
        message = f"Memory.Wiki: the hook failed ({exc.__class__.__name__}: {exc}); going on without it"
    elapsed = (time.monotonic() - started) * 1000
    lean.log(f"{tool} {event}: {elapsed:.0f} ms" + (f"; {message}" if message else ""))
    out = render(tool, event, text, message)
    if out:  # UTF-8 whatever the locale: the tools read JSON
        sys.stdout.buffer.write((out + "\n").encode("utf-8"))
        sys.stdout.buffer.flush()
    return 0
