"""The secret detector: Kingfisher's scanner (MongoDB) and two rule catalogs.

The package's bundled catalog is Betterleaks' rules (the successor of gitleaks' rule set, by
its author) and Google's Veles detectors, about 490; rules/kingfisher.yml adds Kingfisher's own
rule set, about 740 more, and rules/standalone.yml the bundled rules that also run without the
companions the catalog pairs them with (both vendored as data, scripts/update-secret-rules.py). Vectorscan matches
them all at once: a 5 MB page takes milliseconds. Why this detector and not detect-secrets or a
vendored gitleaks.toml: docs/secrets.md. Scanning is offline; Kingfisher's validation and
revocation (which call providers) are never used.

Each finding is a span of the text and the rule that found it. A rule's id names the kind
of secret (`betterleaks.github-pat` -> `github-pat`). Some rules are components that the
catalog reports only as part of another finding: most are identifiers (a client id, a
tenant id, an account's host or URL) and are left as written, but some are secrets in
their own right (an AWS secret access key is the component of its key id's finding) and
are redacted like any other.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regex

log = logging.getLogger("memorywiki.server")
_PREFIX = re.compile(r"^(?:betterleaks\.|kingfisher\.|custom\.|veles\.)?(?:secrets/)?")
_SUFFIX = re.compile(r"\.\d+$")
# Kingfisher's own rules, and bundled rules that also run without their companions
# (scripts/update-secret-rules.py writes both)
RULES = (Path(__file__).parent / "rules" / "kingfisher.yml", Path(__file__).parent / "rules" / "standalone.yml")
# The components that only identify (whose id says so): not secrets.
_IDENTIFIER = re.compile(r"(?:[-_](?:id|url|host|name|domain|address|username|repository)|public-key)(?:\.\d+)?$")


def kind_of(rule_id: str, name: str = "") -> str:
    """The marker's name for a rule: its id without the catalog's namespace or variant number
    (`betterleaks.github-pat` -> `github-pat`); a Kingfisher rule's id is a number
    (`kingfisher.aws.2`), so its name says it (`aws-secret-access-key`)."""
    base = name if rule_id.startswith("kingfisher.") and name else _SUFFIX.sub("", _PREFIX.sub("", rule_id))
    return re.sub(r"[^a-z0-9-]+", "-", base.lower()).strip("-")[:60].rstrip("-") or "secret"


@dataclass(frozen=True)
class Finding:
    start: int  # character offsets in the scanned text
    end: int
    kind: str
    secret: str  # the credential as the rule captured it (decoded, for a base64 blob)
    encoded: bool  # found inside a base64 blob: the span is the whole blob


class Detector:
    """Loaded once per process (compiling the catalogs takes about 13 s of CPU the first time on
    a machine; Kingfisher keeps the compiled database in the user's cache directory, and
    loading it from there takes half a second)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scanner: Any = None
        self._secret_rules: frozenset[str] = frozenset()
        self._kinds: dict[str, str] = {}
        self.preferred: frozenset[str] = frozenset()  # kinds of the package's own catalog
        self._patterns: dict[str, str] = {}  # Kingfisher's own rules: their patterns, to find the capture
        self._compiled: dict[str, Any] = {}

    def load(self) -> None:
        if self._scanner is not None:
            return
        with self._lock:
            if self._scanner is not None:
                return
            from kingfisher_sdk import DetectionScanner, Rules

            rules = Rules(list(RULES), confidence="low")
            catalog = rules.metadata()
            self._kinds = {r["id"]: kind_of(r["id"], r["name"]) for r in catalog}
            self._secret_rules = frozenset(
                r["id"] for r in catalog if r["visible"] or not _IDENTIFIER.search(self._kinds[r["id"]])
            )
            # of two rules that find the same span, the bundled catalog's names the kind
            self.preferred = frozenset(k for i, k in self._kinds.items() if not i.startswith("kingfisher."))
            self._patterns = {
                r["id"]: rules.detail(r["id"])["pattern"] for r in catalog if r["id"].startswith("kingfisher.")
            }
            # Two layers of base64; no inline "ignore" comments: a page cannot opt its own text out.
            self._scanner = DetectionScanner(rules, inline_ignores=False, base64_max_depth=2)

    def load_quietly(self) -> None:
        """`load`, for a warm-up: a failure here is raised again by the write that needs it."""
        try:
            self.load()
        except Exception as exc:
            log.warning("the secret detector did not load: %s", exc)

    @property
    def rule_count(self) -> int:
        self.load()
        return len(self._secret_rules)

    def find(self, text: str) -> list[Finding]:
        """The secrets in `text`, in order of where they start."""
        if not text:
            return []
        self.load()
        data = text.encode("utf-8")
        raw = [f for f in self._scanner.scan(data) if f.rule_id in self._secret_rules]
        if not raw:
            return []
        to_char = _char_offsets(text, data, sorted({o for f in raw for o in _offsets(f)}))
        found = []
        for f in raw:
            start, end = to_char[f.location["start_offset"]], to_char[f.location["end_offset"]]
            kind = self._kinds.get(f.rule_id) or kind_of(f.rule_id)
            if f.is_base64_encoded:
                found.append(Finding(start, end, kind, f.secret, True))
            else:
                start, end = self._captured(f.rule_id, text, start, end)
                found.append(Finding(start, end, kind, text[start:end], False))
        return sorted(found, key=lambda f: (f.start, -f.end))

    def _captured(self, rule_id: str, text: str, start: int, end: int) -> tuple[int, int]:
        """The credential inside a Kingfisher rule's match: the scanner reports such a rule's
        whole match (`AWS_SECRET_ACCESS_KEY=...`, a database URL with its host), the rule's
        capture group is the secret itself (the longest, where alternatives capture apart)."""
        pattern = self._patterns.get(rule_id)
        if pattern is None:
            return start, end
        compiled = self._compiled.get(rule_id)
        if compiled is None:
            try:
                compiled = regex.compile(pattern)
            except regex.error:  # syntax only Rust reads: the whole match goes
                compiled = False
            self._compiled[rule_id] = compiled
        match = compiled.match(text, start, end) if compiled else None
        spans = [match.span(i) for i in range(1, (match.re.groups if match else 0) + 1) if match.start(i) >= 0]
        spans = [(a, b) for a, b in spans if b > a]
        return max(spans, key=lambda ab: ab[1] - ab[0]) if spans else (start, end)


def _offsets(f: Any) -> tuple[int, int]:
    return f.location["start_offset"], f.location["end_offset"]


def _char_offsets(text: str, data: bytes, byte_offsets: list[int]) -> dict[int, int]:
    """Character offsets of UTF-8 byte offsets (sorted), decoding only between them."""
    if len(data) == len(text):  # ASCII: the same
        return {o: o for o in byte_offsets}
    out: dict[int, int] = {}
    chars = last = 0
    for o in byte_offsets:
        chars += len(data[last:o].decode("utf-8", errors="replace"))
        out[o] = chars
        last = o
    return out


DETECTOR = Detector()
