"""Aider, for real: the pinned `aider` (in its own venv), pointed at the scripted model as an
OpenAI-compatible server, with the conventions file `memorywiki install aider` registered.

Aider has no custom commands and no tool calls: the user types `memory.wiki capture ...`, the
model answers with a ```bash block, aider asks before running it and before adding its output
to the chat, and the user answers. One aider process is one session (one `# aider chat started
at` block of .aider.chat.history.md), so the whole conversation is typed on stdin, answers to
aider's questions included, as a user would type it.
"""

from __future__ import annotations

import json
import re

import pytest
from memorywiki.adapters.aider.reader import read_session
from memorywiki.skill.render import render_body

from tests.agents import tools
from tests.agents.workspace import (  # noqa: F401 - fixtures
    ANSWER,
    CLI,
    QUESTION,
    Workspace,
    assert_model_clean,
    model_server,
    workspace,
)

MODEL = "openai/scripted-model"


@pytest.fixture
def aider() -> str:
    return tools.require("aider")


def run_aider(ws: Workspace, server, exe: str, lines: list[str]) -> str:
    """One aider session fed `lines` on stdin; its output."""
    # Aider looks the model up in a price list it fetches from the internet (and waits on it):
    # metadata for the model in ~/.aider.model.metadata.json, and litellm's bundled cost map,
    # keep every lookup local.
    (ws.home / ".aider.model.metadata.json").write_text(
        json.dumps(
            {
                MODEL: {
                    "max_tokens": 8192,
                    "max_input_tokens": 128000,
                    "max_output_tokens": 8192,
                    "input_cost_per_token": 0,
                    "output_cost_per_token": 0,
                    "litellm_provider": "openai",
                    "mode": "chat",
                }
            }
        ),
        encoding="utf-8",
    )
    argv = [
        exe,
        "--model",
        MODEL,
        "--openai-api-base",
        f"{server.base_url}/v1",
        "--openai-api-key",
        "not-a-key",
        # The edit format aider uses for the big models: only it runs suggested shell commands.
        "--edit-format",
        "diff",
        "--no-git",
        "--no-check-update",
        "--no-show-release-notes",
        "--analytics-disable",
        "--no-pretty",
        "--no-show-model-warnings",
    ]
    out = ws.run(argv, stdin="\n".join(lines) + "\n", env={"LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    assert out.returncode == 0, f"aider exited {out.returncode}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout


def test_capture_and_recall(workspace, model_server, aider):
    workspace.memorywiki("install", "aider")
    model = model_server.model
    model.chat["HNSW"] = ANSWER
    transcript_title = "HNSW deadlock session"
    output = run_aider(
        workspace,
        model_server,
        aider,
        [
            QUESTION,
            "memory.wiki capture Bob's fix",
            "y",  # Run shell command?
            "y",  # Add command output to the chat?
            f"/run memorywiki capture --agent aider --title '{transcript_title}'",
            "y",  # Add command output to the chat?
        ],
    )
    urls = re.findall(r"^(http://\S+)$", output, re.MULTILINE)
    assert len(urls) == 2, output[-3000:]
    # No price-list download was tried (aider caches "{}" after a failed one).
    assert not (workspace.home / ".aider" / "caches" / "model_prices_and_context_window.json").exists()
    steps = {s.action: s for s in model.steps}

    # The conventions file reached the model, whole, as a read-only file.
    conventions = render_body("aider", command=CLI).strip()
    assert any(conventions in m.text for m in model_server.turns()[0].messages), "conventions not loaded"

    # memory.wiki capture <title>: the model's one-line command ran in aider's shell (a
    # heredoc would run line by line there: every line of the page a shell command).
    assert steps["capture"].argument == "Bob's fix"
    assert steps["capture"].command.startswith("printf '%s\\n' ") and "\n" not in steps["capture"].command
    record = workspace.doc(urls[0])
    assert record["title"] == "Bob's fix"
    assert f"## Question\n\n{QUESTION}\n\n## Answer\n\n{ANSWER}" in record["markdown"]

    # /run memorywiki capture --agent aider: the page is this session's chat history block.
    history = workspace.project / ".aider.chat.history.md"
    stamp = re.findall(r"^# aider chat started at (.+)$", history.read_text(), re.MULTILINE)[-1]
    page = workspace.doc(urls[1])
    assert page["title"] == transcript_title and page["source"] == "aider"
    assert page["meta"] == {"tool": "aider", "session_id": stamp, "cwd": str(workspace.project), "git_branch": None}
    assert f"## User\n\n{QUESTION}\n\n## Assistant\n\n{ANSWER}" in page["markdown"]
    assert "Memory.Wiki keeps answers" not in page["markdown"]
    assert read_session(history).markdown.startswith(page["markdown"].rstrip())

    # memory.wiki recall, in a later session: the model suggests the command, the user lets it
    # run and add its output, and the answer cites a page that exists.
    workspace.wait_indexed(record["id"], page["id"])
    output = run_aider(
        workspace,
        model_server,
        aider,
        [
            "memory.wiki recall why did the HNSW index build deadlock?",
            "y",  # Run shell command?
            "y",  # Add command output to the chat?
            "What does the wiki say?",
        ],
    )
    recall = model.steps[-1]
    assert recall.command == f"{CLI} recall 'why did the HNSW index build deadlock?' --hybrid --json"
    assert recall.answer and recall.answer in output
    cited = recall.answer.rsplit("](", 1)[-1].rstrip(")")
    assert cited in (record["url"], page["url"]) and workspace.page_exists(cited)
    assert_model_clean(model_server)
