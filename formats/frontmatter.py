"""YAML front matter: the `---` block that opens a markdown file (an export's pages, an Obsidian
vault's notes, Jekyll or Hugo posts).

Reading is for files anyone wrote: the YAML is parsed safely (no tags that build objects),
its size is capped, and the values come back as JSON (dates as ISO strings), because that is
what a page's `meta` can hold. A block that does not parse is an error, never silently body
text: it may hold the line that said the page is private. Hostile YAML (an alias that holds
itself, a billion laughs, nesting past any sane depth, a date or number the parser cannot
build) is the same FormatError, so an importer skips that one file and goes on.
"""

from __future__ import annotations

import datetime
import math
import re
from dataclasses import dataclass
from typing import Any

import yaml

from .model import FormatError

MAX_FRONT_MATTER = 64 * 1024  # characters of YAML
MAX_VALUES = 10_000  # nodes of the parsed value: an alias bomb expands past it at once
MAX_DEPTH = 64  # levels of nesting: no page's fields need more, and JSON encoders recurse
_OPEN = re.compile(r"\A---[ \t]*\r?\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.MULTILINE)


@dataclass(frozen=True)
class FrontMatter:
    fields: dict[str, Any]  # {} for a file without front matter
    body: str  # the text after it (one blank separator line dropped)
    present: bool


def split_front_matter(text: str) -> tuple[str | None, str]:
    """(the YAML between the fences, the body after them); (None, text) when the text does
    not open with a front matter block."""
    opening = _OPEN.match(text)
    if opening is None:
        return None, text
    closing = _CLOSE.search(text, opening.end())
    if closing is None:
        return None, text
    body = text[closing.end() :]
    if body.startswith("\r\n"):
        body = body[2:]
    elif body.startswith("\n"):
        body = body[1:]
    return text[opening.end() : closing.start()], body


def json_value(value: Any, budget: list[int] | None = None, path: tuple[int, ...] = ()) -> Any:
    """A parsed YAML value as JSON: dates as ISO strings, keys as text, a float JSON cannot
    hold (NaN, infinity) as text. Past MAX_VALUES nodes or MAX_DEPTH levels it refuses, and
    a value that holds itself (an alias inside its own anchor) too: aliases can make a small
    block expand without end. `path` holds the ids of the containers above this value."""
    budget = budget if budget is not None else [MAX_VALUES]
    budget[0] -= 1
    if budget[0] < 0:
        raise FormatError("bad_front_matter", "the front matter holds too many values")
    if isinstance(value, (dict, list, tuple, set)):
        if id(value) in path:
            raise FormatError("bad_front_matter", "the front matter holds a value that contains itself (an alias loop)")
        if len(path) >= MAX_DEPTH:
            raise FormatError("bad_front_matter", f"the front matter is nested deeper than {MAX_DEPTH} levels")
        inner = (*path, id(value))
        if isinstance(value, dict):
            return {str(json_value(k, budget, inner)): json_value(v, budget, inner) for k, v in value.items()}
        return [json_value(v, budget, inner) for v in value]
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def read_front_matter(text: str) -> FrontMatter:
    """The file's front matter as JSON fields and its body; FormatError for a block that
    is not YAML or not a mapping."""
    block, body = split_front_matter(text)
    if block is None:
        return FrontMatter({}, text, False)
    if len(block) > MAX_FRONT_MATTER:
        raise FormatError("bad_front_matter", f"the front matter is over {MAX_FRONT_MATTER // 1024} KB")
    try:
        parsed = yaml.safe_load(block)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "not valid YAML"
        raise FormatError("bad_front_matter", f"the front matter is not valid YAML{where}: {problem}") from None
    except RecursionError:  # the parser recurses once per level of nesting
        raise FormatError("bad_front_matter", f"the front matter is nested deeper than {MAX_DEPTH} levels") from None
    except (ValueError, TypeError, OverflowError) as exc:  # a date or number the parser cannot build
        raise FormatError(
            "bad_front_matter", f"the front matter holds a value YAML cannot read ({exc})"[:300]
        ) from None
    if parsed is None:
        return FrontMatter({}, body, True)
    if not isinstance(parsed, dict):
        raise FormatError("bad_front_matter", "the front matter is not a mapping of names to values")
    return FrontMatter(json_value(parsed), body, True)


def write_front_matter(fields: dict[str, Any]) -> str:
    """A front matter block of these fields in their order (None values left out), then the
    blank line that separates it from the body. PyYAML quotes and escapes whatever needs it,
    so every value reads back as it was written."""
    kept = {k: v for k, v in fields.items() if v is not None}
    text = yaml.safe_dump(kept, allow_unicode=True, sort_keys=False, default_flow_style=False, width=2**31 - 1)
    return f"---\n{text}---\n\n"
