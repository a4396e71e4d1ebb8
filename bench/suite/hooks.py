"""The coding tools' hooks, timed as the tool runs them: the command `memorywiki install
claude-code --hooks` writes (`PYTHON -I -S .../adapters/hooks/run.py claude-code EVENT`), a new
process per event, its JSON on stdin, against a server on a hub of 10,000 chunks (300 with
--smoke).

The hub is the latency section's (bench/suite/latency.py: SciFact abstracts then synthetic
distractors, perturbed real vectors), in a database of its own, with 12 captured sessions of one
project added through the API, so a session's start finds "lately" pages and passages. The
server is this checkout's (bench.proc serve, local embedder, in-process worker).

Rows: the interpreter alone (`python -c pass`, and `python -I -S -c pass`, the floor of the
installed command); the same hook started as `python -m memorywiki.adapters.hooks` (the
package's import path, with site); the
session-start hook (the project's memory); the prompt hook (SciFact's questions as prompts);
the session-end hook (it hands the capture to a detached child, so this is what the tool
waits); the same context request from a keep-alive client (the server's share); and the first
session start after the server starts (cold). Wall time is what the tool waits; CPU is the
hook process's own (user + system, from the kernel), what it costs.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psycopg

from ..common import (
    Options,
    Postgres,
    Proc,
    fmt,
    load_beir,
    log,
    machine_line,
    make_bench_embedder,
    md_table,
    pct,
    write_result,
)
from .latency import _Connection, build_hub, chunk_texts, make_vectors, sample_vectors, server_timing

TOKEN = "mwo_bench-hooks-owner-token"
PROJECT = "microbiome"  # a subject SciFact's abstracts talk about: the start has passages to find
SESSIONS = 12
GOAL_P95_MS = 300.0
SAMPLE = 300


def _project_dir(root: Path) -> Path:
    project = root / PROJECT
    project.mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(root), "PATH": os.environ.get("PATH", ""), "GIT_CONFIG_NOSYSTEM": "1"}
    if not (project / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=project, env=env, check=True)
        subprocess.run(["git", "remote", "add", "origin", f"git@github.com:bench/{PROJECT}.git"], cwd=project, env=env)
    return project


def _sessions(corpus: list[dict]) -> list[str]:
    """Transcripts of sessions on the project: a question and an answer of its abstracts' words."""
    topical = [d for d in corpus if PROJECT in (d["title"] + d["text"]).lower()] or corpus
    out = []
    for i in range(SESSIONS):
        d = topical[i % len(topical)]
        sentences = re.split(r"(?<=[.!?])\s+", d["text"])
        out.append(
            f"## User\n\nWhat should we take from {d['title'] or 'this study'}?\n\n"
            f"## Assistant\n\nWe decided to follow it: {' '.join(sentences[:3])}\n\n"
            f"## User\n\nAnd the open points?\n\n## Assistant\n\n{' '.join(sentences[3:6]) or 'None.'}\n"
        )
    return out


def _command(event: str, module: bool = False) -> list[str]:
    """The hook's command as installed, or (`module`) as `python -m` starts it."""
    if module:
        return [sys.executable, "-m", "memorywiki.adapters.hooks", "claude-code", event]
    from memorywiki.adapters.install.hook_config import hook_command

    return shlex.split(hook_command("claude-code", event))


def _run_hook(env: dict, cwd: Path, event: str, payload: dict, module: bool = False) -> tuple[float, float, str]:
    """(wall ms, CPU ms of the hook process, stdout) of one hook run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(
        _command(event, module),
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
    )
    wall = (time.perf_counter() - t0) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    if out.returncode != 0:
        raise RuntimeError(f"hook {event} exited {out.returncode}: {out.stderr[-2000:]}")
    return wall, cpu, out.stdout


def _python_floor(n: int, *flags: str) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for _ in range(n):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, *flags, "-c", "pass"], check=True)
        walls.append((time.perf_counter() - t0) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return walls, cpus


FLOORS = (0.3, 0.4, 0.5, 0.6)
PAIRS = 300  # questions per collection in the floor study
NEGATIVES = 5  # unrelated passages per question


async def _floor_study(embedder, data, locomo_dir: Path, smoke: bool) -> list[list]:
    """How the cosine floor of the prompt hook (MEMORYWIKI_HOOK_MIN_SIMILARITY) splits passages
    that answer a question from passages that do not, on two collections: SciFact (a claim and
    its evidence abstract) and LoCoMo (a question about a conversation and its evidence turn),
    each question against its own evidence and NEGATIVES passages drawn from elsewhere."""
    import random

    import numpy as np

    rng = random.Random(5)
    n = 20 if smoke else PAIRS
    by_id = {d["_id"]: d for d in data.corpus}
    sets = []
    scifact = []
    for qid, question in list(data.queries.items())[:n]:
        relevant = [by_id[d] for d in data.qrels[qid] if d in by_id]
        if relevant:
            others = [d for d in rng.sample(data.corpus, NEGATIVES + 5) if d["_id"] not in data.qrels[qid]]
            scifact.append((question, relevant[0], others[:NEGATIVES]))
    text = lambda d: f"{d['title']}\n\n{d['text']}"[:1500]  # noqa: E731  (about one chunk)
    sets.append(("SciFact", [(q, text(r), [text(o) for o in others]) for q, r, others in scifact]))
    if (locomo_dir / "locomo10_turns.jsonl").exists():
        turns = [json.loads(line) for line in open(locomo_dir / "locomo10_turns.jsonl") if line.strip()]
        by_turn = {(t["sample_id"], t["dia_id"]): t for t in turns}
        qa = [json.loads(line) for line in open(locomo_dir / "locomo10_qa_normalized.jsonl") if line.strip()]
        qa = [q for q in qa if q.get("category") in (1, 2, 3, 4) and q.get("evidence")]
        rng.shuffle(qa)
        pairs = []
        for q in qa:
            evidence = by_turn.get((q["sample_id"], q["evidence"][0]))
            if evidence is None:
                continue
            others = [t for t in rng.sample(turns, NEGATIVES * 3) if t["sample_id"] != q["sample_id"]][:NEGATIVES]
            pairs.append(
                (
                    q["question"],
                    f"{evidence['speaker']}: {evidence['text']}",
                    [f"{t['speaker']}: {t['text']}" for t in others],
                )
            )
            if len(pairs) >= n:
                break
        sets.append(("LoCoMo", pairs))
    rows = []
    for name, pairs in sets:
        questions = np.asarray(await embedder.embed_questions([q for q, _, _ in pairs]), dtype=np.float32)
        passages = [p for _, rel, others in pairs for p in [rel, *others]]
        vectors = np.asarray(await embedder.embed(passages), dtype=np.float32).reshape(len(pairs), NEGATIVES + 1, -1)
        sims = np.einsum("qd,qpd->qp", questions, vectors) / (
            np.linalg.norm(questions, axis=1)[:, None] * np.linalg.norm(vectors, axis=2)
        )
        relevant, unrelated = sims[:, 0], sims[:, 1:].ravel()
        for floor in FLOORS:
            kept = (relevant >= floor).mean()
            leaked = (unrelated >= floor).mean()
            rows.append(
                [
                    name,
                    len(pairs),
                    floor,
                    float(np.median(relevant)),
                    float(np.median(unrelated)),
                    float(kept),
                    float(leaked),
                ]
            )
    return rows


def _row(name: str, walls: list[float], cpus: list[float] | None, budget: str, note: str = "") -> list:
    return [
        name,
        len(walls),
        pct(walls, 50),
        pct(walls, 95),
        max(walls) if walls else None,
        pct(cpus, 50) if cpus else None,
        budget,
        note,
    ]


async def _main(opts: Options, pg: Postgres) -> dict:
    data = load_beir(opts.dataset)
    n = 300 if opts.smoke else 10_000
    runs = opts.requests or (5 if opts.smoke else 100)
    embedder = make_bench_embedder()
    texts = chunk_texts(data.corpus, n)
    base = await sample_vectors(embedder, [t for _, t in texts[:SAMPLE]], opts.smoke)
    url, build_s = build_hub(pg, f"bench_hooks_{n}", n, texts, make_vectors(base, n), embedder.name, opts.smoke)
    from memorywiki.server.tokens import hash_token

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE hubs SET owner_token_hash = %s WHERE slug = 'lat'", (hash_token(TOKEN),))
    root = Path(tempfile.mkdtemp(prefix="bench-hooks-"))
    project = _project_dir(root)
    results: dict = {"n": n, "runs": runs}
    # worker external, as the latency section: an in-process worker would chunk the built hub's
    # docs again from their (empty) markdown
    with Proc("serve", url, opts.out / ".logs", worker="external") as server:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        project_body = {"name": PROJECT, "remote": f"git@github.com:bench/{PROJECT}.git", "path": str(project)}
        # cold: the first session start after the server started
        config = root / ".config" / "memorywiki" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(
            f'server = "{server.url}"\nhub = "lat"\n[hubs.lat]\nowner_token = "{TOKEN}"\n'
            "[hooks]\nstart_timeout = 30\nprompt_timeout = 30\n"
        )
        env = {"HOME": str(root), "PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"}
        start_payload = {"session_id": "bench", "cwd": str(project), "source": "startup"}
        cold_wall, cold_cpu, _ = _run_hook(env, project, "session-start", start_payload)

        async with httpx.AsyncClient(base_url=server.url, timeout=120) as client:
            for i, transcript in enumerate(_sessions(data.corpus)):
                r = await client.put(
                    f"/api/hub/lat/agent-sessions/claude-code/bench-{i}",
                    json={"title": f"{PROJECT}: session {i}", "transcript": transcript, "project": project_body},
                    headers=headers,
                )
                r.raise_for_status()

        for _ in range(5):  # warm-up
            _run_hook(env, project, "session-start", start_payload)
        # The installed command, and every other run the same hook started as `python -m` and
        # the two interpreter floors, one after another: on a shared machine each row then sees
        # the same load, so the rows compare (their order within a round alternates).
        start_walls, start_cpus, tokens = [], [], []
        module_walls, module_cpus = [], []
        floor_walls, floor_cpus, lean_floor_walls, lean_floor_cpus = [], [], [], []
        for i in range(runs):
            if i % 2 == 0:
                wall, cpu, _ = _run_hook(env, project, "session-start", start_payload, module=True)
                module_walls.append(wall)
                module_cpus.append(cpu)
            wall, cpu, out = _run_hook(env, project, "session-start", start_payload)
            start_walls.append(wall)
            start_cpus.append(cpu)
            tokens.append(json.loads(out)["systemMessage"].split(" tokens")[0].rsplit(" ", 1)[-1])
            if i % 2 == 1:
                for flags, walls, cpus in (
                    ((), floor_walls, floor_cpus),
                    (("-I", "-S"), lean_floor_walls, lean_floor_cpus),
                ):
                    w, c = _python_floor(1, *flags)
                    walls += w
                    cpus += c
        sample = json.loads(_run_hook(env, project, "session-start", start_payload)[2])
        injected = sample["hookSpecificOutput"]["additionalContext"]

        questions = list(data.queries.values())[:runs]
        prompt_walls, prompt_cpus, added = [], [], 0
        for q in questions:
            wall, cpu, out = _run_hook(
                env, project, "prompt", {"session_id": "bench", "cwd": str(project), "prompt": q}
            )
            prompt_walls.append(wall)
            prompt_cpus.append(cpu)
            added += bool(out.strip())

        # the server's share: the same start context from a keep-alive client
        conn = _Connection("127.0.0.1", server.port)
        body = json.dumps({"kind": "start", "project": project_body}).encode()
        server_ms: list[float] = []
        phases: dict[str, list[float]] = {}
        for _ in range(runs * 2):
            t0 = time.perf_counter()
            status, _ = await conn.post("/api/hub/lat/agent-context", body, f"authorization: Bearer {TOKEN}\r\n")
            server_ms.append((time.perf_counter() - t0) * 1000)
            assert status == 200, status
            for name, ms in server_timing(conn.head).items():
                phases.setdefault(name, []).append(ms)
        await conn.close()

        end_walls, end_cpus = [], []
        transcript_dir = root / "transcripts"
        for i in range(min(runs, 20)):
            path = transcript_dir / f"end-{i}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                json.dumps(
                    {
                        "type": "user",
                        "uuid": f"u{i}",
                        "parentUuid": None,
                        "sessionId": f"end-{i}",
                        "cwd": str(project),
                        "message": {"role": "user", "content": "Keep the cohort analysis as decided."},
                    }
                )
                + "\n"
            )
            wall, cpu, _ = _run_hook(
                env,
                project,
                "session-end",
                {"session_id": f"end-{i}", "transcript_path": str(path), "cwd": str(project)},
            )
            end_walls.append(wall)
            end_cpus.append(cpu)
    floor_rows = await _floor_study(embedder, data, opts.locomo, opts.smoke)

    rows = [
        _row("`python -c pass` (the interpreter alone)", floor_walls, floor_cpus, "–"),
        _row("`python -I -S -c pass` (the installed command's floor)", lean_floor_walls, lean_floor_cpus, "–"),
        _row(
            "session start (warm server)",
            start_walls,
            start_cpus,
            f"p95 < {GOAL_P95_MS:.0f} ms; {2000:,} ms time-out",
            f"tokens injected p50 {pct([float(t) for t in tokens], 50):.0f} (budget 1,500)",
        ),
        _row(
            "session start, as `python -m memorywiki.adapters.hooks` (site, the package's path)",
            module_walls,
            module_cpus,
            "–",
            "the command before this change",
        ),
        _row(
            "prompt (--recall-prompts)",
            prompt_walls,
            prompt_cpus,
            "1,000 ms time-out",
            f"added to {added} of {len(questions)} prompts",
        ),
        _row("session end (hands the capture to a detached child)", end_walls, end_cpus, "Codex clamps it to 3 s", ""),
        _row(
            "start context, the server's share (keep-alive client)",
            server_ms,
            None,
            "–",
            "Server-Timing p50: " + ", ".join(f"{k} {pct(v, 50):.1f} ms" for k, v in phases.items()),
        ),
        _row(
            "session start, cold (the first after the server starts)",
            [cold_wall],
            [cold_cpu],
            "2,000 ms time-out",
            "one run",
        ),
    ]
    table = md_table(["hook", "runs", "wall p50 ms", "p95", "max", "CPU p50 ms", "budget", "note"], rows, digits=1)
    p95 = pct(start_walls, 95)
    verdict = "meets" if p95 < GOAL_P95_MS else "misses"
    text = f"""## Coding-tool hooks: what a session waits for

`{opts.command or "python -m bench hooks"}`. A hub of {n:,} chunks (the latency section's build, {build_s:.0f} s;
SciFact abstracts then synthetic distractors, perturbed real {embedder.name} vectors) plus {SESSIONS}
captured sessions of the project `{PROJECT}` (its git remote and path), on this checkout's server
(bench.proc serve, local embedder, its question cache on as by default: a project's start asks the
same question each time). Each hook is a new process, as Claude Code starts it, with the command
`memorywiki install claude-code --hooks` writes: `PYTHON -I -S .../adapters/hooks/run.py
claude-code EVENT`, the tool's JSON on stdin; wall time is what the tool waits (spawn to exit),
CPU the hook process's own. {runs} runs per row after 5 warm-up runs; the `python -m` start and
the two floors ran every other round of the session starts ({len(module_walls)} runs each), so
those four rows saw the same load.

{table}

Session start, p95 {fmt(p95, 1)} ms: **{verdict}** the goal of {GOAL_P95_MS:.0f} ms. The interpreter's own
start is the floor of any hook in Python; `-I -S` takes site (site-packages' .pth files, an
editable install's finder) out of it, and the hook adds a handful of modules (os, `_socket`,
`_json` and its own three: no json package, re, pathlib, socket, threading or tomllib, see
adapters/hooks/lean.py), the config read, the git remote read from .git/config, one request
over HTTP/1.1, and the answer's JSON.

The relevance floor of the prompt hook (`MEMORYWIKI_HOOK_MIN_SIMILARITY`, cosine, default 0.4),
against the same embedder: each question beside its own evidence passage and {NEGATIVES} passages
drawn from elsewhere in the collection (SciFact: a claim and its evidence abstract, about one
chunk; LoCoMo: a question about a conversation and its evidence turn, against turns of other
conversations). "kept": the share of evidence passages at or above the floor; "let through": the
share of unrelated ones.

{md_table(["collection", "questions", "floor", "evidence cosine p50", "unrelated cosine p50", "evidence kept", "unrelated let through"], floor_rows, digits=2)}

What a session start injected (one of the runs):

```
{injected}
```
"""
    print(text)
    write_result(opts, "hooks.md", text + "\n" + machine_line() + "\n")
    results.update(start_p50=pct(start_walls, 50), start_p95=p95, prompt_p95=pct(prompt_walls, 95))
    return results


def run(opts: Options, pg: Postgres) -> dict:
    log("[hooks] timing the coding-tool hooks")
    return asyncio.run(_main(opts, pg))
