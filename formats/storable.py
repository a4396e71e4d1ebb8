"""What PostgreSQL text cannot hold: NUL, and a lone UTF-16 surrogate (UTF-8 cannot encode one).

A request holding either is refused (`first_unstorable`); text the server or a client converted
(an export, a file, a session, a model's answer) has them dropped, never the page.
Dependency-free, so a coding tool's hook can import it without loading markdown-it.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

# json.loads joins a valid surrogate pair into one character, so any surrogate left in a str is alone.
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _holds(text: str) -> str | None:
    """What unstorable thing `text` holds, if any. Not a regex search: `in` and `isascii` scan
    a large body several times faster than a regex does."""
    if "\x00" in text:
        return "NUL characters"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "unpaired UTF-16 surrogates"
    return None


def drop_unstorable(text: str, replacement: str = "") -> str:
    """`text` without NUL or lone surrogates: a binary tool output's stray byte or a chat
    export's broken emoji must not cost the whole page."""
    return UNSTORABLE.sub(replacement, text) if _holds(text) else text


class Unstorable(NamedTuple):
    where: str  # the field's path in the JSON value, e.g. "doc_ids[2]" or "meta.key"
    what: str  # "NUL characters" or "unpaired UTF-16 surrogates"
    text: str  # the string that holds it


def first_unstorable(value: Any, where: str = "") -> Unstorable | None:
    """The first string in a JSON value that cannot be stored, keys of nested objects
    included; None when all can."""
    if isinstance(value, str):
        if what := _holds(value):
            return Unstorable(where, what, value)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if bad := first_unstorable(item, f"{where}[{i}]"):
                return bad
    elif isinstance(value, dict):
        for key, item in value.items():
            path = f"{where}.{key}" if where else str(key)
            if bad := first_unstorable(key, path) or first_unstorable(item, path):
                return bad
    return None


def strip_unstorable(value: Any, replacement: str = "") -> Any:
    """The same JSON value with every unstorable character dropped (or replaced) in its strings
    and keys."""
    if isinstance(value, str):
        return drop_unstorable(value, replacement)
    if isinstance(value, list):
        return [strip_unstorable(item, replacement) for item in value]
    if isinstance(value, dict):
        return {strip_unstorable(key, replacement): strip_unstorable(item, replacement) for key, item in value.items()}
    return value
