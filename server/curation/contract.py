"""What a chat model must return, and how its output is checked before anything is stored.

The model is asked for one JSON object (structured output). Its answer is never trusted:
it is parsed leniently (code fences stripped; a truncated answer keeps every top-level
field that was complete before the cut) and validated field by field against the schema,
so one bad field costs that field, not the whole enrichment. Fields that fail twice are
stored as missing and rendered as such.
"""

from __future__ import annotations

import copy
import io
import json
import re
from dataclasses import dataclass, field
from typing import Any

import ijson
from jsonschema import Draft202012Validator
from memorywiki.formats.storable import drop_unstorable, strip_unstorable

KINDS = ("tag", "entity", "concept")

_STRING_LIST = {"type": "array", "items": {"type": "string", "minLength": 2, "maxLength": 400}}

ENRICHMENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "summary": {
            "type": "string",
            "minLength": 20,
            "maxLength": 2000,
            "description": "One paragraph (2-5 sentences) saying what the document is and concludes.",
        },
        "themes": {**_STRING_LIST, "minItems": 3, "maxItems": 5, "description": "3-5 short themes, a few words each."},
        "takeaways": {
            **_STRING_LIST,
            "minItems": 1,
            "maxItems": 8,
            "description": "What a reader should remember or do, one sentence each.",
        },
        "insights": {
            **_STRING_LIST,
            "maxItems": 6,
            "description": "Non-obvious points, trade-offs or causes the document reveals.",
        },
        "open_questions": {
            **_STRING_LIST,
            "maxItems": 6,
            "description": "What the document leaves unresolved, or gaps in it.",
        },
        "concepts": {
            "type": "array",
            "minItems": 1,
            "maxItems": 15,
            "description": "The document's key concepts: names of things, tools, people, ideas.",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 80},
                    "kind": {
                        "type": "string",
                        "enum": list(KINDS),
                        "description": "entity: a named thing (tool, person, product); "
                        "concept: an idea; tag: a broad topic label.",
                    },
                    "gloss": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 300,
                        "description": "One line: what it is in this document.",
                    },
                    "aliases": {
                        "type": "array",
                        "items": {"type": "string", "minLength": 1, "maxLength": 80},
                        "maxItems": 5,
                        "description": "Other names or abbreviations used for it.",
                    },
                },
                "required": ["name", "kind", "gloss", "aliases"],
                "additionalProperties": False,
            },
        },
        "relations": {
            "type": "array",
            "maxItems": 15,
            "description": "Relations between two of the concepts above (use their exact names).",
            "items": {
                "type": "object",
                "properties": {
                    "subject": {"type": "string", "minLength": 1, "maxLength": 80},
                    "relation": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 60,
                        "description": "a short verb phrase, e.g. 'is stored in', 'replaces'",
                    },
                    "object": {"type": "string", "minLength": 1, "maxLength": 80},
                },
                "required": ["subject", "relation", "object"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["summary", "themes", "takeaways", "insights", "open_questions", "concepts", "relations"],
    "additionalProperties": False,
}
ENRICHMENT_FIELDS: tuple[str, ...] = tuple(ENRICHMENT_SCHEMA["required"])

BUNDLE_NAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {
            "type": "string",
            "minLength": 3,
            "maxLength": 120,
            "description": "A short topic title for the group (at most 8 words).",
        },
        "description": {
            "type": "string",
            "minLength": 10,
            "maxLength": 300,
            "description": "One line: what the group covers and why these pages belong together.",
        },
    },
    "required": ["title", "description"],
    "additionalProperties": False,
}

BUNDLE_ANALYSIS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "themes": {
            **_STRING_LIST,
            "minItems": 1,
            "maxItems": 6,
            "description": "Themes that run across several of the documents.",
        },
        "insights": {**_STRING_LIST, "maxItems": 6, "description": "What reading the documents together reveals."},
        "gaps": {**_STRING_LIST, "maxItems": 6, "description": "What none of the documents covers or settles."},
        "connections": {
            **_STRING_LIST,
            "maxItems": 8,
            "description": "How specific documents relate: 'A builds on B', 'A contradicts B on X'.",
        },
    },
    "required": ["themes", "insights", "gaps", "connections"],
    "additionalProperties": False,
}
BUNDLE_ANALYSIS_FIELDS: tuple[str, ...] = tuple(BUNDLE_ANALYSIS_SCHEMA["required"])

# Validation keywords some OpenAI-compatible servers refuse in strict structured output;
# they are checked here instead.
_WIRE_DROP = {"minLength", "maxLength", "minItems", "maxItems", "description"}


def wire_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as sent to the model: structure and enums only (a property may itself
    be called "description": only keywords are dropped, never property names)."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key == "properties":
                    out[key] = {name: strip(sub) for name, sub in value.items()}
                elif key not in _WIRE_DROP:
                    out[key] = strip(value)
            return out
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    stripped: dict[str, Any] = strip(copy.deepcopy(schema))
    return stripped


def describe_schema(schema: dict[str, Any]) -> str:
    """The field guide put in the prompt, for servers that only do plain JSON mode."""
    lines = []
    for name, spec in schema["properties"].items():
        lines.append(f'- "{name}": {spec.get("description", spec.get("type"))}')
    return "\n".join(lines)


_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n(?P<body>.*?)(?:\n```\s*)?$", re.DOTALL)


def _unfenced(text: str) -> str:
    match = _FENCE.match(text)
    text = match.group("body") if match else text
    start = text.find("{")
    return text[start:] if start >= 0 else text


def parse_object(text: str) -> tuple[dict[str, Any], bool]:
    """(the top-level fields that parsed completely, whether the whole answer parsed).

    A truncated answer (the model hit its token limit) keeps every field that closed
    before the cut; the field being written when it was cut is dropped, never half-stored.
    """
    # A NUL or a lone surrogate, raw or escaped, means nothing in a summary and PostgreSQL
    # cannot store it: dropped, so the rest of the answer is kept.
    body = drop_unstorable(_unfenced(text or ""))
    try:
        value = json.loads(body)
    except ValueError:
        pass
    else:
        return (strip_unstorable(value), True) if isinstance(value, dict) else ({}, False)
    fields: dict[str, Any] = {}
    builder: ijson.ObjectBuilder | None = None
    key: str | None = None
    depth = 0
    try:
        for _prefix, event, value in ijson.parse(io.BytesIO(body.encode("utf-8"))):
            if depth == 1 and event == "map_key":
                key, builder = value, ijson.ObjectBuilder()
                continue
            if event in ("start_map", "start_array"):
                depth += 1
                if depth == 1:
                    if event != "start_map":
                        return {}, False
                    continue
            elif event in ("end_map", "end_array"):
                depth -= 1
                if depth == 0:
                    break
            if builder is not None:
                builder.event(event, value)
                if depth == 1 and key is not None:  # the value just closed (or was a scalar)
                    fields[key] = builder.value
                    key, builder = None, None
    except (ijson.JSONError, ijson.IncompleteJSONError, UnicodeDecodeError):
        pass
    return strip_unstorable(fields), False


@dataclass
class Checked:
    """Fields that passed the schema, and the names of those that did not."""

    valid: dict[str, Any] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def check_fields(obj: dict[str, Any], schema: dict[str, Any]) -> Checked:
    """Validate each top-level field on its own, so one bad field costs only itself."""
    out = Checked()
    for name, spec in schema["properties"].items():
        if name not in obj:
            out.missing.append(name)
            out.problems.append(f"{name}: absent")
            continue
        errors = sorted(Draft202012Validator(spec).iter_errors(obj[name]), key=lambda e: list(e.path))
        if errors:
            out.missing.append(name)
            out.problems.append(f"{name}: {errors[0].message[:200]}")
        else:
            out.valid[name] = obj[name]
    return out


def _clean_text(value: str) -> str:
    return re.sub(r"\s+", " ", value).strip()


def tidy_enrichment(fields: dict[str, Any]) -> dict[str, Any]:
    """Normalise validated fields: trimmed text, no duplicate items, and relations only
    between this doc's own concepts (a relation naming anything else is dropped)."""
    out: dict[str, Any] = {}
    if "summary" in fields:
        out["summary"] = _clean_text(fields["summary"])
    for name in ("themes", "takeaways", "insights", "open_questions"):
        if name in fields:
            seen: set[str] = set()
            items = []
            for item in fields[name]:
                text = _clean_text(item).lstrip("-*• ").strip()
                if text and text.lower() not in seen:
                    seen.add(text.lower())
                    items.append(text)
            out[name] = items
    if "concepts" in fields:
        seen = set()
        concepts = []
        for c in fields["concepts"]:
            name = _clean_text(c["name"]).strip("*_` ")
            if not name or name.lower() in seen:
                continue
            seen.add(name.lower())
            concepts.append(
                {
                    "name": name,
                    "kind": c["kind"],
                    "gloss": _clean_text(c["gloss"]),
                    "aliases": [_clean_text(a) for a in c.get("aliases", []) if _clean_text(a)],
                }
            )
        out["concepts"] = concepts
    if "relations" in fields:
        names = {c["name"].lower(): c["name"] for c in out.get("concepts", [])}
        for c in out.get("concepts", []):
            for alias in c["aliases"]:
                names.setdefault(alias.lower(), c["name"])
        relations: list[dict[str, str]] = []
        related: set[tuple[str | None, str, str | None]] = set()
        for r in fields["relations"]:
            subject, obj = names.get(_clean_text(r["subject"]).lower()), names.get(_clean_text(r["object"]).lower())
            relation = _clean_text(r["relation"])
            key = (subject, relation.lower(), obj)
            if subject and obj and subject != obj and relation and key not in related:
                related.add(key)
                relations.append({"subject": subject, "relation": relation, "object": obj})
        out["relations"] = relations
    return out
