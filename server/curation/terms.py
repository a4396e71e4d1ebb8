"""The noun phrases a page holds, with no model: what links a hub's concepts to every page
that names them.

A term is a run of one to three content words inside a clause (never across punctuation or a
line), none of them a stopword, a common verb, a number word or a date, and not ending in a
verb form ("fell", "opened", "writes") or an adverb ("locally"). That is a noun phrase often
enough without a part-of-speech model, which would be a download. Each page stores its terms
(store/enrichments.py); a hub's concepts are the ones two or more pages hold or a page's
title names (concepts.hub_concepts).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

MAX_TERMS = 400  # per page: the most frequent, title terms always; a page's text past that rarely names a concept
MAX_WORDS = 3

# Words of one clause: letters first, inner dots, dashes, apostrophes and +# kept ("Node.js",
# "C++", "pgvector"), digits allowed after a letter ("Node 22" is two words, "S3" one).
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'+#.-]*[A-Za-z0-9+#]|[A-Za-z]|[0-9][0-9.]*")
_CLAUSE = re.compile(r"[.,;:!?()\[\]{}\"“”‘’«»|/\\<>=*_`~\n]+|\s[-–—]+\s|'s\b|'\s")

NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fifteen twenty thirty "
    "forty fifty sixty hundred hundreds thousand thousands million millions billion half dozen couple "
    "percent percentage first second third fourth fifth last next".split()
)
CALENDAR = frozenset(
    "january february march april may june july august september october november december monday "
    "tuesday wednesday thursday friday saturday sunday today tomorrow yesterday tonight morning evening "
    "afternoon night week weeks weekend month months year years day days minute minutes hour hours "
    "second seconds ago".split()
)
# Verb forms a capitalised subject runs into ("Node lost", "Alan writes", "Autovacuum fell"),
# and chat filler: never the end of a noun phrase.
VERB_FORMS = frozenset(
    "is are was were be been being am has have had do does did doing done make makes made making use uses "
    "used keep keeps kept get gets got gotten take takes took taken give gives gave given go goes went gone "
    "come comes came need needs want wants know knows knew think thinks thought see sees saw seen look "
    "looks work works worked help helps let lets try tries tried run runs ran find finds found say says "
    "said tell tells told feel feels felt seem seems become becomes became show shows showed shown call "
    "calls called provide provides allow allows like likes love loves fell fall falls lost lose loses "
    "left leave leaves began begin begins brought bring brings bought buy buys built build builds sent "
    "send sends spent spend spends wrote write writes read reads grew grow grows drew drove flew rose "
    "broke chose spoke woke wore won met meet meets paid pay pays put puts set sets stood sat held "
    "hold holds heard hear hears meant mean means sounds sound wait waiting check checking really also "
    "just very much many lot lots thing things stuff way ways good great nice sure yeah yes okay ok hey "
    "hi thanks thank glad happy awesome amazing cool wow gonna wanna gotta kinda sorta stay staying "
    "can could would should will shall might must may".split()
)


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    """YAKE's English stopword list (the keyphrase library already installed), and the above."""
    words: set[str] = set()
    try:
        import yake

        words.update((Path(yake.__file__).parent / "core" / "StopwordsList" / "stopwords_en.txt").read_text().split())
    except (ImportError, OSError):  # a yake without its list: the sets above still hold
        pass
    return frozenset(words) | NUMBER_WORDS | CALENDAR | VERB_FORMS


def _content(word: str) -> bool:
    low = word.lower()
    if low in stopwords() or not any(ch.isalpha() for ch in word):
        return False
    return not (word.islower() and low.endswith("ly") and len(low) > 4)  # an adverb: "locally"


def _can_end(word: str) -> bool:
    """A lowercase past form ("opened", "aged") ends a clause, not a noun phrase."""
    return not (word.islower() and word.endswith("ed") and len(word) > 3)


def term_key(phrase: str) -> str:
    """The case-folded phrase, its last word in the singular: the unit a hub counts pages by
    ("Backups" and "backup" are one term)."""
    words = phrase.lower().split()
    if not words:
        return ""
    last = words[-1]
    if len(last) > 4 and last.endswith("ies"):
        last = last[:-3] + "y"
    elif len(last) > 3 and last.endswith("s") and not last.endswith(("ss", "us", "is", "ics")):
        last = last[:-1]
    return " ".join([*words[:-1], last])


def is_term(phrase: str) -> bool:
    """Whether a phrase (a keyphrase, a concept's name) reads as a noun phrase by the rules above."""
    words = phrase.split()
    return (
        0 < len(words) <= MAX_WORDS and all(_WORD.fullmatch(w) and _content(w) for w in words) and _can_end(words[-1])
    )


def clauses(text: str) -> Iterable[list[str]]:
    """The words of each clause of `text`."""
    for part in _CLAUSE.split(text):
        words = _WORD.findall(part)
        if words:
            yield words


@dataclass
class Term:
    key: str
    name: str  # as the page writes it, a mid-sentence spelling when there is one
    count: int
    in_title: bool


def page_terms(title: str, texts: Iterable[str], limit: int = MAX_TERMS) -> list[Term]:
    """The terms of a page (its title and `texts`): every run of one to three content words,
    most frequent first, the title's always kept."""
    found: dict[str, Term] = {}
    order: dict[str, int] = {}

    def add(words: list[str], in_title: bool) -> None:
        run: list[str] = []
        for position, word in enumerate([*words, ""]):
            if word and _content(word):
                run.append(word)
                continue
            for start in range(len(run)):
                for n in range(1, min(MAX_WORDS, len(run) - start) + 1):
                    gram = run[start : start + n]
                    if not _can_end(gram[-1]):
                        continue
                    name = " ".join(gram)
                    key = term_key(name)
                    term = found.get(key)
                    if term is None:
                        found[key] = term = Term(key, name, 0, False)
                        order[key] = len(order)
                    term.count += 1
                    term.in_title = term.in_title or in_title
                    # a clause's first word is capitalised whatever it is: a later spelling wins
                    opens = position - len(run) + start == 0
                    if not in_title and not opens and term.name != name and name[:1].isupper():
                        term.name = name
            run = []

    for words in clauses(title):
        add(words, True)
    for text in texts:
        for words in clauses(text):
            add(words, False)
    ranked = sorted(found.values(), key=lambda t: (not t.in_title, -t.count, order[t.key]))
    return ranked[:limit]
