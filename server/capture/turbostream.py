"""Decoder for React Router's "turbo-stream" wire format (turbo-stream v2).

ChatGPT share pages (2025+) embed their loader data as one or more
``window.__reactRouterContext.streamController.enqueue("<JS string>")`` calls. The first
string is a JSON *flat array*:

* element 0 is the root value;
* objects are written ``{"_<k>": <v>}``: ``arr[k]`` is the key string, ``<v>`` an index;
* every value inside an object or plain array is an *index* into the flat array; the
  literal at that index (string, number, bool, null) is the value and is not
  dereferenced again;
* negative indices are sentinels (``-5`` null, ``-7`` undefined, ...);
* arrays whose first element is a string are typed values: ``["D", ms]`` date,
  ``["P", id]`` promise, ``["M", k, v, ...]`` map, ``["S", ...]`` set, ``["U", url]``,
  ``["B", "123"]`` bigint, ``["R", src, flags]`` regexp, ``["E", msg]`` error,
  ``["Y", name]`` symbol, ``["N", ...]`` null-prototype object, ``["Z", ...]`` previously
  resolved promise;
* later chunks ``P<id>:[...]`` resolve promise ``id``: their array is appended to the same
  index space and its first new element is the resolved value.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from typing import Any

HOLE = -1
NAN = -2
NEGATIVE_INFINITY = -3
NEGATIVE_ZERO = -4
NULL = -5
POSITIVE_INFINITY = -6
UNDEFINED = -7

_SENTINELS: dict[int, Any] = {
    HOLE: None,
    NAN: float("nan"),
    NEGATIVE_INFINITY: float("-inf"),
    NEGATIVE_ZERO: -0.0,
    NULL: None,
    POSITIVE_INFINITY: float("inf"),
    UNDEFINED: None,
}

_ENQUEUE_RE = re.compile(r'streamController\.enqueue\(\s*("(?:[^"\\]|\\.)*")\s*\)', re.S)
_PROMISE_CHUNK_RE = re.compile(r"^P(\d+):(.*)$", re.S)


class TurboStreamError(ValueError):
    pass


class _Pending:
    """A promise that no chunk resolved."""

    def __repr__(self) -> str:
        return "<pending>"


PENDING = _Pending()


def _js_string(literal: str) -> str:
    """Decode a double-quoted JavaScript string literal (JSON-compatible in practice)."""
    try:
        return str(json.loads(literal))
    except json.JSONDecodeError:
        # JS allows \xNN and escaped newlines/quotes JSON does not
        fixed = re.sub(r"\\x([0-9a-fA-F]{2})", r"\\u00\1", literal)
        fixed = fixed.replace("\\'", "'").replace("\\\n", "")
        try:
            return str(json.loads(fixed))
        except json.JSONDecodeError as exc:
            raise TurboStreamError(f"cannot decode enqueue() string: {exc}") from exc


def extract_chunks(html: str) -> list[str]:
    """The decoded strings passed to ``streamController.enqueue(...)``, in page order."""
    return [_js_string(m.group(1)) for m in _ENQUEUE_RE.finditer(html)]


class _Decoder:
    def __init__(self, values: list[Any]):
        self.values = values
        self.promises: dict[int, int] = {}  # promise id -> index of resolved value
        self.memo: dict[int, Any] = {}

    def add_chunk(self, text: str) -> None:
        text = text.strip()
        if not text:
            return
        m = _PROMISE_CHUNK_RE.match(text)
        if not m:
            return  # unknown chunk kinds are ignored
        pid = int(m.group(1))
        try:
            arr = json.loads(m.group(2))
        except json.JSONDecodeError:
            return
        if not isinstance(arr, list) or not arr:
            return
        start = len(self.values)
        self.values.extend(arr)
        self.promises[pid] = start

    def hydrate(self, index: Any) -> Any:
        if not isinstance(index, int) or isinstance(index, bool):
            raise TurboStreamError(f"bad index {index!r}")
        if index < 0:
            return _SENTINELS.get(index)
        if index in self.memo:
            return self.memo[index]
        if index >= len(self.values):
            raise TurboStreamError(f"index {index} out of range")
        value = self.values[index]
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            self.memo[index] = out
            for k, v in value.items():
                key = self._key(k)
                out[key] = self.hydrate(v)
            return out
        if isinstance(value, list):
            if value and isinstance(value[0], str):
                result = self._typed(index, value)
                self.memo[index] = result
                return result
            out_list: list[Any] = []
            self.memo[index] = out_list
            out_list.extend(self.hydrate(v) for v in value)
            return out_list
        self.memo[index] = value
        return value

    def _key(self, k: str) -> str:
        if k.startswith("_"):
            try:
                ki = int(k[1:])
            except ValueError:
                return k
            key = self.values[ki] if 0 <= ki < len(self.values) else None
            return key if isinstance(key, str) else str(key)
        return k

    def _typed(self, index: int, value: list[Any]) -> Any:
        tag = value[0]
        if tag == "D":
            try:
                return _dt.datetime.fromtimestamp(value[1] / 1000, _dt.UTC).isoformat()
            except (TypeError, ValueError, OverflowError):
                return None
        if tag in ("P", "Z"):
            pid = value[1] if len(value) > 1 else None
            if pid in self.promises:
                return self.hydrate(self.promises[pid])
            return PENDING
        if tag == "M":
            items = value[1:]
            return {str(self.hydrate(items[i])): self.hydrate(items[i + 1]) for i in range(0, len(items) - 1, 2)}
        if tag == "S":
            return [self.hydrate(v) for v in value[1:]]
        if tag == "N":
            items = value[1:]
            return {str(self.hydrate(items[i])): self.hydrate(items[i + 1]) for i in range(0, len(items) - 1, 2)}
        if tag == "B":
            try:
                return int(value[1])
            except (TypeError, ValueError, IndexError):
                return None
        if tag in ("U", "Y"):
            return value[1] if len(value) > 1 else None
        if tag == "R":
            return value[1] if len(value) > 1 else None
        if tag == "E":
            return {"error": value[1] if len(value) > 1 else None}
        return None  # unknown type tag


def decode(chunks: list[str]) -> Any:
    """Decode turbo-stream chunks (first = flat array, rest = promise chunks) to Python."""
    if not chunks:
        raise TurboStreamError("no turbo-stream data")
    try:
        values = json.loads(chunks[0])
    except json.JSONDecodeError as exc:
        raise TurboStreamError(f"first chunk is not JSON: {exc}") from exc
    if not isinstance(values, list) or not values:
        raise TurboStreamError("first chunk is not a flat array")
    dec = _Decoder(list(values))
    for chunk in chunks[1:]:
        dec.add_chunk(chunk)
    return dec.hydrate(0)


def decode_html(html: str) -> Any:
    """Find the ``enqueue`` calls in a page and decode them."""
    return decode(extract_chunks(html))
