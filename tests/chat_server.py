"""A local OpenAI-compatible chat server, so curation tests drive the real `openai` client.

Each test scripts what the "model" answers: `script(...)` queues replies (a string is the
message content; a dict may set `content`, `finish_reason` ("length" = truncated) or
`status` (an HTTP error)). With nothing queued, the server answers the JSON schema it was
asked for with a deterministic instance built from the prompt's most frequent words, so a
whole hub can be enriched "by a model" without scripting every call. Requests, calls and
tokens are recorded for assertions.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.threaded_server import ThreadedServer

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]{3,}")
_STOP = frozenset(
    "this that with from have what when where which will your their there about into only also "
    "they them then than were been being more most some such each other these those document "
    "documents json answer object field fields concepts concept summary themes title pages page "
    "description one line should must would could text".split()
)


def _error(status: int, message: str, type_: str = "invalid_request_error", code: str | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": type_, "param": None, "code": code}}, status_code=status)


def _vocabulary(text: str) -> list[str]:
    counts = Counter(w.lower() for w in _WORD.findall(text) if w.lower() not in _STOP)
    words = [w for w, _ in counts.most_common(40)]
    return words or ["alpha", "beta", "gamma", "delta"]


def instance(schema: dict[str, Any], vocab: list[str], index: int = 0, key: str = "") -> Any:
    """A deterministic value valid against `schema` (the subset our schemas use)."""
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][index % len(schema["enum"])]
    if kind == "object":
        return {k: instance(s, vocab, index, k) for k, s in schema.get("properties", {}).items()}
    if kind == "array":
        count = max(schema.get("minItems", 0), min(3, schema.get("maxItems", 3)))
        if key == "relations":  # between the first concepts, which are vocab[0], vocab[1], ...
            count = min(count, 2)
        return [instance(schema["items"], vocab, i, key) for i in range(count)]
    if kind == "string":
        if key in ("name", "subject"):
            return vocab[index % len(vocab)].capitalize()
        if key == "object":
            return vocab[(index + 1) % len(vocab)].capitalize()
        if key == "relation":
            return "relates to"
        if key == "aliases":
            return vocab[index % len(vocab)].upper()
        words = [vocab[(index + i) % len(vocab)] for i in range(3)]
        text = f"This covers {words[0]}, {words[1]} and {words[2]} ({key or 'item'} {index + 1})."
        return text[: schema.get("maxLength", 400)]
    if kind == "integer":
        return index
    return None


class ChatServer(ThreadedServer):
    """Starlette + uvicorn on 127.0.0.1 and a free port, in a background thread."""

    name = "chat-server"
    url_path = "/v1"

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.reject_json_schema = False
        self._failing = False
        self._queue: list[Any] = []
        self._lock = threading.Lock()
        self.app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._queue.clear()
            self.calls = self.prompt_tokens = self.completion_tokens = 0
            self._failing = False
            self.reject_json_schema = False

    def script(self, *replies: Any) -> None:
        """Queue the next replies, answered in order before falling back to the default."""
        with self._lock:
            self._queue.extend(replies)

    def set_failing(self, failing: bool) -> None:
        """While failing, every request gets a 503, as during a provider outage."""
        with self._lock:
            self._failing = failing

    async def _chat(self, request: Request) -> JSONResponse:
        auth = request.headers.get("authorization", "")
        if not auth.lower().startswith("bearer ") or not auth[7:].strip():
            return _error(401, "You didn't provide an API key.", code="invalid_api_key")
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "Request body is not valid JSON.")
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(body.get("model"), str) or not isinstance(messages, list) or not messages:
            return _error(400, "'model' and a non-empty 'messages' list are required")
        fmt = body.get("response_format") or {}
        with self._lock:
            if self._failing:
                return _error(503, "The server is overloaded or not ready yet.", "server_error")
            if self.reject_json_schema and fmt.get("type") == "json_schema":
                return _error(400, "response_format 'json_schema' is not supported by this server")
            self.requests.append(body)
            reply = self._queue.pop(0) if self._queue else None
        if isinstance(reply, dict) and reply.get("status"):
            return _error(
                int(reply["status"]),
                reply.get("message", "scripted error"),
                "server_error" if int(reply["status"]) >= 500 else "invalid_request_error",
            )
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        if reply is None:
            schema = (fmt.get("json_schema") or {}).get("schema") if fmt.get("type") == "json_schema" else None
            content = json.dumps(instance(schema, _vocabulary(messages[-1].get("content", "")))) if schema else "{}"
            finish = "stop"
        elif isinstance(reply, dict):
            content, finish = reply.get("content", ""), reply.get("finish_reason", "stop")
        else:
            content, finish = str(reply), "stop"
        prompt_tokens = len(prompt.split())
        completion_tokens = len(content.split()) or 1
        with self._lock:
            self.calls += 1
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
        return JSONResponse(
            {
                "id": f"chatcmpl-{self.calls}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
        )


def start_chat_server() -> ChatServer:
    return ChatServer().start()
