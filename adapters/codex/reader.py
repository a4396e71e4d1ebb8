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


class _Reading:
    """What reading a rollout has gathered so far: the markdown, the session's meta, and the
    texts already rendered in the current run of each role (the same message is recorded both
    as an event and as a response item)."""

    def __init__(self) -> None:
        self.md = MarkdownBuilder()
        self.meta: dict[str, Any] = {}
        self.cwd: str | None = None
        self.started: str | None = None
        self.recent: dict[str, set[str]] = {USER: set(), ASSISTANT: set()}
        self.compactions = 0

    def say(self, role: str, text: str) -> None:
        key = _norm(text)
        if not key:
            return
        if key in self.recent[role]:
            return
        self.recent[role].add(key)
        self.recent[ASSISTANT if role == USER else USER].clear()
        self.md.text(role, text)

    def tool(self, name: str, value: Any) -> None:
        self.md.tool(tool_line(name, value))
        self.recent[USER].clear()
        self.recent[ASSISTANT].clear()

    def record(self, obj: dict[str, Any]) -> None:
        rtype = obj.get("type")
        payload = obj.get("payload")
        if not isinstance(payload, dict):
            return
        if self.started is None and isinstance(obj.get("timestamp"), str):
            self.started = obj["timestamp"]
        if rtype == "session_meta":
            if not self.meta:
                self.meta = payload
                self.cwd = payload.get("cwd") or self.cwd
        elif rtype == "turn_context":
            self.cwd = self.cwd or payload.get("cwd")
        elif rtype == "compacted":
            self.compactions += 1
        elif rtype == "event_msg":
            self._event(payload)
        elif rtype == "response_item":
            self._item(payload)

    def _event(self, payload: dict[str, Any]) -> None:
        ptype = payload.get("type")
        if ptype == "user_message" and isinstance(payload.get("message"), str):
            self.say(USER, _clean_user(payload["message"]))
        elif ptype == "agent_message" and isinstance(payload.get("message"), str):
            self.say(ASSISTANT, strip_injected(payload["message"]))

    def _item(self, payload: dict[str, Any]) -> None:
        ptype = payload.get("type")
        if ptype == "message":
            role = payload.get("role")
            for text in _texts(payload.get("content")):
                if role == "user":
                    self.say(USER, _clean_user(text))
                elif role == "assistant":
                    self.say(ASSISTANT, strip_injected(text))
                # developer / system messages are instructions, not conversation
        elif ptype == "function_call":
            self.tool(str(payload.get("name") or "function"), payload.get("arguments"))
        elif ptype == "custom_tool_call":
            self.tool(str(payload.get("name") or "tool"), payload.get("input"))
        elif ptype == "local_shell_call":
            self.tool("shell", _object(payload.get("action")).get("command"))
        elif ptype == "web_search_call":
            action = _object(payload.get("action"))
            self.tool("web_search", action.get("query") or action)
        # reasoning (encrypted), *_output and unknown payload types are not rendered


def read_session(path: Path) -> Transcript:
    path = Path(path)
    reading = _Reading()
    for _, obj in iter_jsonl(path):
        reading.record(obj)
    meta = reading.meta
    git = _object(meta.get("git"))
    session_id = meta.get("id") if isinstance(meta.get("id"), str) else None
    if not session_id:
        stem = path.stem  # rollout-YYYY-MM-DDThh-mm-ss-<uuid>
        session_id = stem[len("rollout-") + 20 :] if stem.startswith("rollout-") else stem
    return Transcript(
        markdown=reading.md.build(),
        tool=TOOL,
        session_id=session_id,
        cwd=reading.cwd,
        git_branch=git.get("branch") or None,
        started_at=meta.get("timestamp") or reading.started,
        title=None,
        path=str(path),
        turns=reading.md.turns,
        extra={"cli_version": meta.get("cli_version"), "compactions": reading.compactions},
    )
