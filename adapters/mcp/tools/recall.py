"""`recall`: the passages of the user's hub that answer a question, each citable by its doc_url."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from mcp.types import CallToolResult, ToolAnnotations
from memorywiki.client import operations as ops
from pydantic import Field

from ..context import MemoryWiki
from .common import HubArg, result

TITLE = "Recall from Memory.Wiki"
ANNOTATIONS = ToolAnnotations(title=TITLE, read_only_hint=True, open_world_hint=False)
MAX_DOC_CHARS = 4000  # a whole doc at doc level is cut here; read_doc gives the rest


def recall(
    mw: MemoryWiki,
    question: Annotated[
        str,
        Field(
            min_length=1, max_length=4000, description="The question, in natural language (not keywords joined by AND)."
        ),
    ],
    k: Annotated[int, Field(ge=1, le=50, description="How many results to return (1-50).")] = 5,
    level: Annotated[
        Literal["chunk", "doc", "bundle"],
        Field(
            description="'chunk' (default): the few paragraphs that answer, each with a breadcrumb; "
            "'doc': whole pages; 'bundle': curated reading lists."
        ),
    ] = "chunk",
    hybrid: Annotated[
        bool,
        Field(
            description="Fuse vector and full-text (BM25) search, each weighed by how clearly it singles out "
            "its best candidates; best for names, error messages and code identifiers. "
            "Chunk and doc levels."
        ),
    ] = True,
    fusion: Annotated[
        Literal["zscore", "rrf"] | None,
        Field(
            description="How hybrid fuses the two searches: 'zscore' (the server's default) or 'rrf' "
            "(Reciprocal Rank Fusion, which then orders the list; every result carries rrf_score either way)."
        ),
    ] = None,
    max_tokens: Annotated[
        int | None,
        Field(
            ge=1,
            le=10_000_000,
            description="A token budget for the results: whole results in rank order while "
            "their tokens fit (each result says its tokens).",
        ),
    ] = None,
    hub: HubArg = None,
) -> CallToolResult:
    """Search the user's own saved knowledge (their Memory.Wiki hub) and return the passages that answer a question.

    Use this first whenever the user asks about something they may have worked on, decided or
    saved before, or says "from my notes / memory / wiki". Returns numbered results; each has
    a breadcrumb (Doc title > Section), the passage markdown, its `doc_id` and `doc_url`
    (structured content also carries the scores: vector_rank, fts_rank, score; each result's
    tokens; at doc level the section that ranked the doc). Pass max_tokens to fit a context
    budget. Cite the
    doc_url of every passage you rely on. An empty result means the hub does not hold it.
    """
    with mw.wiki() as wiki:
        data = ops.recall(
            wiki, question, hub=hub, k=k, level=level, hybrid=hybrid, fusion=fusion, max_tokens=max_tokens
        )
    return result(format_recall(data, level), data)


def _breadcrumb(value: Any, title: str | None) -> str:
    if isinstance(value, list) and value:
        return " > ".join(str(v) for v in value if str(v).strip())
    if isinstance(value, str) and value.strip():
        return value.strip()
    return title or ""


def format_recall(data: Mapping[str, Any], level: str) -> str:
    results = data.get("results") or []
    tokens = f", {data['tokens']} tokens" if data.get("tokens") is not None else ""
    head = f'Recall from hub "{data.get("hub")}" ({level} level, {data.get("mode")}, {len(results)} result(s){tokens}).'
    if data.get("vector_note"):
        head += f" Vectors were not used: {data['vector_note']}."
    if not results:
        return (
            head
            + "\nNothing matched. The hub may not hold this yet (or is still indexing); say so rather than guessing."
        )
    lines = [head, "Cite the doc_url of each passage you use.", ""]
    for i, r in enumerate(results, 1):
        if level == "bundle":
            lines.append(f"[{i}] {r.get('title')}\n    bundle_url: {r.get('bundle_url')}")
            if r.get("description"):
                lines.append(f"    {r['description']}")
            lines.append("")
            continue
        where = _breadcrumb(r.get("heading_path"), r.get("title")) if level == "chunk" else r.get("title")
        lines.append(f"[{i}] {where}")
        lines.append(f"    doc_url: {r.get('doc_url')}  (doc_id: {r.get('doc_id')})")
        body = (r.get("markdown") or "").strip()
        if level == "doc" and len(body) > MAX_DOC_CHARS:
            body = body[:MAX_DOC_CHARS].rstrip() + "\n… (truncated; call read_doc for the whole page)"
        lines.append(body)
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
