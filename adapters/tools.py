"""The one registry of coding tools: canonical names, the aliases people type, and what each
tool supports. `memorywiki install`, `uninstall`, `capture --agent`, the skill renderer and the
session readers all resolve a tool name here, so an alias that works for one works for all.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class Tool:
    name: str  # canonical: what manifests, meta.tool and messages use
    label: str  # how people write it
    aliases: tuple[str, ...]
    reader: str  # module with find_session(session_id, cwd, home, env=None) and read_session(path)
    mcp_client: bool  # False: nothing to register an MCP server with


REGISTRY: dict[str, Tool] = {
    t.name: t
    for t in (
        Tool(
            "claude-code",
            "Claude Code",
            ("cc", "claude", "claude_code", "claudecode"),
            "memorywiki.adapters.claude_code.reader",
            mcp_client=True,
        ),
        Tool("cursor", "Cursor", (), "memorywiki.adapters.cursor.reader", mcp_client=True),
        Tool("codex", "Codex CLI", ("codex-cli", "codex_cli"), "memorywiki.adapters.codex.reader", mcp_client=True),
        Tool("aider", "Aider", ("aider-chat",), "memorywiki.adapters.aider.reader", mcp_client=False),
    )
}

TOOLS: tuple[str, ...] = tuple(REGISTRY)
ALIASES: dict[str, str] = {alias: t.name for t in REGISTRY.values() for alias in t.aliases}
_SHOWN = [f"{t.name} ({t.aliases[0]})" if t.aliases else t.name for t in REGISTRY.values()]
TOOLS_HELP = ", ".join(_SHOWN[:-1]) + f" or {_SHOWN[-1]}"  # e.g. "claude-code (cc), cursor, ..."


def normalize_tool(tool: str) -> str:
    """The canonical tool name for a name or alias (case-insensitive); ValueError if unknown."""
    key = (tool or "").strip().lower()
    key = ALIASES.get(key, key)
    if key not in REGISTRY:
        raise ValueError(f"unknown tool {tool!r}; expected one of: {', '.join(TOOLS)}")
    return key


def get_tool(tool: str) -> Tool:
    return REGISTRY[normalize_tool(tool)]


def get_reader(tool: str) -> ModuleType:
    """The session reader module of `tool`."""
    return importlib.import_module(get_tool(tool).reader)
