"""The three wire formats the coding tools speak to their model, as plain data.

Claude Code sends Anthropic Messages requests, Codex CLI OpenAI Responses requests and Aider
(through litellm) Chat Completions requests. Each parser turns a request body into one
`Turn` (the system text, the messages, the tools on offer), so the scripted model reads every
tool the same way; each renderer turns the model's `Reply` back into the event stream the
tool expects (or one JSON body when the tool did not ask to stream).

Only what these tools send and read is covered: the shapes follow what the pinned versions
(scripts/agent-tools.env) were seen to send and accept.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

_ids = itertools.count(1)


def _new_id(prefix: str) -> str:
    return f"{prefix}_{next(_ids):06d}"


@dataclass
class Call:
    """One tool call the model made (or makes)."""

    name: str
    args: dict[str, Any]
    id: str = ""


@dataclass
class Msg:
    """One message in the conversation the tool sent.

    role: system | user | assistant | tool. A tool message carries the output of the call
    `call_id`; an assistant message may carry calls.
    """

    role: str
    text: str = ""
    calls: list[Call] = field(default_factory=list)
    call_id: str = ""


@dataclass
class Turn:
    """One request to the model, whatever its wire format."""

    wire: str  # anthropic | responses | chat
    system: str
    messages: list[Msg]
    tools: list[str]
    stream: bool
    model: str
    raw: dict

    def all_text(self) -> str:
        return "\n".join([self.system] + [m.text for m in self.messages])

    def call(self, call_id: str) -> Call | None:
        for m in self.messages:
            for c in m.calls:
                if c.id == call_id:
                    return c
        return None


@dataclass
class Reply:
    """What the model answers: text, then at most one tool call."""

    text: str = ""
    call: Call | None = None


def _text_of(content: Any) -> str:
    """The text parts of a content value (a string or a list of typed parts), joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            parts.append(part["text"])
    return "\n".join(parts)


def _json_args(value: Any) -> dict:
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.strip():
        try:
            parsed = json.loads(value)
        except ValueError:
            return {"input": value}
        return parsed if isinstance(parsed, dict) else {"input": parsed}
    return {}


# --- Anthropic Messages (Claude Code) ------------------------------------------------------


def parse_anthropic(body: dict) -> Turn:
    messages: list[Msg] = []
    for m in body.get("messages") or []:
        role = m.get("role", "user")
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else (content or [])
        texts: list[str] = []
        calls: list[Call] = []
        results: list[Msg] = []
        for block in blocks:
            kind = block.get("type")
            if kind == "text":
                texts.append(block.get("text") or "")
            elif kind == "tool_use":
                calls.append(Call(block.get("name", ""), _json_args(block.get("input")), block.get("id", "")))
            elif kind == "tool_result":
                results.append(Msg("tool", _text_of(block.get("content")), call_id=block.get("tool_use_id", "")))
        if results:
            # Text next to tool results ("Tool loaded.", reminders) belongs to the results,
            # not to a new user turn.
            results[-1].text = "\n".join([results[-1].text, *texts]).strip("\n")
            messages.extend(results)
        elif texts or calls:
            messages.append(Msg(role, "\n".join(texts), calls))
    return Turn(
        wire="anthropic",
        system=_text_of(body.get("system")),
        messages=messages,
        tools=[t.get("name", "") for t in body.get("tools") or []],
        stream=bool(body.get("stream")),
        model=body.get("model", ""),
        raw=body,
    )


def _sse(event: str | None, data: Any) -> str:
    payload = data if isinstance(data, str) else json.dumps(data)
    return (f"event: {event}\n" if event else "") + f"data: {payload}\n\n"


def _anthropic_blocks(reply: Reply) -> list[dict]:
    blocks: list[dict] = []
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    if reply.call:
        blocks.append({"type": "tool_use", "id": reply.call.id, "name": reply.call.name, "input": reply.call.args})
    return blocks


def anthropic_json(reply: Reply, turn: Turn) -> dict:
    return {
        "id": _new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": turn.model,
        "content": _anthropic_blocks(reply),
        "stop_reason": "tool_use" if reply.call else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }


def anthropic_events(reply: Reply, turn: Turn) -> Iterator[str]:
    message = anthropic_json(reply, turn)
    start = dict(message, content=[], stop_reason=None)
    yield _sse("message_start", {"type": "message_start", "message": start})
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield _sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
            )
            yield _sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": block["text"]}},
            )
        else:
            yield _sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": dict(block, input={})},
            )
            yield _sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
                },
            )
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": 10},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


# --- OpenAI Responses (Codex CLI) ----------------------------------------------------------


def parse_responses(body: dict) -> Turn:
    system = [body.get("instructions") or ""]
    messages: list[Msg] = []
    items = body.get("input")
    items = [{"type": "message", "role": "user", "content": items}] if isinstance(items, str) else (items or [])
    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role", "user")
            text = _text_of(item.get("content"))
            if role in ("developer", "system"):
                system.append(text)
            else:
                messages.append(Msg(role, text))
        elif kind == "function_call":
            call = Call(item.get("name", ""), _json_args(item.get("arguments")), item.get("call_id", ""))
            messages.append(Msg("assistant", calls=[call]))
        elif kind == "custom_tool_call":
            messages.append(
                Msg(
                    "assistant",
                    calls=[Call(item.get("name", ""), {"input": item.get("input")}, item.get("call_id", ""))],
                )
            )
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            text = output if isinstance(output, str) else _text_of(output) or json.dumps(output)
            messages.append(Msg("tool", text, call_id=item.get("call_id", "")))
    tools = []
    for t in body.get("tools") or []:
        tools.append(t.get("name") or t.get("type", ""))
    return Turn(
        wire="responses",
        system="\n".join(s for s in system if s),
        messages=messages,
        tools=tools,
        stream=bool(body.get("stream", True)),
        model=body.get("model", ""),
        raw=body,
    )


def _responses_items(reply: Reply) -> list[dict]:
    items: list[dict] = []
    if reply.text:
        items.append(
            {
                "type": "message",
                "id": _new_id("msg"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    if reply.call:
        items.append(
            {
                "type": "function_call",
                "id": _new_id("fc"),
                "status": "completed",
                "name": reply.call.name,
                "arguments": json.dumps(reply.call.args),
                "call_id": reply.call.id,
            }
        )
    return items


def responses_json(reply: Reply, turn: Turn) -> dict:
    return {
        "id": _new_id("resp"),
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": turn.model,
        "output": _responses_items(reply),
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 20,
        },
    }


def responses_events(reply: Reply, turn: Turn) -> Iterator[str]:
    response = responses_json(reply, turn)
    seq = itertools.count()
    yield _sse(
        "response.created",
        {
            "type": "response.created",
            "sequence_number": next(seq),
            "response": dict(response, status="in_progress", output=[]),
        },
    )
    for index, item in enumerate(response["output"]):
        empty = dict(item, status="in_progress")
        if item["type"] == "message":
            empty["content"] = []
        else:
            empty["arguments"] = ""
        yield _sse(
            "response.output_item.added",
            {"type": "response.output_item.added", "sequence_number": next(seq), "output_index": index, "item": empty},
        )
        if item["type"] == "message":
            yield _sse(
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": item["content"][0]["text"],
                },
            )
        else:
            yield _sse(
                "response.function_call_arguments.delta",
                {
                    "type": "response.function_call_arguments.delta",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": index,
                    "delta": item["arguments"],
                },
            )
        yield _sse(
            "response.output_item.done",
            {"type": "response.output_item.done", "sequence_number": next(seq), "output_index": index, "item": item},
        )
    yield _sse("response.completed", {"type": "response.completed", "sequence_number": next(seq), "response": response})


# --- Chat Completions (Aider through litellm) ---------------------------------------------


def parse_chat(body: dict) -> Turn:
    system: list[str] = []
    messages: list[Msg] = []
    for m in body.get("messages") or []:
        role = m.get("role", "user")
        text = _text_of(m.get("content"))
        if role == "system":
            system.append(text)
            continue
        if role == "tool":
            messages.append(Msg("tool", text, call_id=m.get("tool_call_id", "")))
            continue
        calls = [
            Call(
                c.get("function", {}).get("name", ""),
                _json_args(c.get("function", {}).get("arguments")),
                c.get("id", ""),
            )
            for c in m.get("tool_calls") or []
        ]
        messages.append(Msg(role, text, calls))
    return Turn(
        wire="chat",
        system="\n".join(system),
        messages=messages,
        tools=[(t.get("function") or {}).get("name", "") for t in body.get("tools") or []],
        stream=bool(body.get("stream")),
        model=body.get("model", ""),
        raw=body,
    )


def _chat_tool_calls(reply: Reply) -> list[dict]:
    if not reply.call:
        return []
    return [
        {
            "index": 0,
            "id": reply.call.id,
            "type": "function",
            "function": {"name": reply.call.name, "arguments": json.dumps(reply.call.args)},
        }
    ]


def chat_json(reply: Reply, turn: Turn) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.call:
        message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in _chat_tool_calls(reply)]
    return {
        "id": _new_id("chatcmpl"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": turn.model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if reply.call else "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


def chat_events(reply: Reply, turn: Turn) -> Iterator[str]:
    base = {
        "id": _new_id("chatcmpl"),
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": turn.model,
    }

    def chunk(delta: dict, finish: str | None = None, **extra: Any) -> str:
        return _sse(None, dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}], **extra))

    yield chunk({"role": "assistant", "content": ""})
    # A few pieces, as a real stream sends them (aider re-renders markdown as it arrives).
    for piece in re.findall(r".{1,40}", reply.text, re.DOTALL):
        yield chunk({"content": piece})
    if reply.call:
        yield chunk({"tool_calls": _chat_tool_calls(reply)})
    yield chunk(
        {},
        "tool_calls" if reply.call else "stop",
        usage={"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    )
    yield _sse(None, "[DONE]")


WIRES = {
    "anthropic": (parse_anthropic, anthropic_events, anthropic_json),
    "responses": (parse_responses, responses_events, responses_json),
    "chat": (parse_chat, chat_events, chat_json),
}


def new_call_id(wire: str) -> str:
    return _new_id({"anthropic": "toolu", "responses": "call", "chat": "call"}[wire])
