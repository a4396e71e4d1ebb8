"""The detached half of a session's end: read the transcript the tool wrote, and save it as the
session's page (PUT /api/hub/{slug}/agent-sessions/{tool}/{session_id}).

Each spooled session (main.spool) is captured under a lock of its own, so a compaction's
capture and the session end's never run at once, and each reads the transcript when it runs:
the later one sends the longer session. A spool entry is removed once the server has the page,
or when the server refuses it for good (the reason goes to the log); while the server is down
or no token is set, it stays and the next session's start tries again.
"""

from __future__ import annotations

import fcntl
import json
import re
import time
from pathlib import Path
from typing import IO, Any

from memorywiki.adapters.common import Transcript
from memorywiki.adapters.sessions import capture_session
from memorywiki.adapters.tools import get_reader, get_tool, normalize_tool

from . import lean
from .main import spool_dir
from .project import project_of

KEEP_DAYS = 30  # a transcript older than this is gone from Claude Code anyway (cleanupPeriodDays)
LOCK_WAIT = 600.0  # seconds a capture waits for the session's other capture to finish
_TURN = re.compile(r"(?m)^## (?:User|Assistant)[ \t]*$")


class Retry(Exception):
    """Not now: the entry stays spooled."""


class Drop(Exception):
    """Never: the entry is removed, the reason logged."""


def read_transcript(entry: dict[str, Any]) -> Transcript | None:
    tool = normalize_tool(entry["tool"])
    path = entry.get("transcript_path")
    if path and Path(path).is_file() and tool in ("claude-code", "codex"):
        transcript: Transcript | None = get_reader(tool).read_session(Path(path))
        return transcript
    return capture_session(tool, entry["session_id"], cwd=Path(entry.get("cwd") or "."), home=Path.home())


def _json_size(text: str) -> int:
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8"))


def fit(markdown: str, limit: int, where: str | None) -> tuple[str, str | None]:
    """The transcript within `limit` bytes on the wire: the first turn (what was asked) and the
    latest ones that fit, and a note saying what was left out and where the whole session is."""
    if _json_size(markdown) <= limit:
        return markdown, None
    starts = [m.start() for m in _TURN.finditer(markdown)] or [0]
    turns = [markdown[a:b] for a, b in zip(starts, [*starts[1:], len(markdown)], strict=True)]
    budget = limit - 2000
    first = turns[0]
    if _json_size(first) > budget // 2:  # one turn alone too big (a pasted log): its head
        first = first[: budget // 4] + "\n\n*[… the rest of this turn is left out …]*\n\n"
    kept_tail: list[str] = []
    used = _json_size(first)
    for turn in reversed(turns[1:]):
        size = _json_size(turn)
        if used + size > budget:
            if not kept_tail:  # the last turn alone too big: its end
                tail = turn[-(budget - used) // 2 :]
                kept_tail.append("## Assistant\n\n*[… the start of this turn is left out …]*\n\n" + tail)
            break
        kept_tail.append(turn)
        used += size
    left_out = len(turns) - 1 - len(kept_tail)
    note = f"{left_out} turn{'' if left_out == 1 else 's'} in the middle left out to keep the page under {limit / 1e6:.1f} MB"
    if where:
        note += f"; the whole session is in {where}"
    middle = f"## Assistant\n\n*[… {left_out} turns left out here …]*\n\n" if left_out else ""
    return first + middle + "".join(reversed(kept_tail)), note


def _first_prompt(markdown: str) -> str | None:
    m = re.search(r"(?m)^## User[ \t]*\n+(.+)$", markdown)
    if not m:
        return None
    line = re.sub(r"[`*_#>]+", "", m.group(1)).strip()
    return line or None


def title_of(transcript: Transcript, project: dict[str, Any] | None, session_id: str) -> str:
    tool = get_tool(transcript.tool)
    title = (transcript.title or "").strip() or _first_prompt(transcript.markdown) or ""
    title = " ".join(title.split())
    if len(title) > 100:
        title = title[:99].rstrip() + "…"
    if not title:
        title = f"{tool.label} session {session_id[:8]}"
    name = (project or {}).get("name")
    return f"{name}: {title}" if name and not title.lower().startswith(name.lower()) else title


def capture_entry(entry: dict[str, Any], cfg: lean.HookConfig) -> dict[str, Any]:
    """Send one spooled session; Retry or Drop when it cannot be sent."""
    if not cfg.hub:
        raise Retry("no hub configured (memorywiki hub use SLUG --token TOKEN)")
    if not cfg.token:
        raise Retry(f"no token for hub {cfg.hub} (memorywiki hub use {cfg.hub} --token TOKEN)")
    try:
        transcript = read_transcript(entry)
    except (OSError, ValueError, LookupError) as exc:
        raise Drop(f"cannot read the session: {exc}") from None
    if transcript is None or transcript.is_empty or not transcript.markdown.strip():
        raise Drop("nothing to capture yet")
    cwd = entry.get("cwd") or transcript.cwd
    project = project_of(cwd)
    markdown, note = fit(transcript.markdown, int(cfg.settings["max_page_bytes"]), transcript.path)
    body = {
        "title": title_of(transcript, project, entry["session_id"]),
        "transcript": markdown,
        "project": project,
        "cwd": cwd,
        "git_branch": transcript.git_branch,
        "started_at": transcript.started_at,
        "note": note,
    }
    tool = normalize_tool(entry["tool"])
    path = lean.hub_path(cfg, f"/agent-sessions/{tool}/{lean.quote(entry['session_id'])}")
    try:
        status, answer = lean.call(cfg, "PUT", path, body, cfg.settings["capture_timeout"])
    except lean.HookError as exc:
        raise Retry(str(exc)) from None
    if status in (200, 201):
        return answer
    reason = f"the server answered {status}: {lean.error_text(status, answer)}"
    if status >= 500 or status in (401, 403, 404, 408, 429):
        raise Retry(reason)  # down, overloaded, or a token or hub to fix: kept for later
    raise Drop(reason)


def _locked(path: Path, wait: float) -> IO[str] | None:
    """An exclusive lock on the entry's lock file, or None when another capture keeps it
    longer than `wait` seconds."""
    lock = open(path.with_suffix(".lock"), "a")
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return lock
        except BlockingIOError:
            if time.monotonic() >= deadline:
                lock.close()
                return None
            time.sleep(0.2)


def _one(path: Path, cfg: lean.HookConfig, wait: float) -> None:
    lock = _locked(path, wait)
    if lock is None:
        return
    try:
        try:
            raw = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return  # another capture sent it
        entry = json.loads(raw)
        label = f"{entry.get('tool')} session {entry.get('session_id')}"
        try:
            saved = capture_entry(entry, cfg)
        except Retry as exc:
            if time.time() - float(entry.get("at") or 0) > KEEP_DAYS * 86400:
                lean.log(f"{label}: given up after {KEEP_DAYS} days: {exc}")
                path.unlink(missing_ok=True)
            else:
                lean.log(f"{label}: kept for later: {exc}")
            return
        except Drop as exc:
            lean.log(f"{label}: not captured: {exc}")
        else:
            lean.log(f"{label}: {saved.get('status')} {saved.get('url')} ({saved.get('turns')} turns)")
        try:  # a newer event of this session replaced the entry meanwhile: its own capture sends it
            if path.read_text(encoding="utf-8") == raw:
                path.unlink()
        except FileNotFoundError:
            pass
    except (OSError, ValueError, KeyError) as exc:
        lean.log(f"{path.name}: {exc.__class__.__name__}: {exc}")
    finally:
        lock.close()


def run_spooled(args: list[str]) -> int:
    """Capture the spooled sessions named (or `--all`, skipping those another capture holds)."""
    cfg = lean.load()
    if args == ["--all"]:
        try:
            paths = sorted(p for p in spool_dir().iterdir() if p.suffix == ".json")
        except OSError:
            return 0
        wait = 0.0
    else:
        paths, wait = [Path(a) for a in args], LOCK_WAIT
    for path in paths:
        _one(path, cfg, wait)
    try:  # lock files of sessions captured long ago (a fresh one may be held right now)
        for stale in spool_dir().glob("*.lock"):
            if not stale.with_suffix(".json").exists() and time.time() - stale.stat().st_mtime > 86400:
                stale.unlink(missing_ok=True)
    except OSError:
        pass
    return 0
