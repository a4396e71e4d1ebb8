"""The secret detector: Kingfisher's scanner (MongoDB) with its bundled rule catalog.

The catalog is Betterleaks' rules (the successor of gitleaks' rule set, by its author) and
Google's Veles detectors, about 490 formats, matched by Vectorscan: a 5 MB page takes
milliseconds. Why this one and not detect-secrets or a vendored gitleaks.toml: docs/secrets.md.
Scanning is offline; Kingfisher's validation and revocation (which call providers) are never used.

Each finding is a span of the text and the rule that found it. A rule's id names the kind
of secret (`betterleaks.github-pat` -> `github-pat`). Some rules are components that the
catalog reports only as part of another finding: most are identifiers (a client id, a
tenant id, an account's host or URL) and are left as written, but some are secrets in
their own right (an AWS secret access key is the component of its key id's finding) and
are redacted like any other.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

_PREFIX = re.compile(r"^(?:betterleaks\.|kingfisher\.|custom\.|veles\.)?(?:secrets/)?")
_SUFFIX = re.compile(r"\.\d+$")
# The components that only identify (whose id says so): not secrets.
_IDENTIFIER = re.compile(r"(?:[-_](?:id|url|host|name|domain|address|username|repository)|public-key)(?:\.\d+)?$")


def kind_of(rule_id: str) -> str:
    """The marker's name for a rule: its id without the catalog's namespace or variant number."""
    name = _SUFFIX.sub("", _PREFIX.sub("", rule_id))
    return re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-") or "secret"


@dataclass(frozen=True)
class Finding:
    start: int  # character offsets in the scanned text
    end: int
    kind: str
    secret: str  # the credential as the rule captured it (decoded, for a base64 blob)
    encoded: bool  # found inside a base64 blob: the span is the whole blob


class Detector:
    """Loaded once per process (compiling the catalog takes a few seconds the first time;
    Kingfisher keeps the compiled database in the user's cache directory after that)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scanner: Any = None
        self._secret_rules: frozenset[str] = frozenset()

    def load(self) -> None:
        if self._scanner is not None:
            return
        with self._lock:
            if self._scanner is not None:
                return
            from kingfisher_sdk import DetectionScanner, Rules

            rules = Rules(confidence="low")
            self._secret_rules = frozenset(
                r["id"] for r in rules.metadata() if r["visible"] or not _IDENTIFIER.search(r["id"])
            )
            # Two layers of base64; no inline "ignore" comments: a page cannot opt its own text out.
            self._scanner = DetectionScanner(rules, inline_ignores=False, base64_max_depth=2)

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
        found = [
            Finding(
                start=to_char[f.location["start_offset"]],
                end=to_char[f.location["end_offset"]],
                kind=kind_of(f.rule_id),
                secret=f.secret,
                encoded=bool(f.is_base64_encoded),
            )
            for f in raw
        ]
        return sorted(found, key=lambda f: (f.start, -f.end))


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
