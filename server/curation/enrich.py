"""Enrich one doc: by the chat model when there is one, else extractively.

Cost is bounded per doc by a token budget (Settings, MEMORYWIKI_LLM_*):
- a doc whose text fits `window_tokens` is enriched in one call;
- a longer one is map-reduced: its chunks are grouped into windows of at most
  `window_tokens`, each window is enriched (map), and the partial answers are merged by one
  more call (reduce);
- at most `doc_tokens` of a doc's text are ever sent: past that, the chunks most central
  to the doc (by their vectors; the first ones when there are none) are kept, in order.
So a doc costs at most ceil(doc_tokens / window_tokens) + 1 calls, plus one retry per call
whose answer did not validate. Every call's tokens are counted.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..config import Settings
from .concepts import fold_doc_concepts
from .contract import ENRICHMENT_SCHEMA, tidy_enrichment
from .extractive import chunk_centrality, extract
from .llm import ChatModel, ModelRefused, ask_validated, estimate_tokens
from .terms import Term, page_terms

SYSTEM = """You curate a personal knowledge wiki. You read one document (a saved chat, notes, \
an article or a transcript) and describe it for someone deciding whether to read it.
Use only what the document says; never invent facts, names or numbers.
- summary: one paragraph, 2-5 sentences, what the document is about and what it concludes.
- themes: 3-5 short themes.
- takeaways: what a reader should remember or do.
- insights: non-obvious points, causes or trade-offs (may be empty).
- open_questions: what the document leaves unresolved or does not cover (may be empty).
- concepts: 3-12 key named things and ideas; kind is "entity" (a named tool, product, person, \
place), "concept" (an idea or technique) or "tag" (a broad topic label); gloss is one line on \
what it is in this document; aliases are other names or abbreviations the document uses.
- relations: how the concepts you listed relate, using their exact names (may be empty).
Answer with the JSON object only."""

REDUCE_SYSTEM = """You merge partial descriptions of consecutive parts of ONE long document \
into one description of the whole document, in the same JSON shape. Keep what matters for the \
whole; merge duplicate concepts; keep relations only between concepts you list. Use only what \
the parts say. Answer with the JSON object only."""


@dataclass
class ChunkText:
    heading_path: str
    markdown: str
    vector: Sequence[float] | None = None


@dataclass
class Budget:
    window_tokens: int
    doc_tokens: int
    output_tokens: int
    extract_chars: int  # the extractive pass's cost grows faster than the text it reads

    @classmethod
    def from_settings(cls, settings: Settings) -> Budget:
        return cls(
            window_tokens=settings.llm_window_tokens,
            doc_tokens=settings.llm_doc_tokens,
            output_tokens=settings.llm_output_tokens,
            extract_chars=settings.curation_extract_chars,
        )


@dataclass
class Enrichment:
    """What is stored for a doc: valid fields, the names of missing ones, and the cost."""

    mode: str  # "model" | "extractive"
    model: str | None
    data: dict[str, Any]
    missing: list[str] = field(default_factory=list)
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    note: str | None = None
    terms: list[Term] = field(default_factory=list)  # the noun phrases the doc holds, whatever the mode


def _section(chunk: ChunkText, limit_tokens: int) -> str:
    text = f"{chunk.heading_path}\n\n{chunk.markdown}".strip()
    if estimate_tokens(text) <= limit_tokens:
        return text
    marker = "\n[…]"  # a section larger than a window is cut, and says so
    room = max(1, limit_tokens - estimate_tokens(marker))
    while estimate_tokens(text) > room and len(text) > 1:
        text = text[: int(len(text) * 0.9)]
    return text.rstrip() + marker


def select_sections(chunks: Sequence[ChunkText], budget: Budget) -> tuple[list[str], int]:
    """The doc text to send, as sections in doc order within the doc budget; and the number
    of chunks left out."""
    sections = [_section(c, budget.window_tokens) for c in chunks]
    keep = _most_central(chunks, [estimate_tokens(s) for s in sections], budget.doc_tokens)
    return [sections[i] for i in keep], len(chunks) - len(keep)


def _most_central(chunks: Sequence[ChunkText], sizes: list[int], limit: int) -> list[int]:
    """Indexes of the chunks kept within `limit` (in the unit of `sizes`), in doc order: all of
    them when they fit, else the most central to the doc (by their vectors; the first ones
    when there are none)."""
    if sum(sizes) <= limit:
        return list(range(len(chunks)))
    vectors = [c.vector for c in chunks]
    centrality = chunk_centrality(vectors) if any(v is not None for v in vectors) else None
    order = sorted(range(len(chunks)), key=lambda i: -centrality[i]) if centrality else list(range(len(chunks)))
    keep, used = set(), 0
    for i in order:
        if used + sizes[i] <= limit:
            keep.add(i)
            used += sizes[i]
    return sorted(keep)


def windows(sections: list[str], window_tokens: int) -> list[str]:
    """Consecutive sections grouped into windows of at most `window_tokens`."""
    out: list[list[str]] = []
    size = 0
    for section in sections:
        tokens = estimate_tokens(section)
        if out and size + tokens <= window_tokens:
            out[-1].append(section)
            size += tokens
        else:
            out.append([section])
            size = tokens
    return ["\n\n".join(group) for group in out]


class _Caller:
    """Asks the model (each answer validated, retried once) and adds up the cost."""

    def __init__(self, model: ChatModel, budget: Budget) -> None:
        self.model = model
        self.budget = budget
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0

    async def ask(self, system: str, user: str) -> tuple[dict[str, Any], list[str]]:
        got = await ask_validated(
            self.model,
            system,
            user,
            schema_name="enrichment",
            schema=ENRICHMENT_SCHEMA,
            max_tokens=self.budget.output_tokens,
        )
        self.calls += got.calls
        self.prompt_tokens += got.prompt_tokens
        self.completion_tokens += got.completion_tokens
        return got.valid, got.missing


def _doc_prompt(title: str, text: str, part: str = "") -> str:
    return f"Title: {title}\n{part}\nDocument:\n<<<\n{text}\n>>>"


async def enrich_with_model(model: ChatModel, title: str, chunks: Sequence[ChunkText], budget: Budget) -> Enrichment:
    sections, left_out = select_sections(chunks, budget)
    parts = windows(sections, budget.window_tokens) or [title]
    caller = _Caller(model, budget)
    note = f"{left_out} of {len(chunks)} sections left out by the token budget" if left_out else None
    if len(parts) == 1:
        valid, missing = await caller.ask(SYSTEM, _doc_prompt(title, parts[0]))
    else:
        partials = []
        for i, text in enumerate(parts, 1):
            got, _ = await caller.ask(SYSTEM, _doc_prompt(title, text, f"(part {i} of {len(parts)})"))
            partials.append(tidy_enrichment(got))
        merged_input = "\n\n".join(f"Part {i}:\n{json.dumps(p, ensure_ascii=False)}" for i, p in enumerate(partials, 1))
        valid, missing = await caller.ask(REDUCE_SYSTEM, f"Title: {title}\n\n{merged_input}")
    data = tidy_enrichment(valid)
    if "concepts" in data:
        data["concepts"] = fold_doc_concepts(data["concepts"])
    return Enrichment(
        mode="model",
        model=model.name,
        data=data,
        missing=missing,
        calls=caller.calls,
        prompt_tokens=caller.prompt_tokens,
        completion_tokens=caller.completion_tokens,
        note=note,
    )


def enrich_extractively(
    title: str, chunks: Sequence[ChunkText], note: str | None = None, max_chars: int = Settings.curation_extract_chars
) -> Enrichment:
    """Within `max_chars` of the doc's markdown: its most central chunks past that."""
    keep = _most_central(chunks, [len(c.markdown) for c in chunks], max_chars)
    if len(keep) < len(chunks):
        left_out = f"{len(chunks) - len(keep)} of {len(chunks)} sections left out by the extractive budget"
        note = f"{note}; {left_out}" if note else left_out
        chunks = [chunks[i] for i in keep]
    vectors = [c.vector for c in chunks]
    data = extract(title, [c.markdown for c in chunks], vectors if any(v is not None for v in vectors) else None)
    data["concepts"] = fold_doc_concepts(data["concepts"])
    return Enrichment(mode="extractive", model=None, data=data, note=note)


def doc_terms(title: str, chunks: Sequence[ChunkText], max_chars: int) -> list[Term]:
    """The terms of the text extractive enrichment reads (its most central chunks past
    `max_chars`), whatever enriched the doc."""
    keep = _most_central(chunks, [len(c.markdown) for c in chunks], max_chars)
    return page_terms(title, [chunks[i].markdown for i in keep])


async def enrich(model: ChatModel | None, title: str, chunks: Sequence[ChunkText], budget: Budget) -> Enrichment:
    """The doc's enrichment. ModelUnavailable propagates (the work stays owed); a model that
    refuses the request outright gets the extractive enrichment, with the reason noted."""
    result = None
    if model is not None:
        try:
            result = await enrich_with_model(model, title, chunks, budget)
        except ModelRefused as exc:
            result = await asyncio.to_thread(enrich_extractively, title, chunks, str(exc)[:300], budget.extract_chars)
    if result is None:
        result = await asyncio.to_thread(enrich_extractively, title, chunks, None, budget.extract_chars)
    result.terms = await asyncio.to_thread(doc_terms, title, chunks, budget.extract_chars)
    return result
