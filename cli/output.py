"""Human-readable rendering (rich) for hubs and recall results; plain text stays pipe-friendly."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from typing import Any

from memorywiki.client.operations.types import redaction_line
from rich.console import Console
from rich.text import Text


def console() -> Console:
    # created per call so it binds to the current sys.stdout (CliRunner swaps it)
    return Console(file=sys.stdout, highlight=False, soft_wrap=False)


def err_console() -> Console:
    return Console(file=sys.stderr, highlight=False, soft_wrap=True)


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def error(message: str) -> None:
    sys.stderr.write(f"error: {message}\n")


def note(message: str) -> None:
    sys.stderr.write(f"{message}\n")


def note_redaction(redacted: dict[str, Any] | None) -> None:
    """What the server took out of a write, on stderr (stdout stays the URL)."""
    line = redaction_line(redacted)
    if line:
        note(line)


def snippet(markdown: str | None, limit: int = 300) -> str:
    text = " ".join((markdown or "").split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip() + "…"


def strip_leading_headings(markdown: str) -> str:
    """Drop ATX heading lines at the top of a chunk (the breadcrumb shows them)."""
    lines = markdown.lstrip("\n").split("\n")
    i = 0
    while i < len(lines) and (not lines[i].strip() or re.match(r"^ {0,3}#{1,6}(\s|$)", lines[i])):
        i += 1
    rest = "\n".join(lines[i:])
    return rest if rest.strip() else markdown


def breadcrumb(value: Any, title: str | None = None) -> str:
    if isinstance(value, (list, tuple)):
        parts = [str(p) for p in value if p]
        crumb = " > ".join(parts)
    else:
        crumb = str(value or "")
    return crumb or (title or "")


def _url_line(c: Console, url: str | None) -> None:
    if url:
        c.print(Text(str(url), style="cyan"), soft_wrap=True, crop=False)


def render_hub(data: Mapping[str, Any]) -> None:
    c = console()
    slug = data.get("slug", "")
    c.print(
        Text.assemble(("hub ", "dim"), (str(slug), "bold"), "  ", (str(data.get("url") or ""), "cyan")), soft_wrap=True
    )
    docs = data.get("docs") or []
    bundles = data.get("bundles") or []
    c.print()
    if docs:
        c.print(Text(f"{len(docs)} doc{'s' if len(docs) != 1 else ''}", style="bold underline"), soft_wrap=True)
        for d in docs:
            c.print(Text.assemble("  ", (" ".join(str(d.get("title") or "").split()), "bold")), soft_wrap=True)
            updated = str(d.get("updated_at") or "")[:16].replace("T", " ")
            shown = d.get("visibility") if d.get("visibility") not in (None, "public") else ""
            meta = " · ".join(x for x in (str(d.get("id", "")), updated, shown) if x)
            c.print(Text.assemble("    ", (meta, "dim"), "  ", (str(d.get("url") or ""), "cyan")), soft_wrap=True)
    else:
        c.print(Text("no docs yet", style="dim"))
    if bundles:
        c.print()
        c.print(
            Text(f"{len(bundles)} bundle{'s' if len(bundles) != 1 else ''}", style="bold underline"), soft_wrap=True
        )
        for b in bundles:
            c.print(Text.assemble("  ", (" ".join(str(b.get("title") or "").split()), "bold")), soft_wrap=True)
            if b.get("description"):
                c.print(Text("    " + snippet(b["description"], 200)), soft_wrap=True)
            c.print(
                Text.assemble("    ", (str(b.get("id", "")), "dim"), "  ", (str(b.get("url") or ""), "cyan")),
                soft_wrap=True,
            )


def render_doc_lines(data: Mapping[str, Any], *, visibility: bool = False) -> None:
    """id, title and url per doc (tab-separated); with ``visibility``, who may read it last."""
    out = sys.stdout
    for d in data.get("docs") or []:
        title = " ".join(str(d.get("title") or "").split())
        extra = f"\t{d.get('visibility') or 'public'}" if visibility else ""
        out.write(f"{d.get('id', '')}\t{title}\t{d.get('url') or ''}{extra}\n")


def _scores(r: dict[str, Any]) -> str:
    parts = []
    score = r.get("score", r.get("rrf_score"))  # an older server sends only rrf_score
    # every result carries rrf_score; the score is RRF's only when RRF ordered the list
    by_rrf = "score" in r and r.get("rrf_score") is not None and r["score"] == r["rrf_score"]
    if score is not None:
        parts.append(f"rrf {float(score):.4f}" if by_rrf else f"score {float(score):.2f}")
    if r.get("vector_rank") is not None:
        parts.append(f"vector #{r['vector_rank']}")
    if r.get("fts_rank") is not None:
        parts.append(f"text #{r['fts_rank']}")
    if r.get("similarity") is not None:
        try:
            parts.append(f"similarity {float(r['similarity']):.3f}")
        except (TypeError, ValueError):
            pass
    return " · ".join(parts)


def recall_mode_line(data: Mapping[str, Any]) -> str | None:
    """Which search ran and, when vectors were not used, why (the server says it in words)."""
    mode = data.get("mode")
    note = data.get("vector_note")
    if not mode and not note:
        return None
    line = f"mode: {mode or '?'}"
    if mode == "hybrid" and data.get("fusion"):
        line += f", {data['fusion']} fusion"
    if data.get("tokens") is not None:
        line += f", {data['tokens']} tokens" + (f" of at most {data['max_tokens']}" if data.get("max_tokens") else "")
    return line + (f" ({note})" if note else "")


def render_recall(data: Mapping[str, Any], level: str) -> None:
    c = console()
    results = data.get("results") or []
    if not results:
        c.print(Text("no results", style="dim"))
    for i, r in enumerate(results, 1):
        if i > 1:
            c.print()
        if level == "bundle" or "bundle_id" in r:
            head = str(r.get("title") or r.get("bundle_id") or "")
            body = r.get("description") or ""
            url = r.get("bundle_url") or r.get("url")
        elif level == "doc":
            head = str(r.get("title") or r.get("doc_id") or "")
            body = r.get("markdown") or ""
            url = r.get("doc_url") or r.get("url")
        else:
            head = breadcrumb(r.get("heading_path"), r.get("title"))
            body = strip_leading_headings(r.get("markdown") or "")  # the breadcrumb already says it
            url = r.get("doc_url") or r.get("url")
        line = Text.assemble((f"{i}. ", "dim"), (head, "bold"))
        scores = _scores(r)
        if scores:
            line.append(f"  ({scores})", style="dim")
        c.print(line, soft_wrap=True)
        snip = snippet(body)
        if snip:
            c.print(Text(snip))
        _url_line(c, url)
    mode = recall_mode_line(data)
    if mode:
        c.print()
        c.print(Text(mode, style="yellow" if data.get("vector_note") else "dim"), soft_wrap=True)
