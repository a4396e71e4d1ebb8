"""Settings read once from the environment at startup, so every module sees the same values.

Nothing else in the server reads (or writes) os.environ: routes, the embedders and the
capture code get their limits and switches from the one `Settings` the app was built with.
Each setting is declared once below; docs/configuration.md is generated from the declarations:
`python -m memorywiki.server.config --markdown > docs/configuration.md`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from .indexing.chunker import DEFAULT_MAX_CHARS, DEFAULT_OVERLAP_CHARS, ChunkSize
from .setting import SettingsError, declared, listing, markdown, read_env, section, setting
from .store.embedded import parse_size
from .store.graph import EdgeRule

__all__ = ["Settings", "SettingsError", "cli_debug", "configuration_markdown", "default_data_dir", "settings_listing"]

MB = 1024 * 1024
RATE = "a rate such as 10/minute"
WORKER_CHOICES = ("auto", "inprocess", "process", "external")


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("memorywiki"))


def _rate(value: str) -> str:
    """A rate limit as `limits` parses it ("10/minute", "5 per second"); ValueError if it is not one."""
    from limits import parse

    parse(value)
    return value


def _smtp_url(value: str) -> str:
    """smtp://[user:password@]host[:port] or smtps://...; ValueError otherwise."""
    from urllib.parse import urlsplit

    parts = urlsplit(value)
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise ValueError(value)
    parts.port  # noqa: B018  (a port that is no number raises ValueError)
    return value


def _address(value: str) -> str:
    """One mail address (optionally "Name <address>"), on one line; ValueError otherwise."""
    from email.utils import parseaddr

    if "\r" in value or "\n" in value or "@" not in parseaddr(value)[1]:
        raise ValueError(value)
    return value


def _hosts(value: str) -> tuple[str, ...]:
    """Host names, comma-separated ("wiki.example.com, *.example.org, 192.168.1.20"); ValueError
    for a name with a scheme, a path or a port, which a Host header never matches."""
    hosts = tuple(h.strip().lower().strip("[]") for h in value.split(",") if h.strip())
    for host in hosts:
        if not host or any(c in host for c in "/@ ") or (host.count(":") == 1):
            raise ValueError(value)
    return hosts


def _public_url(value: str) -> str:
    """An http(s) URL with a host; ValueError otherwise."""
    from urllib.parse import urlsplit

    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(value)
    return value


def _replica_urls(value: str) -> tuple[str, ...]:
    """PostgreSQL URLs separated by commas or spaces; ValueError for one that is no such URL."""
    from urllib.parse import urlsplit

    from psycopg.conninfo import conninfo_to_dict

    urls = tuple(u for u in value.replace(",", " ").split() if u)
    for url in urls:
        if not url.startswith(("postgresql://", "postgres://")):
            raise ValueError(url)
        try:
            urlsplit(url).port  # noqa: B018  (a port that is no number raises ValueError)
            conninfo_to_dict(url)
        except Exception as exc:
            raise ValueError(url) from exc
    return urls


def _seconds(value: str) -> float:
    """A positive number of seconds; ValueError otherwise."""
    seconds = float(value)
    if not seconds > 0:
        raise ValueError(value)
    return seconds


def _days(value: str) -> int:
    """A whole number of days from 1 to ten years; ValueError otherwise."""
    days = int(value)
    if not 1 <= days <= 3650:
        raise ValueError(value)
    return days


def _buffers(value: str) -> str:
    """auto, keep, or a size of at least 128MB; ValueError otherwise."""
    return value.lower() if value.lower() in ("auto", "keep") else parse_size(value)


@dataclass(frozen=True)
class Settings:
    section("Server")
    database_url: str | None = setting(
        None, "DATABASE_URL", "PostgreSQL with pgvector; unset: an embedded PostgreSQL in the data dir"
    )
    data_dir: Path = setting(
        None,
        "MEMORYWIKI_DATA_DIR",
        "where the embedded PostgreSQL and the built models live (the user data dir)",
        factory=default_data_dir,
        shown_default="~/.local/share/memorywiki",
    )
    public_url: str | None = setting(
        None,
        "MEMORYWIKI_PUBLIC_URL",
        "the URL links are built from (pages, answers, mails); unset: the request's (trusted) host",
        parse=_public_url,
        expects="an http:// or https:// URL",
    )
    # Starlette's TrustedHostMiddleware rule, answered in the error model (server/web/hosts.py)
    trusted_hosts: tuple[str, ...] = setting(
        ("localhost", "127.0.0.1", "::1"),
        "MEMORYWIKI_TRUSTED_HOSTS",
        "host names answered, comma-separated (*.example.com: subdomains); any other Host gets 400",
        parse=_hosts,
        expects="host names separated by commas, without scheme or port",
        shown_default="localhost,127.0.0.1,::1",
    )
    forwarded_allow_ips: str = setting(
        "127.0.0.1",
        "MEMORYWIKI_FORWARDED_ALLOW_IPS",
        "proxies (addresses or networks, comma-separated) whose X-Forwarded-For/-Proto are believed",
    )
    # one variable, two fields: indexing in this server or in `memorywiki worker` processes, and
    # in a child process of the server (None, for auto: when the embedder runs locally)
    in_process_worker: bool = setting(
        True,
        "MEMORYWIKI_WORKER",
        "where indexing runs: auto, inprocess, process or external (`memorywiki worker`)",
        choices=WORKER_CHOICES,
        parse=lambda v: v != "external",
        shown_default="auto",
    )
    worker_process: bool | None = setting(
        None,
        "MEMORYWIKI_WORKER",
        "",
        choices=WORKER_CHOICES,
        parse={"process": True, "inprocess": False}.get,
        listed=False,
    )
    worker_max_backoff: float = setting(
        60.0,
        "MEMORYWIKI_WORKER_MAX_BACKOFF",
        "longest wait in seconds between tries while the embedder, chat model or database is down",
    )
    # low enough that indexing never slows recall, not so low it starves (bench/results/underload.md)
    worker_nice: int = setting(
        5, "MEMORYWIKI_WORKER_NICE", "how much lower the child worker's CPU priority is than the server's"
    )
    index_slice: int = setting(
        64, "MEMORYWIKI_INDEX_SLICE", "texts embedded per batch at most: a big doc is indexed a slice at a time"
    )
    # read by the `memorywiki` command (cli/main.py, through cli_debug below), for bug reports
    debug: bool = setting(
        False, "MEMORYWIKI_DEBUG", "`memorywiki` commands show the traceback of an unexpected error, not one line"
    )

    section("Embedding")
    embedder: str = setting(
        "auto",
        "MEMORYWIKI_EMBEDDER",
        "openai, local, none or auto (openai with a key, else local when installed, else none)",
        choices=("openai", "local", "none", "auto"),
    )
    openai_model: str = setting(
        "text-embedding-3-small", "MEMORYWIKI_OPENAI_MODEL", "the embedding model on the OpenAI-compatible endpoint"
    )
    openai_api_key: str | None = setting(
        None, "OPENAI_API_KEY", "key for the OpenAI-compatible endpoint (any value for a local one)", secret=True
    )
    openai_base_url: str | None = setting(
        None, "OPENAI_BASE_URL", "an OpenAI-compatible endpoint (Ollama, vLLM, TEI...); unset: OpenAI's"
    )
    embedder_scripts: str = setting(
        "auto",
        "MEMORYWIKI_EMBEDDER_SCRIPTS",
        "scripts the embedder reads: latin, all, or auto (latin for English models like all-MiniLM-L6-v2)",
        choices=("auto", "latin", "all"),
    )
    embed_batch: int = setting(128, "MEMORYWIKI_EMBED_BATCH", "texts per embedding request")
    embed_timeout: float = setting(30.0, "MEMORYWIKI_EMBED_TIMEOUT", "seconds an embedding request may take")
    embed_max_retries: int = setting(2, "MEMORYWIKI_EMBED_RETRIES", "retries of a failed embedding request")

    section("Local model")
    local_model_dir: str | None = setting(
        None,
        "MEMORYWIKI_LOCAL_MODEL",
        "a sentence-transformers model directory, BERT body, any tokenizer; unset: all-MiniLM-L6-v2 (English)",
    )
    local_backend: str = setting(
        "auto",
        "MEMORYWIKI_LOCAL_BACKEND",
        "auto, onnx or torch (auto: ONNX Runtime when installed)",
        choices=("auto", "onnx", "torch"),
    )
    # int8 is a vector space of its own: switching re-indexes (bench/results/embedding.md)
    local_quantize: bool = setting(True, "MEMORYWIKI_LOCAL_INT8", "int8 weights on ONNX Runtime; off: fp32")
    local_batch: int = setting(
        16, "MEMORYWIKI_LOCAL_BATCH", "texts per forward pass when indexing; questions go between passes"
    )
    local_threads: int = setting(
        0, "MEMORYWIKI_LOCAL_THREADS", "ONNX Runtime threads per indexing pass; 0: one per core"
    )
    # indexing's floor under a steady stream of questions (server/embedding/scheduling.py)
    local_floor_questions: int = setting(
        8, "MEMORYWIKI_LOCAL_FLOOR_QUESTIONS", "a waiting indexing pass goes after this many questions answered"
    )
    local_floor_ms: float = setting(
        500.0, "MEMORYWIKI_LOCAL_FLOOR_MS", "... or after this many milliseconds of waiting"
    )
    local_floor_batch: int = setting(
        1, "MEMORYWIKI_LOCAL_FLOOR_BATCH", "texts an indexing pass takes while questions flow"
    )
    question_cache: int = setting(
        1024, "MEMORYWIKI_QUESTION_CACHE", "questions whose vectors are kept (LRU); 0: no cache"
    )
    question_batch: int = setting(32, "MEMORYWIKI_QUESTION_BATCH", "questions embedded together in one pass at most")
    # set by the server for its children, never by the environment: where the embedding child
    # publishes its questions in flight (embedding/question_board.py)
    question_board: str | None = None

    section("Rerank")
    rerank_url: str | None = setting(
        None, "MEMORYWIKI_RERANK_URL", "a POST {url}/rerank endpoint (Cohere, Jina, TEI shape); unset: no rerank"
    )
    rerank_model: str | None = setting(None, "MEMORYWIKI_RERANK_MODEL", "the rerank model's name")
    rerank_api_key: str | None = setting(None, "MEMORYWIKI_RERANK_API_KEY", "key for the rerank endpoint", secret=True)
    rerank_format: str = setting(
        "cohere",
        "MEMORYWIKI_RERANK_FORMAT",
        "cohere (sends `documents`: Cohere, Jina, vLLM) or tei (sends `texts`)",
        choices=("cohere", "tei"),
    )
    rerank_candidates: int = setting(
        30, "MEMORYWIKI_RERANK_CANDIDATES", "fused results sent to the reranker (at least k)"
    )
    rerank_timeout: float = setting(10.0, "MEMORYWIKI_RERANK_TIMEOUT", "seconds a rerank request may take")

    section("Database")
    pg_shared_buffers: str = setting(
        "auto",
        "MEMORYWIKI_PG_SHARED_BUFFERS",
        "the embedded cluster's shared_buffers: auto, a size such as 1GB, or keep",
        parse=_buffers,
        expects="auto, keep or a size of at least 128MB such as 1GB",
    )
    db_timeout: float = setting(
        10.0, "MEMORYWIKI_DB_TIMEOUT", "seconds a request waits for a connection, then 503 with Retry-After"
    )
    # docs/architecture.md, "Read replicas": public reads only; writes and owner reads stay on the primary
    replica_urls: tuple[str, ...] = setting(
        (),
        "MEMORYWIKI_REPLICA_URLS",
        "streaming replicas public reads (recall, pages, graph...) are spread over; unset: the primary's",
        parse=_replica_urls,
        expects="postgresql:// URLs separated by commas",
        shown_default="",
    )
    replica_max_lag: float = setting(
        10.0,
        "MEMORYWIKI_REPLICA_MAX_LAG",
        "seconds a replica may lag behind the primary; further behind, it is skipped until it catches up",
        parse=_seconds,
        expects="a number of seconds above 0",
    )
    replica_check_seconds: float = setting(
        1.0,
        "MEMORYWIKI_REPLICA_CHECK_SECONDS",
        "seconds between checks of each replica's health and replay position",
        parse=_seconds,
        expects="a number of seconds above 0",
    )

    section("Limits")
    max_body_bytes: int = setting(5 * MB, "MEMORYWIKI_MAX_BODY_BYTES", "largest JSON body (a doc's markdown)")
    max_query_bytes: int = setting(64 * 1024, "MEMORYWIKI_MAX_QUERY_BYTES", "largest recall request")
    max_upload_bytes: int = setting(50 * MB, "MEMORYWIKI_MAX_UPLOAD_BYTES", "largest captured file")
    max_export_bytes: int = setting(500 * MB, "MEMORYWIKI_MAX_EXPORT_BYTES", "largest ChatGPT or Claude export")
    fetch_max_bytes: int = setting(10_000_000, "MEMORYWIKI_FETCH_MAX_BYTES", "largest page fetched to capture a URL")
    fetch_timeout: float = setting(15.0, "MEMORYWIKI_FETCH_TIMEOUT", "seconds fetching a URL may take")
    fetch_allow_loopback: bool = setting(
        False, "MEMORYWIKI_FETCH_ALLOW_LOOPBACK", "tests only: fetch from 127.0.0.1 (never private ranges)"
    )

    section("Chunks")
    # every server and worker on one database must cut alike, or each re-chunks the others' docs
    chunk_max_chars: int = setting(
        DEFAULT_MAX_CHARS,
        "MEMORYWIKI_CHUNK_MAX_CHARS",
        "most characters in a chunk; one past the model's window is embedded as its windows' mean",
    )
    chunk_overlap_chars: int = setting(
        DEFAULT_OVERLAP_CHARS,
        "MEMORYWIKI_CHUNK_OVERLAP_CHARS",
        "characters a cut block's next piece repeats (at most half the maximum)",
    )
    chunk_turn_chars: int = setting(
        0,
        "MEMORYWIKI_CHUNK_TURN_CHARS",
        "most characters in a conversation's chunk, a longer turn cut in pieces (0: the maximum)",
    )

    section("Full text")
    bm25_k1: float = setting(1.2, "MEMORYWIKI_BM25_K1", "BM25 term-frequency saturation")
    bm25_b: float = setting(0.75, "MEMORYWIKI_BM25_B", "BM25 length normalisation")

    section("Curation")
    curation: bool = setting(
        True, "MEMORYWIKI_CURATION", "enrichment, digests and suggested bundles; off: none of them"
    )
    llm_model: str | None = setting(
        None, "MEMORYWIKI_LLM_MODEL", "a chat model for enrichment; unset: extractive enrichment"
    )
    llm_base_url: str | None = setting(
        None, "MEMORYWIKI_LLM_BASE_URL", "the chat model's OpenAI-compatible endpoint; unset: OPENAI_BASE_URL"
    )
    llm_timeout: float = setting(120.0, "MEMORYWIKI_LLM_TIMEOUT", "seconds a chat request may take")
    llm_max_retries: int = setting(1, "MEMORYWIKI_LLM_RETRIES", "retries of a failed chat request")
    llm_window_tokens: int = setting(
        3000, "MEMORYWIKI_LLM_WINDOW_TOKENS", "doc text per model call; longer docs are map-reduced"
    )
    llm_doc_tokens: int = setting(
        12000, "MEMORYWIKI_LLM_DOC_TOKENS", "doc text sent per doc at most, over all its calls"
    )
    llm_output_tokens: int = setting(1500, "MEMORYWIKI_LLM_OUTPUT_TOKENS", "answer tokens per call")
    curation_vector_grace: float = setting(
        120.0, "MEMORYWIKI_CURATION_VECTOR_GRACE", "seconds enrichment waits for a doc's vectors"
    )
    # the extractive pass costs more than linearly in the text (bench/results/underload.md)
    curation_extract_chars: int = setting(
        100_000,
        "MEMORYWIKI_CURATION_EXTRACT_CHARS",
        "characters of a doc (its most central chunks) extractive enrichment reads",
    )
    curation_retry_seconds: float = setting(
        5.0, "MEMORYWIKI_CURATION_RETRY", "first wait in seconds after a chat model outage (then doubles)"
    )
    suggest_debounce: float = setting(
        5.0, "MEMORYWIKI_SUGGEST_DEBOUNCE", "seconds a hub is left to settle before its docs are regrouped"
    )
    suggest_neighbors: int = setting(5, "MEMORYWIKI_SUGGEST_NEIGHBORS", "neighbours per doc in the suggestions graph")
    suggest_min_similarity: float = setting(
        0.35, "MEMORYWIKI_SUGGEST_MIN_SIMILARITY", "least similarity of two docs grouped together"
    )
    suggest_max_docs: int = setting(
        2000, "MEMORYWIKI_SUGGEST_MAX_DOCS", "newest docs of a hub that suggestions group (similarities are n x n)"
    )
    digest_compact_tokens: int = setting(
        2000, "MEMORYWIKI_DIGEST_COMPACT_TOKENS", "token budget of a hub's compact digest"
    )

    section("Coding-tool hooks")
    hook_max_tokens: int = setting(
        1500,
        "MEMORYWIKI_HOOK_MAX_TOKENS",
        "tokens of a project's memory injected when a coding session starts (a hook may ask for fewer)",
    )
    hook_prompt_tokens: int = setting(
        600, "MEMORYWIKI_HOOK_PROMPT_TOKENS", "tokens of passages added to one prompt at most (--recall-prompts)"
    )
    hook_prompt_k: int = setting(3, "MEMORYWIKI_HOOK_PROMPT_K", "passages added to one prompt at most")
    # 0.4: on SciFact and LoCoMo it keeps 87% and 73% of the evidence and lets 2% and 0% of
    # unrelated passages through (bench/results/hooks.md; 0.5 kept 66% and 48%)
    hook_min_similarity: float = setting(
        0.4,
        "MEMORYWIKI_HOOK_MIN_SIMILARITY",
        "relevance floor of a passage added to a prompt: its cosine similarity to the prompt",
    )
    hook_min_fts: float = setting(
        2.0,
        "MEMORYWIKI_HOOK_MIN_FTS",
        "relevance floor when no vectors are used: the passage's BM25 score for the prompt",
    )
    hook_summary_timeout: float = setting(
        60.0,
        "MEMORYWIKI_HOOK_SUMMARY_TIMEOUT",
        "seconds a captured session's summary may take the chat model (then: extractive)",
    )

    section("Security")
    # unset: a random key kept in the database, so every server on one database shares it
    secret_key: str | None = setting(
        None,
        "MEMORYWIKI_SECRET_KEY",
        "the key that signs CSRF tokens and session cookies; unset: a random one kept in the database",
        secret=True,
    )
    csrf_max_age: int = setting(24 * 3600, "MEMORYWIKI_CSRF_MAX_AGE", "seconds a page's CSRF token stays valid")
    session_days: int = setting(
        30,
        "MEMORYWIKI_SESSION_DAYS",
        "days a browser's sign-in to a hub lasts before it asks to sign in again",
        parse=_days,
        expects="a whole number of days, 1 to 3650",
    )
    rate_password: str = setting(
        "10/minute", "MEMORYWIKI_RATE_PASSWORD", "wrong passwords per client", parse=_rate, expects=RATE
    )
    rate_token_failures: str = setting(
        "30/minute",
        "MEMORYWIKI_RATE_TOKEN_FAILURES",
        "refused tokens (owner, edit, access) per client",
        parse=_rate,
        expects=RATE,
    )
    rate_embed: str = setting(
        "60/minute", "MEMORYWIKI_RATE_EMBED", "POST /api/embed/* per client", parse=_rate, expects=RATE
    )

    section("Mail")
    smtp_url: str | None = setting(
        None,
        "MEMORYWIKI_SMTP_URL",
        "smtp://[user:pass@]host[:port] (STARTTLS if offered) or smtps://...; unset: no mail",
        parse=_smtp_url,
        expects="an smtp:// or smtps:// URL with a host",
    )
    smtp_user: str | None = setting(None, "MEMORYWIKI_SMTP_USER", "the SMTP login, when it is not in the URL")
    smtp_password: str | None = setting(
        None, "MEMORYWIKI_SMTP_PASSWORD", "the SMTP password, when it is not in the URL", secret=True
    )
    mail_from: str = setting(
        "Memory.Wiki <memorywiki@localhost>",
        "MEMORYWIKI_MAIL_FROM",
        "the From address of sign-in mails",
        parse=_address,
        expects="one mail address",
    )
    smtp_timeout: float = setting(15.0, "MEMORYWIKI_SMTP_TIMEOUT", "seconds one SMTP delivery may take")
    mail_retries: int = setting(6, "MEMORYWIKI_MAIL_RETRIES", "deliveries tried per mail before it is given up")
    mail_retry_seconds: float = setting(
        5.0, "MEMORYWIKI_MAIL_RETRY", "first wait in seconds after a failed delivery (then doubles)"
    )
    signin_link_minutes: int = setting(
        15, "MEMORYWIKI_SIGNIN_LINK_MINUTES", "minutes a mailed sign-in link works (once)"
    )
    reader_session_hours: int = setting(
        24, "MEMORYWIKI_READER_SESSION_HOURS", "hours a reader's sign-in from a mailed link lasts"
    )
    rate_link_address: str = setting(
        "5/hour",
        "MEMORYWIKI_RATE_LINK_ADDRESS",
        "sign-in link requests per address from one client",
        parse=_rate,
        expects=RATE,
    )
    rate_link_client: str = setting(
        "20/hour", "MEMORYWIKI_RATE_LINK_CLIENT", "sign-in link requests per client", parse=_rate, expects=RATE
    )
    invite_link_hours: int = setting(
        72,
        "MEMORYWIKI_INVITE_LINK_HOURS",
        "hours the sign-in link mailed to an address a page was just shared with works (once)",
    )
    rate_invite: str = setting(
        "100/hour",
        "MEMORYWIKI_RATE_INVITE",
        "sign-in mails per client to addresses its saves shared pages with",
        parse=_rate,
        expects=RATE,
    )

    section("Pages")
    # the graph's rule follows the embedding space and the hub (store/graph.py, bench/results/graph.md)
    graph_max_distance: float | None = setting(
        None,
        "MEMORYWIKI_GRAPH_MAX_DISTANCE",
        "docs this cosine distance apart are never graph neighbours; unset: the embedding model's own",
        parse=float,
        expects="a number",
    )
    graph_relative: bool = setting(
        True,
        "MEMORYWIKI_GRAPH_RELATIVE",
        "a doc reaches only what is near for its hub (of 8+ docs); off: all docs under the max distance",
    )
    graph_max_neighbours: int = setting(
        10,
        "MEMORYWIKI_GRAPH_MAX_NEIGHBOURS",
        "nearest docs a doc reaches in the hub graph at most (others may reach it)",
    )
    autosave_seconds: float = setting(
        10.0, "MEMORYWIKI_AUTOSAVE_SECONDS", "the editor saves this many seconds after the last keystroke"
    )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings from environment variables; `overrides` that are not None win."""
        values = read_env(cls, os.environ if env is None else env)
        values.update({k: v for k, v in overrides.items() if v is not None})
        settings = cls(**values)
        try:
            _ = settings.chunk_size  # the property checks the sizes against each other
        except ValueError as exc:
            raise SettingsError(f"MEMORYWIKI_CHUNK_MAX_CHARS / MEMORYWIKI_CHUNK_OVERLAP_CHARS: {exc}") from None
        return settings

    @property
    def edge_rule(self) -> EdgeRule:
        return EdgeRule(
            max_distance=self.graph_max_distance, relative=self.graph_relative, max_neighbours=self.graph_max_neighbours
        )

    @property
    def chunk_size(self) -> ChunkSize:
        return ChunkSize(self.chunk_max_chars, self.chunk_overlap_chars, self.chunk_turn_chars)


INTRO = """# Configuration

The server (`memorywiki serve`) and its workers (`memorywiki worker`) read these environment
variables once at startup; a bad value stops them with a one-line error. `memorywiki config
--server` lists them with the values your environment sets. A flag is on for 1, true, yes or on.
`MEMORYWIKI_DEBUG` is read by every `memorywiki` command.

This file is generated from server/config.py
(`python -m memorywiki.server.config --markdown > docs/configuration.md`): edit the declarations there.
"""


def cli_debug(env: Mapping[str, str]) -> bool:
    """MEMORYWIKI_DEBUG as its declaration reads it (the command line reads no other setting)."""
    meta = next(meta for f, meta in declared(Settings) if f.name == "debug")
    return meta.read(env) is True


def configuration_markdown() -> str:
    return markdown(Settings, INTRO)


def settings_listing(env: Mapping[str, str]) -> tuple[list[tuple[str, str, str, str, str]], str | None]:
    """What `memorywiki config --server` shows: a row per variable (section, name, value in
    `env` with secrets masked, default, help), and the error the server would stop on, if any."""
    try:
        Settings.from_env(env)
        error = None
    except SettingsError as exc:
        error = str(exc)
    return listing(Settings, env), error


if __name__ == "__main__":
    if sys.argv[1:] != ["--markdown"]:
        raise SystemExit("usage: python -m memorywiki.server.config --markdown")
    sys.stdout.write(configuration_markdown())
