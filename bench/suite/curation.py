"""AI curation on a hub of real captures: model calls and tokens per doc, the calls that
idempotency saves on a re-import, the concept digest's size, and the suggested bundles.

Hub: the capture fixtures in tests/data/capture (a Claude share, a ChatGPT share, an article,
a DOCX, a PPTX, a PDF, a VTT meeting and an SRT stand-up, converted by the server's own
converters) plus LoCoMo conversation sessions (shared/data/locomo, rendered like a chat
import: a `## <speaker>` section per turn). Every doc is POSTed with an external id, so a
re-import is the importer's path.

Two passes on fresh databases, each with a real server process (bench/proc.py):
- extractive: no chat model (MEMORYWIKI_LLM_MODEL unset);
- model: MEMORYWIKI_LLM_MODEL and OPENAI_BASE_URL / MEMORYWIKI_LLM_BASE_URL when set in the
  environment (a real model); otherwise the scripted stand-in of tests/chat_server.py, which
  answers every schema with a valid instance: its calls are exact, its "tokens" are words
  (real BPE tokens are ~1.3x words), its prose is meaningless.
Per pass: docs enriched, model calls and tokens per doc (mean / max), calls and tokens of a
full re-import of the same docs (0 expected: saved = the first import's calls), an edit of
one doc, the digest's size in tokens (full and compact), the suggested bundles. A sample
enriched /raw/{id} of the extractive pass goes to results/curation-sample-extractive.md.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import httpx

from ..common import ROOT, Options, Postgres, Proc, create_hub, log, machine_line, md_table, write_result

REPO = ROOT
FIXTURES = REPO / "tests" / "data" / "capture"
LOCOMO_CONVERSATIONS = 2  # ~38 sessions: with the fixtures, a hub of a few dozen captures
SMOKE_SESSIONS = 6


def fixture_docs() -> list[dict]:
    """The capture fixtures, converted by the server's converters (the encrypted PDF is refused)."""
    from memorywiki.formats import FormatError
    from memorywiki.server.capture import convert_file, parse_claude_share
    from memorywiki.server.errors import ApiError

    docs = []
    for path in sorted(FIXTURES.iterdir()):
        if path.suffix == ".py" or path.name.startswith("claude-export"):  # an export goes through /api/import
            continue
        try:
            if path.name.startswith("claude-share"):
                cap = parse_claude_share(path.read_text(), "https://claude.ai/share/bench")
            else:
                cap = convert_file(path.read_bytes(), path.name)
        except (ApiError, FormatError):  # refused, as by the API (e.g. the encrypted PDF)
            continue
        docs.append(
            {"title": cap.title, "markdown": cap.markdown, "source": cap.source, "external_id": f"fixture:{path.name}"}
        )
    seen, unique = set(), []
    for d in docs:  # the Claude share page and its snapshot are the same conversation
        if d["markdown"] not in seen:
            seen.add(d["markdown"])
            unique.append(d)
    return unique


def locomo_docs(folder: Path, conversations: int, limit: int | None) -> list[dict]:
    from memorywiki.formats.mdutil import render_turns

    path = folder / "locomo10.json"  # bench/__main__.py checked it is there (require_locomo)
    docs = []
    for sample in json.loads(path.read_text())[:conversations]:
        conv = sample["conversation"]
        a, b = conv.get("speaker_a", "A"), conv.get("speaker_b", "B")
        n = 1
        while f"session_{n}" in conv:
            turns = conv[f"session_{n}"]
            if turns:
                md = render_turns([(t["speaker"], t.get("text", "")) for t in turns])
                date = conv.get(f"session_{n}_date_time", "")
                docs.append(
                    {
                        "title": f"{a} and {b}, session {n} ({date})",
                        "markdown": md,
                        "source": "locomo",
                        "external_id": f"locomo:{sample.get('sample_id', a)}:{n}",
                    }
                )
            n += 1
    return docs[:limit] if limit else docs


async def _post_all(client, token: str, hub: str, docs: list[dict]) -> list[dict]:
    headers = {"Authorization": f"Bearer {token}"}
    out = []
    for d in docs:
        r = await client.post("/api/docs", json={"hub": hub, **d}, headers=headers)
        if r.status_code not in (200, 201):
            raise RuntimeError(f"POST /api/docs: {r.status_code} {r.text[:300]}")
        out.append(r.json())
    return out


async def _wait_curated(client, timeout: float = 3600) -> float:
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        h = (await client.get("/healthz")).json()
        c = h["curation"]
        if (h["owed"] == 0 or h["embedder"] is None) and not (
            c["owed_enrichments"] or c["owed_suggestions"] or c["owed_analyses"]
        ):
            return time.perf_counter() - t0
        await asyncio.sleep(0.25)
    raise TimeoutError("curation did not finish")


def _tokens(text: str) -> int:
    from memorywiki.server.curation.llm import estimate_tokens

    return estimate_tokens(text)


async def _pass(opts: Options, pg: Postgres, name: str, docs: list[dict], env: dict) -> dict:
    url = pg.fresh(f"bench_curation_{name}")
    logs = opts.out.parent / ".cache" / "logs" if opts.out.name == "results" else opts.out / "logs"
    slug = "captures"
    result: dict = {"name": name}
    with Proc("serve", url, logs, extra_env={"MEMORYWIKI_SUGGEST_DEBOUNCE": "1", **env}) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=600) as client:
            token = await create_hub(client, slug)
            t0 = time.perf_counter()
            saved = await _post_all(client, token, slug, docs)
            await _wait_curated(client)
            result["seconds"] = time.perf_counter() - t0
            health = (await client.get("/healthz")).json()["curation"]
            per_doc = [(await client.get(f"/api/docs/{d['id']}/enrichment")).json() for d in saved]
            result["docs"] = len(saved)
            result["mode"] = health["mode"]
            result["by_mode"] = (health["enriched_by_model"], health["enriched_extractively"])
            calls = [e["calls"] for e in per_doc]
            tokens = [e["tokens"] for e in per_doc]
            result["calls"], result["tokens"] = calls, tokens
            result["missing"] = sum(1 for e in per_doc if e["missing"])
            result["usage_first"] = health
            # re-import: the same docs again, by external id
            before = health["model_calls"]
            again = await _post_all(client, token, slug, docs)
            await asyncio.sleep(2.5)
            await _wait_curated(client)
            health = (await client.get("/healthz")).json()["curation"]
            result["reimport_status"] = sorted({d["status"] for d in again})
            result["reimport_calls"] = health["model_calls"] - before
            # one edit: only that doc (and the groups and analyses it feeds) is redone
            before = health["model_calls"]
            edited = dict(docs[-1], markdown=docs[-1]["markdown"] + "\n\nOne more note added later.\n")
            await _post_all(client, token, slug, [edited])
            await asyncio.sleep(2.5)
            await _wait_curated(client)
            health = (await client.get("/healthz")).json()["curation"]
            result["edit_calls"] = health["model_calls"] - before
            result["usage"] = health
            full = (await client.get(f"/raw/hub/{slug}?digest=1")).text
            compact = (await client.get(f"/raw/hub/{slug}?digest=1&compact=1")).text
            result["digest"] = {
                "full_tokens": _tokens(full),
                "full_chars": len(full),
                "compact_tokens": _tokens(compact),
                "compact_chars": len(compact),
                "concepts": len((await client.get(f"/api/hub/{slug}/digest")).json()["concepts"]),
            }
            result["compact_text"] = compact
            result["suggestions"] = (await client.get(f"/api/hub/{slug}/suggestions")).json()["suggestions"]
            sample = next(
                (
                    d
                    for d, src in zip(saved, docs, strict=False)
                    if src["external_id"].startswith("fixture:claude-share")
                ),
                saved[0],
            )
            result["sample"] = (await client.get(f"/raw/{sample['id']}")).text
            locomo = next((d for d, src in zip(saved, docs, strict=False) if src["source"] == "locomo"), None)
            result["sample_locomo"] = (await client.get(f"/raw/{locomo['id']}")).text if locomo else ""
    pg.drop(f"bench_curation_{name}")
    return result


def _stand_in_model() -> tuple[dict, object | None]:
    """A real model from the environment, else the scripted local chat server."""
    if os.environ.get("MEMORYWIKI_LLM_MODEL"):
        return {}, None
    import sys

    sys.path.insert(0, str(REPO))  # tests/ is importable from a checkout
    from tests.chat_server import start_chat_server

    server = start_chat_server()
    return {
        "MEMORYWIKI_LLM_MODEL": "stand-in",
        "MEMORYWIKI_LLM_BASE_URL": server.base_url,
        "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", "x"),
    }, server


def _stats(values: list[int]) -> str:
    if not values:
        return "-"
    return f"{sum(values) / len(values):.1f} / {max(values)}"


def _report(opts: Options, docs: list[dict], passes: list[dict], stand_in: bool) -> str:
    rows = []
    for p in passes:
        first_calls = sum(p["calls"])
        rows.append(
            [
                p["name"],
                p["mode"],
                p["docs"],
                f"{p['by_mode'][0]} / {p['by_mode'][1]}",
                p["missing"],
                _stats(p["calls"]),
                _stats(p["tokens"]),
                first_calls,
                f"{p['reimport_calls']} ({', '.join(p['reimport_status'])})",
                first_calls - p["reimport_calls"],
                p["edit_calls"],
                f"{p['seconds']:.0f}",
            ]
        )
    lines = [
        "# AI curation",
        "",
        machine_line(),
        "",
        f"Command: `{opts.command}`",
        "",
        f"Hub: {len(docs)} real captures ({sum(d['source'] != 'locomo' for d in docs)} capture fixtures, "
        f"{sum(d['source'] == 'locomo' for d in docs)} LoCoMo sessions rendered as chat imports).",
        "",
        md_table(
            [
                "pass",
                "mode",
                "docs",
                "by model / extractive",
                "docs with missing fields",
                "enrich calls per doc (mean / max)",
                "enrich tokens per doc (mean / max)",
                "enrich calls, first import",
                "calls on re-import",
                "calls saved by idempotency",
                "calls for one edit",
                "seconds to curate",
            ],
            rows,
        ),
        "",
        "Calls on re-import: every doc POSTed again with its external id (status `unchanged`): no doc is",
        "enriched again, so every call of the first import is saved. One edit costs that doc's enrichment,",
        "plus, with a model, the analyses and group names it feeds.",
    ]
    if stand_in:
        lines += [
            "",
            "The model pass ran against the scripted stand-in chat server (tests/chat_server.py): call",
            "counts are exact, tokens are its word counts (real BPE tokens run ~1.3x words).",
        ]
    lines += ["", "## Model use by job (whole run)", ""]
    for p in passes:
        by_job = p["usage"].get("by_job") or {}
        lines.append(
            f"- {p['name']}: "
            + (
                ", ".join(
                    f"{job}: {u['calls']} calls, {u['prompt_tokens'] + u['completion_tokens']} tokens"
                    for job, u in sorted(by_job.items())
                )
                or "no model calls"
            )
        )
    lines += ["", "## Concept digest size", ""]
    lines.append(
        md_table(
            ["pass", "concepts", "full digest tokens", "compact tokens", "compact chars / 4"],
            [
                [
                    p["name"],
                    p["digest"]["concepts"],
                    p["digest"]["full_tokens"],
                    p["digest"]["compact_tokens"],
                    p["digest"]["compact_chars"] // 4,
                ]
                for p in passes
            ],
        )
    )
    lines += [
        "",
        "Tokens are `estimate_tokens` (server/curation/llm.py): ~4 letters per token and one per",
        "punctuation mark, an over-estimate of BPE counts for ids and URLs.",
        "",
    ]
    for p in passes:
        lines += [f"## Suggested bundles ({p['name']})", ""]
        if not p["suggestions"]:
            lines.append("_None._")
        for s in p["suggestions"]:
            lines.append(f"- **{s['title']}**: {s['description']}")
            lines += [f"  - {d['title']}" for d in s["docs"]]
        lines.append("")
    extractive = next((p for p in passes if p["name"] == "extractive"), None)
    if extractive:
        lines += ["## Compact digest (extractive)", "", "```markdown", extractive["compact_text"].rstrip(), "```", ""]
    return "\n".join(lines)


async def _main(opts: Options, pg: Postgres) -> None:
    docs = fixture_docs()
    docs += locomo_docs(opts.locomo, 1 if opts.smoke else LOCOMO_CONVERSATIONS, SMOKE_SESSIONS if opts.smoke else None)
    log(f"curation: {len(docs)} docs")
    passes = [await _pass(opts, pg, "extractive", docs, {"MEMORYWIKI_LLM_MODEL": ""})]
    env, server = _stand_in_model()
    try:
        passes.append(await _pass(opts, pg, "model", docs, env))
    finally:
        if server is not None:
            server.stop()
    write_result(opts, "curation.md", _report(opts, docs, passes, server is not None))
    sample = passes[0]
    write_result(
        opts,
        "curation-sample-extractive.md",
        "<!-- GET /raw/{id} of a captured Claude share, extractive mode (python -m bench "
        "curation) -->\n"
        + sample["sample"]
        + "\n<!-- and a LoCoMo session rendered as a chat import -->\n"
        + sample["sample_locomo"],
    )


def run(opts: Options, pg: Postgres) -> None:
    asyncio.run(_main(opts, pg))
