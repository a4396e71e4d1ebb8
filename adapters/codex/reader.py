"""Read Codex CLI rollouts ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl).

Format notes: each line is `{"timestamp", "type", "payload"}`;
`session_meta` first (id, cwd, git.branch), then `turn_context`, `response_item`
(message / reasoning / function_call / custom_tool_call / local_shell_call / …),
`event_msg` (user_message / agent_message / …) and `compacted`. User and assistant text is
written twice (event_msg and response_item) by older versions, so it is de-duplicated;
0.171 writes event_msg item_completed instead. AGENTS.md, <environment_context> and the
<skill> text attached for `$skill-name` arrive as role "user" messages and are dropped. Unknown
variants are ignored, malformed lines skipped; the file is streamed line by line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memorywiki.adapters.common import (
    ASSISTANT,
    USER,
    MarkdownBuilder,
    Transcript,
    iter_jsonl,
    newest_first,
    same_path,
    strip_injected,
    tool_line,
)

TOOL = "codex"
_INJECTED_PREFIXES = (
    "# AGENTS.md instructions for",
    "<environment_context>",
    "<user_instructions>",
    "<INSTRUCTIONS>",
    "<permissions instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
)


def codex_home(home: Path, env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else Path(home) / ".codex"


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _session_meta(path: Path) -> dict[str, Any]:
    for n, (_, obj) in enumerate(iter_jsonl(path)):
        payload = obj.get("payload")
        if obj.get("type") == "session_meta" and isinstance(payload, dict):
            return payload
        if n >= 5:
            break
    return {}


def find_session(
    session_id: str | None,
    cwd: Path,
    home: Path,
    env: Mapping[str, str] | None = None,
) -> Path | None:
    """The rollout for `session_id` (default $CODEX_THREAD_ID), else the newest rollout whose
    session_meta.cwd is `cwd`."""
    env = os.environ if env is None else env
    session_id = (session_id or env.get("CODEX_THREAD_ID") or "").strip() or None
    root = codex_home(Path(home), env)
    dirs = [root / "sessions", root / "archived_sessions"]
    if session_id:
        if "/" in session_id or "\\" in session_id or "*" in session_id:
            return None
        for d in dirs:
            if d.is_dir():
                hits = newest_first(d.rglob(f"rollout-*{session_id}.jsonl"))
                if hits:
                    return hits[0]
        return None
    sessions = root / "sessions"
    if not sessions.is_dir():
        return None
    for path in newest_first(sessions.rglob("rollout-*.jsonl"))[:500]:
        if same_path(_session_meta(path).get("cwd"), cwd):
            return path
    return None


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    out = []
    if isinstance(content, list):
        for part in content:
            if not isinstance(part, dict):
                continue
            if part.get("type") in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
                out.append(part["text"])
            elif part.get("type") in ("input_image", "image"):
                out.append("*[image]*")
    return out


def _clean_user(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("# AGENTS.md instructions for"):
        return ""
    if stripped.startswith("<skill>") and stripped.endswith("</skill>"):
        return ""  # a skill's SKILL.md, attached when the user typed $name (codex 0.171)
    return strip_injected(text)


def _norm(text: str) -> str:
    return " ".join(text.split())


def read_session(path: Path) -> Transcript:
    path = Path(path)
    md = MarkdownBuilder()
    meta: dict[str, Any] = {}
    cwd: str | None = None
    started: str | None = None
    # De-duplication: texts already rendered in the current run of this role.
    recent: dict[str, set[str]] = {USER: set(), ASSISTANT: set()}
    compactions = 0

    def say(role: str, text: str) -> None:
        key = _norm(text)
        if not key:
            return
        if key in recent[role]:
            return
        recent[role].add(key)
        recent[ASSISTANT if role == USER else USER].clear()
        md.text(role, text)

    for _, obj in iter_jsonl(path):
        rtype = obj.get("type")
        payload = obj.get("payload")
        if not isinstance(payload, dict):
            continue
        if started is None and isinstance(obj.get("timestamp"), str):
            started = obj["timestamp"]
        if rtype == "session_meta":
            if not meta:
                meta = payload
                cwd = payload.get("cwd") or cwd
            continue
        if rtype == "turn_context":
            cwd = cwd or payload.get("cwd")
            continue
        if rtype == "compacted":
            compactions += 1
            continue
        ptype = payload.get("type")
        if rtype == "event_msg":
            if ptype == "user_message" and isinstance(payload.get("message"), str):
                say(USER, _clean_user(payload["message"]))
            elif ptype == "agent_message" and isinstance(payload.get("message"), str):
                say(ASSISTANT, strip_injected(payload["message"]))
            continue
        if rtype != "response_item":
            continue
        if ptype == "message":
            role = payload.get("role")
            for text in _texts(payload.get("content")):
                if role == "user":
                    say(USER, _clean_user(text))
                elif role == "assistant":
                    say(ASSISTANT, strip_injected(text))
                # developer / system messages are instructions, not conversation
        elif ptype == "function_call":
            md.tool(tool_line(str(payload.get("name") or "function"), payload.get("arguments")))
            recent[USER].clear()
            recent[ASSISTANT].clear()
        elif ptype == "custom_tool_call":
            md.tool(tool_line(str(payload.get("name") or "tool"), payload.get("input")))
            recent[USER].clear()
            recent[ASSISTANT].clear()
        elif ptype == "local_shell_call":
            action = _object(payload.get("action"))
            md.tool(tool_line("shell", action.get("command")))
            recent[USER].clear()
            recent[ASSISTANT].clear()
        elif ptype == "web_search_call":
            action = _object(payload.get("action"))
            md.tool(tool_line("web_search", action.get("query") or action))
            recent[USER].clear()
            recent[ASSISTANT].clear()
        # reasoning (encrypted), *_output and unknown payload types are not rendered

    git = _object(meta.get("git"))
    session_id = meta.get("id") if isinstance(meta.get("id"), str) else None
    if not session_id:
        stem = path.stem  # rollout-YYYY-MM-DDThh-mm-ss-<uuid>
        session_id = stem[len("rollout-") + 20 :] if stem.startswith("rollout-") else stem
    return Transcript(
        markdown=md.build(),
        tool=TOOL,
        session_id=session_id,
        cwd=cwd,
        git_branch=git.get("branch") or None,
        started_at=meta.get("timestamp") or started,
        title=None,
        path=str(path),
        turns=md.turns,
        extra={"cli_version": meta.get("cli_version"), "compactions": compactions},
    )
