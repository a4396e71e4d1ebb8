"""A scripted model that follows the /memory.wiki skill the way a real model should.

It is stateless, like a real model: each request carries the whole conversation, and the
model reads from it what the user asked, which skill text the tool delivered, and what its
earlier tool calls returned. Commands are not hard-coded: they are filled into the templates
the delivered skill text shows (the `memorywiki capture --agent ...` block, the heredoc
capture, `memorywiki recall '<question>' --hybrid --json`, each starting with the command as
the skill names it), with the skill's quoting rules,
so a wrong flag or path in the installed skill reaches the real CLI and fails the test.

What it saw is recorded in `steps` (one entry per skill action it started) and what went
wrong in `problems`; tests assert on both.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from tests.agents.wire import Call, Msg, Reply, Turn, new_call_id

SKILL_MARK = "Memory.Wiki keeps answers worth keeping as markdown pages"
_REMINDER_RE = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
# How the user may invoke the skill, per tool: /memory.wiki and /memory-wiki (Claude Code),
# $memory-wiki (Codex), memory.wiki without a slash (Aider, which has no custom commands).
_INVOKE_RE = re.compile(r"(?:^|\s)(/memory\.wiki|/memory-wiki|\$memory-wiki|memory\.wiki)(?=\s|$)(.*)", re.DOTALL)
_URL_LINE_RE = re.compile(r"https?://\S+")
_DOC_URL_RE = re.compile(r"https?://[^\s'\"<>)\]]+")
MCP_RECALL = "mcp__memorywiki__recall"
_MCP_ASK_RE = re.compile(r"recall from my memory wiki:\s*(.+)", re.IGNORECASE | re.DOTALL)
# Messages a tool adds to the chat on its own (Aider's file lists and command output).
_TOOL_CHATTER = ("Here are", "I am not sharing", "I switched to a new code base", "Output from ", "I ran this command:")
ACTIONS = ("capture", "recall", "pull", "update", "list", "hub", "bundle")


def sh_quote(text: str) -> str:
    """The skill's rule: single quotes, each ' written as '\\''."""
    return "'" + text.replace("'", "'\\''") + "'"


def skill_title(raw: str) -> str:
    """The skill's title rules: drop one pair of typed quotes, one line, at most 120 chars."""
    title = raw.strip()
    if len(title) >= 2 and title[0] == title[-1] and title[0] in "'\"":
        title = title[1:-1]
    return " ".join(title.split())[:120].lstrip("-").strip()


def clean(text: str) -> str:
    return _REMINDER_RE.sub("", text or "").strip()


@dataclass
class Step:
    """One skill action the model started: what it parsed and the command it ran."""

    wire: str
    invocation: str  # /memory.wiki, /memory-wiki, $memory-wiki, memory.wiki, or "" (request line)
    request: str  # the text after the invocation
    action: str
    argument: str
    skill_text: str
    command: str = ""
    output: str = ""
    answer: str = ""


@dataclass
class SkillModel:
    """Follows the skill; answers ordinary chat from `chat` (first key found in the message)."""

    chat: dict[str, str] = field(default_factory=dict)
    record_body: str = ""  # extra text for a written capture record (e.g. shell-hostile chars)
    steps: list[Step] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    # --- reading the conversation ---------------------------------------------------------

    @staticmethod
    def _current_turn(turn: Turn) -> tuple[list[Msg], list[Msg]]:
        """(the user's messages of the current turn, what happened after them)."""
        msgs = turn.messages
        i = len(msgs) - 1
        while i >= 0 and not (msgs[i].role == "user" and clean(msgs[i].text)):
            i -= 1
        end = i + 1
        while i >= 0 and msgs[i].role == "user":
            i -= 1
        group = [m for m in msgs[i + 1 : end] if clean(m.text)]
        return group, msgs[end:]

    @staticmethod
    def _skill_text(turn: Turn, group: list[Msg], after: list[Msg]) -> str | None:
        """The newest skill text the tool delivered: in this turn's messages or a tool result
        (Claude Code's Skill tool), else anywhere earlier (Aider's read-only conventions)."""
        for m in reversed(group + after):
            if SKILL_MARK in m.text:
                return m.text
        for m in reversed(turn.messages):
            if SKILL_MARK in m.text:
                return m.text
        return turn.system if SKILL_MARK in turn.system else None

    @staticmethod
    def _invocation(texts: list[str]) -> tuple[str, str] | None:
        for text in reversed(texts):
            if SKILL_MARK in text:
                continue
            m = _INVOKE_RE.search(clean(text))
            if m:
                # The request ends at the line's end: Aider appends its own instructions to
                # the user's message after a blank line.
                return m.group(1), m.group(2).strip().split("\n", 1)[0].strip()
        return None

    def _chat_answer(self, text: str) -> str:
        for key, answer in self.chat.items():
            if key.lower() in text.lower():
                return answer
        return "OK."

    # --- acting ----------------------------------------------------------------------------

    @staticmethod
    def _shell(turn: Turn, command: str, explain: str = "") -> Reply:
        """Run `command` with the tool's shell tool; with no tools (Aider), suggest it in a
        ```bash block, which the tool offers to run."""
        if "Bash" in turn.tools:
            return Reply(
                call=Call("Bash", {"command": command, "description": "Run memorywiki"}, new_call_id(turn.wire))
            )
        if "exec_command" in turn.tools:
            return Reply(call=Call("exec_command", {"cmd": command}, new_call_id(turn.wire)))
        if "shell" in turn.tools:
            return Reply(call=Call("shell", {"command": ["bash", "-lc", command]}, new_call_id(turn.wire)))
        return Reply(text=f"{explain}\n\n```bash\n{command}\n```\n".lstrip())

    @staticmethod
    def _section(skill: str, heading: str) -> str:
        m = re.search(r"^### " + re.escape(heading) + r"\s*$(.*?)(?=^### |\Z)", skill, re.DOTALL | re.MULTILINE)
        if not m:
            raise AssertionError(f"skill text has no '### {heading}' section")
        return m.group(1)

    @staticmethod
    def _fence(section: str) -> str:
        m = re.search(r"^\s*```\w*\n(.*?)^\s*```", section, re.DOTALL | re.MULTILINE)
        if not m:
            raise AssertionError("skill section shows no command block")
        return "\n".join(line.strip() for line in m.group(1).strip("\n").splitlines())

    def _record(self, turn: Turn, title: str, group: list[Msg]) -> str:
        """The written record the capture action asks for, from the conversation so far."""
        msgs = turn.messages
        start = msgs.index(group[0]) if group else len(msgs)
        question = answer = ""
        for m in msgs[:start]:
            text = clean(m.text)
            if not text or SKILL_MARK in text or m.role not in ("user", "assistant"):
                continue
            if m.role == "user" and not _INVOKE_RE.search(text) and not text.startswith(_TOOL_CHATTER):
                question, answer = text, ""
            elif m.role == "assistant" and question and not m.calls and not text.startswith("Ok"):
                answer = text
        question = question or f"What the session established about {title}."
        answer = answer or "Nothing else was said in this session."
        parts = [f"## Question\n\n{question}", f"## Answer\n\n{answer}"]
        if self.record_body:
            parts.append(self.record_body)
        return "\n\n".join(parts) + "\n"

    def _capture_command(self, skill: str, title: str, body: str) -> str:
        template = self._fence(self._section(skill, "capture <title>"))
        head, _, _rest = template.partition("\n")
        head = head.replace("'<title>'", sh_quote(title))
        m = re.search(r"<<'(\w+)'", head)
        if m:  # a quoted heredoc: body lines verbatim, then the delimiter
            return f"{head}\n{body.rstrip()}\n{m.group(1)}"
        if "printf" in head and "<lines>" in head:  # one line: each markdown line its own argument
            return head.replace("<lines>", " ".join(sh_quote(line) for line in body.rstrip("\n").split("\n")))
        raise AssertionError(f"capture command template not understood: {template!r}")

    def _start(self, turn: Turn, group: list[Msg], skill: str, invocation: str, request: str) -> Reply:
        action, _, argument = request.strip().partition(" ")
        argument = argument.strip()
        step = Step(turn.wire, invocation, request, action, argument, skill)
        self.steps.append(step)
        if action not in ACTIONS:
            step.answer = "usage"
            return Reply(text="Usage: capture <title> | recall <question> | ...")
        if action == "capture":
            transcript = argument.startswith("--transcript")
            title = skill_title(argument[len("--transcript") :] if transcript else argument)
            step.argument = title
            if transcript:
                template = self._fence(self._section(skill, "capture --transcript <title>"))
                step.command = template.replace("'<title>'", sh_quote(title))
            else:
                step.command = self._capture_command(skill, title, self._record(turn, title, group))
        elif action == "recall":
            section = self._section(skill, "recall <question>")
            m = re.search(r"Run `([^`]* recall '<question>'[^`]*)`", section)
            if not m:
                raise AssertionError("skill recall section names no command")
            step.command = m.group(1).replace("'<question>'", sh_quote(argument))
        else:
            raise AssertionError(f"the scripted model does not play {action!r}")
        return self._shell(turn, step.command, explain=f"Run this to {action}:")

    def _finish(self, step: Step, output: str) -> Reply:
        step.output = output
        if step.action == "capture":
            # `memorywiki capture` prints the page URL alone on a line (an error names URLs too).
            urls = [line.strip() for line in output.splitlines() if _URL_LINE_RE.fullmatch(line.strip())]
            if not urls:
                self.problems.append(f"capture printed no URL: {output[-500:]}")
                step.answer = "memorywiki capture failed:\n" + output[-500:]
            else:
                step.answer = f"Saved **{step.argument}**: {urls[-1]}"
        elif step.action == "recall":
            start = output.find("{")
            try:
                data = json.loads(output[start : output.rfind("}") + 1])
            except ValueError:
                self.problems.append(f"recall printed no JSON: {output[-500:]}")
                step.answer = "memorywiki recall failed:\n" + output[-500:]
                return Reply(text=step.answer)
            results = data.get("results") or []
            if not results:
                step.answer = "The wiki has nothing on that."
            else:
                top = results[0]
                crumb = top.get("heading_path") or top.get("title") or ""
                first = " ".join(clean(top.get("markdown", "")).split())[:200]
                step.answer = f"From your wiki: {first} [{crumb}]({top['doc_url']})"
        return Reply(text=step.answer)

    # --- MCP (Claude Code with `install --mcp`) ---------------------------------------------

    def _mcp_recall(self, turn: Turn, question: str, after: list[Msg]) -> Reply:
        """Ask the memorywiki MCP server's `recall` tool; Claude Code defers MCP tools, so the
        tool is first loaded with ToolSearch, as the tool's own instructions say."""
        step = self.steps[-1] if self.steps and self.steps[-1].action == "mcp-recall" else None
        if step is None or step.argument != question or step.answer:
            step = Step(turn.wire, MCP_RECALL, question, "mcp-recall", question, "")
            self.steps.append(step)
        for m in reversed(after):
            call = turn.call(m.call_id) if m.role == "tool" else None
            if call is not None and call.name == MCP_RECALL:
                step.output = m.text
                urls = _DOC_URL_RE.findall(m.text)
                if not urls:
                    self.problems.append(f"MCP recall gave no doc_url: {m.text[:500]}")
                    step.answer = "The wiki has nothing on that."
                else:
                    step.answer = f"From your wiki (via MCP): see {urls[0]}"
                return Reply(text=step.answer)
        if MCP_RECALL in turn.tools:
            step.command = f"{MCP_RECALL}({question!r})"
            return Reply(call=Call(MCP_RECALL, {"question": question}, new_call_id(turn.wire)))
        if (
            "ToolSearch" in turn.tools
            and MCP_RECALL in turn.all_text()
            and not any(c.name == "ToolSearch" for m in after for c in m.calls)
        ):
            return Reply(call=Call("ToolSearch", {"query": f"select:{MCP_RECALL}"}, new_call_id(turn.wire)))
        self.problems.append(f"no {MCP_RECALL} tool was offered (tools: {turn.tools})")
        step.answer = "No memorywiki MCP tool is available."
        return Reply(text=step.answer)

    # --- the model -------------------------------------------------------------------------

    @staticmethod
    def _output(turn: Turn, step: Step, after: list[Msg]) -> str | None:
        """What the step's command printed, if it has come back: a tool result (Claude Code,
        Codex), or the output Aider added to the chat after the user confirmed the command."""
        for m in reversed(after):
            if m.role == "tool":
                call = turn.call(m.call_id)
                if call is not None and call.name not in ("Skill", "ToolSearch"):
                    return m.text
        head = step.command.split("\n", 1)[0].strip()
        for m in reversed(turn.messages):
            if m.role != "user":
                continue
            for marker in (f"Output from {head}\n", f"I ran this command:\n\n{head}\n"):
                if marker in m.text:
                    return m.text.split(marker, 1)[1]
        return None

    def __call__(self, turn: Turn) -> Reply:
        group, after = self._current_turn(turn)
        texts = [m.text for m in group]
        skill = self._skill_text(turn, group, after)
        found = self._invocation(texts)
        user_text = clean(texts[-1]) if texts else ""

        ask = _MCP_ASK_RE.search(user_text)
        if ask:
            return self._mcp_recall(turn, ask.group(1).strip(), after)

        # Our command ran: read its output and answer. A new invocation wins (Aider shows a
        # command's output itself; the user may go on without asking for an answer).
        pending = self.steps[-1] if self.steps and self.steps[-1].command and not self.steps[-1].answer else None
        if pending is not None and (found is None or found[1] == pending.request):
            output = self._output(turn, pending, after)
            if output is not None:
                return self._finish(pending, output)
        if pending is not None and found is not None and found[1] != pending.request:
            pending.answer = "(the tool showed the output)"

        # Claude Code: a skill typed as /name with its body not loaded yet: call the Skill tool.
        in_turn = any(SKILL_MARK in m.text for m in group + after)
        if found and not in_turn and "Skill" in turn.tools and found[0] == "/memory-wiki":
            return Reply(call=Call("Skill", {"skill": "memory-wiki", "args": found[1]}, new_call_id(turn.wire)))

        if skill is not None:
            # The expanded command says "Request: <args>" when the tool substituted them.
            req = re.search(r"^Request: (.*)$", skill, re.MULTILINE)
            if req and in_turn and not req.group(1).startswith("the text"):
                return self._start(turn, group, skill, "", req.group(1))
            if found:
                return self._start(turn, group, skill, *found)
        if found:
            self.problems.append(f"{found[0]} typed but no skill text reached the model")
            return Reply(text="I do not know the memory.wiki skill.")
        return Reply(text=self._chat_answer(user_text))
