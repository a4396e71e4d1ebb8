"""Read aider's `.aider.chat.history.md` (verified against aider-chat 0.86.2, aider/io.py).

The file is append-only markdown. Each run starts with `# aider chat started at
YYYY-MM-DD HH:MM:SS`; user input lines are prefixed `#### ` (ending in two spaces), tool and
system output lines are prefixed `> `, and everything else is the assistant's reply. The
current session is the last header block. `####` slash commands become one-line summaries,
`>` output is dropped except "Applied edit" / "Commit" lines, which are kept as one line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from memorywiki.adapters.common import (
    ASSISTANT,
    USER,
    MarkdownBuilder,
    Transcript,
    code_span,
    git_branch_of,
    one_line,
)

TOOL = "aider"
HISTORY_NAME = ".aider.chat.history.md"
_HEADER_RE = re.compile(r"^# aider chat started at (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\s*$")
_HEADER_PREFIX = b"# aider chat started at "
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# Slash commands whose text is a message to the model.
_MESSAGE_COMMANDS = ("/ask", "/code", "/architect", "/context", "/chat-mode")
_KEEP_OUTPUT_RE = re.compile(r"^(Applied edit to .+|Commit [0-9a-f]{7,} .+)$")


def _git_root(cwd: Path) -> Path | None:
    try:
        d = cwd.resolve()
    except OSError:
        return None
    for candidate in (d, *d.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def find_session(
    session_id: str | None,
    cwd: Path,
    home: Path,
    env: Mapping[str, str] | None = None,
) -> Path | None:
    """The chat history file aider writes for `cwd`: $AIDER_CHAT_HISTORY_FILE, else
    <git root>/.aider.chat.history.md, else ./.aider.chat.history.md. (`session_id` selects
    a block in read_session, not a file; `home` is unused.)"""
    env = os.environ if env is None else env
    override = env.get("AIDER_CHAT_HISTORY_FILE")
    cwd = Path(cwd)
    if override:
        p = Path(override)
        p = p if p.is_absolute() else cwd / p
        return p if p.is_file() else None
    root = _git_root(cwd)
    for base in ([root] if root else []) + [cwd]:
        p = base / HISTORY_NAME
        if p.is_file():
            return p
    return None


def _block_offset(path: Path, session_id: str | None) -> tuple[int, str | None]:
    """Byte offset of the last `# aider chat started at` header (or the one whose timestamp
    equals `session_id`), scanning the file line by line."""
    offset, stamp = 0, None
    pos = 0
    with open(path, "rb") as fh:
        for raw in fh:
            if raw.startswith(_HEADER_PREFIX):
                m = _HEADER_RE.match(raw.decode("utf-8", "replace").rstrip("\r\n"))
                if m:
                    if session_id is None or m.group(1) == session_id:
                        offset, stamp = pos, m.group(1)
                        if session_id is not None:
                            break
            pos += len(raw)
    return offset, stamp


def _strip_break(line: str) -> str:
    """Drop the two-space markdown line break aider appends."""
    return line[:-2] if line.endswith("  ") else line.rstrip()


def _user_turn(md: MarkdownBuilder, text: str) -> None:
    """A block of `####` lines: a message, or a one-line summary of a command."""
    first = text.split("\n", 1)[0].strip()
    if first.startswith("/"):
        cmd = first.split(None, 1)[0]
        if cmd in _MESSAGE_COMMANDS:
            rest = text.strip()[len(cmd) :].strip()
            if rest:
                md.text(USER, rest)
            return
        md.tool(f"- Command {code_span(one_line(text, 100))}", role=USER)
        return
    if first.startswith("!"):
        md.tool(f"- Command {code_span(one_line(text, 100))}", role=USER)
        return
    md.text(USER, text)


class _Block:
    """One session block as it is read, line by line: the user's `####` lines and the
    assistant's reply gather until the other side speaks."""

    def __init__(self) -> None:
        self.md = MarkdownBuilder()
        self.user_lines: list[str] = []
        self.asst_lines: list[str] = []
        self.in_fence: str | None = None

    def flush_user(self) -> None:
        if not self.user_lines:
            return
        text = "\n".join(self.user_lines).strip("\n")
        self.user_lines.clear()
        if text.strip():
            _user_turn(self.md, text)

    def flush_assistant(self) -> None:
        if not self.asst_lines:
            return
        text = "\n".join(self.asst_lines).strip("\n")
        self.asst_lines.clear()
        self.md.text(ASSISTANT, text)

    def line(self, line: str) -> None:
        if line.startswith("-*- mode:") and not self.md.turns and not self.asst_lines:
            return
        # Inside an assistant code fence, only aider-style lines (ending with the
        # two-space break) count as user/tool lines.
        strict = self.in_fence is not None
        if (line.startswith("#### ") or line == "####") and (not strict or line.endswith("  ")):
            self.flush_assistant()
            self.in_fence = None
            self.user_lines.append(_strip_break(line[5:]) if line != "####" else "")
            return
        if (line.startswith("> ") or line == ">") and (not strict or line.endswith("  ")):
            self.flush_assistant()
            self.flush_user()
            self.in_fence = None
            out = _strip_break(line[2:]).strip()
            if _KEEP_OUTPUT_RE.match(out):
                self.md.tool(f"- {one_line(out, 120)}")
            return
        self.assistant_line(line)

    def assistant_line(self, line: str) -> None:
        if self.user_lines:
            self.flush_user()
            if not line.strip():
                return
        m = _FENCE_RE.match(line)
        if m:
            if self.in_fence is None:
                self.in_fence = m.group(1)
            elif m.group(1)[0] == self.in_fence[0] and len(m.group(1)) >= len(self.in_fence):
                self.in_fence = None
        self.asst_lines.append(line)


def read_session(path: Path, session_id: str | None = None) -> Transcript:
    """Render the last session block (or the block started at `session_id`,
    a `YYYY-MM-DD HH:MM:SS` timestamp)."""
    path = Path(path)
    offset, stamp = _block_offset(path, session_id)
    block = _Block()
    with open(path, encoding="utf-8", errors="replace") as fh:
        fh.seek(offset)
        first = True
        for raw in fh:
            line = raw.rstrip("\r\n")
            if first:
                first = False
                if _HEADER_RE.match(line):
                    continue
            elif _HEADER_RE.match(line) and block.in_fence is None:
                break  # the next session (only when a specific block was requested)
            block.line(line)
        block.flush_user()
        block.flush_assistant()

    return Transcript(
        markdown=block.md.build(),
        tool=TOOL,
        session_id=stamp,
        cwd=str(path.parent),
        git_branch=git_branch_of(path.parent),
        started_at=stamp,
        title=None,
        path=str(path),
        turns=block.md.turns,
    )
