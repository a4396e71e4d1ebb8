"""Curation as markdown: the enrichment appended to /raw/{id}, the hub concept digest and
a bundle's cross-doc analysis. Routes call these; the HTML partials render the same data."""

from __future__ import annotations

from typing import Any

from .concepts import Concept
from .llm import estimate_tokens

SECTIONS = (
    ("summary", "Summary"),
    ("themes", "Themes"),
    ("takeaways", "Key takeaways"),
    ("insights", "Insights"),
    ("open_questions", "Open questions / gaps"),
    ("concepts", "Concepts in this document"),
    ("relations", "Concept relations (within this doc's concepts)"),
)
MISSING = "_Missing: the model's answer for this section did not validate; it is retried when the page changes._"


def _one_line(text: str) -> str:
    return " ".join((text or "").split())


def markdown_twin(url: str) -> str:
    """The markdown address of a page, hub or bundle URL: an AI that follows a link from a
    markdown surface sends no `Accept: text/markdown`, so it is given the `.md` twin."""
    return url if url.endswith(".md") else f"{url}.md"


def enrichment_fields(enrichment: dict[str, Any] | None, bundles: list[dict[str, Any]]) -> dict[str, Any]:
    """Front matter fields: how the doc was enriched, and its bundle and concept counts."""
    if enrichment is None:
        return {"enrichment": "pending", "bundle_count": len(bundles), "concept_count": 0}
    fields = {
        "enrichment": enrichment["mode"],
        "bundle_count": len(bundles),
        "concept_count": len(enrichment["data"].get("concepts") or []),
    }
    if enrichment.get("model"):
        fields["enrichment_model"] = enrichment["model"]
    if enrichment.get("missing"):
        fields["enrichment_missing"] = list(enrichment["missing"])
    return fields


# Sections an extractive enrichment fills with the page's own sentences.
QUOTING = ("summary", "takeaways", "insights", "open_questions")


def _says_the_page_again(enrichment: dict[str, Any], body_chars: int | None) -> bool:
    """An extractive enrichment whose quoted sentences run to half the page's text: on a short
    page they are most of the page, which the reader has just read."""
    if enrichment["mode"] != "extractive" or body_chars is None:
        return False
    data = enrichment["data"]
    quoted = sum(
        len(data.get(name) or "") if name == "summary" else sum(map(len, data.get(name) or [])) for name in QUOTING
    )
    return 2 * quoted >= body_chars


def _section_body(name: str, enrichment: dict[str, Any], quote: bool = True) -> str:
    """The section's markdown; "" when it holds nothing (the section is then left out).

    In extractive mode every line is the page's own words, and the page is right above: a
    concept's gloss (the first sentence naming it) is left out, and so are the quoting sections
    unless `quote`."""
    data, extractive = enrichment["data"], enrichment["mode"] == "extractive"
    if extractive and not quote and name in QUOTING:
        return ""
    if name in (enrichment.get("missing") or []) or name not in data:
        return MISSING
    value = data[name]
    if name == "summary":
        return _one_line(value)
    if name == "concepts":
        lines = []
        for c in value:
            lines.append(f"- **{_one_line(c['name'])}** _({c['kind']})_")
            gloss = "" if extractive else _one_line(c.get("gloss", ""))
            if c.get("aliases"):
                gloss = f"{gloss} (also: {', '.join(_one_line(a) for a in c['aliases'])})".strip()
            if gloss:
                lines.append(f"  {gloss}")
        return "\n".join(lines)
    if name == "relations":
        return "\n".join(
            f"- **{_one_line(r['subject'])}** {_one_line(r['relation'])} **{_one_line(r['object'])}**" for r in value
        )
    return "\n".join(f"- {_one_line(item)}" for item in value)


def enrichment_markdown(
    enrichment: dict[str, Any] | None,
    bundles: list[dict[str, Any]],
    hub_url: str | None,
    digest_url: str | None,
    body_chars: int | None = None,
) -> str:
    """The block appended after a doc's body on /raw/{id} and the .md twin.

    `enrichment`: {"mode", "model", "data", "missing"} or None while it is owed; `bundles`:
    the public bundles holding the doc ({"title", "url", "description"}); `body_chars`: the
    length of the page's text. A section with nothing in it, or nothing the page does not
    already say, is left out: an AI reading the page should not read scaffolding. Links go to
    markdown twins.
    """
    parts = []
    if enrichment is not None:
        quote = not _says_the_page_again(enrichment, body_chars)
        for name, heading in SECTIONS:
            body = _section_body(name, enrichment, quote)
            if body:
                parts.append(f"## {heading}\n\n{body}")
    bundle_lines = []
    for b in bundles:
        bundle_lines.append(f"- [{_one_line(b['title'])}]({markdown_twin(b['url'])})")
        if _one_line(b.get("description") or ""):
            bundle_lines.append(f"  > {_one_line(b['description'])}")
    if bundle_lines:
        parts.append("## Bundles containing this document\n\n" + "\n".join(bundle_lines))
    links = []
    if hub_url:
        links.append(f"_Hub:_ {markdown_twin(hub_url)}")
    if digest_url:
        links.append(f"_Concept digest:_ {digest_url}")
    if links:
        parts.append("\n\n".join(links))
    return "\n---\n\n" + "\n\n".join(parts) + "\n"


# ---------------------------------------------------------------- hub digest


def digest_markdown(
    hub: dict[str, Any],
    concepts: list[Concept],
    doc_count: int,
    *,
    compact: bool,
    budget_tokens: int = 2000,
    full_url: str | None = None,
) -> str:
    """The hub's concept digest. Full: every concept with kind, gloss, aliases and its docs
    with URLs. Compact: the most widely shared concepts, glosses cut short and docs as ids,
    until the token budget is spent (2,000 tokens by default)."""
    head = [f"# {hub['slug']}: concept digest{' (compact)' if compact else ''}", ""]
    if not compact:
        head += [
            f"{len(concepts)} concepts across {doc_count} public pages of {hub['url']}. "
            "Each concept: its kind, what it is, and the pages that discuss it.",
            "",
        ]
        lines = head
        for c in concepts:
            lines.append(f"- **{_one_line(c.name)}** _({c.kind})_: {_one_line(c.gloss)}".rstrip(": "))
            if c.aliases:
                lines.append(f"  Also: {', '.join(_one_line(a) for a in c.aliases)}")
            lines.append(
                "  Docs: " + ", ".join(f"[{_one_line(d['title'])}]({markdown_twin(d['url'])})" for d in c.docs)
            )
        if not concepts:
            lines.append("_No concepts yet: pages are enriched in the background._")
        return "\n".join(lines).rstrip() + "\n"
    base = hub["url"].rsplit("/hub/", 1)[0]
    head = [
        f"# {hub['slug']}: concepts (compact)",
        f"{len(concepts)} concepts, {doc_count} pages. Page URL = {base}/<id>. Format: name (kind): gloss [page ids].",
        "",
    ]
    lines = list(head)
    used = estimate_tokens("\n".join(lines))
    shown = 0
    tail_reserve = 40
    for c in concepts:
        gloss = " ".join(_one_line(c.gloss).split()[:12])
        ids = ", ".join(d["id"] for d in c.docs[:8]) + (f", +{len(c.docs) - 8}" if len(c.docs) > 8 else "")
        line = f"- {_one_line(c.name)} ({c.kind}): {gloss} [{ids}]"
        cost = estimate_tokens(line) + 1
        if used + cost > budget_tokens - tail_reserve:
            break
        lines.append(line)
        used += cost
        shown += 1
    if shown < len(concepts):
        lines.append(
            f"… {len(concepts) - shown} more concepts in the full digest" + (f": {full_url}" if full_url else ".")
        )
    if not concepts:
        lines.append("No concepts yet: pages are enriched in the background.")
    return "\n".join(lines).rstrip() + "\n"


# ---------------------------------------------------------------- bundle analysis

ANALYSIS_SECTIONS = (("themes", "Themes"), ("insights", "Insights"), ("gaps", "Gaps"), ("connections", "Connections"))


def analysis_markdown(analysis: dict[str, Any] | None) -> str:
    """A bundle's cross-doc analysis, placed after its reading order ("" when it found nothing)."""
    if analysis is None:
        return ""
    data = analysis["data"]
    parts = ["## Across these documents", ""]
    if analysis["mode"] == "extractive":
        parts += ["_Extractive: drawn from the members' own enrichments, no model._", ""]
    shown = 0
    for name, heading in ANALYSIS_SECTIONS:
        items = data.get(name)
        body = MISSING if items is None else "\n".join(f"- {_one_line(i)}" for i in items)
        if body:  # a list with nothing in it is left out
            parts += [f"### {heading}", "", body, ""]
            shown += 1
    if not shown:
        return ""
    return "\n".join(parts).rstrip() + "\n"
