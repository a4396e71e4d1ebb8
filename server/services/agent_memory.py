"""Memory that follows a person from one coding session to the next (docs/coding-tools.md).

Two use cases, reached by the coding tools' hooks:

- `capture_session`: a session's transcript becomes one page per session, saved through
  the same write path as any page (docs.create, by an importer id), a draft when it is made,
  updated in place when the session goes on, with a summary at its top, written from the
  session as the hub stores it (secrets redacted, services/redaction.py). A page its owner
  edited by hand keeps their text: the turns the session added since are appended below it.
  A page its owner deleted stays deleted: the session continues on a new page.
- `context`: what a session should start with (the project's latest pages, and the passages
  that best answer "what should I know before working on it"), or the few passages that bear
  on one prompt, within a token budget, each naming its URL and breadcrumb. Every answer is
  counted (calls and tokens) for the hub's owner.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from memorywiki.formats.project import project_record

from ...formats.mdutil import summary as opening_line
from ..curation.enrich import Budget, ChunkText, enrich_with_model
from ..curation.extractive import extract
from ..curation.llm import ChatModel, ModelError
from ..embedding.tokens import estimate_tokens
from ..errors import BadRequest, Conflict, unknown_hub
from ..store import agent_memory as store
from ..store import hubs as hub_store
from ..store.connection import Conn
from ..timing import Phases
from . import docs, recall, redaction
from .access import Access, Credentials
from .context import Context
from .urls import Urls

log = logging.getLogger("memorywiki.agent_memory")

KINDS = ("start", "prompt")
TOOL_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,39}$")
MAX_SESSION_ID = 200
MAX_TOKENS = 20_000  # a hook may set its own budget (default: the server's), never a context window
LABELS = {"claude-code": "Claude Code", "codex": "Codex CLI", "cursor": "Cursor", "aider": "Aider"}
_TURN = re.compile(r"(?m)^## (?:User|Assistant)[ \t]*$")
SUMMARY_HEADING = "## Summary"
LATELY = 6  # the project's latest pages at most
SHORT_PROMPT_WORDS = 3  # "yes", "go on": no recall


def session_key(tool: str, session_id: str) -> str:
    """The importer id of a session's page: one page per tool and session in a hub."""
    return f"session:{tool}:{session_id}"


def check_tool(tool: str) -> str:
    if not TOOL_NAME.match(tool or ""):
        raise BadRequest("invalid_field", "'tool' must be a coding tool's name, such as claude-code")
    return tool


def check_session_id(session_id: str) -> str:
    if not session_id or len(session_id) > MAX_SESSION_ID or not session_id.isprintable():
        raise BadRequest("invalid_field", f"the session id must be 1 to {MAX_SESSION_ID} printable characters")
    return session_id


# ---- capture ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionCapture:
    """A session as a hook read it: the transcript as markdown (`## User` / `## Assistant`
    turns, adapters/common.py) and where it ran."""

    slug: str
    tool: str
    session_id: str
    title: str
    transcript: str
    project: dict[str, Any] | None = None
    cwd: str | None = None
    git_branch: str | None = None
    started_at: str | None = None
    note: str | None = None  # what the hook left out (a transcript past the size limit)


def turns(transcript: str) -> list[str]:
    """The transcript's turns, each from its `## User` / `## Assistant` heading on."""
    starts = [m.start() for m in _TURN.finditer(transcript)]
    if not starts:
        return [transcript.strip()] if transcript.strip() else []
    return [transcript[a:b].strip() for a, b in zip(starts, [*starts[1:], len(transcript)], strict=True)]


def _recent_first_selection(sections: list[str], max_chars: int) -> list[int]:
    """Which turns a summary reads: all of them when they fit, else the first one (what was
    asked) and the latest ones (where the session ended up) within `max_chars`."""
    if sum(len(s) for s in sections) <= max_chars:
        return list(range(len(sections)))
    keep = [0]
    used = len(sections[0])
    for i in range(len(sections) - 1, 0, -1):
        if used + len(sections[i]) > max_chars:
            break
        keep.append(i)
        used += len(sections[i])
    return sorted(keep)


@dataclass
class Summary:
    markdown: str
    mode: str  # "extractive" or the model's name


def _summary_markdown(data: dict[str, Any]) -> str:
    parts = [data.get("summary") or ""]
    for label, key in (("Decided and done", "takeaways"), ("Open questions", "open_questions")):
        items = [str(i).strip() for i in data.get(key) or [] if str(i).strip()]
        if items:
            parts.append(f"**{label}**\n\n" + "\n".join(f"- {' '.join(i.split())}" for i in items))
    return "\n\n".join(p for p in parts if p.strip())


async def summarise(ctx: Context, title: str, sections: list[str]) -> Summary:
    """The session's summary: by the chat model when one is configured (within
    hook_summary_timeout), else, or when it fails, extractive (the session's own sentences)."""
    settings = ctx.settings
    keep = _recent_first_selection(sections, settings.curation_extract_chars)
    chunks = [sections[i] for i in keep]
    if settings.llm_model:
        own = ctx.curator.model if ctx.curator is not None and ctx.curator.model is not None else None
        model = own or ChatModel.from_settings(settings)
        try:
            texts = [ChunkText(heading_path=title, markdown=c) for c in chunks]
            enrichment = await asyncio.wait_for(
                enrich_with_model(model, title, texts, Budget.from_settings(settings)), settings.hook_summary_timeout
            )
            text = _summary_markdown(enrichment.data)
            if text:
                return Summary(text, enrichment.model or model.name)
        except (ModelError, TimeoutError) as exc:
            log.warning("session summary by %s failed, extractive instead: %s", model.name, exc)
        finally:
            if own is None:
                await model.aclose()
    data = await asyncio.to_thread(extract, title, chunks)
    return Summary(_summary_markdown(data), "extractive")


def _session_line(cap: SessionCapture, n_turns: int, summary_mode: str) -> str:
    label = LABELS.get(cap.tool, cap.tool)
    bits = [f"{label} session `{cap.session_id}`"]
    project = project_record(cap.project) or {}
    if project.get("name"):
        where = project["name"] + (f" ({project['remote']})" if project.get("remote") else "")
        bits.append(f"project {where}")
    if cap.git_branch:
        bits.append(f"branch `{cap.git_branch}`")
    bits.append(f"{n_turns} turn{'' if n_turns == 1 else 's'}")
    how = "extractive: the session's own sentences" if summary_mode == "extractive" else f"by {summary_mode}"
    bits.append(f"summary {how}")
    line = " · ".join(bits)
    if cap.note:
        line += f". {cap.note}"
    return f"*{line}.*"


def page_markdown(summary: Summary, cap: SessionCapture, sections: list[str]) -> str:
    """The page: the summary, one line on the session, then the transcript."""
    head = [SUMMARY_HEADING, "", summary.markdown or "*(nothing to summarise yet)*", ""]
    head += [_session_line(cap, len(sections), summary.mode), ""]
    return "\n".join(head) + "\n" + "\n\n".join(sections) + "\n"


def _appended(current: str, new_sections: list[str]) -> str:
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        current.rstrip()
        + f"\n\n## Session continued ({stamp})\n\n*Added by the capture after this page was edited by hand.*\n\n"
        + "\n\n".join(new_sections)
        + "\n"
    )


async def _writer_hub(ctx: Context, credentials: Credentials, slug: str) -> dict[str, Any]:
    async with ctx.db.owner.connection() as conn:
        hub = await Access(ctx.limits, credentials).writable_hub(conn, slug)
    return hub


def _session_meta(cap: SessionCapture, project: dict[str, Any] | None, capture: dict[str, Any]) -> dict[str, Any]:
    """The page's meta: the session it keeps, its project, and what the last capture sent."""
    return {
        "tool": cap.tool,
        "session_id": cap.session_id,
        "cwd": cap.cwd,
        "git_branch": cap.git_branch,
        "started_at": cap.started_at,
        **({"project": project} if project else {}),
        "capture": capture,
    }


async def capture_session(ctx: Context, credentials: Credentials, urls: Urls, cap: SessionCapture) -> dict[str, Any]:
    """Save the session as its page (see the module's docstring); the page as saved."""
    if not turns(cap.transcript):
        raise BadRequest("empty_markdown", "'transcript' has no turn to capture yet")
    hub = await _writer_hub(ctx, credentials, cap.slug)
    # The session as this hub stores it (secrets redacted unless its owner keeps raw text) before
    # anything reads it: a chat model writing the summary never sees what the page will not hold.
    prepared = await redaction.prepare(redaction.Page(title=cap.title, markdown=cap.transcript))
    async with ctx.db.owner.connection() as conn:
        chosen = await redaction.choose(conn, prepared, hub["id"])
    cap = replace(cap, title=chosen.page.title or cap.title, transcript=chosen.page.markdown or cap.transcript)
    sections = turns(cap.transcript)
    key = session_key(cap.tool, cap.session_id)
    project = project_record(cap.project)
    # what the capture was sent, by its digest: a page edited by hand differs from it
    digest = hashlib.sha256(cap.transcript.encode("utf-8")).hexdigest()[:16]
    for _ in range(20):  # each round finds the page, or the next free one after a deleted page
        async with ctx.db.owner.connection() as conn:
            pages = await store.session_pages(conn, hub["id"], key)
        live = next((p for p in pages if p["deleted_at"] is None), None)
        external_id = live["external_id"] if live else (key if not pages else f"{key}#{len(pages) + 1}")
        captured = (live or {}).get("meta", {}).get("capture") or {}
        # once edited by hand, always: the capture never again rewrites what the owner wrote
        by_hand = live is not None and bool(captured.get("by_hand") or live["edited"])
        summary_mode = captured.get("summary")
        if by_hand and live is not None:
            # the owner's text wins: only the turns the session added since are appended
            new = sections[int(captured.get("turns") or 0) :]
            title = live["title"]
            markdown = _appended(live["markdown"], new) if new else live["markdown"]
        elif live and captured.get("transcript") == digest:
            # nothing new since the last capture (a compaction, then the session's end): the page
            # stays as it is, and no model is asked for the same summary again
            title, markdown = cap.title, live["markdown"]
        else:
            summary = await summarise(ctx, cap.title, sections)
            summary_mode = summary.mode
            title, markdown = cap.title, page_markdown(summary, cap, sections)
        title, markdown = docs.page_content(title, markdown, max_title=docs.MAX_TITLE)
        capture = {"transcript": digest, "turns": len(sections), "summary": summary_mode, "by_hand": by_hand}
        meta = _session_meta(cap, project, capture)
        saved = await docs.create(
            ctx,
            credentials,
            urls,
            docs.NewDoc(
                title=title,
                markdown=markdown,
                hub=cap.slug,
                source=cap.tool,
                meta=meta,
                is_draft=True,  # made private; an update never changes who may read it
                external_id=external_id,
            ),
        )
        if saved["status"] == "deleted":  # deleted between the look and the save: next page
            continue
        return {
            "id": saved["id"],
            "url": saved["url"],
            "version": saved["version"],
            "status": saved["status"],
            "draft": live["is_draft"] if live else True,
            "summary": summary_mode,
            "appended": by_hand,
            "turns": len(sections),
            # the transcript's, and what the page's other parts had (a note, a git remote's token)
            "redacted": redaction.add(chosen.report, saved.get("redacted")),
            "earlier_pages_deleted": len(pages) - (1 if live else 0),
        }
    raise Conflict("capture_conflict", "this session's pages keep being deleted while it is captured; try again")


# ---- context ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ContextAsk:
    slug: str
    kind: str  # "start" | "prompt"
    project: dict[str, Any] | None = None
    prompt: str | None = None
    max_tokens: int | None = None
    tool: str | None = None
    session_id: str | None = None


@dataclass
class _Text:
    """The injected text, grown entry by entry while it fits the budget."""

    budget: int
    lines: list[str] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    tokens: int = 0

    def add(self, text: str, source: dict[str, Any] | None = None, *, limit: int | None = None) -> bool:
        cost = estimate_tokens(text)
        if (limit is not None and self.tokens + cost > limit) or self.tokens + cost > self.budget:
            return False
        self.lines.append(text)
        self.tokens += cost
        if source is not None:
            self.sources.append(source)
        return True


def _cut(text: str, max_tokens: int) -> str:
    """`text` within `max_tokens`, cut at a word with an ellipsis."""
    text = " ".join(text.split())
    if estimate_tokens(text) <= max_tokens:
        return text
    words = text.split(" ")
    lo, hi = 0, len(words)
    while lo < hi:  # the most words that fit
        mid = (lo + hi + 1) // 2
        if estimate_tokens(" ".join(words[:mid]) + " …") <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo]) + " …"


def summary_section(markdown: str) -> str | None:
    """The `## Summary` section a session's page opens with, on one line: its sentences, then
    "Decided and done: a; b." and "Open questions: c." (the session line left out)."""
    if not markdown.startswith(SUMMARY_HEADING):
        return None
    rest = markdown[len(SUMMARY_HEADING) :]
    end = re.search(r"(?m)^## ", rest)
    parts: list[str] = []
    items: list[str] = []
    for line in (rest[: end.start()] if end else rest).splitlines():
        line = line.strip()
        if not line or (line.startswith("*") and line.endswith(".*")):
            continue
        label = re.fullmatch(r"\*\*(.+)\*\*", line)
        if label:
            if items:
                parts[-1] += " " + "; ".join(items) + "."
                items = []
            parts.append(f"{label.group(1)}:")
        elif line.startswith("- "):
            items.append(line[2:].rstrip("."))
        else:
            parts.append(line)
    if items and parts:
        parts[-1] += " " + "; ".join(items) + "."
    return " ".join(parts).strip() or None


def _page_gist(doc: dict[str, Any]) -> str:
    return summary_section(doc["head"]) or doc.get("enriched_summary") or opening_line(doc["head"]) or ""


def _project_name(project: dict[str, Any] | None) -> str | None:
    if not project:
        return None
    if project.get("name"):
        return str(project["name"])
    path = project.get("path") or ""
    return path.rstrip("/").rsplit("/", 1)[-1] or None


async def _reader(ctx: Context, credentials: Credentials, slug: str) -> tuple[dict[str, Any], bool]:
    """The hub, and whether the caller sees its private pages: its owner or a member (token or
    the owner's browser session). A token that does neither is refused, not read as a stranger:
    a hook with the wrong token should say so rather than quietly see less."""
    access = Access(ctx.limits, credentials)
    async with ctx.db.owner.connection() as conn:
        if credentials.bearer:
            return await access.writable_hub(conn, slug), True
        hub = await hub_store.find_hub(conn, slug)
        if hub is None:
            raise unknown_hub(slug)
        return hub, bool(credentials.sessions) and await access.owns(conn, hub)


def _relevant(result: dict[str, Any], mode: str, ctx: Context, name: str | None = None) -> bool:
    """Above the relevance floor: close in meaning (cosine similarity), or without vectors a
    strong full-text match; at a session's start, also any passage that names the project. A
    fused score cannot be the floor: it is relative to the candidates, and one always comes first."""
    if name and name.lower() in f"{result['title']} {result['heading_path']} {result['markdown']}".lower():
        return True
    if mode == "fulltext" or result.get("similarity") is None:
        return (result.get("fts_score") or 0.0) >= ctx.settings.hook_min_fts
    return bool(result["similarity"] >= ctx.settings.hook_min_similarity)


def _passage_line(r: dict[str, Any], max_tokens: int) -> tuple[str, dict[str, Any]]:
    crumb = r["heading_path"] or r["title"]
    body = _cut(r["markdown"], max_tokens)
    return f"- [{crumb}]({r['doc_url']}): {body}", {
        "kind": "passage",
        "url": r["doc_url"],
        "title": r["title"],
        "breadcrumb": crumb,
    }


async def _passages(
    ctx: Context, urls: Urls, slug: str, question: str, k: int, name: str | None = None
) -> tuple[list[dict[str, Any]], str]:
    found = await recall.answer(ctx, urls, recall.Question(slug, question[: recall.MAX_QUESTION], k=k))
    return [r for r in found["results"] if _relevant(r, found["mode"], ctx, name)], found["mode"]


async def context(
    ctx: Context, credentials: Credentials, urls: Urls, ask: ContextAsk, phases: Phases | None = None
) -> tuple[dict[str, Any], Injection]:
    """What to inject (see the module's docstring), with its sources and token count, and the
    injection to count once the answer is sent (count_injection); `phases` gets where the time
    went."""
    if ask.kind not in KINDS:
        raise BadRequest("invalid_field", f"'kind' must be one of {', '.join(KINDS)}")
    phases = phases or Phases()
    with phases.span("auth", "the hub and the credential"):
        hub, private = await _reader(ctx, credentials, ask.slug)
    project = project_record(ask.project)
    if ask.kind == "start":
        budget = min(ask.max_tokens or ctx.settings.hook_max_tokens, MAX_TOKENS)
        text, mode = await _start(ctx, urls, hub, private, project, ask, budget, phases)
    else:
        budget = min(ask.max_tokens or ctx.settings.hook_prompt_tokens, MAX_TOKENS)
        with phases.span("recall", "the passages"):
            text, mode = await _prompt(ctx, urls, ask, budget)
    body = "\n".join(text.lines)
    tokens = estimate_tokens(body) if body else 0

    answer = {
        "hub": ask.slug,
        "kind": ask.kind,
        "text": body,
        "tokens": tokens,
        "max_tokens": budget,
        "sources": text.sources,
        "private": private,
        "mode": mode,
        "project": project,
    }
    return answer, Injection(hub["id"], ask.kind, tokens)


@dataclass(frozen=True)
class Injection:
    """What one answer handed out, to be counted once it is sent (count_injection)."""

    hub_id: int
    kind: str
    tokens: int


async def count_injection(ctx: Context, injection: Injection) -> None:
    """Count an answer's injection for its hub: bookkeeping that the answer never waits for."""

    async def count(conn: Conn) -> None:
        await store.count_usage(conn, injection.hub_id, injection.kind, injection.tokens)

    try:
        await ctx.db.write(count)
    except Exception:  # a count lost to an outage is no reason to log a traceback per prompt
        log.warning("could not count an injection of %d tokens for hub %d", injection.tokens, injection.hub_id)


async def _start(
    ctx: Context,
    urls: Urls,
    hub: dict[str, Any],
    private: bool,
    project: dict[str, Any] | None,
    ask: ContextAsk,
    budget: int,
    phases: Phases,
) -> tuple[_Text, str | None]:
    name = _project_name(project)
    text = _Text(budget)
    intro = (
        f'<memorywiki hub="{ask.slug}" project="{name or "?"}">\n'
        f"What your Memory.Wiki hub {ask.slug!r} holds for this project, newest first. "
        "Each entry names its page; cite the URL when you use it."
    )
    if not text.add(intro):
        return text, None
    shown: set[str] = set()

    async def lately() -> list[dict[str, Any]]:
        if not project:
            return []
        skip = [session_key(ask.tool, ask.session_id)] if ask.tool and ask.session_id else []
        with phases.span("lately", "the project's latest pages"):
            async with ctx.db.owner.connection() as conn:
                return await store.project_docs(
                    conn,
                    hub["id"],
                    keys=project["keys"],
                    paths=[project["path"]] if project.get("path") else [],
                    private=private,
                    skip=skip,
                    limit=LATELY,
                )

    async def to_know() -> tuple[list[dict[str, Any]], str | None]:
        if not name:
            return [], None
        with phases.span("recall", "what best answers what to know before working on the project"):
            return await _passages(ctx, urls, ask.slug, f"What should I know before working on {name}?", 8, name=name)

    # the two reads wait on different things (a query; the question's vector): side by side
    latest, (passages, mode) = await asyncio.gather(lately(), to_know())
    if latest and text.add(f"\n## Lately in {name}"):
        share = int(budget * 0.6)  # the rest is for what best answers "before working on it"
        for d in latest:
            when = d["updated_at"].strftime("%Y-%m-%d")
            private_note = f", {d['visibility']}" if d["visibility"] != "public" else ""
            head = f"- {when} · [{d['title']}]({urls.doc(d['id'])}){private_note}"
            gist = _cut(_page_gist(d), 120)
            entry = f"{head}\n  {gist}" if gist else head
            source = {"kind": "page", "url": urls.doc(d["id"]), "title": d["title"], "breadcrumb": d["title"]}
            if text.add(entry, source, limit=share):
                shown.add(d["id"])
    passages = [p for p in passages if p["doc_id"] not in shown]
    if passages and text.add(f"\n## Before working on {name}"):
        for r in passages:
            line, source = _passage_line(r, 180)
            text.add(line, source)
    if len(text.lines) == 1:  # nothing but the introduction: inject nothing
        text.lines.clear()
        return text, mode
    if not text.add("</memorywiki>"):
        text.lines.append("</memorywiki>")  # the closing tag goes in even past the budget
    return text, mode


async def _prompt(ctx: Context, urls: Urls, ask: ContextAsk, budget: int) -> tuple[_Text, str | None]:
    text = _Text(budget)
    prompt = (ask.prompt or "").strip()
    if len(prompt.split()) < SHORT_PROMPT_WORDS:
        return text, None
    passages, mode = await _passages(ctx, urls, ask.slug, prompt, ctx.settings.hook_prompt_k * 2)
    passages = passages[: ctx.settings.hook_prompt_k]
    if not passages:
        return text, mode
    text.add(
        f'<memorywiki hub="{ask.slug}">\nPassages from your Memory.Wiki hub that bear on this prompt; '
        "cite the URL when you use one."
    )
    for r in passages:
        line, source = _passage_line(r, 200)
        text.add(line, source)
    if not text.sources:
        text.lines.clear()
        return text, mode
    if not text.add("</memorywiki>"):
        text.lines.append("</memorywiki>")  # the closing tag goes in even past the budget
    return text, mode


# ---- the counter -----------------------------------------------------------------------------


async def usage(ctx: Context, credentials: Credentials, slug: str, days: int) -> dict[str, Any]:
    """What the hooks injected into sessions with this hub, the last `days` days (its owner
    or a member)."""
    async with ctx.db.owner.connection() as conn:
        hub = await Access(ctx.limits, credentials).writable_hub(conn, slug)
        rows = await store.usage(conn, hub["id"], days)
    totals = {kind: {"calls": 0, "tokens": 0} for kind in KINDS}
    for r in rows:
        totals[r["kind"]]["calls"] += r["calls"]
        totals[r["kind"]]["tokens"] += r["tokens"]
    return {
        "hub": slug,
        "days": days,
        "calls": sum(t["calls"] for t in totals.values()),
        "tokens": sum(t["tokens"] for t in totals.values()),
        "by_kind": totals,
        "by_day": [
            {"day": r["day"].isoformat(), "kind": r["kind"], "calls": r["calls"], "tokens": r["tokens"]} for r in rows
        ],
    }
