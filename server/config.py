"""Settings read once from the environment at startup, so every module sees the same values.

Nothing else in the server reads (or writes) os.environ: routes, the embedders and the
capture code get their limits and switches from the one `Settings` the app was built with.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, TypeVar

import platformdirs

from .store.embedded import parse_size
from .store.graph import EdgeRule

T = TypeVar("T")

MB = 1024 * 1024


class SettingsError(ValueError):
    """An environment variable holds a value the server cannot use."""


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("memorywiki"))


@dataclass(frozen=True)
class Settings:
    database_url: str | None = None
    data_dir: Path = field(default_factory=default_data_dir)
    public_url: str | None = None
    # embedder
    embedder: str = "auto"  # openai | local | none | auto
    openai_model: str = "text-embedding-3-small"
    openai_api_key: str | None = field(default=None, repr=False)
    openai_base_url: str | None = None  # any OpenAI-compatible endpoint (Ollama, vLLM, TEI...)
    local_model_dir: str | None = None
    local_backend: str = "auto"  # auto | onnx | torch: ONNX Runtime when installed, torch the fallback
    # int8 weights, a space of their own: half the CPU per question, SciFact nDCG@10 within 0.005
    # and LoCoMo recall as fp32 (bench/results, embedding and latency); MEMORYWIKI_LOCAL_INT8=0: fp32
    local_quantize: bool = True
    local_batch: int = 16  # texts per forward pass when indexing; questions go between passes
    local_threads: int = 0  # ONNX Runtime threads per indexing pass, question passes side by side; 0 = one per core
    # indexing's floor under a stream of questions (embedders._QuestionsFirst): a waiting
    # indexing pass goes after this many questions answered or this many ms, and while
    # questions flow a pass takes this many texts. Measured with all-MiniLM-L6-v2 on 2 cores:
    # a question pass costs ~3 ms, a chunk of ~1,200 chars ~33 ms alone and ~41 ms each in a
    # pass of 16 (padding): one chunk per pass indexes as fast and holds a question back at
    # most one chunk; at ~40 questions/s, 8 answered means a pass at least 5 times a second.
    local_floor_questions: int = 8
    local_floor_ms: float = 500.0
    local_floor_batch: int = 1
    embed_batch: int = 128
    embed_timeout: float = 30.0
    embed_max_retries: int = 2
    # the question lane (server/embedding/questions.py)
    question_cache: int = 1024  # questions whose vectors are kept (LRU); 0 turns the cache off
    question_batch: int = 32  # questions embedded together in one forward pass at most
    # indexing: this server indexes (in_process_worker) or leaves it to `memorywiki worker`
    # processes; worker_process: in a child process of the server (None: when the embedder
    # runs locally, so its CPU work never shares the server's interpreter)
    in_process_worker: bool = True
    worker_process: bool | None = None
    worker_max_backoff: float = 60.0  # longest wait between tries while the embedder is down
    # texts a worker embeds per batch at most: a bigger doc is indexed a slice at a time, its
    # vectors written as they come (indexer.index_docs). 64 chunks of ~1,200 chars are ~2 s of
    # a 2-core CPU with all-MiniLM-L6-v2, so a page saved behind a 5 MB one waits seconds, not minutes
    index_slice: int = 64
    # the child worker's CPU priority below the server's (worker.WorkerProcess); the kernel gives
    # a nice-5 process ~1/3 of a nice-0 one's share (weights 335 vs 1024), nice 10 ~1/9: under
    # saturating recall nice 10 starved indexing (96 chunks in 240 s, bench/results/underload.md)
    worker_nice: int = 5
    # set by the server, not the environment: where its embedding child publishes the questions
    # in flight, so that its indexing child yields to them (server/embedding/question_board.py)
    question_board: str | None = None
    # optional rerank stage: any POST {url}/rerank of the Cohere / Jina / TEI shape
    rerank_url: str | None = None
    rerank_model: str | None = None
    rerank_api_key: str | None = field(default=None, repr=False)
    rerank_format: str = "cohere"  # cohere (sends `documents`: Cohere, Jina, vLLM...) | tei (`texts`)
    rerank_candidates: int = 30  # fused results sent to the reranker (at least k)
    rerank_timeout: float = 10.0
    # database
    # the embedded cluster's shared_buffers: auto (a quarter of the memory, 128 MB to 2 GB),
    # a size such as 1GB, or keep (leave the cluster's own); unused with DATABASE_URL
    pg_shared_buffers: str = "auto"
    db_timeout: float = 10.0  # a request's wait for a database connection, then 503 + Retry-After
    # request bodies
    max_body_bytes: int = 5 * MB  # a JSON body (a doc's markdown)
    max_query_bytes: int = 64 * 1024  # a recall question
    max_upload_bytes: int = 50 * MB  # one captured file
    max_export_bytes: int = 500 * MB  # a ChatGPT / Claude export
    # fetching a URL to capture
    fetch_max_bytes: int = 10_000_000
    fetch_timeout: float = 15.0
    fetch_allow_loopback: bool = False  # tests only: admits 127.0.0.1, never private ranges
    # BM25
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    # Curation (server/curation/). No chat model: enrichment is extractive.
    curation: bool = True  # MEMORYWIKI_CURATION=off: no enrichment, digest or suggestions work
    llm_model: str | None = None  # a chat model on OPENAI_BASE_URL (or llm_base_url)
    llm_base_url: str | None = None
    llm_timeout: float = 120.0
    llm_max_retries: int = 1
    llm_window_tokens: int = 3000  # doc text per model call; longer docs are map-reduced
    llm_doc_tokens: int = 12000  # doc text sent per doc at most, over all its calls
    llm_output_tokens: int = 1500  # answer tokens per call
    curation_vector_grace: float = 120.0  # seconds enrichment waits for a doc's vectors
    # text the extractive enrichment reads per doc at most (the most central chunks): ~1.5 s
    # of CPU for 100,000 chars, where a whole 5 MB page took 95 s (server/curation/enrich.py)
    curation_extract_chars: int = 100_000
    curation_retry_seconds: float = 5.0  # first back-off after a model outage (doubles, max 5 min)
    suggest_debounce: float = 5.0  # seconds a hub is left to settle before regrouping
    suggest_neighbors: int = 5
    suggest_min_similarity: float = 0.35
    suggest_max_docs: int = 2000  # suggestions group a hub's newest docs (similarities are n x n)
    digest_compact_tokens: int = 2000
    # security: the key that signs CSRF tokens (unset: a random key kept in the database, so
    # every server process on one database shares it), and per-client rate limits in the
    # `limits` notation ("10/minute", "100 per hour")
    secret_key: str | None = field(default=None, repr=False)
    csrf_max_age: int = 24 * 3600  # seconds a page's CSRF token stays valid
    rate_password: str = "10/minute"  # wrong passwords, per client
    rate_token_failures: str = "30/minute"  # refused tokens (hub owner, edit, access), per client
    rate_embed: str = "60/minute"  # POST /api/embed/*, per client
    # the hub graph: docs closer than this cosine distance are neighbours (store/graph.py)
    graph_max_distance: float = 0.42
    graph_max_neighbours: int = 50
    # the editor saves this many seconds after the last keystroke
    autosave_seconds: float = 10.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides) -> "Settings":
        """Settings from environment variables; `overrides` that are not None win."""
        env = os.environ if env is None else env
        read = _Reader(env)
        worker = read.choice("MEMORYWIKI_WORKER", ("auto", "inprocess", "process", "external"), "auto")
        values = dict(
            database_url=read.text("DATABASE_URL"),
            data_dir=read.get("MEMORYWIKI_DATA_DIR", Path, default_data_dir()),
            public_url=read.text("MEMORYWIKI_PUBLIC_URL"),
            embedder=(read.text("MEMORYWIKI_EMBEDDER") or "auto").strip().lower(),
            openai_model=read.text("MEMORYWIKI_OPENAI_MODEL") or cls.openai_model,
            openai_api_key=read.text("OPENAI_API_KEY"),
            openai_base_url=read.text("OPENAI_BASE_URL"),
            local_model_dir=read.text("MEMORYWIKI_LOCAL_MODEL"),
            local_backend=read.choice("MEMORYWIKI_LOCAL_BACKEND", ("auto", "onnx", "torch"), cls.local_backend),
            local_quantize=read.text("MEMORYWIKI_LOCAL_INT8") is None or read.flag("MEMORYWIKI_LOCAL_INT8"),
            local_batch=read.get("MEMORYWIKI_LOCAL_BATCH", int, cls.local_batch),
            local_threads=read.get("MEMORYWIKI_LOCAL_THREADS", int, cls.local_threads),
            local_floor_questions=read.get("MEMORYWIKI_LOCAL_FLOOR_QUESTIONS", int, cls.local_floor_questions),
            local_floor_ms=read.get("MEMORYWIKI_LOCAL_FLOOR_MS", float, cls.local_floor_ms),
            local_floor_batch=read.get("MEMORYWIKI_LOCAL_FLOOR_BATCH", int, cls.local_floor_batch),
            embed_batch=read.get("MEMORYWIKI_EMBED_BATCH", int, cls.embed_batch),
            embed_timeout=read.get("MEMORYWIKI_EMBED_TIMEOUT", float, cls.embed_timeout),
            embed_max_retries=read.get("MEMORYWIKI_EMBED_RETRIES", int, cls.embed_max_retries),
            question_cache=read.get("MEMORYWIKI_QUESTION_CACHE", int, cls.question_cache),
            question_batch=read.get("MEMORYWIKI_QUESTION_BATCH", int, cls.question_batch),
            in_process_worker=worker != "external",
            worker_process={"process": True, "inprocess": False}.get(worker),
            worker_max_backoff=read.get("MEMORYWIKI_WORKER_MAX_BACKOFF", float, cls.worker_max_backoff),
            worker_nice=read.get("MEMORYWIKI_WORKER_NICE", int, cls.worker_nice),
            index_slice=read.get("MEMORYWIKI_INDEX_SLICE", int, cls.index_slice),
            pg_shared_buffers=read.get("MEMORYWIKI_PG_SHARED_BUFFERS", _buffers, cls.pg_shared_buffers),
            db_timeout=read.get("MEMORYWIKI_DB_TIMEOUT", float, cls.db_timeout),
            rerank_url=read.text("MEMORYWIKI_RERANK_URL"),
            rerank_model=read.text("MEMORYWIKI_RERANK_MODEL"),
            rerank_api_key=read.text("MEMORYWIKI_RERANK_API_KEY"),
            rerank_format=read.choice("MEMORYWIKI_RERANK_FORMAT", ("cohere", "tei"), cls.rerank_format),
            rerank_candidates=read.get("MEMORYWIKI_RERANK_CANDIDATES", int, cls.rerank_candidates),
            rerank_timeout=read.get("MEMORYWIKI_RERANK_TIMEOUT", float, cls.rerank_timeout),
            max_body_bytes=read.get("MEMORYWIKI_MAX_BODY_BYTES", int, cls.max_body_bytes),
            max_query_bytes=read.get("MEMORYWIKI_MAX_QUERY_BYTES", int, cls.max_query_bytes),
            max_upload_bytes=read.get("MEMORYWIKI_MAX_UPLOAD_BYTES", int, cls.max_upload_bytes),
            max_export_bytes=read.get("MEMORYWIKI_MAX_EXPORT_BYTES", int, cls.max_export_bytes),
            fetch_max_bytes=read.get("MEMORYWIKI_FETCH_MAX_BYTES", int, cls.fetch_max_bytes),
            fetch_timeout=read.get("MEMORYWIKI_FETCH_TIMEOUT", float, cls.fetch_timeout),
            fetch_allow_loopback=read.flag("MEMORYWIKI_FETCH_ALLOW_LOOPBACK"),
            bm25_k1=read.get("MEMORYWIKI_BM25_K1", float, cls.bm25_k1),
            bm25_b=read.get("MEMORYWIKI_BM25_B", float, cls.bm25_b),
            curation=read.text("MEMORYWIKI_CURATION") is None or read.flag("MEMORYWIKI_CURATION"),
            llm_model=(read.text("MEMORYWIKI_LLM_MODEL") or "").strip() or None,
            llm_base_url=(read.text("MEMORYWIKI_LLM_BASE_URL") or "").strip() or None,
            llm_timeout=read.get("MEMORYWIKI_LLM_TIMEOUT", float, cls.llm_timeout),
            llm_max_retries=read.get("MEMORYWIKI_LLM_RETRIES", int, cls.llm_max_retries),
            llm_window_tokens=read.get("MEMORYWIKI_LLM_WINDOW_TOKENS", int, cls.llm_window_tokens),
            llm_doc_tokens=read.get("MEMORYWIKI_LLM_DOC_TOKENS", int, cls.llm_doc_tokens),
            llm_output_tokens=read.get("MEMORYWIKI_LLM_OUTPUT_TOKENS", int, cls.llm_output_tokens),
            curation_vector_grace=read.get("MEMORYWIKI_CURATION_VECTOR_GRACE", float, cls.curation_vector_grace),
            curation_extract_chars=read.get("MEMORYWIKI_CURATION_EXTRACT_CHARS", int, cls.curation_extract_chars),
            suggest_debounce=read.get("MEMORYWIKI_SUGGEST_DEBOUNCE", float, cls.suggest_debounce),
            suggest_neighbors=read.get("MEMORYWIKI_SUGGEST_NEIGHBORS", int, cls.suggest_neighbors),
            suggest_min_similarity=read.get("MEMORYWIKI_SUGGEST_MIN_SIMILARITY", float, cls.suggest_min_similarity),
            digest_compact_tokens=read.get("MEMORYWIKI_DIGEST_COMPACT_TOKENS", int, cls.digest_compact_tokens),
            curation_retry_seconds=read.get("MEMORYWIKI_CURATION_RETRY", float, cls.curation_retry_seconds),
            suggest_max_docs=read.get("MEMORYWIKI_SUGGEST_MAX_DOCS", int, cls.suggest_max_docs),
            secret_key=read.text("MEMORYWIKI_SECRET_KEY"),
            csrf_max_age=read.get("MEMORYWIKI_CSRF_MAX_AGE", int, cls.csrf_max_age),
            rate_password=read.get("MEMORYWIKI_RATE_PASSWORD", _rate, cls.rate_password),
            rate_token_failures=read.get("MEMORYWIKI_RATE_TOKEN_FAILURES", _rate, cls.rate_token_failures),
            rate_embed=read.get("MEMORYWIKI_RATE_EMBED", _rate, cls.rate_embed),
            graph_max_distance=read.get("MEMORYWIKI_GRAPH_MAX_DISTANCE", float, cls.graph_max_distance),
            graph_max_neighbours=read.get("MEMORYWIKI_GRAPH_MAX_NEIGHBOURS", int, cls.graph_max_neighbours),
            autosave_seconds=read.get("MEMORYWIKI_AUTOSAVE_SECONDS", float, cls.autosave_seconds),
        )
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    @property
    def edge_rule(self) -> EdgeRule:
        return EdgeRule(max_distance=self.graph_max_distance, max_neighbours=self.graph_max_neighbours)


def _rate(value: str) -> str:
    """A rate limit as `limits` parses it ("10/minute", "5 per second"); ValueError if it is not one."""
    from limits import parse

    parse(value)
    return value


def _buffers(value: str) -> str:
    """auto, keep, or a size of at least 128MB; ValueError otherwise."""
    return value.lower() if value.lower() in ("auto", "keep") else parse_size(value)


class _Reader:
    def __init__(self, env: Mapping[str, str]):
        self.env = env

    def text(self, name: str) -> str | None:
        return self.env.get(name) or None

    def get(self, name: str, parse: Callable[[str], T], default: T) -> T:
        value = self.env.get(name, "").strip()
        if not value:
            return default
        try:
            return parse(value)
        except ValueError:
            kind = {int: "a whole number", float: "a number", _rate: "a rate such as 10/minute",
                    _buffers: "auto, keep or a size of at least 128MB such as 1GB"}.get(parse, "a path")
            raise SettingsError(f"{name} must be {kind}, not {value!r}") from None

    def choice(self, name: str, allowed: tuple[str, ...], default: str) -> str:
        value = self.env.get(name, "").strip().lower()
        if not value:
            return default
        if value not in allowed:
            raise SettingsError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
        return value

    def flag(self, name: str) -> bool:
        return self.env.get(name, "").strip().lower() in ("1", "true", "yes", "on")
