"""Concept folding: one entry per concept across a hub's docs, whatever case, number or name.

- case: keys are lowercase with whitespace and surrounding punctuation normalised;
- plural: two keys merge when one is the other's plural ("cache"/"caches", "policy"/
  "policies", "analysis"/"analyses"). Pairs are only merged when both forms occur, which is
  safer than singularising every word (inflection libraries turn "data" into "datum" and
  "analysis" into "analysi");
- alias: a name a doc gives as an alias of a concept ("LLM" for "large language model"),
  or an acronym of another concept's words, merges into it.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

_SPACES = re.compile(r"\s+")
_EDGE_PUNCT = "\"'`*_()[]{}.,;:!?"


def concept_key(name: str) -> str:
    """Case-folded, whitespace-normalised name: the unit that plural and alias folding join."""
    return _SPACES.sub(" ", name.strip().strip(_EDGE_PUNCT).strip()).lower()


def _singulars(key: str) -> list[str]:
    """Possible singular forms of a key's last word (only used to find an existing key)."""
    head, _, last = key.rpartition(" ")
    prefix = f"{head} " if head else ""
    forms = []
    if len(last) > 3 and last.endswith("ies"):
        forms.append(last[:-3] + "y")
    if len(last) > 3 and last.endswith("es"):
        forms += [last[:-2], last[:-2] + "is"]
    if len(last) > 2 and last.endswith("s") and not last.endswith("ss"):
        forms.append(last[:-1])
    return [prefix + f for f in forms]


def _acronym(key: str) -> str:
    words = [w for w in re.split(r"[ -]", key) if w]
    return "".join(w[0] for w in words) if len(words) >= 2 else ""


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


@dataclass
class Concept:
    """A concept merged across docs: the name most docs use, its kind, a gloss, its docs."""

    name: str
    kind: str
    gloss: str
    keys: set[str] = field(default_factory=set)
    aliases: list[str] = field(default_factory=list)
    docs: list[dict[str, Any]] = field(default_factory=list)  # {"id", "title", ...} in input order


def fold(mentions: Iterable[dict[str, Any]]) -> list[Concept]:
    """Merge concept mentions into concepts, most widely shared first.

    Each mention: {"doc_id", "title", "name", "kind", "gloss", "aliases"} plus any doc fields
    (kept on the concept's doc entries); mentions come in the order docs should be listed.
    """
    mentions = list(mentions)
    uf = _UnionFind()
    keys = {concept_key(m["name"]) for m in mentions} - {""}
    for key in keys:
        uf.find(key)
        for singular in _singulars(key):
            if singular in keys:
                uf.union(key, singular)
    for m in mentions:
        key = concept_key(m["name"])
        for alias in m.get("aliases") or []:
            alias_key = concept_key(alias)
            if alias_key and alias_key != key:
                uf.union(key, alias_key)
    by_acronym = {}
    for key in keys:
        if " " not in key and 2 <= len(key) <= 8:
            by_acronym[key.rstrip("s") if len(key) > 2 else key] = key
    for key in keys:
        short = by_acronym.get(_acronym(key))
        if short:
            uf.union(key, short)

    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for m in mentions:
        key = concept_key(m["name"])
        if key:
            groups[uf.find(key)].append(m)
    concepts = []
    for group in groups.values():
        names = Counter(m["name"] for m in group)
        group_keys = {concept_key(n) for n in names}

        def preference(n: str) -> tuple:
            # The name most docs use; on a tie the singular, then the capitalised, then the
            # longer one (the spelled-out form over the acronym).
            plural = any(s in group_keys for s in _singulars(concept_key(n)))
            return (names[n], not plural, n[:1].isupper(), len(n), n)

        name = max(names, key=preference)
        kinds = Counter(m["kind"] for m in group)
        kind = max(kinds, key=lambda k: (kinds[k], k))
        gloss = next((m["gloss"] for m in group if m.get("gloss") and m["name"] == name), "") or next(
            (m["gloss"] for m in group if m.get("gloss")), ""
        )
        aliases, alias_keys = [], {concept_key(name)}
        for alias in [n for n in names if n != name] + [a for m in group for a in m.get("aliases") or []]:
            if concept_key(alias) not in alias_keys:
                alias_keys.add(concept_key(alias))
                aliases.append(alias)
        docs, seen = [], set()
        for m in group:
            if m["doc_id"] not in seen:
                seen.add(m["doc_id"])
                docs.append({k: v for k, v in m.items() if k not in ("name", "kind", "gloss", "aliases")})
        concepts.append(
            Concept(
                name=name,
                kind=kind,
                gloss=gloss,
                keys={concept_key(m["name"]) for m in group},
                aliases=aliases,
                docs=docs,
            )
        )
    concepts.sort(key=lambda c: (-len(c.docs), c.name.lower()))
    return concepts


def fold_doc_concepts(concepts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One doc's own concepts with plural and alias duplicates merged ("Dog" and "Dogs")."""
    merged = fold({**c, "doc_id": ""} for c in concepts)
    order = {concept_key(c["name"]): i for i, c in enumerate(concepts)}
    merged.sort(key=lambda c: min(order.get(k, 1 << 30) for k in c.keys))
    return [{"name": c.name, "kind": c.kind, "gloss": c.gloss, "aliases": c.aliases} for c in merged]


def hub_concepts(
    mentions: Iterable[dict[str, Any]], terms: Iterable[dict[str, Any]], docs: dict[str, dict[str, Any]]
) -> list[Concept]:
    """A hub's concepts: few and real. The pages' own concepts, folded as above; each is linked
    to every page that holds it (names it in its text or title, or lists it as its own
    concept: "Postgres" reaches the pages titled "Postgres …") and kept when two or more pages
    do, or when it is part of a page's title. A phrase one page used and no title names is that
    page's business, not the hub's.

    `mentions`: as for fold(); `terms`: the pages' terms ({"doc_id", "key", "in_title"},
    store/concepts.py), at least those with the concepts' term keys; `docs`: {id: the fields a
    concept's doc entry carries, "title" among them}, in the order pages are listed.
    """
    from .terms import term_key

    holders: dict[str, set[str]] = defaultdict(set)
    title_keys: dict[str, set[str]] = defaultdict(set)
    for t in terms:
        holders[t["key"]].add(t["doc_id"])
        if t["in_title"]:
            title_keys[t["doc_id"]].add(t["key"])
    whole_titles = {term_key(d["title"]) for d in docs.values()}
    order = {doc_id: i for i, doc_id in enumerate(docs)}
    kept = []
    for c in fold(mentions):
        keys = {term_key(k) for k in c.keys} | {term_key(concept_key(a)) for a in c.aliases}
        named = {d["doc_id"]: d for d in c.docs}
        for doc_id in set().union(*(holders.get(k, set()) for k in keys)):
            if doc_id not in named and doc_id in docs:
                named[doc_id] = {"doc_id": doc_id, **docs[doc_id]}
        c.docs = sorted(named.values(), key=lambda d: order.get(d["doc_id"], len(order)))
        in_a_title = not keys & whole_titles and any(keys & title_keys.get(d, set()) for d in named)
        if len(c.docs) >= 2 or in_a_title:
            kept.append(c)
    kept.sort(key=lambda c: (-len(c.docs), c.name.lower()))
    return kept
