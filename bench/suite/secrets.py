"""Secrets never reach storage: how many the redactor finds, and how often it cuts what is none.

    python -m bench secrets            # everything, about a minute of CPU
    python -m bench secrets --smoke    # 60 formats, 200,000 characters of each clean corpus

What runs is server/redaction/ itself (`redact_text`, what every write path calls), in this
process: no server, no database.

Found. The public corpus is bench/data/secret-formats.jsonl: the example credentials in the
rule tests of two detectors, gitleaks and Kingfisher (bench/studies/secret_formats.py says how it
was built; Kingfisher's own rules are not the catalog the server ships, so its examples test the
detector from outside). Each example is pasted, as published, into a real page: a LoCoMo
conversation, a SciFact abstract or one of the transcripts in tests/data/ (chosen at random,
seeded); it counts as found when no 12 characters of the secret are left in the redacted page.
Each is planted twice: as published, and with fresh characters (its last 60% redrawn, letters
for letters, digits for digits), because a detector may allow-list a published example. The
16 kinds people paste into coding sessions are rows of their own, the other formats one row.
Then the same credentials of those kinds as they hide in sessions: wrapped across lines, inside
a JSON string, base64-encoded, percent-encoded in a URL's query, escaped by a markdown converter.

False redactions. Clean text, saved as pages of about 100,000 characters: every SciFact
abstract, every LoCoMo conversation as a transcript, and this repository's own code and docs
(its secret fixtures and the vendored rule patterns left out). Any marker there is a false
redaction.

Speed. CPU seconds to redact 5 MB pages (prose, code, a transcript), against the detector's scan
alone: what a write of that size waits for, off the event loop.

Writes bench/results/secrets.md (or --out) and prints it.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import re
import string
import subprocess
import sys
import time
import urllib.parse
from collections import Counter, defaultdict
from pathlib import Path

import regex

from ..common import RESULTS, ROOT, SHARED_DATA, MissingData, machine_line, md_table

CORPUS = ROOT / "bench" / "data" / "secret-formats.jsonl"
FIXTURES = ROOT / "tests" / "data"
PAGE = 100_000
BIG = 5_000_000

# The kinds of the issue's list (cloud keys, the model vendors', chat and payment services, a
# JWT, a private key, a database URL's password, ...), by the source rule's provider or id.
KINDS: list[tuple[str, re.Pattern[str]]] = [
    (name, re.compile(pattern))
    for name, pattern in [
        ("AWS keys", r"^aws"),
        ("Google Cloud / Gemini API keys", r"^(gcp|google)"),
        ("Azure keys and connection strings", r"^azure"),
        ("OpenAI", r"^openai"),
        ("Anthropic", r"^anthropic"),
        ("Hugging Face", r"^huggingface"),
        ("other model vendors (Groq, xAI, Perplexity, Replicate, Cohere)", r"^(groq|xai|perplexity|replicate|cohere)"),
        ("GitHub", r"^github"),
        ("GitLab", r"^gitlab"),
        ("Slack", r"^slack"),
        ("Discord", r"^discord"),
        ("Telegram", r"^telegram"),
        ("Stripe", r"^stripe"),
        ("other payments (Square, PayPal, PayMongo)", r"^(square|paypal|paymongo)"),
        ("Twilio / SendGrid / Mailgun", r"^(twilio|sendgrid|mailgun)"),
        ("npm / PyPI tokens", r"^(npm|pypi)"),
        ("JWT", r"^jwt"),
        ("private keys", r"^(pem|privkey|privatekey|private-key)"),
        (
            "passwords in database and service URLs",
            r"^(postgres|mongodb|mysql|credentials|uri|ftp|curl|generic-credential)",
        ),
    ]
]
OTHER = "other formats (every other provider)"


def kind_of(row: dict[str, str]) -> str:
    key = row["provider"].lower() if row["source"] == "kingfisher" else row["rule"].lower()
    for name, pattern in KINDS:
        if pattern.search(key) or pattern.search(row["rule"].lower().removeprefix("kingfisher.")):
            return name
    return OTHER


def load_corpus(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        raise MissingData(
            f"bench: the secret formats corpus is not at {path}\n(python -m bench.studies.secret_formats rebuilds it)"
        )
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    patterns = {r["rule"]: r["pattern"] for r in rows if "pattern" in r}  # written on each rule's first example
    return [{**r, "pattern": patterns.get(r["rule"], "")} for r in rows]


def fresh(row: dict[str, str], rng: random.Random) -> str:
    """The secret with fresh characters: some of those in its last 60% redrawn, letters for
    letters (hex digits for hex digits, where the secret's letters are all hex), digits for
    digits, until a match of the source rule's own pattern still holds it in its example (so
    a fixed part, OpenAI's `T3BlbkFJ`, a key block's `-----END`, stays); the secret as
    published when no draw does."""
    secret = row["secret"]
    try:
        pattern = regex.compile(row["pattern"])
    except (regex.error, KeyError):
        return secret
    positions = [i for i, c in enumerate(secret) if i >= len(secret) * 0.4 and c.isascii() and c.isalnum()]
    lower = "abcdef" if {c for c in secret if c.islower()} <= set("abcdef") else string.ascii_lowercase
    upper = "ABCDEF" if {c for c in secret if c.isupper()} <= set("ABCDEF") else string.ascii_uppercase
    at = row["example"].find(secret)
    share = 0.5
    for _ in range(30):
        chars = list(secret)
        for i in rng.sample(positions, int(len(positions) * share)):
            c = chars[i]
            chars[i] = rng.choice("0123456789" if c.isdigit() else upper if c.isupper() else lower)
        candidate = "".join(chars)
        example = row["example"].replace(secret, candidate)
        if candidate != secret and any(
            m.start() <= at and at + len(candidate) <= m.end() for m in pattern.finditer(example)
        ):
            return candidate
        share = max(0.1, share * 0.85)
    return secret


MARKER = re.compile(r"\[redacted: [^\]]*\]")


def left(secret: str, text: str) -> bool:
    """Whether any 12 characters of the secret (all of a shorter one) are still in the text,
    markers aside (`bedrock-api-key` is the start of a key and of its marker's name). Of a
    secret of several lines (a key block, a service account's JSON), the lines of 12
    characters or more: a `}` alone is no secret."""
    text = MARKER.sub("\x00", text)
    pieces = [line.strip() for line in secret.splitlines() if line.strip()]
    if len(pieces) > 1:
        pieces = [p for p in pieces if len(p) >= 12]
    for piece in pieces:
        w = min(len(piece), 12)
        if any(piece[i : i + w] in text for i in range(len(piece) - w + 1)):
            return True
    return False


# --------------------------------------------------------------------------- host pages


def hosts(data: Path, smoke: bool) -> list[tuple[str, str]]:
    """(corpus, text) of real pages to plant into: LoCoMo sessions, SciFact abstracts, and the
    transcripts and pages in tests/data/."""
    out: list[tuple[str, str]] = []
    turns = data / "locomo" / "locomo10_turns.jsonl"
    corpus = data / "scifact" / "corpus.jsonl"
    if not turns.is_file() or not corpus.is_file():
        raise MissingData(
            f"bench: LoCoMo turns and SciFact are not in {data} (locomo/locomo10_turns.jsonl, "
            "scifact/corpus.jsonl); see bench/common.py for where to get them, or set MEMORYWIKI_BENCH_DATA"
        )
    sessions: dict[tuple[str, int], list[str]] = defaultdict(list)
    for line in turns.read_text(encoding="utf-8").splitlines():
        t = json.loads(line)
        sessions[(t["sample_id"], t["session"])].append(f"**{t['speaker']}**: {t['text']}")
    out += [("LoCoMo", "\n\n".join(lines)) for lines in sessions.values()]
    with corpus.open(encoding="utf-8") as f:
        for n, line in enumerate(f):
            if n >= (50 if smoke else 400):
                break
            d = json.loads(line)
            out.append(("SciFact", f"# {d['title']}\n\n{d['text']}"))
    for path in sorted(FIXTURES.rglob("*")):
        if path.suffix in (".md", ".jsonl", ".srt", ".vtt") and "secrets" not in path.parts:
            out.append(("tests/data", path.read_text(encoding="utf-8", errors="replace")))
    return out


def plant(host: str, text: str, rng: random.Random) -> str:
    """The text pasted into the host page at a line break near a random place."""
    at = host.find("\n", rng.randrange(len(host))) if "\n" in host else -1
    at = len(host) if at < 0 else at
    return f"{host[:at]}\n\n{text}\n\n{host[at:]}"


# --------------------------------------------------------------------------- hiding places


def hidden(example: str, secret: str, how: str) -> str:
    if how == "wrapped across lines":
        return example.replace(secret, "\n".join(secret[i : i + 32] for i in range(0, len(secret), 32)))
    if how == "inside a JSON string":
        return json.dumps({"tool": "bash", "input": {"command": f"echo '{example}' >> .env"}})
    if how == "base64-encoded":
        return "echo " + base64.b64encode(f"{example}\n".encode()).decode() + " | base64 -d >> .env"
    if how == "in a URL's query":
        return f"https://api.example.org/v1/export?token={urllib.parse.quote(secret, safe='')}&format=csv"
    if how == "escaped by a markdown converter":
        return re.sub(r"([_*\[\]`])", r"\\\1", example)
    raise ValueError(how)


HIDING = (
    "wrapped across lines",
    "inside a JSON string",
    "base64-encoded",
    "in a URL's query",
    "escaped by a markdown converter",
)


# --------------------------------------------------------------------------- clean text


def _repository_files() -> list[str]:
    """The repository's own files: git's list in a checkout, else (a copy of the files, as CI
    runs on) every file but what an install or a run leaves beside them."""
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
        return listed.stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        skip = {".venv", ".git", "build", "dist", "__pycache__", "node_modules", ".cache", ".agent-tools"}
        return sorted(
            str(path.relative_to(ROOT))
            for path in ROOT.rglob("*")
            if path.is_file()
            and not skip.intersection(path.relative_to(ROOT).parts)
            and not any(part.endswith(".egg-info") for part in path.parts)
        )


def clean_corpora(data: Path, smoke: bool) -> dict[str, list[str]]:
    """Pages of about PAGE characters of text that holds no secret."""
    limit = 200_000 if smoke else None

    def pages(parts: list[str]) -> list[str]:
        out, page, size, total = [], [], 0, 0
        for part in parts:
            page.append(part)
            size += len(part)
            total += len(part)
            if size >= PAGE:
                out.append("\n\n".join(page))
                page, size = [], 0
            if limit and total >= limit:
                break
        if page:
            out.append("\n\n".join(page))
        return out

    with (data / "scifact" / "corpus.jsonl").open(encoding="utf-8") as f:
        scifact = [f"# {d['title']}\n\n{d['text']}" for d in map(json.loads, f)]
    locomo = []
    for line in (data / "locomo" / "locomo10_turns.jsonl").read_text(encoding="utf-8").splitlines():
        t = json.loads(line)
        locomo.append(f"**{t['speaker']}** ({t['session_date_time']}): {t['text']}")
    files = _repository_files()
    own = []
    for name in files:
        path = ROOT / name
        if path.suffix not in (
            ".py",
            ".md",
            ".sql",
            ".toml",
            ".js",
            ".css",
            ".html",
            ".json",
            ".jsonl",
            ".sh",
            ".txt",
            ".yml",
        ):
            continue
        if name.startswith(("tests/data/secrets/", "bench/data/", "server/redaction/rules/")) or not path.is_file():
            continue
        own.append(path.read_text(encoding="utf-8", errors="replace"))
    return {
        "SciFact abstracts": pages(scifact),
        "LoCoMo conversations": pages(locomo),
        "this repository (code, docs)": pages(own),
    }


# --------------------------------------------------------------------------- run


def run(data: Path, out: Path, smoke: bool, corpus_path: Path, command: str) -> str:
    from memorywiki.server.redaction import DETECTOR, redact_text

    rng = random.Random(1234)
    t0 = time.process_time()
    DETECTOR.load()
    load_cpu = time.process_time() - t0
    rows = load_corpus(corpus_path)
    if smoke:
        rows = random.Random(5).sample(rows, 60)
    pages = hosts(data, smoke)

    # found, per kind, as published and fresh
    found: dict[str, Counter[str]] = defaultdict(Counter)
    missed: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        kind = kind_of(row)
        for variant in ("published", "fresh"):
            secret = row["secret"] if variant == "published" else fresh(row, rng)
            example = row["example"].replace(row["secret"], secret)
            page = plant(rng.choice(pages)[1], example, rng)
            redacted, _ = redact_text(page)
            ok = not left(secret, redacted)
            found[kind][variant + "_n"] += 1
            found[kind][variant] += ok
            if not ok and variant == "fresh":
                missed[kind].append(row["rule"])
    table_rows = []
    for name in [k for k, _ in KINDS] + [OTHER]:
        c = found.get(name)
        if not c:
            continue
        table_rows.append([name, c["published_n"], c["published"] / c["published_n"], c["fresh"] / c["fresh_n"]])
    ours = Counter()
    for name, c in found.items():
        if name != OTHER:
            for key, n in c.items():
                ours[key] += n
    all_ = Counter()
    for c in found.values():
        all_.update(c)
    table_rows.append(
        [
            "**the kinds above**",
            ours["published_n"],
            ours["published"] / max(1, ours["published_n"]),
            ours["fresh"] / max(1, ours["fresh_n"]),
        ]
    )
    table_rows.append(
        [
            "**every format in the corpus**",
            all_["published_n"],
            all_["published"] / all_["published_n"],
            all_["fresh"] / all_["fresh_n"],
        ]
    )

    # where secrets hide: the kinds above, fresh, in each hiding place
    hiding = Counter()
    hiding_n = Counter()
    ours_rows = [r for r in rows if kind_of(r) != OTHER and "\n" not in r["secret"] and len(r["secret"]) >= 16]
    for row in ours_rows:
        secret = fresh(row, rng)
        example = row["example"].replace(row["secret"], secret)
        for how in HIDING:
            page = plant(rng.choice(pages)[1], hidden(example, secret, how), rng)
            redacted, _ = redact_text(page)
            hiding_n[how] += 1
            hiding[how] += not left(secret, redacted) and not left(urllib.parse.quote(secret, safe=""), redacted)
    hiding_rows = [[how, hiding_n[how], hiding[how] / hiding_n[how]] for how in HIDING]

    # false redactions on clean text
    clean_rows = []
    false_examples: list[str] = []
    for name, texts in clean_corpora(data, smoke).items():
        chars = markers = private = 0
        cpu = time.process_time()
        for text in texts:
            redacted, report = redact_text(text)
            chars += len(text)
            markers += report.secrets
            private += report.private
            for m in re.finditer(r"\[redacted: [^\]]+\]", redacted) if report.secrets else []:
                shown = redacted[max(0, m.start() - 60) : m.end() + 20]
                if len(false_examples) < 12 and redacted[max(0, m.start() - 20) : m.end()] not in text:
                    false_examples.append(f"{name}: …{shown!r}…")
        cpu = time.process_time() - cpu
        clean_rows.append([name, len(texts), chars, markers, markers / chars * 100_000, chars / 1e6 / cpu])

    # speed on 5 MB pages
    speed_rows = []
    sources = {
        "prose (SciFact abstracts)": "\n\n".join(p for _, p in pages if not p.startswith("**")),
        "a chat transcript (LoCoMo)": "\n\n".join(p for c, p in pages if c == "LoCoMo"),
        "code and docs (this repository)": "\n".join(clean_corpora(data, smoke)["this repository (code, docs)"]),
    }
    size = 500_000 if smoke else BIG
    for name, text in sources.items():
        page = (text * (size // max(1, len(text)) + 1))[:size]
        t = time.process_time()
        DETECTOR.find(page)
        scan = time.process_time() - t
        t = time.process_time()
        redact_text(page)
        whole = time.process_time() - t
        speed_rows.append([name, f"{size / 1e6:.1f} MB", scan, whole])

    goal_found = min(r[3] for r in table_rows[:-2] if r[0] != OTHER)
    report = "\n\n".join(
        [
            "# Secrets: found, and false redactions on clean text",
            f"`{command}`, {time.strftime('%Y-%m-%d %H:%M')}. {machine_line()}",
            f"Detector: Kingfisher {_kingfisher_version()} with its bundled catalog ({DETECTOR.rule_count} rules that "
            f"name secrets), plus this repository's other readings of each text (server/redaction/views.py). "
            f"Loading the catalog took {load_cpu:.2f} s of CPU in this process (compiled once per machine, then cached).",
            "How it is measured: bench/suite/secrets.py (its docstring). Goals: found >= 0.95 for each kind; "
            "fewer than 1 false redaction per 100,000 characters of clean text.",
            "## Found, per kind (pasted into real pages)",
            md_table(["kind", "examples", "found (as published)", "found (fresh characters)"], table_rows),
            f"The corpus: {len(rows)} examples of {len({r['rule'] for r in rows})} rules "
            f"({Counter(r['source'] for r in rows)['gitleaks']} from gitleaks' rule tests, "
            f"{Counter(r['source'] for r in rows)['kingfisher']} from Kingfisher's rule examples); each one's secret is "
            "what its rule captures as the secret (of a rule with several groups, the secret's, not an id beside it; "
            "in a URL, the password: bench/studies/secret_formats.py). "
            f"Lowest fresh-characters figure of the kinds above: {goal_found:.3f}.",
            "Missed (fresh), by source rule: "
            + (
                "; ".join(f"{k}: {', '.join(sorted(set(v)))}" for k, v in sorted(missed.items()) if k != OTHER)
                or "none"
            )
            + ".",
            "## Where secrets hide (the kinds above, fresh characters)",
            md_table(["hidden", "examples", "found"], hiding_rows),
            "## False redactions on clean text",
            md_table(["corpus", "pages", "characters", "markers", "per 100k chars", "MB/s (CPU)"], clean_rows),
            ("What was marked: " + "; ".join(false_examples)) if false_examples else "Nothing was marked.",
            "## Speed on a big page (CPU seconds, this process)",
            md_table(["page", "size", "detector scan alone", "redaction (every reading, markers)"], speed_rows),
        ]
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "secrets.md").write_text(report + "\n", encoding="utf-8")
    return report


def _kingfisher_version() -> str:
    from importlib.metadata import version

    return version("kingfisher-secret-scanner")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench secrets", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=SHARED_DATA, help="folder holding scifact/ and locomo/")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the secret formats (JSON lines)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--smoke", action="store_true", help="a small, fast run")
    args = parser.parse_args(argv)
    command = "python -m bench secrets " + " ".join(argv if argv is not None else sys.argv[2:])
    try:
        print(run(args.data, args.out, args.smoke, args.corpus, command.strip()))
    except MissingData as error:
        print(error, file=sys.stderr)
        return 2
    return 0
