"""`python -m memorywiki.adapters.hooks TOOL EVENT`: one hook run, as the tool starts it.

EVENT is `session-start` (the project's memory, as context), `prompt` (the passages that
bear on the prompt), `pre-compact` or `session-end` (the session saved as its page, by a
detached child). The tool's JSON comes on stdin; what it should inject goes to stdout in the
tool's own shape. A hook never fails the tool: whatever happens it exits 0, within its time
limit, and says in one line what it could not do.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

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
        data = json.loads(raw) if raw.strip() else {}
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
        return json.dumps({"additional_context": text}, ensure_ascii=False)
    out: dict[str, object] = {}
    if text and event in EVENT_NAMES.get(tool, {}):
        out["hookSpecificOutput"] = {"hookEventName": EVENT_NAMES[tool][event], "additionalContext": text}
    if message:
        out["systemMessage"] = message
    return json.dumps(out, ensure_ascii=False) if out else ""


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


def spool_dir() -> Path:
    return lean.state_dir() / "spool"


def _spool_name(tool: str, session_id: str) -> str:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in session_id)[:120]
    return f"{tool}--{safe}.json"


def spool(tool: str, event: str, data: dict[str, object]) -> Path | None:
    """Keep what the capture needs (never the transcript: it stays in the tool's own file) until
    the capture has it on the server. A later event of the same session replaces it."""
    session_id = session_id_of(tool, data)
    if not session_id:
        return None
    path = spool_dir() / _spool_name(tool, session_id)
    entry = {
        "tool": tool,
        "event": event,
        "session_id": session_id,
        "transcript_path": data.get("transcript_path") if isinstance(data.get("transcript_path"), str) else None,
        "cwd": cwd_of(data),
        "at": time.time(),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(entry), encoding="utf-8")
    os.replace(tmp, path)
    return path


def detach(tool: str, *args: str) -> None:
    """Start the capture in a child of its own session: it outlives the tool's exit and the
    hook's time limit, and its output goes to the log, never to the tool."""
    import subprocess  # only here: its import costs the other events' answers

    log_path = lean.state_dir() / "hooks.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "a", encoding="utf-8") as log_file:
        subprocess.Popen(
            [sys.executable, "-m", "memorywiki.adapters.hooks", tool, "capture-spooled", *args],
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=log_file,
            start_new_session=True,
            close_fds=True,
        )


def _capture(tool: str, event: str, data: dict[str, object]) -> str | None:
    path = spool(tool, event, data)
    if path is None:
        return "Memory.Wiki: the tool gave no session id; this session is not captured"
    if os.environ.get("MEMORYWIKI_HOOK_FOREGROUND"):  # for debugging: capture before returning
        from .capture import run_spooled

        run_spooled([str(path)])
    else:
        detach(tool, str(path))
    return None


def _flush_spool_in_background(tool: str) -> None:
    """Captures left over (the server was down, no token was set): tried again, detached."""
    try:
        waiting = any(p.suffix == ".json" for p in spool_dir().iterdir())
    except OSError:
        return
    if waiting:
        detach(tool, "--all")


# ---- the entry point ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) >= 2 and args[1] == "capture-spooled":
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
    if out:
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    return 0
