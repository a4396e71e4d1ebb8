"""Read Claude Code session transcripts (~/.claude/projects/<encoded cwd>/<session>.jsonl).

Format notes: one JSON record per line; `user` / `assistant`
records carry `uuid` / `parentUuid` (a DAG after rewinds and forks), `sessionId`, `cwd`,
`gitBranch`, `timestamp`; assistant messages are written one content block per line and
share `message.id`. Unknown record types are ignored, malformed lines skipped.

Two passes over the file keep memory bounded: pass 1 records only the uuid -> parent links
(as line numbers) to find the active branch from the newest leaf; pass 2 renders the lines
on that branch.
"""

from __future__ import annotations

import os
import re
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

TOOL = "claude-code"
_CONVERSATIONAL = ("user", "assistant")
# Local commands whose invocation is noise in a transcript.
_QUIET_COMMANDS = {
    "clear",
    "compact",
    "model",
    "cost",
    "help",
    "config",
    "status",
    "exit",
    "quit",
    "resume",
    "login",
    "logout",
    "ide",
    "permissions",
    "mcp",
    "doctor",
    "context",
    "usage",
    "theme",
    "vim",
    "terminal-setup",
    "hooks",
    "agents",
    "memory",
    "rewind",
    "export",
    "statusline",
}
_CMD_NAME_RE = re.compile(r"<command-name>\s*/?([^<]*?)\s*</command-name>", re.DOTALL)
_CMD_ARGS_RE = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
_BASH_INPUT_RE = re.compile(r"<bash-input>(.*?)</bash-input>", re.DOTALL)


def encode_cwd(cwd: str | os.PathLike[str]) -> str:
    """Claude Code's project directory name: every non [A-Za-z0-9] character becomes '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", os.fspath(cwd))


def projects_dir(home: Path, env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = env.get("CLAUDE_CONFIG_DIR")
    return (Path(base) if base else Path(home) / ".claude") / "projects"


def _recorded_cwd(path: Path, max_lines: int = 50) -> str | None:
    """The `cwd` recorded in the first records of a transcript."""
    for n, (_, obj) in enumerate(iter_jsonl(path)):
        cwd = obj.get("cwd")
        if isinstance(cwd, str) and cwd:
            return cwd
        if n >= max_lines:
            break
    return None


def _candidates(directory: Path) -> list[Path]:
    try:
        files = [p for p in directory.glob("*.jsonl") if not p.name.startswith("agent-")]
    except OSError:
        return []
    return newest_first(files)


def find_session(
    session_id: str | None,
    cwd: Path,
    home: Path,
    env: Mapping[str, str] | None = None,
) -> Path | None:
    """The transcript for `session_id`, else the newest one whose recorded cwd is `cwd`.

    `session_id` falls back to $CLAUDE_CODE_SESSION_ID (set in Bash-tool subprocesses).
    """
    env = os.environ if env is None else env
    session_id = (session_id or env.get("CLAUDE_CODE_SESSION_ID") or "").strip() or None
    root = projects_dir(Path(home), env)
    if not root.is_dir():
        return None
    if session_id:
        if "/" in session_id or "\\" in session_id or session_id.startswith("."):
            return None
        preferred = root / encode_cwd(cwd) / f"{session_id}.jsonl"
        if preferred.is_file():
            return preferred
        hits = newest_first(root.glob(f"*/{session_id}.jsonl"))
        return hits[0] if hits else None
    own = root / encode_cwd(cwd)
    for path in _candidates(own):
        if same_path(_recorded_cwd(path), cwd):
            return path
    # The directory name can differ (long paths, CLAUDE_CODE_PROJECT_DIR_NAME): scan all.
    try:
        dirs = [d for d in root.iterdir() if d.is_dir() and d != own]
    except OSError:
        return None
    files = newest_first(p for d in dirs for p in _candidates(d))
    for path in files[:500]:
        if same_path(_recorded_cwd(path), cwd):
            return path
    return None


# --- reading ---------------------------------------------------------------------------------


def _active_lines(path: Path) -> set[int] | None:
    """Line numbers on the active branch, or None when the file has no parent links
    (old transcripts: render every conversational line in file order)."""
    index: dict[str, int] = {}
    parents: dict[int, str] = {}
    logical: dict[int, str] = {}
    leaf: int | None = None
    has_links = False
    for idx, obj in iter_jsonl(path):
        uuid = obj.get("uuid")
        if not isinstance(uuid, str) or obj.get("isSidechain"):
            continue
        if uuid in index:  # duplicate uuid: the first one wins
            continue
        index[uuid] = idx
        parent = obj.get("parentUuid")
        if isinstance(parent, str):
            parents[idx] = parent
            has_links = True
        elif isinstance(obj.get("logicalParentUuid"), str):
            # compact_boundary: the chain restarts; keep the pre-compaction history
            logical[idx] = obj["logicalParentUuid"]
        if obj.get("type") in _CONVERSATIONAL:
            leaf = idx
    if not has_links or leaf is None:
        return None
    active: set[int] = set()
    cur: int | None = leaf
    while cur is not None and cur not in active:
        active.add(cur)
        parent = parents.get(cur) or logical.get(cur)
        cur = index.get(parent) if parent else None
    return active


def _user_text(content: Any) -> tuple[list[str], list[str]]:
    """(texts, command lines) from a user message's content."""
    texts: list[str] = []
    commands: list[str] = []
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        return texts, commands
    for block in blocks:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text":
            raw = block.get("text") or ""
            if not isinstance(raw, str):
                continue
            m = _CMD_NAME_RE.search(raw)
            if m:
                name = m.group(1).strip()
                args_m = _CMD_ARGS_RE.search(raw)
                args = args_m.group(1).strip() if args_m else ""
                if name and name.lstrip("/") not in _QUIET_COMMANDS:
                    commands.append(f"/{name.lstrip('/')} {args}".rstrip())
            b = _BASH_INPUT_RE.search(raw)
            if b:
                commands.append("! " + b.group(1).strip())
                raw = _BASH_INPUT_RE.sub("", raw)
            text = strip_injected(raw)
            if text:
                texts.append(text)
        elif btype == "image":
            texts.append("*[image]*")
        # tool_result blocks: the call itself is summarised on the assistant side
    return texts, commands


class _Reading:
    """What reading a transcript has gathered so far: the markdown, the session's meta, its
    title, and what was seen already (records and blocks are written again on resume)."""

    def __init__(self, active: set[int] | None):
        self.active = active
        self.md = MarkdownBuilder()
        self.meta: dict[str, Any] = {"session_id": None, "cwd": None, "git_branch": None, "started_at": None}
        self.title: str | None = None
        self.summary_title: str | None = None
        self.title_is_custom = False
        self.seen_blocks: set[tuple[Any, int]] = set()
        self.seen_uuids: set[str] = set()
        self.version: str | None = None
        self.compactions = 0

    def record(self, idx: int, obj: dict[str, Any]) -> None:
        rtype = obj.get("type")
        if self._titled(rtype, obj):
            return
        if rtype == "system" and obj.get("subtype") == "compact_boundary":
            if self.active is None or idx in self.active:
                self.compactions += 1
            return
        if rtype not in _CONVERSATIONAL or obj.get("isSidechain"):
            return
        if self.active is not None and idx not in self.active:
            return
        uuid = obj.get("uuid")
        if isinstance(uuid, str):
            if uuid in self.seen_uuids:
                return
            self.seen_uuids.add(uuid)
        self._note_meta(obj)
        message = obj.get("message")
        if not isinstance(message, dict):
            return
        if rtype == "user":
            self._user(obj, message.get("content"))
        else:
            self._assistant(message, uuid or str(idx))

    def _titled(self, rtype: Any, obj: dict[str, Any]) -> bool:
        """Take the title a record gives (a custom one wins over the AI's); True if it was one."""
        if rtype == "ai-title" and isinstance(obj.get("aiTitle"), str):
            self.title = self.title if self.title and self.title_is_custom else obj["aiTitle"]
            return True
        if rtype == "custom-title" and isinstance(obj.get("customTitle"), str):
            self.title = obj["customTitle"]
            self.title_is_custom = True
            return True
        if rtype == "summary" and isinstance(obj.get("summary"), str):
            self.summary_title = obj["summary"]
            return True
        return False

    def _note_meta(self, obj: dict[str, Any]) -> None:
        for key, field in (
            ("session_id", "sessionId"),
            ("cwd", "cwd"),
            ("git_branch", "gitBranch"),
            ("started_at", "timestamp"),
        ):
            if self.meta[key] is None and isinstance(obj.get(field), str) and obj.get(field):
                self.meta[key] = obj[field]
        self.version = obj.get("version") or self.version

    def _user(self, obj: dict[str, Any], content: Any) -> None:
        if obj.get("isMeta"):
            return
        if obj.get("isCompactSummary"):
            if self.md.turns:  # the full earlier history is rendered above
                self.md.text(ASSISTANT, "*[Context was compacted here; the conversation continues.]*")
            else:  # history before the compaction is not in this file: keep the summary
                texts, _ = _user_text(content)
                self.md.text(USER, "*[Summary of the earlier conversation]*\n\n" + "\n\n".join(texts))
            return
        texts, commands = _user_text(content)
        for command in commands:
            self.md.text(USER, f"`{command}`" if "`" not in command else command)
        for text in texts:
            self.md.text(USER, text)

    def _assistant(self, message: dict[str, Any], fallback_id: Any) -> None:
        """One block per line in current versions, several in old ones."""
        msg_id = message.get("id") if isinstance(message.get("id"), str) else fallback_id
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            if not isinstance(block, dict):
                continue
            block_key = (msg_id, hash(repr(sorted(block.items(), key=lambda kv: kv[0]))))
            if block_key in self.seen_blocks:  # the same block re-written (streaming/resume)
                continue
            self.seen_blocks.add(block_key)
            btype = block.get("type")
            if btype == "text" and isinstance(block.get("text"), str):
                self.md.text(ASSISTANT, strip_injected(block["text"]))
            elif btype in ("tool_use", "server_tool_use"):
                self.md.tool(tool_line(str(block.get("name") or "tool"), block.get("input")))
            # thinking / redacted_thinking and unknown blocks are not part of the record
        if len(self.seen_blocks) > 20000:  # bound memory on huge sessions; dupes are adjacent
            self.seen_blocks.clear()


def read_session(path: Path) -> Transcript:
    path = Path(path)
    reading = _Reading(_active_lines(path))
    for idx, obj in iter_jsonl(path):
        reading.record(idx, obj)
    meta = reading.meta
    return Transcript(
        markdown=reading.md.build(),
        tool=TOOL,
        session_id=meta["session_id"] or path.stem,
        cwd=meta["cwd"],
        # Outside a git repo (or on a detached HEAD) Claude Code records gitBranch "HEAD".
        git_branch=None if meta["git_branch"] in (None, "", "HEAD") else meta["git_branch"],
        started_at=meta["started_at"],
        title=reading.title or reading.summary_title,
        path=str(path),
        turns=reading.md.turns,
        extra={"version": reading.version, "compactions": reading.compactions},
    )
