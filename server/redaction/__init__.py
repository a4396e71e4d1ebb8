"""Secrets never reach storage: every write path passes its text through here first.

redact_text   a text with `<private>…</private>` spans dropped and each secret found
              replaced by `[redacted: <kind>]` (redact.py)
redact_value  the same for every string of a JSON value (a page's meta)
Redaction     what was redacted: secrets by kind, private spans dropped
DETECTOR      the detector (detector.py: Kingfisher's scanner and rule catalog); the
              other readings it is also run on (wrapped, JSON-escaped, percent-encoded)
              are in views.py
"""

from .detector import DETECTOR, Detector, Finding, kind_of
from .redact import Redaction, drop_private, marker, redact_secrets, redact_text, redact_value

__all__ = [
    "DETECTOR",
    "Detector",
    "Finding",
    "Redaction",
    "drop_private",
    "kind_of",
    "marker",
    "redact_secrets",
    "redact_text",
    "redact_value",
]
