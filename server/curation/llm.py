"""The chat model, through the official `openai` client (any OpenAI-compatible server).

Key and URL come from Settings (OPENAI_API_KEY; MEMORYWIKI_LLM_BASE_URL, else
OPENAI_BASE_URL) through server/openai_client.py.

One call asks for one JSON object. Structured output (`json_schema`) is tried first; a
server that refuses it with HTTP 400 is asked again in plain JSON mode (`json_object`,
with the field guide in the prompt) and remembered, so Ollama, vLLM or LM Studio work
whatever they support. An outage (connection error, timeout, 429, 5xx) raises
ModelUnavailable so the worker leaves the work owed and backs off; any other refusal
raises ModelRefused. Token counts come from the server's `usage` when it reports them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ..config import Settings
from ..openai_client import Endpoint, OpenAIClient
from .contract import describe_schema, wire_schema


class ModelError(Exception):
    """The chat model could not give an answer."""


class ModelUnavailable(ModelError):
    """Unreachable, overloaded or rate limited: try again later, keep the work owed."""


class ModelRefused(ModelError):
    """The server answered with a client error (bad model name, context too long, ...)."""


_PIECES = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9\s]")


def estimate_tokens(text: str) -> int:
    """A slight over-estimate of BPE tokens (~4 letters per token, one per punctuation mark,
    so ids and URLs are not under-counted), enough to keep a budget without a tokenizer
    (tiktoken would download its encodings at run time)."""
    return sum(math.ceil(len(p) / 4) if p[0].isalnum() else 1 for p in _PIECES.findall(text))


@dataclass
class Answer:
    text: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


class ChatModel:
    """A named model on an OpenAI-compatible /v1/chat/completions endpoint."""

    def __init__(self, model: str, endpoint: Endpoint, *, max_output_tokens: int) -> None:
        self.model = model
        self.name = f"openai:{model}"
        self.max_output_tokens = max_output_tokens
        self.json_schema_supported = True
        self.client = OpenAIClient(
            endpoint, lambda: ModelUnavailable("chat model is not configured: OPENAI_API_KEY is not set")
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> ChatModel:
        return cls(settings.llm_model or "", Endpoint.for_chat(settings), max_output_tokens=settings.llm_output_tokens)

    async def aclose(self) -> None:
        await self.client.aclose()

    async def ask_json(
        self, system: str, user: str, *, schema_name: str, schema: dict[str, Any], max_tokens: int | None = None
    ) -> Answer:
        """One chat call that should answer with a JSON object matching `schema`."""
        import openai

        client = self.client.get()
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        limit = max_tokens or self.max_output_tokens
        try:
            if self.json_schema_supported:
                try:
                    response = await client.chat.completions.create(
                        model=self.model,
                        messages=messages,
                        max_tokens=limit,
                        temperature=0.2,
                        response_format={
                            "type": "json_schema",
                            "json_schema": {"name": schema_name, "schema": wire_schema(schema), "strict": True},
                        },
                    )
                    return _answer(response, messages)
                except openai.BadRequestError as exc:
                    if "response_format" not in str(exc) and "json_schema" not in str(exc):
                        raise
                    self.json_schema_supported = False
            guide = f"Answer with one JSON object with exactly these fields:\n{describe_schema(schema)}"
            messages[0] = {"role": "system", "content": f"{system}\n\n{guide}"}
            response = await client.chat.completions.create(
                model=self.model,
                messages=messages,
                max_tokens=limit,
                temperature=0.2,
                response_format={"type": "json_object"},
            )
            return _answer(response, messages)
        except openai.APIStatusError as exc:
            if exc.status_code == 429 or exc.status_code >= 500:
                raise ModelUnavailable(
                    f"chat model at {client.base_url} answered HTTP {exc.status_code}: {exc.message}"
                ) from exc
            raise ModelRefused(
                f"chat model at {client.base_url} refused the request (HTTP {exc.status_code}): {exc.message}"
            ) from exc
        except openai.APIConnectionError as exc:  # includes timeouts
            raise ModelUnavailable(f"chat model at {client.base_url} unreachable: {exc}") from exc
        except openai.OpenAIError as exc:
            raise ModelUnavailable(f"chat request failed: {exc}") from exc


def _answer(response: Any, messages: list[dict[str, str]]) -> Answer:
    choice = response.choices[0] if response.choices else None
    text = (choice.message.content or "") if choice is not None and choice.message else ""
    usage = getattr(response, "usage", None)
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    return Answer(
        text=text,
        finish_reason=choice.finish_reason if choice is not None else None,
        prompt_tokens=int(prompt) if prompt is not None else estimate_tokens("".join(m["content"] for m in messages)),
        completion_tokens=int(completion) if completion is not None else estimate_tokens(text),
    )


RETRY_NOTE = (
    "Your previous answer could not be used ({problems}). Answer again with one complete "
    "JSON object containing every field, shorter if needed."
)


@dataclass
class Validated:
    """The fields that validated (from the first answer, filled in by the retry), the ones
    that never did, and what the calls cost."""

    valid: dict[str, Any]
    missing: list[str]
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


async def ask_validated(
    model: ChatModel, system: str, user: str, *, schema_name: str, schema: dict[str, Any], max_tokens: int | None = None
) -> Validated:
    """Ask for a JSON object; when the answer is malformed, truncated or fails the schema,
    ask once more, saying what was wrong. Whatever validated in either answer is kept."""
    from .contract import check_fields, parse_object

    names = list(schema["properties"])
    out = Validated(valid={}, missing=names)
    problems: list[str] = []
    for attempt in range(2):
        prompt = user if attempt == 0 else f"{user}\n\n{RETRY_NOTE.format(problems='; '.join(problems)[:600])}"
        answer = await model.ask_json(system, prompt, schema_name=schema_name, schema=schema, max_tokens=max_tokens)
        out.calls += 1
        out.prompt_tokens += answer.prompt_tokens
        out.completion_tokens += answer.completion_tokens
        fields, complete = parse_object(answer.text)
        checked = check_fields(fields, schema)
        for name, value in checked.valid.items():
            out.valid.setdefault(name, value)
        out.missing = [n for n in names if n not in out.valid]
        if not out.missing:
            break
        problems = [p for p in checked.problems if p.split(":")[0] in out.missing]
        if answer.truncated:
            problems.insert(0, "the answer was cut off at the token limit")
        elif not complete:
            problems.insert(0, "the answer was not valid JSON")
    return out
