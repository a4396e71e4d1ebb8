"""The heading chunker: what the indexer embeds and what recall shows as a breadcrumb."""

from __future__ import annotations

import hashlib
import itertools
import unicodedata
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from memorywiki.server.indexing.chunker import Chunk, ChunkSize, chunk_markdown, strip_front_matter

DATA = Path(__file__).parent / "data" / "chunker"


def paths(chunks: list[Chunk]) -> list[str]:
    return [c.heading_path for c in chunks]


def body_lines(chunks: list[Chunk]) -> set[str]:
    return {line for c in chunks for line in c.markdown.split("\n")}


def long_paragraph(n: int, words: int = 30) -> str:
    return " ".join(f"p{n}w{i}" for i in range(words))


# --- headings found from the token stream, not by regex ---------------------------------------


def test_tricky_sample_splits_only_on_real_headings() -> None:
    chunks = chunk_markdown("Tricky doc", (DATA / "tricky.md").read_text(encoding="utf-8"))
    assert paths(chunks) == [
        "Tricky doc",
        "Tricky doc",
        "Tricky doc > Install memorywiki with pip",
        "Tricky doc > Setext Section",
        "Tricky doc > Top Level Again > Leaf under setext",  # the bare setext H1 is no chunk
    ]
    assert [c.ordinal for c in chunks] == list(range(5))
    assert chunks[0].markdown == "Some intro before any heading."
    assert chunks[1].markdown == "# Tricky doc\n\nThe doc's own title heading."
    install = chunks[2].markdown
    assert install.startswith("## Install `memorywiki` with [pip](https://pypi.org)\n")
    assert "# this is a shell comment, not a heading" in install
    assert "## not a heading either" in install
    assert "    # indented code, not a heading" in install
    setext = chunks[3].markdown
    assert setext.startswith("Setext *Section*\n----------------\n")
    for inside in ("> # quoted", "- # list item", "#### Deep heading", "| # a | 1   |"):
        assert inside in setext
    assert chunks[4].markdown == "### Leaf under setext\n\nDone."


@pytest.mark.parametrize("fence", ["```", "~~~", "````"])
def test_hash_inside_fence_is_not_a_heading(fence: str) -> None:
    md = f"# Real\n\n{fence}python\n# comment\n## also comment\n{fence}\n\nafter\n"
    chunks = chunk_markdown("T", md)
    assert len(chunks) == 1
    assert chunks[0].markdown == md.strip()


def test_unclosed_fence_swallows_the_rest() -> None:
    # CommonMark: an unclosed fence runs to the end of the doc, so nothing after it splits.
    chunks = chunk_markdown("T", "# A\n\n```\n# not\n\n## still not\n")
    assert paths(chunks) == ["T > A"]


def test_indented_code_is_not_a_heading() -> None:
    chunks = chunk_markdown("T", "# A\n\n    # code\n    ## code\n\n\t# tab code\n")
    assert len(chunks) == 1


def test_setext_levels() -> None:
    md = "Top\n===\n\nbody\n\nSecond\n------\n\nmore\n"
    chunks = chunk_markdown("Doc", md)
    assert paths(chunks) == ["Doc > Top", "Doc > Top > Second"]
    assert chunks[1].markdown == "Second\n------\n\nmore"


def test_multiline_setext_heading_text_is_joined() -> None:
    chunks = chunk_markdown("Doc", "first line\nsecond line\n===\n\nbody\n")
    assert paths(chunks) == ["Doc > first line second line"]


def test_thematic_break_is_not_a_heading() -> None:
    chunks = chunk_markdown("Doc", "para\n\n---\n\n***\n\nmore\n")
    assert paths(chunks) == ["Doc"]


def test_headings_in_blockquotes_and_lists_do_not_split() -> None:
    md = "# A\n\n> # q1\n> ## q2\n\n- # item\n  ## item 2\n\n1. ### three\n"
    chunks = chunk_markdown("T", md)
    assert len(chunks) == 1


def test_deeper_headings_stay_inside() -> None:
    md = "## Section\n\nintro\n\n#### Four\n\nx\n\n##### Five\n\n###### Six\n\ny\n"
    chunks = chunk_markdown("T", md)
    assert len(chunks) == 1
    assert chunks[0].markdown == md.strip()


def test_inline_markup_is_stripped_from_heading_text() -> None:
    md = (
        "# Using `pip` with [the index](https://pypi.org) and *emphasis*\n\none\n\n"
        "## **Bold** _under_ ~~struck~~ ![logo](l.png) &amp; \\#hash <kbd>K</kbd>\n\ntwo\n\n"
        "### Ref [docs][d]\n\nthree\n\n"
        "[d]: https://example.com\n"
    )
    chunks = chunk_markdown("T", md)
    assert paths(chunks) == [
        "T > Using pip with the index and emphasis",
        "T > Using pip with the index and emphasis > Bold under struck logo & #hash K",
        "T > Using pip with the index and emphasis > Bold under struck logo & #hash K > Ref docs",
    ]
    assert chunks[0].markdown.startswith("# Using `pip` with [the index]")  # markdown itself kept


def test_atx_closing_hashes_are_not_part_of_the_name() -> None:
    assert paths(chunk_markdown("T", "## Name ##\n\nx\n")) == ["T > Name"]


# --- breadcrumbs ------------------------------------------------------------------------------


def test_heading_path_nests_and_resets() -> None:
    md = (
        "# One\n\na\n\n## One.A\n\nb\n\n### One.A.i\n\nc\n\n## One.B\n\nd\n\n"
        "# Two\n\ne\n\n### Two.skip\n\nf\n\n## Two.A\n\ng\n"
    )
    assert paths(chunk_markdown("Doc", md)) == [
        "Doc > One",
        "Doc > One > One.A",
        "Doc > One > One.A > One.A.i",
        "Doc > One > One.B",
        "Doc > Two",
        "Doc > Two > Two.skip",
        "Doc > Two > Two.A",
    ]


def test_h2_before_any_h1() -> None:
    assert paths(chunk_markdown("Doc", "## Lone\n\nx\n\n### Sub\n\ny\n")) == [
        "Doc > Lone",
        "Doc > Lone > Sub",
    ]


def test_title_heading_is_not_repeated() -> None:
    md = "# My  notes\n\nintro\n\n## Part\n\nx\n"
    assert paths(chunk_markdown("my notes", md)) == ["my notes", "my notes > Part"]


def test_only_the_first_h1_is_folded_into_the_title() -> None:
    md = "# Doc\n\nx\n\n# Other\n\ny\n\n# Doc\n\nz\n"
    assert paths(chunk_markdown("Doc", md)) == ["Doc", "Doc > Other", "Doc > Doc"]


def test_empty_title_becomes_untitled() -> None:
    assert paths(chunk_markdown("", "text\n\n# H\n\nx\n")) == ["Untitled", "Untitled > H"]
    assert paths(chunk_markdown("  \n ", "text\n")) == ["Untitled"]


def test_empty_heading_keeps_its_chunk() -> None:
    chunks = chunk_markdown("T", "# A\n\nx\n\n##\n\ny\n")
    assert paths(chunks) == ["T > A", "T > A"]
    assert chunks[1].markdown == "##\n\ny"


# --- whole docs -------------------------------------------------------------------------------


@pytest.mark.parametrize("md", ["", "   ", "\n\n\t\n", "\r\n\r\n", "---\ntitle: x\n---\n\n"])
def test_empty_input(md: str) -> None:
    assert chunk_markdown("T", md) == []


def test_no_headings_is_one_chunk_titled_by_the_doc() -> None:
    chunks = chunk_markdown("Plain", "\n\nJust some text.\n\nAnd more.\n\n")
    assert chunks == [
        Chunk(0, "Plain", "Just some text.\n\nAnd more.", chunks[0].hash),
    ]


def test_blank_preamble_is_skipped() -> None:
    chunks = chunk_markdown("T", "\n   \n\n# H\n\nx\n")
    assert paths(chunks) == ["T > H"]
    assert chunks[0].ordinal == 0


def test_heading_only_doc_is_one_chunk_titled_by_the_doc() -> None:
    chunks = chunk_markdown("T", "# Just a heading")
    assert [(c.heading_path, c.markdown) for c in chunks] == [("T", "# Just a heading")]
    outline = "# Plan\n\n## Build\n\n## Ship\n"
    assert [(c.heading_path, c.markdown) for c in chunk_markdown("T", outline)] == [("T", outline.strip())]


# --- a heading with no body is never a chunk of its own ---------------------


def test_bare_heading_is_folded_into_the_breadcrumb_below_it() -> None:
    md = "# Deploy notes\n\n## Steps\n\nRun make deploy.\n\n## Rollback\n\nRun make rollback.\n"
    chunks = chunk_markdown("Ops handbook", md)
    assert [(c.heading_path, c.markdown) for c in chunks] == [
        ("Ops handbook > Deploy notes > Steps", "## Steps\n\nRun make deploy."),
        ("Ops handbook > Deploy notes > Rollback", "## Rollback\n\nRun make rollback."),
    ]
    assert [c.ordinal for c in chunks] == [0, 1]


def only_headings(markdown: str) -> bool:
    """True when every top-level block of `markdown` is a heading (nothing to read under it)."""
    blocks = [t for t in MarkdownIt("commonmark").parse(markdown) if t.level == 0 and t.nesting >= 0]
    return all(t.type in ("heading_open", "inline") for t in blocks)


@pytest.mark.parametrize(
    "md",
    [
        "# A\n## B\n### C\ntext\n",
        "A\n===\n\nB\n---\n\n### C\n\ntext\n",
        "# A\n\n## B\n\n### C\n\ntext\n\n## Empty at the end\n\n",
        "intro\n\n# A\n\n## B\n\n### C\n\ntext\n",
    ],
)
def test_no_chunk_is_only_a_heading(md: str) -> None:
    chunks = chunk_markdown("T", md)
    assert chunks and not any(only_headings(c.markdown) for c in chunks), chunks
    [body] = [c for c in chunks if "text" in c.markdown]
    assert body.heading_path == "T > A > B > C" and body.markdown.startswith("### C")


def test_reference_definitions_are_kept() -> None:
    md = "# A\n\nSee [x].\n\n[x]: https://example.com\n\n# B\n\ny\n"
    chunks = chunk_markdown("T", md)
    assert chunks[0].markdown == "# A\n\nSee [x].\n\n[x]: https://example.com"


def test_crlf_and_cr_give_the_same_chunks_as_lf() -> None:
    md = "---\ntitle: t\n---\nintro\n\n# A\n\n```\n# no\n```\n\nB\n---\n\nx\n"
    lf = chunk_markdown("T", md)
    assert len(lf) == 3
    assert chunk_markdown("T", md.replace("\n", "\r\n")) == lf
    assert chunk_markdown("T", md.replace("\n", "\r")) == lf
    assert all("\r" not in c.markdown for c in lf)


def test_unicode() -> None:
    md = "# Überblick 🚀\n\nGrüße, 世界.\n\n## 日本語の見出し\n\n本文\u2028still the same line\n"
    chunks = chunk_markdown("Ünïcode", md)
    assert paths(chunks) == ["Ünïcode > Überblick 🚀", "Ünïcode > Überblick 🚀 > 日本語の見出し"]
    assert chunks[1].markdown == "## 日本語の見出し\n\n本文\u2028still the same line"


def test_max_chars_must_be_positive() -> None:
    with pytest.raises(ValueError):
        chunk_markdown("T", "x", ChunkSize(0))


# --- front matter -----------------------------------------------------------------------------


def test_strip_front_matter() -> None:
    assert strip_front_matter("---\ntitle: x\nlist:\n  - a\n---\n# H\n") == "# H\n"
    assert strip_front_matter("---\r\ntitle: x\r\n...\r\nbody") == "body"
    assert strip_front_matter("---\n---\nbody") == "body"
    assert strip_front_matter("\ufeff---\nk: v\n---\nbody") == "body"


def test_front_matter_left_alone_when_not_front_matter() -> None:
    unclosed = "---\ntitle: x\n\n# H\n"
    assert strip_front_matter(unclosed) == unclosed
    not_first = "intro\n---\ntitle: x\n---\n"
    assert strip_front_matter(not_first) == not_first
    # A doc that opens with a thematic break keeps its first paragraph.
    rule = "---\n\nImportant first paragraph.\n\n---\n\nmore\n"
    assert strip_front_matter(rule) == rule


def test_front_matter_is_not_chunked() -> None:
    chunks = chunk_markdown("T", "---\ntitle: Secret meta\n---\n# H\n\nbody\n")
    assert [c.markdown for c in chunks] == ["# H\n\nbody"]


# --- long sections ----------------------------------------------------------------------------


def test_huge_section_splits_with_heading_repeated_and_nothing_lost() -> None:
    paragraphs = [long_paragraph(n) for n in range(40)]
    md = "# Intro\n\nshort\n\n## Big *one*\n\n" + "\n\n".join(paragraphs) + "\n\n## After\n\nz\n"
    chunks = chunk_markdown("T", md, ChunkSize(600))
    big = [c for c in chunks if c.heading_path == "T > Intro > Big one"]
    assert len(big) > 3
    assert all(c.markdown.startswith("## Big *one*\n\n") for c in big)
    assert all(len(c.markdown) <= 600 for c in big)
    bodies = "\n\n".join(c.markdown.removeprefix("## Big *one*\n\n") for c in big)
    assert bodies == "\n\n".join(paragraphs)  # every line, in order, once
    assert paths(chunks)[-1] == "T > Intro > After"
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert every_line_kept(md, chunks)


def every_line_kept(md: str, chunks: list[Chunk]) -> bool:
    return {line for line in md.split("\n") if line.strip()} <= body_lines(chunks)


def covers(md: str, chunks: list[Chunk]) -> bool:
    """Every character of every source line (spaces aside) sits in a line of some chunk: a line
    is kept whole, or cut in pieces that each lie inside it."""
    pieces = {"".join(line.split()) for c in chunks for line in c.markdown.split("\n")} - {""}
    for line in md.split("\n"):
        text = "".join(line.split())
        seen = [False] * len(text)
        for piece in pieces:
            at = text.find(piece)
            while at >= 0:
                seen[at : at + len(piece)] = [True] * len(piece)
                at = text.find(piece, at + 1)
        if not all(seen):
            return False
    return True


def test_long_doc_without_headings_splits_without_inventing_a_heading() -> None:
    paragraphs = [long_paragraph(n) for n in range(30)]
    chunks = chunk_markdown("Notes", "\n\n".join(paragraphs), ChunkSize(500))
    assert len(chunks) > 1
    assert set(paths(chunks)) == {"Notes"}
    assert "\n\n".join(c.markdown for c in chunks) == "\n\n".join(paragraphs)


def test_huge_code_fence_splits_between_lines_reopened_with_its_info_string() -> None:
    code = [f"x_{i} = compute({i})  # step {i}" for i in range(200)]
    fence = "```python title=app.py\n" + "\n".join(code) + "\n```"
    md = f"## Code\n\nbefore\n\n{fence}\n\nafter\n"
    chunks = chunk_markdown("T", md, ChunkSize(300))
    holding = [c for c in chunks if "x_" in c.markdown]
    assert len(holding) > 5 and all(len(c.markdown) <= 300 for c in chunks)
    for c in holding:
        assert c.markdown.startswith("## Code\n\n```python title=app.py\n") and c.markdown.endswith("\n```")
        tokens = MarkdownIt("commonmark").parse(c.markdown)
        assert [t.info for t in tokens if t.type == "fence"] == ["python title=app.py"]  # one whole fence each
    assert [line for c in holding for line in c.markdown.split("\n")[3:-1]] == code  # every line once, in order
    assert every_line_kept(md, chunks)


def test_unclosed_fence_is_closed_on_every_piece() -> None:
    md = "~~~~sh\n" + "\n".join(f"echo {i} {'z' * 30}" for i in range(40))
    chunks = chunk_markdown("T", md, ChunkSize(250))
    assert len(chunks) > 3
    assert all(c.markdown.startswith("~~~~sh\n") and c.markdown.endswith("\n~~~~") for c in chunks)
    assert every_line_kept(md, chunks)


def test_a_code_line_longer_than_a_piece_is_cut_inside_the_fence() -> None:
    md = "```js\n" + "let a = [" + ", ".join(str(i) for i in range(400)) + "];\n```\n"
    chunks = chunk_markdown("T", md, ChunkSize(200))
    assert len(chunks) > 5 and all(len(c.markdown) <= 200 for c in chunks)
    assert all(c.markdown.startswith("```js\n") and c.markdown.endswith("\n```") for c in chunks)
    assert covers(md, chunks)


def test_table_splits_between_rows_under_its_header_and_delimiter() -> None:
    header, delimiter = "| name | value |", "| --- | ---: |"
    rows = [f"| row {i} | {'v' * 20} |" for i in range(60)]
    md = "## Data\n\n" + "\n".join([header, delimiter, *rows]) + "\n"
    chunks = chunk_markdown("T", md, ChunkSize(300))
    assert len(chunks) > 3 and all(len(c.markdown) <= 300 for c in chunks)
    for c in chunks:
        assert c.markdown.startswith(f"## Data\n\n{header}\n{delimiter}\n")
        assert any(t.type == "table_open" for t in MarkdownIt("commonmark").enable("table").parse(c.markdown))
    assert [line for c in chunks for line in c.markdown.split("\n")[4:]] == rows


def test_list_splits_between_items_and_a_huge_item_as_text() -> None:
    items = [f"- item {i} {'w' * 20}" for i in range(30)]
    huge = "- " + " ".join(f"word{i}" for i in range(200))
    md = "## S\n\n" + "\n".join([*items[:15], huge, *items[15:]]) + "\n"
    chunks = chunk_markdown("T", md, ChunkSize(200))
    assert all(len(c.markdown) <= 200 for c in chunks)
    whole = [line for c in chunks for line in c.markdown.split("\n") if line.startswith("- item")]
    assert whole == items  # every short item whole, in order, once
    assert covers(md, chunks)


def test_quotes_and_loose_lists_split_and_keep_every_line() -> None:
    loose = "\n\n".join(f"1. loose {i} {'w' * 20}" for i in range(30))
    quote = "\n>\n".join(f"> quoted {i} {'q' * 20}" for i in range(30))
    md = "## S\n\n" + loose + "\n\npara\n\n" + quote + "\n"
    chunks = chunk_markdown("T", md, ChunkSize(400))
    assert all(len(c.markdown) <= 400 for c in chunks)
    assert every_line_kept(md, chunks)


def test_long_paragraph_splits_at_line_breaks_first() -> None:
    lines = [f"Line {i} says {'something ' * 8}and stops." for i in range(50)]
    chunks = chunk_markdown("Notes", "\n".join(lines), ChunkSize(400))
    assert len(chunks) > 5 and all(len(c.markdown) <= 400 for c in chunks)
    assert [line for c in chunks for line in c.markdown.split("\n")] == lines  # no line cut


def test_one_long_line_splits_at_sentence_ends_then_words() -> None:
    sentences = [f"Sentence {i} talks about topic {i} at some length." for i in range(80)]
    chunks = chunk_markdown("T", " ".join(sentences), ChunkSize(300))
    assert len(chunks) > 5 and all(len(c.markdown) <= 300 for c in chunks)
    assert all(c.markdown.endswith(".") for c in chunks)  # whole sentences
    assert " ".join(c.markdown for c in chunks) == " ".join(sentences)
    words = " ".join(f"w{i}" for i in range(2000))  # no sentence end at all: between words
    chunks = chunk_markdown("T", words, ChunkSize(150))
    assert all(len(c.markdown) <= 150 for c in chunks)
    assert " ".join(c.markdown for c in chunks) == words


def test_a_block_just_over_the_maximum_splits_into_halves_not_a_tail() -> None:
    sentences = [f"Finding {i} was measured in {i} cohorts." for i in range(52)]  # 2,056 characters
    text = " ".join(sentences)
    assert 2000 < len(text) < 2100
    pieces = [c.markdown for c in chunk_markdown("Abstract", text)]
    assert len(pieces) == 2 and " ".join(pieces) == text
    assert min(map(len, pieces)) > 0.4 * len(text)  # no piece of a few words ranking on its own
    lines = [f"item {i}: " + "x" * 60 for i in range(30)]  # 2,089 characters of lines
    pieces = [c.markdown for c in chunk_markdown("Log", "\n".join(lines), ChunkSize(1500))]
    assert len(pieces) == 2 and min(map(len, pieces)) > 0.4 * len("\n".join(lines))
    words = " ".join(f"w{i}" for i in range(700))
    sizes = [len(c.markdown) for c in chunk_markdown("T", words, ChunkSize(1000))]
    assert len(sizes) == 4 and max(sizes) - min(sizes) < 100  # 3,389 characters: four of ~850


def test_text_without_spaces_splits_between_characters() -> None:
    cjk = "北京是中国的首都它有很多历史古迹上海是中国最大的城市" * 60  # no punctuation, no spaces
    chunks = chunk_markdown("T", cjk, ChunkSize(100))
    assert len(chunks) >= 16 and all(len(c.markdown) <= 100 for c in chunks)
    assert "".join(c.markdown for c in chunks) == cjk
    sentences = "北京是中国的首都。它有很多历史古迹！上海是中国最大的城市？" * 30
    chunks = chunk_markdown("T", sentences, ChunkSize(100))
    assert all(len(c.markdown) <= 100 and c.markdown[-1] in "。！？" for c in chunks)


def test_graphemes_are_never_cut() -> None:
    text = ("e\u0301" * 5 + "👨\u200d👩\u200d👧\u200d👦" + "न\u093f" * 3 + "🇫🇷") * 200
    chunks = chunk_markdown("T", text, ChunkSize(64))
    assert all(len(c.markdown) <= 64 for c in chunks)
    assert "".join(c.markdown for c in chunks) == text
    for c in chunks:  # no piece starts with a combining mark or a joiner
        assert not unicodedata.combining(c.markdown[0]) and c.markdown[0] not in "\u200d\u093f"


def test_transcript_without_headings_splits_by_speaker_turn() -> None:
    turns = [
        f"{who}: {'blah ' * 12}\n  and more from {who} {n}"
        for n, who in enumerate(["Alice", "Bob", "Dr. Chen", "Alice", "Bob"] * 8)
    ]
    md = "\n".join(turns)
    chunks = chunk_markdown("Meeting", md, ChunkSize(300))
    assert len(chunks) > 5 and all(len(c.markdown) <= 300 for c in chunks)
    for c in chunks:
        assert c.markdown.split(":")[0] in {"Alice", "Bob", "Dr. Chen"}  # each piece opens a turn
    assert "\n".join(c.markdown for c in chunks) == md  # turns whole, none cut


def test_heading_too_long_to_repeat_is_text_of_its_own() -> None:
    heading = "## " + "very long heading " * 30
    md = heading + "\n\n" + "\n".join(long_paragraph(n) for n in range(20))
    chunks = chunk_markdown("T", md, ChunkSize(300))
    assert all(len(c.markdown) <= 300 for c in chunks)
    assert not any(c.markdown.startswith("## ") for c in chunks[1:])
    assert covers(md, chunks)


def test_split_between_top_level_blocks_first() -> None:
    # A paragraph directly followed by a fence (no blank line) is two blocks: a valid cut.
    md = "# H\n\n" + long_paragraph(1, 30) + "\n```\ncode\n```\n"
    assert len(md.strip()) > 180 >= len("# H\n\n" + long_paragraph(1, 30))
    chunks = chunk_markdown("T", md, ChunkSize(180))
    assert [c.markdown.split("\n", 2)[2] for c in chunks] == [
        long_paragraph(1, 30),
        "```\ncode\n```",
    ]


def test_setext_heading_is_reemitted_whole() -> None:
    md = "Big\n---\n\n" + "\n\n".join(long_paragraph(n) for n in range(10))
    chunks = chunk_markdown("T", md, ChunkSize(400))
    assert len(chunks) > 1
    assert all(c.markdown.startswith("Big\n---\n\np") for c in chunks)


# --- hashes -----------------------------------------------------------------------------------


DOC = "intro\n\n# A\n\nalpha\n\n## B\n\nbeta\n\n# C\n\ngamma\n"


def test_hash_is_sha256_of_path_and_markdown() -> None:
    for c in chunk_markdown("T", DOC):
        expected = hashlib.sha256(f"{c.heading_path}\n{c.markdown}".encode()).hexdigest()
        assert c.hash == expected


def test_hashes_are_stable() -> None:
    assert chunk_markdown("T", DOC) == chunk_markdown("T", DOC)


def test_editing_one_section_changes_only_its_hash() -> None:
    before = [c.hash for c in chunk_markdown("T", DOC)]
    after = [c.hash for c in chunk_markdown("T", DOC.replace("beta", "beta, edited"))]
    changed = [i for i, (x, y) in enumerate(zip(before, after, strict=False)) if x != y]
    assert len(before) == len(after) == 4 and changed == [2]


def test_trailing_whitespace_edits_do_not_change_hashes() -> None:
    assert chunk_markdown("T", DOC) == chunk_markdown("T", "\n\n" + DOC + "\n\n\n")


def test_title_change_changes_every_hash() -> None:
    a = {c.hash for c in chunk_markdown("T", DOC)}
    b = {c.hash for c in chunk_markdown("T2", DOC)}
    assert not a & b


def test_renaming_a_parent_heading_changes_its_children() -> None:
    before = [c.hash for c in chunk_markdown("T", DOC)]
    after = [c.hash for c in chunk_markdown("T", DOC.replace("# A", "# A2"))]
    changed = [i for i, (x, y) in enumerate(zip(before, after, strict=False)) if x != y]
    assert changed == [1, 2]  # A itself and B, whose breadcrumb names A


# --- conversations: windows of turns that overlap by one turn ---------------------------------

from memorywiki.server.indexing.chunker import chunk_conversation  # noqa: E402


def conversation(days: dict[str, list[tuple[str, str]]]) -> str:
    parts = []
    for day, turns in days.items():
        parts.append(f"## {day}")
        parts += [f"### {who}\n\n{text}" for who, text in turns]
    return "\n\n".join(parts) + "\n"


CHAT = conversation(
    {
        "8 May 2023": [
            ("Caroline", "Hey Mel! How have you been?"),
            ("Melanie", "Swamped with the kids and work. What's new with you?"),
            ("Caroline", "I went to a support group yesterday; it was so powerful."),
            ("Melanie", "Wow! What happened there?"),
            ("Caroline", "People shared their stories and I felt accepted."),
        ],
        "9 May 2023": [("Melanie", "I painted a sunrise at the lake this morning.")],
    }
)


def turn_blocks(markdown: str) -> list[str]:
    return ["### " + b.strip() for b in markdown.split("### ")[1:]]


def test_conversation_windows_overlap_by_one_turn_and_keep_source_text() -> None:
    chunks = chunk_conversation("Caroline and Melanie", CHAT, window_chars=150)
    assert all(len(c.markdown) <= 150 for c in chunks)
    assert all(c.markdown in CHAT for c in chunks)  # cut from the source, never rewritten
    first_day = [turn_blocks(c.markdown) for c in chunks if c.heading_path.endswith("8 May 2023")]
    assert len(first_day) >= 2 and any(len(t) > 1 for t in first_day)
    for previous, following in itertools.pairwise(first_day):
        assert following[0] == previous[-1]  # the next window opens with the previous one's last turn
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def test_conversation_every_reply_sits_next_to_its_turn() -> None:
    chunks = chunk_conversation("Caroline and Melanie", CHAT, window_chars=150)
    turns = [t for day in CHAT.split("## ")[1:] for t in day.split("### ")[1:]]
    texts = [t.split("\n\n", 1)[1].strip() for t in turns]
    assert all(any(t in c.markdown for c in chunks) for t in texts)
    for a, b in itertools.pairwise(texts):  # consecutive turns of the first day
        assert any(a in c.markdown and b in c.markdown for c in chunks), (a, b)


def test_conversation_breadcrumb_is_title_and_day_and_windows_stop_at_a_day() -> None:
    chunks = chunk_conversation("Caroline and Melanie", CHAT, window_chars=10_000)
    assert paths(chunks) == ["Caroline and Melanie > 8 May 2023", "Caroline and Melanie > 9 May 2023"]
    assert chunks[1].markdown == "### Melanie\n\nI painted a sunrise at the lake this morning."
    assert not any(c.markdown.startswith("## ") for c in chunks)  # a day heading alone is no chunk


def test_conversation_without_days_and_with_a_long_turn() -> None:
    long_answer = "\n\n".join(long_paragraph(n) for n in range(12))
    md = f"## User\n\nHow do I tune HNSW?\n\n## Assistant\n\n{long_answer}\n\n## User\n\nThanks!\n"
    chunks = chunk_conversation("HNSW tuning", md, window_chars=600, size=ChunkSize(1800))
    assert set(paths(chunks)) == {"HNSW tuning"}
    assert chunks[0].markdown == "## User\n\nHow do I tune HNSW?"
    pieces = [c for c in chunks if "p0w0" in c.markdown or "p11w0" in c.markdown or "p6w0" in c.markdown]
    assert all(c.markdown.startswith("## Assistant") and len(c.markdown) <= 1800 for c in pieces)
    assert chunks[-1].markdown == "## User\n\nThanks!"
    every_paragraph = body_lines(chunks)
    assert all(long_paragraph(n) in every_paragraph for n in range(12))
    with pytest.raises(ValueError):
        chunk_conversation("x", md, window_chars=0)


def test_conversation_turn_chars_cuts_long_turns_smaller_and_names_its_rules() -> None:
    long_answer = "\n\n".join(long_paragraph(n) for n in range(12))
    md = f"## User\n\nHow do I tune HNSW?\n\n## Assistant\n\n{long_answer}\n\n## User\n\nThanks!\n"
    size = ChunkSize(1800, turn_chars=600)
    chunks = chunk_conversation("HNSW tuning", md, window_chars=600, size=size)
    assert max(len(c.markdown) for c in chunks) <= 600
    assert len(chunks) > len(chunk_conversation("HNSW tuning", md, window_chars=600, size=ChunkSize(1800)))
    assert all(long_paragraph(n) in body_lines(chunks) for n in range(12))
    # other docs are cut as before; 0 keeps the version stored data has (nothing re-chunked)
    assert chunk_markdown("t", md, size) == chunk_markdown("t", md, ChunkSize(1800))
    assert ChunkSize(1800, turn_chars=0).version == ChunkSize(1800).version != size.version
    with pytest.raises(ValueError):
        ChunkSize(turn_chars=-1)
    assert chunk_conversation("x", "  \n") == []


# --- any markdown: bounded chunks that cover the text -----------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_WORDS = st.sampled_from(
    [
        "alpha",
        "beta",
        "The",
        "end.",
        "Why?",
        "北京是中国的首都。",
        "東京",
        "한국어는",
        "e\u0301te\u0301",
        "👨\u200d👩\u200d👧",
        "🇫🇷",
        "नि",
        "x" * 90,
        "a|b",
        "`code`",
        "**bold**",
        "Alice:",
        "[00:01] Bob:",
        "#tag",
        "-",
        "1.",
    ]
)
_LINE = st.lists(_WORDS, min_size=1, max_size=30).map(" ".join)
_TEXT = st.lists(_LINE, min_size=1, max_size=8).map("\n".join)


@st.composite
def _block(draw) -> str:
    kind = draw(st.sampled_from(["para", "heading", "fence", "table", "list", "quote", "raw", "setext"]))
    if kind == "heading":
        return "#" * draw(st.integers(1, 6)) + " " + draw(_LINE)
    if kind == "setext":
        return draw(_LINE) + "\n" + draw(st.sampled_from(["===", "---"]))
    if kind == "fence":
        marker = draw(st.sampled_from(["```", "~~~", "````"]))
        closing = draw(st.sampled_from(["\n" + marker, ""]))
        return marker + draw(st.sampled_from(["", "python", "js title=a.js"])) + "\n" + draw(_TEXT) + closing
    if kind == "table":
        rows = draw(st.lists(_LINE, min_size=1, max_size=30))
        return "| a | b |\n| --- | --- |\n" + "\n".join(f"| {r} | {i} |" for i, r in enumerate(rows))
    if kind == "list":
        marker = draw(st.sampled_from(["- ", "* ", "1. "]))
        gap = draw(st.sampled_from(["\n", "\n\n"]))
        return gap.join(marker + line for line in draw(st.lists(_TEXT, min_size=1, max_size=12)))
    if kind == "quote":
        return "\n".join("> " + line for line in draw(_TEXT).split("\n"))
    if kind == "raw":
        return draw(st.text(max_size=300))
    return draw(_TEXT)


_DOCS = st.lists(_block(), min_size=1, max_size=12).flatmap(
    lambda blocks: st.lists(st.sampled_from(["\n", "\n\n", "\n\n\n"]), min_size=len(blocks), max_size=len(blocks)).map(
        lambda gaps: "".join(b + g for b, g in zip(blocks, gaps, strict=True))
    )
)


def heading_lines(md: str) -> set[int]:
    """The source lines of level 1-3 headings: their text lives in breadcrumbs, not in chunks."""
    tokens = MarkdownIt("commonmark").parse(md)
    return {
        n
        for t in tokens
        if t.type == "heading_open" and t.level == 0 and t.tag in ("h1", "h2", "h3")
        for n in range(*t.map)
    }


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(md=_DOCS, max_chars=st.integers(20, 600), overlap=st.integers(0, 60), conversation=st.booleans())
def test_any_markdown_gives_bounded_chunks_that_cover_its_text(md, max_chars, overlap, conversation) -> None:
    size = ChunkSize(max_chars, min(overlap, max_chars // 2))
    chunks = (
        chunk_conversation("Doc", md, window_chars=300, size=size) if conversation else chunk_markdown("Doc", md, size)
    )
    assert all(len(c.markdown) <= max_chars for c in chunks)
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    source = strip_front_matter(md)
    skip = heading_lines(source)
    body = "\n".join(line for n, line in enumerate(source.split("\n")) if n not in skip)
    assert covers(body, chunks)
