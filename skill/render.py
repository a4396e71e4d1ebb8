"""Render the /memory.wiki skill (skill/SKILL.md, the one source of truth) into each tool's
command / skill / conventions files.

`render(tool)` returns {relative path: file content}. Paths are relative to the install root
of the chosen scope (the project directory, or the user's home); paths starting with
`.codex/` are relative to $CODEX_HOME's parent layout (the installer maps `.codex/` to
$CODEX_HOME when it is set).

Per tool:
- claude-code: `.claude/commands/memory.wiki.md` (/memory.wiki) and the fallback skill
  `.claude/skills/memory-wiki/SKILL.md` (/memory-wiki; skill names allow [a-z0-9-] only).
  Arguments come in through `$ARGUMENTS` only ($0/$1 indexing changed across versions);
  `${CLAUDE_SESSION_ID}` is substituted since 2.1.9.
- cursor: `.cursor/commands/memory.wiki.md`, plain markdown (Cursor ignores frontmatter and
  has no documented argument placeholder: the typed text is appended to the prompt).
- codex: `.agents/skills/memory-wiki/SKILL.md` (invoked `$memory-wiki ...`; skills get no
  argument substitution), plus `.codex/prompts/memory.wiki.md` (`/prompts:memory.wiki`) only
  for codex-cli older than 0.117, where custom prompts still exist.
- aider: `.aider.memorywiki.md`, a read-only conventions file loaded through `read:` in
  `.aider.conf.yml` (aider has no custom slash commands; commands go through `/run`).

Every command in the files starts with `command` (`{{CLI}}` in SKILL.md): the bare
`memorywiki` by default, the installation's absolute command when the installer writes them.

Multi-line markdown reaches the CLI through a quoted heredoc, except in aider: aider 0.86.2
runs each line of a suggested ```bash block as a command of its own and ends the block at
any line starting with ```, so there the page goes on one line (`printf '%s\n' 'line' ... |`).
"""

from __future__ import annotations

import re
from importlib import resources

from memorywiki.adapters.tools import normalize_tool

SKILL_NAME = "memory-wiki"
COMMAND_NAME = "memory.wiki"
COMMAND = "memorywiki"  # the console script, as a shell whose PATH has it runs it
GENERATED_MARKER = "<!-- memorywiki:generated"
CODEX_PROMPTS_REMOVED_IN = (0, 117, 0)

CLAUDE_COMMAND = ".claude/commands/memory.wiki.md"
CLAUDE_SKILL = ".claude/skills/memory-wiki/SKILL.md"
CURSOR_COMMAND = ".cursor/commands/memory.wiki.md"
CODEX_SKILL = ".agents/skills/memory-wiki/SKILL.md"
CODEX_PROMPT = ".codex/prompts/memory.wiki.md"
AIDER_CONVENTIONS = ".aider.memorywiki.md"


def load_source() -> tuple[dict[str, str], str]:
    """(frontmatter fields, body) of skill/SKILL.md."""
    text = resources.files("memorywiki.skill").joinpath("SKILL.md").read_text(encoding="utf-8")
    m = re.match(r"^---\n(.*?)\n---\n", text, re.DOTALL)
    if not m:
        raise ValueError("skill/SKILL.md has no frontmatter")
    fields: dict[str, str] = {}
    for line in m.group(1).splitlines():
        if ":" in line and not line.startswith(" "):
            key, _, value = line.partition(":")
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            fields[key.strip()] = value
    return fields, text[m.end() :].lstrip("\n")


def _yaml_str(value: str) -> str:
    """A double-quoted YAML scalar (JSON string syntax is valid YAML)."""
    import json

    return json.dumps(value, ensure_ascii=False)


def _frontmatter(fields: dict[str, str]) -> str:
    lines = ["---"]
    for key, value in fields.items():
        if value in ("true", "false"):
            lines.append(f"{key}: {value}")
        elif key == "name":
            lines.append(f"{key}: {value}")
        else:
            lines.append(f"{key}: {_yaml_str(value)}")
    lines.append("---")
    return "\n".join(lines) + "\n\n"


_RUN_NOTES = {
    "claude-code": "Run `memorywiki` with the Bash tool.",
    "cursor": "Run `memorywiki` in the terminal (ask before running if the user's settings require it).",
    "codex": (
        "Run `memorywiki` with your shell tool. It needs network access to the Memory.Wiki "
        "server: if the sandbox blocks it, ask the user to approve running it with network "
        "access (or outside the sandbox)."
    ),
    "aider": (
        "You are running inside aider, which has no custom slash commands and does not run "
        "commands by itself. The user triggers this by starting a message with `memory.wiki` "
        "(aider rejects `/memory.wiki` as an invalid command). Put each `memorywiki` command "
        "on one line, alone in its own ```bash block, exactly as it must run: aider asks the "
        "user before it runs a suggested command and before it adds the output to the chat. "
        "When a step needs a command's output (recall, pull, list, bundle), stop after "
        "suggesting the command; the output reaches you in the chat (the user may also run it "
        "with `/run <command>` and answer yes to adding the output). Then continue from it."
    ),
}
_TRANSCRIPT_NOTES = {
    "claude-code": "This reads the current session's transcript from `~/.claude/projects`.",
    "cursor": (
        "Cursor does not tell commands which chat is open, so memorywiki reads the most "
        "recently updated chat of this workspace from Cursor's local database (best effort). "
        "If it reports that no session was found, use the default capture above instead."
    ),
    "codex": "This reads the current rollout from `~/.codex/sessions` (found by `CODEX_THREAD_ID`).",
    "aider": (
        "This reads the last session in `.aider.chat.history.md` at the repository root. The "
        "user can also run it directly: `/run {{CLI}} capture --agent aider --title '<title>'`."
    ),
}


# How multi-line markdown is handed to `memorywiki`: the rule in "Quoting rules", then the
# capture and update steps. Keys: "heredoc" (every tool with a real shell tool) and
# "one-line" (aider, see the module docstring).
_MULTILINE = {
    "heredoc": {
        "MULTILINE_RULE": """- Send multi-line markdown through a **quoted heredoc**, so nothing inside is expanded:

  ```bash
  {{CLI}} capture --title 'The title' - <<'MEMORYWIKI_EOF'
  ...markdown...
  MEMORYWIKI_EOF
  ```

  The delimiter must be quoted (`<<'MEMORYWIKI_EOF'`) and must never appear alone on a line
  inside the body.""",
        "CAPTURE_STEP": """3. Pipe it to the CLI with a quoted heredoc:

   ```bash
   {{CLI}} capture --title '<title>' - <<'MEMORYWIKI_EOF'
   ## Question
   ...
   MEMORYWIKI_EOF
   ```""",
        "UPDATE_STEP": """4. Run:

   ```bash
   {{CLI}} update '<id>' --section '<heading text, without the #>' - <<'MEMORYWIKI_EOF'
   ...new section body...
   MEMORYWIKI_EOF
   ```""",
    },
    "one-line": {
        "MULTILINE_RULE": """- Aider runs every line of a suggested shell block as a separate command, so a heredoc
  breaks there. Send multi-line markdown on **one line**: `printf '%s\\n'` with each markdown
  line as its own single-quoted argument (an empty line is `''`), piped to the command:

  ```bash
  printf '%s\\n' '## Question' '' 'What we wanted.' | {{CLI}} capture --title 'The title' -
  ```

  Never break that command over several lines.""",
        "CAPTURE_STEP": """3. Pipe it to the CLI on one line, each markdown line its own single-quoted argument in
   place of `<lines>`:

   ```bash
   printf '%s\\n' <lines> | {{CLI}} capture --title '<title>' -
   ```""",
        "UPDATE_STEP": """4. Run, on one line, each line of the new body its own single-quoted argument in place of
   `<lines>`:

   ```bash
   printf '%s\\n' <lines> | {{CLI}} update '<id>' --section '<heading text, without the #>' -
   ```""",
    },
}


def _values(tool: str, variant: str) -> dict[str, str]:
    if tool == "claude-code":
        invoke = "/memory-wiki" if variant == "skill" else "/memory.wiki"
        return {
            "ARGS": "$ARGUMENTS",
            "INVOKE": invoke,
            "AGENT": "claude-code",
            "SESSION_FLAG": ' --session "${CLAUDE_SESSION_ID}"',
        }
    if tool == "cursor":
        return {
            "ARGS": "the text the user typed after `/memory.wiki` (it arrives with this message).",
            "INVOKE": "/memory.wiki",
            "AGENT": "cursor",
            "SESSION_FLAG": "",
        }
    if tool == "codex":
        if variant == "prompt":
            return {
                "ARGS": "$ARGUMENTS",
                "INVOKE": "/prompts:memory.wiki",
                "AGENT": "codex",
                "SESSION_FLAG": ' ${CODEX_THREAD_ID:+--session "$CODEX_THREAD_ID"}',
            }
        return {
            "ARGS": "the text the user wrote after `$memory-wiki` in their message.",
            "INVOKE": "$memory-wiki",
            "AGENT": "codex",
            "SESSION_FLAG": ' ${CODEX_THREAD_ID:+--session "$CODEX_THREAD_ID"}',
        }
    return {
        "ARGS": "the text after `memory.wiki` in the user's message.",
        "INVOKE": "memory.wiki",
        "AGENT": "aider",
        "SESSION_FLAG": "",
    }


def _run_note(tool: str, command: str) -> str:
    if command == COMMAND:
        return _RUN_NOTES[tool]
    return (
        f"{_RUN_NOTES[tool]} Always run `memorywiki` by its full path, `{command}`, as every "
        "command below does: the shell that runs your commands may not have it on its PATH."
    )


def render_body(tool: str, variant: str = "command", command: str = COMMAND) -> str:
    """The skill body with this tool's placeholders filled in; `command` is how each shell
    command starts (`memorywiki`, or the absolute command the installer passes)."""
    tool = normalize_tool(tool)
    _, body = load_source()
    values = _values(tool, variant)
    values["RUN_NOTE"] = _run_note(tool, command)
    values["TRANSCRIPT_NOTE"] = _TRANSCRIPT_NOTES[tool]
    values.update(_MULTILINE["one-line" if tool == "aider" else "heredoc"])
    values = {name: value.replace("{{CLI}}", command) for name, value in values.items()}
    values["CLI"] = command
    out = re.sub(r"\{\{([A-Z_]+)\}\}", lambda m: values[m.group(1)], body)
    return out.rstrip() + "\n\n" + GENERATED_MARKER + " from skill/SKILL.md by `memorywiki install` -->\n"


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """(0, 116, 0) from 'codex-cli 0.116.0' / '0.116.0-alpha.1'; None if there is none."""
    if not text:
        return None
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if not m:
        return None
    return tuple(int(g or 0) for g in m.groups())


def render(tool: str, codex_version: str | None = None, command: str = COMMAND) -> dict[str, str]:
    """{relative path: content} of every file `tool` needs for /memory.wiki.

    codex_version: the output of `codex --version`; when it is older than 0.117 the legacy
    custom prompt `.codex/prompts/memory.wiki.md` is included as well.
    command: how the files' shell commands start. The installer passes the installation's
    absolute command: a tool may run commands in a shell that does not have a venv's `bin`
    on its PATH (Codex runs a login shell, which resets PATH from the profile).
    """
    tool = normalize_tool(tool)
    fields, _ = load_source()
    description = fields.get("description", "")
    hint = fields.get("argument-hint", "")
    if tool == "claude-code":
        command_fm = {
            "description": "Memory.Wiki: capture this session, recall from your pages, pull, update, list, hub, bundle",
            "argument-hint": hint,
            "allowed-tools": f"Bash({command}:*)",
            "disable-model-invocation": "true",
        }
        skill_fm = {
            "name": SKILL_NAME,
            "description": description,
            "argument-hint": hint,
            "allowed-tools": f"Bash({command}:*)",
        }
        return {
            CLAUDE_COMMAND: _frontmatter(command_fm) + render_body(tool, "command", command),
            CLAUDE_SKILL: _frontmatter(skill_fm) + render_body(tool, "skill", command),
        }
    if tool == "cursor":
        return {CURSOR_COMMAND: render_body(tool, command=command)}
    if tool == "codex":
        files = {
            CODEX_SKILL: _frontmatter({"name": SKILL_NAME, "description": description})
            + render_body(tool, "skill", command),
        }
        version = parse_version(codex_version)
        if version is not None and version < CODEX_PROMPTS_REMOVED_IN:
            files[CODEX_PROMPT] = _frontmatter(
                {"description": "Memory.Wiki: capture, recall, pull, update, list, hub, bundle", "argument-hint": hint}
            ) + render_body(tool, "prompt", command)
        return files
    return {AIDER_CONVENTIONS: render_body(tool, command=command)}
