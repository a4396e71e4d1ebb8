"""Bundle analysis: what a bundle's public members say together.

Read from the members' own enrichments (never their private siblings): with a chat model,
one call turns their summaries, themes and concepts into cross-doc themes, insights, gaps
and connections (validated like an enrichment, retried once); without one, the same four
lists are drawn from the enrichments: concepts several members share, each member's lead
takeaway, their open questions, and which members share which concepts.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from .concepts import concept_key
from .contract import BUNDLE_ANALYSIS_SCHEMA
from .llm import ChatModel, ask_validated

SYSTEM = """You read the descriptions of the documents in one reading list (a bundle) and say \
what they show TOGETHER: themes running across several documents, insights that only appear \
when reading them side by side, gaps none of them settles, and connections between specific \
documents (name them by title). Use only what the descriptions say. Answer with the JSON object only."""


def _member_brief(m: dict[str, Any]) -> dict[str, Any]:
    data = m.get("data") or {}
    return {
        "title": m["title"],
        "summary": data.get("summary", ""),
        "themes": data.get("themes", []),
        "concepts": [c["name"] for c in data.get("concepts", [])],
        "open_questions": data.get("open_questions", []),
    }


async def analyse_with_model(
    model: ChatModel, bundle: dict[str, Any], members: list[dict[str, Any]], output_tokens: int
) -> dict[str, Any]:
    user = (
        f"Bundle: {bundle['title']}\n{bundle.get('description') or ''}\n\nDocuments, in reading order:\n"
        + json.dumps([_member_brief(m) for m in members], ensure_ascii=False)
    )
    got = await ask_validated(
        model, SYSTEM, user, schema_name="bundle_analysis", schema=BUNDLE_ANALYSIS_SCHEMA, max_tokens=output_tokens
    )
    return {
        "mode": "model",
        "model": model.name,
        "data": {name: [" ".join(v.split()) for v in value] for name, value in got.valid.items()},
        "missing": got.missing,
        "calls": got.calls,
        "prompt_tokens": got.prompt_tokens,
        "completion_tokens": got.completion_tokens,
    }


def analyse_extractively(members: list[dict[str, Any]]) -> dict[str, Any]:
    holders: dict[str, list[str]] = defaultdict(list)
    names: dict[str, str] = {}
    for m in members:
        for c in (m.get("data") or {}).get("concepts", []):
            key = concept_key(c["name"])
            if m["title"] not in holders[key]:
                holders[key].append(m["title"])
                names.setdefault(key, c["name"])
    shared = sorted(
        (k for k, titles in holders.items() if len(titles) >= 2), key=lambda k: (-len(holders[k]), names[k].lower())
    )
    themes = [f"{names[k]}: in {', '.join(holders[k])}" for k in shared[:6]]
    insights = []
    for m in members:
        data = m.get("data") or {}
        lead = (data.get("insights") or data.get("takeaways") or [None])[0]
        if lead:
            insights.append(f"{m['title']}: {lead}")
    gaps, seen = [], set()
    for m in members:
        for q in (m.get("data") or {}).get("open_questions", []):
            if q.lower() not in seen:
                seen.add(q.lower())
                gaps.append(f"{q} ({m['title']})")
    connections = []
    for i, a in enumerate(members):
        keys_a = {concept_key(c["name"]) for c in (a.get("data") or {}).get("concepts", [])}
        for b in members[i + 1 :]:
            keys_b = {concept_key(c["name"]) for c in (b.get("data") or {}).get("concepts", [])}
            both = sorted(keys_a & keys_b, key=lambda k: (names.get(k) or k).lower())
            if both:
                connections.append(
                    f"{a['title']} and {b['title']} both discuss " + ", ".join(names.get(k, k) for k in both[:4])
                )
    return {
        "mode": "extractive",
        "model": None,
        "missing": [],
        "calls": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "data": {"themes": themes, "insights": insights[:6], "gaps": gaps[:6], "connections": connections[:8]},
    }
