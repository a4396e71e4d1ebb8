"""WebVTT / SRT subtitles -> a timestamped markdown transcript.

Cues are cleaned (styling tags, inline timestamps, rolling-caption repeats), speakers are
kept (WebVTT ``<v Name>`` voice tags, ``Name:`` / ``- Name:`` / ``[Name]`` prefixes),
consecutive cues of one speaker merge into one paragraph stamped with its start time, and
paragraphs are grouped under ``## 00:00–05:00`` headings every ``section_minutes`` so a
chunk is a few minutes of talk.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

from .model import FormatError

_TS = r"(?:(\d{1,3}):)?(\d{1,2}):(\d{2})(?:[.,](\d{1,3}))?"
_TIMING_RE = re.compile(rf"^\s*{_TS}\s*-->\s*{_TS}")
_VOICE_RE = re.compile(r"<v(?:\.[\w.-]+)?\s+([^>]+?)\s*>", re.I)
_TAG_RE = re.compile(r"</?[a-z][^>]*>|<\d{1,3}:\d{2}[^>]*>|</?\d[^>]*>", re.I)
_PREFIX_RE = re.compile(
    r"^\s*(?:-\s*)?(?:\[([^\]\n]{1,40})\]|([A-Z][\w.'’ -]{0,38}?|>>\s*[\w.'’ -]{1,38}?))\s*:\s+(.+)$", re.S
)
_BRACKET_ONLY_RE = re.compile(r"^\s*(?:-\s*)?\[([^\]\n]{1,40})\]\s+(.+)$", re.S)


@dataclass
class Cue:
    start: float
    end: float
    text: str
    speaker: str | None = None


def _seconds(h: str | None, m: str, s: str, ms: str | None) -> float:
    return int(h or 0) * 3600 + int(m) * 60 + int(s) + (int((ms or "0").ljust(3, "0")[:3]) / 1000)


def _clean(text: str) -> str:
    text = _TAG_RE.sub("", text)
    text = html.unescape(text)
    text = re.sub(r"[ \t]+", " ", text)
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def _speaker_of(raw: str) -> tuple[str | None, str]:
    """Split a cue's raw text into (speaker, text)."""
    m = _VOICE_RE.search(raw)
    if m:
        speaker = html.unescape(m.group(1)).strip()
        return speaker or None, _clean(raw)
    text = _clean(raw)
    m = _PREFIX_RE.match(text)
    if m:
        name = (m.group(1) or m.group(2) or "").lstrip(">").strip()
        # "Note: ..." style words are not speakers when lower-case / too many words
        words = name.split()
        if (
            name
            and len(words) <= 4
            and all(w[0].isupper() or w.isdigit() for w in words)
            and name.lower() not in ("note", "warning", "http", "https", "the")
            and words[0].lower() not in ("the", "this", "it", "a", "an")
        ):
            return name, m.group(3).strip()
    m = _BRACKET_ONLY_RE.match(text)
    if m:
        return m.group(1).strip(), m.group(2).strip()
    return None, text


def parse_cues(text: str) -> list[Cue]:
    """Cues from WebVTT or SRT text (both are: optional id line, timing line, text lines)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    blocks = re.split(r"\n\s*\n", text)
    cues: list[Cue] = []
    for block in blocks:
        lines = list(block.split("\n"))
        for i, line in enumerate(lines):
            m = _TIMING_RE.match(line)
            if m:
                g = m.groups()
                start, end = _seconds(*g[0:4]), _seconds(*g[4:8])
                raw = "\n".join(lines[i + 1 :])
                speaker, body = _speaker_of(raw)
                if body:
                    cues.append(Cue(start, end, body, speaker))
                break
            if line.strip().upper().startswith(("NOTE", "STYLE", "REGION")) and i == 0:
                break
    return cues


def _dedupe_rolling(cues: list[Cue]) -> list[Cue]:
    """Auto-captions repeat the previous line at the top of the next cue; drop repeats."""
    out: list[Cue] = []
    prev_lines: list[str] = []
    for cue in cues:
        lines = cue.text.split("\n")
        while lines and prev_lines and lines[0] in prev_lines:
            lines = lines[1:]
        if lines:
            out.append(Cue(cue.start, cue.end, "\n".join(lines), cue.speaker))
            prev_lines = lines
    return out


def fmt_time(seconds: float, hours: bool) -> str:
    s = int(seconds)
    if hours:
        return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
    return f"{s // 60:02d}:{s % 60:02d}"


def cues_to_markdown(cues: list[Cue], section_minutes: int = 5) -> str:
    cues = _dedupe_rolling(sorted(cues, key=lambda c: c.start))
    if not cues:
        return ""
    span = section_minutes * 60
    hours = max(c.end for c in cues) >= 3600
    # paragraphs: consecutive cues of the same speaker within one section
    sections: dict[int, list[tuple[float, str | None, list[str]]]] = {}
    last_speaker: object = object()
    last_section = -1
    for cue in cues:
        sec = int(cue.start // span)
        paras = sections.setdefault(sec, [])
        same = sec == last_section and cue.speaker == last_speaker and paras
        if same and (cue.speaker is not None or len(" ".join(paras[-1][2])) < 600):
            paras[-1][2].append(cue.text.replace("\n", " "))
        else:
            paras.append((cue.start, cue.speaker, [cue.text.replace("\n", " ")]))
        last_speaker, last_section = cue.speaker, sec
    out = []
    for sec in sorted(sections):
        start, end = sec * span, (sec + 1) * span
        out.append(f"## {fmt_time(start, hours)}–{fmt_time(end, hours)}")
        for t, speaker, texts in sections[sec]:
            body = " ".join(texts)
            who = f" {speaker}:" if speaker else ""
            out.append(f"**[{fmt_time(t, hours)}]{who}** {body}")
    return "\n\n".join(out) + "\n"


def transcript_markdown(text: str, kind: str, section_minutes: int = 5) -> tuple[str, dict[str, Any]]:
    """(markdown, meta) for a .vtt / .srt text. Raises FormatError when no cue is found."""
    stripped = text.lstrip("\ufeff").lstrip()
    if kind == "vtt" and not stripped.startswith("WEBVTT"):
        # tolerate a missing header, but there must be cues
        pass
    cues = parse_cues(text)
    if not cues:
        raise FormatError("empty", f"No subtitle cues found in this .{kind} file.")
    md = cues_to_markdown(cues, section_minutes)
    speakers = []
    for c in cues:
        if c.speaker and c.speaker not in speakers:
            speakers.append(c.speaker)
    meta = {"cues": len(cues), "duration_seconds": round(max(c.end for c in cues), 3), "speakers": speakers}
    return md, meta
