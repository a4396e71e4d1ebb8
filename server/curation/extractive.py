"""Enrichment with no model: every line is the doc's own words, and nothing is invented.

- Summary: the most central sentences, in the doc's order. Centrality comes from the doc's
  own chunk vectors (cosine of a chunk to the doc's mean vector, no extra embedding call);
  without vectors, from BM25 of each sentence against the doc's keyphrases.
- Themes and concepts: YAKE keyphrases (unsupervised, single-document, no model download),
  code identifiers and "Long Name (ABBR)" definitions; each concept's gloss is the first
  sentence that uses it.
- Takeaways, insights, open questions: sentences that carry the cue words of a decision, a
  cause or contrast, or a question, and the items under headings that say so.
- Relations: none. Inferring them needs a model; extractive mode says so instead.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt

from .terms import is_term

MAX_TEXT_CHARS = 60_000  # keyphrases of a very long doc come from its first ~10k words
SUMMARY_WORDS = 90
SUMMARY_SENTENCES = 3

_md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9'+#.-]*[A-Za-z0-9+#]|[A-Za-z]")
_SPACES = re.compile(r"\s+")
_ABBREVIATION = re.compile(r"\b((?:[A-Z][\w-]*|[a-z][\w-]*)(?:[ -][\w-]+){1,5})\s+\(([A-Z][A-Za-z0-9]{1,9}s?)\)")
_CODE_IDENTIFIER = re.compile(r"^[A-Za-z_][\w.:/-]{2,40}$")

_TAKEAWAY_CUES = re.compile(
    r"\b(should|must|need to|needs to|recommend\w*|decided|decision|we chose|chose|prefer\w*|always|never|"
    r"best|important|key|remember|the fix|fixed by|solution|make sure|use|using|avoid|plan to|will)\b",
    re.I,
)
_INSIGHT_CUES = re.compile(
    r"\b(because|however|but|instead|although|though|trade-?off|since|so that|which means|turns out|"
    r"surprising\w*|unlike|rather than|the reason|due to|whereas|otherwise|caus\w+|lesson|learned|only helps|"
    r"only works|the catch|in practice)\b",
    re.I,
)
_CUE_HEADINGS = {
    "takeaways": re.compile(r"takeaway|decision|conclusion|summary|key point|answer|result|lesson|recommend", re.I),
    "open_questions": re.compile(r"open question|question|todo|to do|next step|unresolved|follow.?up|gap|risk", re.I),
}
# Section names that chat captures and templates use: never a theme or concept.
_GENERIC = frozenset(
    "user assistant question answer summary notes note decisions decision code open questions "
    "overview introduction conclusion context background details update updates misc other "
    "speaker session turn turns chat transcript".split()
    # nouns too common to name anything a reader would look up
    + "time times people person thing things way ways lot lots place part kind bit stuff day".split()
)
_VERBS = frozenset(
    "is are was were be been being am has have had do does did make makes made use uses used keep keeps "
    "kept get gets got take takes took give gives gave go goes went need needs want wants know knows "
    "think thinks see sees look looks work works help helps let lets try tries run runs find finds "
    "say says said tell tells feel feels seem seems become becomes show shows call calls provide "
    "provides allow allows like likes love loves going getting doing making trying thinking feeling "
    "really also just very much many lot lots thing things stuff way ways good great nice sure "
    "yeah yes okay ok hey hi thanks thank glad happy awesome amazing cool wow yesterday today tomorrow "
    "tonight now then soon later recently lately hard easy hear heard mean means meant sounds sound "
    "big small new old bit little best better right wrong true real fun tough lot able wait waiting "
    "check checking totally definitely probably maybe gonna wanna gotta kinda sorta stay staying".split()
)
_FUNCTION_WORDS = frozenset(
    "a an the and or but to for with by at in on into from as than that until while when after before "
    "because if so then".split()
)
_CALENDAR = frozenset(
    "january february march april may june july august september october november december monday "
    "tuesday wednesday thursday friday saturday sunday".split()
)


def _speaker(heading: str) -> str:
    """A turn heading without its turn id: "Caroline (D1:3)" -> "Caroline"."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", heading).strip()


def _verb_like(phrase: str) -> bool:
    """A phrase that reads like a clause fragment: an inner lowercase word in -s ("vacuum
    reclaims dead") or a name followed by a word in -s ("PostgreSQL builds")."""
    words = phrase.split()

    def third_person(w: str) -> bool:
        return w.islower() and w.endswith("s") and not w.endswith(("ss", "us", "is"))

    if any(third_person(w) for w in words[:-1]):
        return True
    head = words[0]
    return len(words) == 2 and third_person(words[-1]) and (any(c.isupper() for c in head[1:]) or head.isupper())


def _noun_like(word: str) -> bool:
    """A single word worth naming as a concept: not a verb form, adverb, date or filler."""
    low = word.lower()
    if low in _VERBS or low in _CALENDAR:
        return False
    return not (low.endswith(("ed", "ly")) and word[:1].islower())


_DETERMINERS = (
    "the|a|an|my|your|his|her|its|our|their|this|that|these|those|some|any|no|every|each|of|in|on|for|with|about"
)
_AFTER_A_NOUN = "of|and|or|to|in|on|for|with|is|was|are|were|that|which|at|from|by|as|has|have|had|can|will|would"


def _used_as_noun(phrase: str, text: str) -> bool:
    """A word or phrase the text uses as a noun at least once: after a determiner or
    preposition (two words may stand between) and before punctuation or a word that follows a
    noun ("the drive to", "my kids."). Keeps out the adjectives and verbs a keyphrase extractor
    also ranks ("Important", "Inspiring", "Happen", "heron hunts")."""
    pattern = re.compile(
        rf"\b(?:{_DETERMINERS})\s+(?:[\w-]+\s+){{0,2}}{re.escape(phrase)}(?:s|es)?"
        rf"(?=\s*(?:[.,;:!?)]|$)|\s+(?:{_AFTER_A_NOUN})\b)",
        re.I | re.M,
    )
    return pattern.search(text) is not None


def _agrees_like_a_verb(phrase: str) -> bool:
    """A phrase that may be a subject and its verb: a singular word then a lowercase one in -s
    ("dam creates"), or a plural then a lowercase one without ("herons wade")."""
    words = phrase.split()
    if len(words) < 2 or not words[-1].islower():
        return False
    before, last = words[-2].lower(), words[-1]

    def plural(w: str) -> bool:
        return w.endswith("s") and not w.endswith(("ss", "us", "is"))

    return plural(last) != plural(before)


@dataclass
class Unit:
    """A paragraph or list item of the doc, in reading order."""

    text: str
    heading: str
    chunk: int
    is_item: bool


def _inline_text(token: Any) -> tuple[str, list[str]]:
    """Plain text of an inline token and the code spans in it."""
    parts, code = [], []
    for child in token.children or []:
        if child.type == "code_inline":
            code.append(child.content)
            parts.append(child.content)
        elif child.type in ("text", "html_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(child.content or "")
    return _SPACES.sub(" ", "".join(parts)).strip(), code


def _units(chunks: Sequence[str]) -> tuple[list[Unit], list[str], list[str]]:
    """Paragraphs and list items (code, tables and raw HTML skipped), headings, code spans."""
    units: list[Unit] = []
    headings: list[str] = []
    code_spans: list[str] = []
    for index, markdown in enumerate(chunks):
        heading = ""
        tokens = _md.parse(markdown)
        in_item = 0
        in_heading = False
        in_table = 0
        for token in tokens:
            if token.type == "table_open":
                in_table += 1
            elif token.type == "table_close":
                in_table -= 1
            elif in_table:
                continue
            elif token.type == "heading_open":
                in_heading = True
            elif token.type == "heading_close":
                in_heading = False
            elif token.type == "list_item_open":
                in_item += 1
            elif token.type == "list_item_close":
                in_item -= 1
            elif token.type == "inline":
                text, code = _inline_text(token)
                code_spans.extend(code)
                if in_heading:
                    heading = text
                    headings.append(text)
                elif text:
                    units.append(Unit(text=text, heading=heading, chunk=index, is_item=in_item > 0))
    return units, headings, code_spans


@lru_cache(maxsize=1)
def _segmenter() -> Callable[[str], Iterator[str]]:
    from segtok.segmenter import split_single

    split: Callable[[str], Iterator[str]] = split_single
    return split


def _sentences(units: list[Unit]) -> list[tuple[str, Unit]]:
    split = _segmenter()
    out = []
    for unit in units:
        for sentence in split(unit.text):
            sentence = sentence.strip()
            if sentence:
                out.append((sentence, unit))
    return out


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(text)]


def _good_sentence(sentence: str) -> bool:
    words = _words(sentence)
    if not 5 <= len(words) <= 60:
        return False
    letters = sum(ch.isalpha() for ch in sentence)
    return letters >= 0.6 * len(sentence) and not sentence.rstrip().endswith(":")


def keyphrases(text: str, top: int = 24) -> list[str]:
    """YAKE keyphrases (best first), without verb-led fragments and chat filler."""
    import yake

    extractor = yake.KeywordExtractor(lan="en", n=3, dedup_lim=0.7, top=top * 2)
    phrases = []
    for phrase, _score in extractor.extract_keywords(text[:MAX_TEXT_CHARS]):
        words = phrase.split()
        low = [w.lower() for w in words]
        if low[0] in _VERBS or low[-1] in _VERBS or all(w in _GENERIC for w in low):
            continue
        if len(words) > 1 and sum(w in _VERBS for w in low) > 0:
            continue
        if not any(ch.isalpha() for ch in phrase) or len(phrase) < 3:
            continue
        if not is_term(phrase):  # a clause fragment ("Node lost", "API locally"), a quantity, a date
            continue
        phrases.append(phrase)
        if len(phrases) >= top:
            break
    return phrases


def _bm25_scores(sentences: list[list[str]], query: list[str], k1: float = 1.2, b: float = 0.75) -> list[float]:
    """BM25 of each sentence (as a document) for the query terms."""
    n = len(sentences)
    if not n:
        return []
    avg = sum(len(s) for s in sentences) / n or 1.0
    df = Counter(term for s in sentences for term in set(s))
    scores = []
    for s in sentences:
        tf = Counter(s)
        score = 0.0
        for term in set(query):
            if tf[term]:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * tf[term] * (k1 + 1) / (tf[term] + k1 * (1 - b + b * len(s) / avg))
        scores.append(score)
    return scores


def chunk_centrality(vectors: Sequence[Sequence[float] | None]) -> list[float] | None:
    """Cosine of each chunk vector to the doc's mean vector (None without >= 2 vectors)."""
    present = [v for v in vectors if v is not None]
    if len(present) < 2:
        return None
    import numpy as np

    matrix = np.asarray(present, dtype=float)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True).clip(min=1e-12)
    centroid = matrix.mean(axis=0)
    centroid /= np.linalg.norm(centroid) or 1.0
    sims = iter((matrix @ centroid).tolist())
    return [next(sims) if v is not None else 0.0 for v in vectors]


def _overlap(a: str, b: str) -> float:
    wa, wb = set(_words(a)), set(_words(b))
    return len(wa & wb) / (min(len(wa), len(wb)) or 1)


def _pick(ranked: list[tuple[float, int, str]], exclude: list[str], limit: int, max_overlap: float = 0.6) -> list[str]:
    """The best sentences, skipping near-duplicates of what is already chosen."""
    chosen: list[tuple[int, str]] = []
    for _score, position, sentence in ranked:
        if any(_overlap(sentence, other) > max_overlap for other in exclude + [s for _, s in chosen]):
            continue
        chosen.append((position, sentence))
        if len(chosen) >= limit:
            break
    return [s for _, s in chosen]


def _distinct(phrases: list[str]) -> list[str]:
    """Phrases in rank order, skipping any that shares half its words with a better one
    ("support group" keeps out "LGBTQ support group", "support" and "group")."""
    chosen: list[tuple[str, set[str]]] = []
    for phrase in phrases:
        words = set(_words(phrase))
        if words and not any(len(words & other) / min(len(words), len(other)) >= 0.5 for _, other in chosen):
            chosen.append((phrase, words))
    return [p for p, _ in chosen]


_TIMESTAMP = re.compile(r"^\[?\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?\]?\s*")


def _gloss(name: str, sentences: list[str]) -> str:
    pattern = re.compile(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", re.I)
    for sentence in sentences:
        if pattern.search(sentence) and _good_sentence(sentence):
            words = _TIMESTAMP.sub("", sentence).split()
            return " ".join(words[:28]) + (" …" if len(words) > 28 else "")
    return ""


def _kind(name: str, code_spans: set[str], text: str = "") -> str:
    """entity: code, CamelCase, ALLCAPS, digits, or capitalised mid-sentence (a name, not
    a sentence start); tag: one plain word; concept: several."""
    words = name.split()
    if name in code_spans or any(any(ch.isupper() for ch in w[1:]) or any(ch.isdigit() for ch in w) for w in words):
        return "entity"
    if all(w[:1].isupper() for w in words) and re.search(r"[a-z0-9,;:)\]]\s+" + re.escape(name) + r"\b", text):
        return "entity"
    return "tag" if len(words) == 1 else "concept"


def _display(phrase: str) -> str:
    return phrase if any(ch.isupper() for ch in phrase) else phrase[:1].upper() + phrase[1:]


@dataclass
class _Read:
    """What every step of `extract` reads: the doc's units and sentences, who speaks in it,
    its text as one piece and its keyphrases."""

    title: str
    units: list[Unit]
    headings: list[str]
    code_spans: list[str]
    heading_counts: Counter[str]
    speakers: set[str]
    pairs: list[tuple[str, Unit]]  # each sentence and the unit it stands in
    topic_headings: list[str]
    text: str
    phrases: list[str]
    phrase_terms: list[str]

    @property
    def sentences(self) -> list[str]:
        return [s for s, _ in self.pairs]


def _read(title: str, chunks: Sequence[str]) -> _Read:
    units, headings, code_spans = _units(chunks)
    # Headings that repeat (speakers of a transcript: "## Caroline", "## User") name who said
    # a sentence; they are kept as its attribution, not read as topics.
    heading_counts = Counter(_speaker(h) for h in headings)
    speakers = {h for h, n in heading_counts.items() if n >= 2 and len(h.split()) <= 3}
    topic_headings = [h for h in dict.fromkeys(headings) if _speaker(h) not in speakers and h.lower() not in _GENERIC]
    # Every unit ends a sentence, so keyphrases never run from one paragraph into the next.
    text = "\n".join(t if t[-1:] in ".!?:;" else f"{t}." for t in [title, *topic_headings, *(u.text for u in units)])
    phrases = keyphrases(text)
    return _Read(
        title=title,
        units=units,
        headings=headings,
        code_spans=code_spans,
        heading_counts=heading_counts,
        speakers=speakers,
        pairs=_sentences(units),
        topic_headings=topic_headings,
        text=text,
        phrases=phrases,
        phrase_terms=[t for p in phrases[:10] for t in _words(p)],
    )


def _ranked(
    read: _Read, chunks: Sequence[str], vectors: Sequence[Sequence[float] | None] | None
) -> list[tuple[float, int, str]]:
    """(score, position, sentence) of the doc's good sentences, best first: BM25 against its
    keyphrases, blended with its chunk's centrality when there are vectors."""
    lexical = _bm25_scores([_words(s) for s in read.sentences], read.phrase_terms)
    top_lexical = max(lexical, default=0.0) or 1.0
    centrality = chunk_centrality(list(vectors)) if vectors is not None and len(vectors) == len(chunks) else None
    scored: list[tuple[float, int, str]] = []
    for position, (sentence, unit) in enumerate(read.pairs):
        if not _good_sentence(sentence):
            continue
        score = lexical[position] / top_lexical
        if centrality is not None:
            score = 0.6 * centrality[unit.chunk] + 0.4 * score
        if sentence.endswith("?"):  # a summary says what the doc holds, not what it asks
            score *= 0.5
        scored.append((score, position, sentence))
    return sorted(scored, key=lambda t: (-t[0], t[1]))


def _summary(read: _Read, ranked: list[tuple[float, int, str]]) -> tuple[str, list[str]]:
    """The summary (its best sentences in the doc's order, each with its speaker in a
    conversation) and the sentences it used."""
    chosen: list[tuple[int, str]] = []
    words = 0
    for _score, position, sentence in ranked:
        if any(_overlap(sentence, s) > 0.6 for _, s in chosen):
            continue
        n = len(sentence.split())
        if chosen and words + n > SUMMARY_WORDS:
            continue
        chosen.append((position, sentence))
        words += n
        if len(chosen) >= SUMMARY_SENTENCES or words >= SUMMARY_WORDS:
            break

    def said(position: int, sentence: str) -> str:
        speaker = _speaker(read.pairs[position][1].heading)
        return f"{speaker}: {sentence}" if speaker in read.speakers else sentence

    summary = " ".join(said(p, s) for p, s in sorted(chosen))
    if not summary:  # a doc of lists, code or one-liners: say what it holds
        held = read.headings[:5] or [u.text[:80] for u in read.units[:3]] or ["(no prose)"]
        summary = f"{read.title}: " + ", ".join(held)
    return summary, [s for _, s in chosen]


def _cued(read: _Read, ranked: list[tuple[float, int, str]], used: list[str]) -> tuple[list[str], list[str], list[str]]:
    """Takeaways, insights and open questions: sentences with their cue words, and the items
    under headings that say so, none a repeat of the summary."""
    units = read.units

    def cue_list(cue: re.Pattern[str], heading_key: str | None, limit: int) -> list[str]:
        under = [
            (1.0, i, u.text)
            for i, u in enumerate(units)
            if heading_key
            and _CUE_HEADINGS[heading_key].search(u.heading or "")
            and _good_sentence(u.text)
            and (u.is_item or heading_key == "open_questions")
        ]
        cued = [(score, position, sentence) for score, position, sentence in ranked if cue.search(sentence)]
        return _pick(under + cued, used, limit)

    statements = [t for t in ranked if not t[2].endswith("?")]  # a question is no takeaway or insight
    takeaways = cue_list(_TAKEAWAY_CUES, "takeaways", 3) or _pick(statements, used, 2)
    takeaways = [t for t in takeaways if not t.endswith("?")]
    insights = _pick([t for t in statements if _INSIGHT_CUES.search(t[2])], used + takeaways, 3)
    topic_terms = set(read.phrase_terms)
    questions = [
        (1.0, p, s)
        for p, (s, u) in enumerate(read.pairs)
        if s.endswith("?") and len(_words(s)) >= 5 and topic_terms & set(_words(s))
    ] + [
        (0.5, i, u.text)
        for i, u in enumerate(units)
        if _CUE_HEADINGS["open_questions"].search(u.heading or "") and u.is_item
    ]
    return takeaways, insights, _pick(questions, used, 4, max_overlap=0.8)


def _aliases(text: str) -> dict[str, str]:
    """Long form (lower case) -> abbreviation, from "Large Language Models (LLM)"."""
    aliases: dict[str, str] = {}
    for long, short in _ABBREVIATION.findall(text):
        initials = "".join(w[0] for w in re.split(r"[ -]", long) if w).upper()
        if initials.endswith(short.rstrip("s").upper()):
            long_words = long.split()[-len(short.rstrip("s")) :]
            aliases[" ".join(long_words).lower()] = short
    return aliases


def _kept_phrases(read: _Read, code: set[str]) -> tuple[list[str], list[str]]:
    """The keyphrases worth naming: multi-word ones, and single words."""
    text = read.text
    counts = Counter(_words(text))
    # Multi-word phrases first; a single word only when it recurs or names something, and
    # never when a chosen phrase already contains it.
    # Multi-word phrases that read like clause fragments ("PostgreSQL builds", "indexes until
    # vacuum") are left out, unless they are a heading, the title or a proper name.
    named = {h.lower() for h in [read.title, *read.topic_headings]}
    multi = [
        p
        for p in read.phrases
        if len(p.split()) > 1
        and not set(_words(p)) & _FUNCTION_WORDS
        and (p.lower() in named or all(w[:1].isupper() for w in p.split()) or not _verb_like(p))
        and (p.lower() in named or not _agrees_like_a_verb(p) or _used_as_noun(p, text))
    ]
    single = [
        p
        for p in read.phrases
        if len(p.split()) == 1
        and _noun_like(p)
        and (counts[p.lower()] >= 2 or _kind(p, code, text) == "entity")
        and p not in read.speakers
        and (_kind(p, code, text) == "entity" or _used_as_noun(p, text))
    ]
    return multi, single


def _candidates(read: _Read, multi: list[str], single: list[str], code: set[str], aliases: dict[str, str]) -> list[str]:
    """The concepts to name, in rank order, each by its long form when it has one."""
    text = read.text
    # Names ("PostgreSQL") stay concepts of their own even inside a longer phrase: they are
    # what docs share.
    names = [p for p in single[:8] if _kind(p, code, text) == "entity"]
    candidates = sorted(
        _distinct(multi[:10] + [p for p in single[:8] if p not in names]) + names, key=read.phrases.index
    )
    candidates += [c for c in dict.fromkeys(read.code_spans) if _CODE_IDENTIFIER.match(c)][:4]
    candidates += sorted(read.speakers)
    # "Large Language Models (LLM)": one concept, the long form, with the short one as alias.
    long_forms: dict[str, str] = {}
    for long_key, short in aliases.items():
        long_forms[short.lower()] = long_key
        long_forms[long_key] = long_key

    def display_long(key: str) -> str:
        """The long form as the doc first writes it. Only for the candidates that have one: every
        alias searched for in the whole text was 7.6 of the 15.9 s a 1 MB page took."""
        first = re.search(re.escape(key), text, re.I)
        return first.group(0) if first else key

    resolved = []
    for phrase in candidates:
        key = phrase.lower()
        long_form = long_forms.get(key) or next((k for k in aliases if k.endswith(" " + key)), None)
        resolved.append(display_long(long_form) if long_form else phrase)
    return list(dict.fromkeys(resolved))


def _concept_gloss(read: _Read, phrase: str, code: set[str]) -> str:
    if phrase in read.speakers:
        return f"A participant: {read.heading_counts[phrase]} turns in this conversation."
    heading = next((h for h in read.topic_headings if phrase.lower() in h.lower()), None)
    return _gloss(phrase, read.sentences) or (
        "Named in the code of this document."
        if phrase in code
        else "The subject of this document's title."
        if phrase.lower() in read.title.lower()
        else f"Named in the section “{heading}”."
        if heading
        else "Named in this document."
    )


def _concepts(read: _Read, candidates: list[str], code: set[str], aliases: dict[str, str]) -> list[dict[str, Any]]:
    """Up to 12 concepts: name, kind, gloss (the first sentence that uses it) and aliases."""
    concepts: list[dict[str, Any]] = []
    chosen: list[str] = []
    for phrase in candidates:
        key = phrase.lower()
        if key in _GENERIC or key in chosen:
            continue
        if phrase not in read.speakers and phrase not in code and not is_term(phrase):
            continue
        chosen.append(key)
        alias = aliases.get(key)
        gloss = _concept_gloss(read, phrase, code)
        kind = "entity" if phrase in read.speakers else _kind(phrase, code, read.text)
        concepts.append({"name": _display(phrase), "kind": kind, "gloss": gloss, "aliases": [alias] if alias else []})
        if len(concepts) >= 12:
            break
    return concepts


def _themes(multi: list[str], concepts: list[dict[str, Any]], speakers: set[str]) -> list[str]:
    themes = [_display(p) for p in _distinct(multi)][:5]
    # few phrases (short docs, chats): fill up to three from the concepts, names last
    for concept in sorted(concepts, key=lambda c: c["kind"] == "entity"):
        if len(themes) >= 3:
            break
        if concept["name"] not in themes and concept["name"] not in speakers:
            themes.append(concept["name"])
    return themes


def extract(
    title: str, chunks: Sequence[str], vectors: Sequence[Sequence[float] | None] | None = None
) -> dict[str, Any]:
    """The enrichment fields (summary, themes, takeaways, insights, open_questions, concepts,
    relations) drawn from the doc's own chunks; `vectors` are the chunk vectors, if any."""
    read = _read(title, chunks)
    ranked = _ranked(read, chunks, vectors)
    summary, used = _summary(read, ranked)
    takeaways, insights, open_questions = _cued(read, ranked, used)
    code = set(read.code_spans)
    aliases = _aliases(read.text)
    multi, single = _kept_phrases(read, code)
    concepts = _concepts(read, _candidates(read, multi, single, code, aliases), code, aliases)
    return {
        "summary": summary,
        "themes": _themes(multi, concepts, read.speakers),
        "takeaways": takeaways,
        "insights": insights,
        "open_questions": open_questions,
        "concepts": concepts,
        "relations": [],
    }
