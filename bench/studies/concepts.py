"""A hub's extractive concepts: how many, how many are real, and whether each reaches every page
that names it. A study on the server's own code, without a server or a model.

Hubs (each a handful of pages, as a new user's hub):
- small: the five notes of tests/data/small-hub (three titled "Postgres …");
- locomo: the first five sessions of LoCoMo conversations 1-3, rendered as chat imports are
  (a `## <speaker>` section per turn), titled as `bench curation` titles them;
- scifact: the abstracts judged relevant to one SciFact claim (claims 133, 873, 179, 971 and
  597: three to five abstracts each), titled by their paper titles.

For each hub, every page is enriched extractively (server/curation/extractive.py, no vectors:
concepts do not use them) and the hub's concepts are drawn as the hub page and the digest draw
them (server/curation/concepts.py). `--before REF` also runs the extraction and the folding of
commit REF (their files read with `git show`), the hub's concepts then being every page's
concepts folded.

Figures per collection:
- concepts per hub;
- precision: the share of the hub's concepts judged real, over those judged. A concept is real
  when it is a noun phrase naming a thing, person, place, topic or idea a reader of the hub
  could look up; not a clause fragment ("Node lost"), a quantity or date ("Twenty minutes"),
  a filler word ("Thing") or a phrase cut mid-way. The judgments are by hand, one per line in
  bench/studies/concepts_judged.tsv (hub, name, 1 or 0); `--unjudged` prints those missing;
- coverage: over the hub's concepts, the share of the pages naming a concept (its name or an
  alias as whole words, plural or not, in the title or text) that the concept links to;
- link precision: the share of a concept's links that go to a page naming it.

    python -m bench.studies.concepts --before 2d1ab8e
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from types import ModuleType

from ..common import ROOT, SHARED_DATA, log, machine_line, md_table

JUDGED = Path(__file__).with_name("concepts_judged.tsv")
SCIFACT_CLAIMS = ("133", "873", "179", "971", "597")
LOCOMO_CONVERSATIONS = 3
LOCOMO_SESSIONS = 5


# ---------------------------------------------------------------------------- hubs


def small_hub() -> list[tuple[str, str]]:
    docs = []
    for name in ("postgres-vacuum", "postgres-pooling", "postgres-backups", "node-upgrade", "onboarding"):
        text = (ROOT / "tests" / "data" / "small-hub" / f"{name}.md").read_text()
        title, _, body = text.partition("\n")
        docs.append((title.removeprefix("# ").strip(), body.strip()))
    return docs


def locomo_hubs(folder: Path) -> dict[str, list[tuple[str, str]]]:
    from memorywiki.formats.mdutil import render_turns

    hubs = {}
    for sample in json.loads((folder / "locomo10.json").read_text())[:LOCOMO_CONVERSATIONS]:
        conv = sample["conversation"]
        a, b = conv.get("speaker_a", "A"), conv.get("speaker_b", "B")
        docs = []
        for n in range(1, LOCOMO_SESSIONS + 1):
            turns = conv.get(f"session_{n}") or []
            md = render_turns([(t["speaker"], t.get("text", "")) for t in turns])
            docs.append((f"{a} and {b}, session {n} ({conv.get(f'session_{n}_date_time', '')})", md))
        hubs[f"locomo:{a}+{b}"] = docs
    return hubs


def scifact_hubs(folder: Path) -> dict[str, list[tuple[str, str]]]:
    relevant = defaultdict(list)
    for line in (folder / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        query, doc, _ = line.split("\t")
        relevant[query].append(doc)
    wanted = {d for q in SCIFACT_CLAIMS for d in relevant[q]}
    corpus = {}
    with (folder / "corpus.jsonl").open() as f:
        for line in f:
            row = json.loads(line)
            if row["_id"] in wanted:
                corpus[row["_id"]] = (row["title"], row["text"])
    return {f"scifact:claim {q}": [corpus[d] for d in relevant[q]] for q in SCIFACT_CLAIMS}


# ---------------------------------------------------------------------------- code under study


def _module(name: str, source: str) -> ModuleType:
    path = Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def before_code(ref: str):
    """extract() and fold() as commit `ref` has them (neither imports its package then)."""

    def show(path: str) -> str:
        return subprocess.run(
            ["git", "show", f"{ref}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout

    extractive = _module("before_extractive", show("server/curation/extractive.py"))
    concepts = _module("before_concepts", show("server/curation/concepts.py"))
    return extractive.extract, concepts.fold


def chunks_of(title: str, body: str) -> list[str]:
    from memorywiki.server.indexing.chunker import chunk_markdown

    return [c.markdown for c in chunk_markdown(title, body)]


def _mentions(extract, docs: list[tuple[str, str]]) -> list[dict]:
    mentions = []
    for i, (title, body) in enumerate(docs):
        data = extract(title, chunks_of(title, body))
        for c in data["concepts"]:
            mentions.append({"doc_id": str(i), "title": title, **c})
    return mentions


def concepts_before(extract, fold, docs) -> list[tuple[str, list[str]]]:
    return [(c.name, sorted({d["doc_id"] for d in c.docs})) for c in fold(_mentions(extract, docs))]


def concepts_after(docs) -> list[tuple[str, list[str]]]:
    from memorywiki.server.curation.concepts import hub_concepts
    from memorywiki.server.curation.extractive import extract
    from memorywiki.server.curation.terms import page_terms

    terms = []
    for i, (title, body) in enumerate(docs):
        for t in page_terms(title, chunks_of(title, body)):
            terms.append({"doc_id": str(i), "key": t.key, "name": t.name, "in_title": t.in_title})
    info = {str(i): {"title": title} for i, (title, _) in enumerate(docs)}
    concepts = hub_concepts(_mentions(extract, docs), terms, info)
    return [(c.name, sorted({d["doc_id"] for d in c.docs})) for c in concepts]


# ---------------------------------------------------------------------------- measures


def naming_pages(name: str, docs: list[tuple[str, str]]) -> set[str]:
    """Pages that name `name`: as whole words, any case, plural or not."""
    words = [re.escape(w) for w in name.split()]
    pattern = re.compile(r"(?<![\w-])" + r"\s+".join(words) + r"(?:s|es)?(?![\w-])", re.I)
    return {str(i) for i, (title, body) in enumerate(docs) if pattern.search(title) or pattern.search(body)}


def judgments() -> dict[tuple[str, str], bool]:
    out = {}
    if JUDGED.is_file():
        for line in JUDGED.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                hub, name, real = line.split("\t")
                out[(hub, name.lower())] = real.strip() == "1"
    return out


def measure(hubs: dict[str, list], run, judged: dict, unjudged: list) -> dict[str, float]:
    counts, real, seen, coverage, link_precision = [], 0, 0, [], []
    for hub, docs in hubs.items():
        concepts = run(docs)
        counts.append(len(concepts))
        for name, linked in concepts:
            verdict = judged.get((hub, name.lower()))
            if verdict is None:
                unjudged.append((hub, name))
            else:
                seen += 1
                real += verdict
            naming = naming_pages(name, docs)
            if naming:
                coverage.append(len(naming & set(linked)) / len(naming))
            if linked:
                link_precision.append(len(naming & set(linked)) / len(linked))
    return {
        "hubs": len(hubs),
        "concepts per hub": sum(counts) / len(counts),
        "precision": real / seen if seen else float("nan"),
        "judged": seen,
        "coverage": sum(coverage) / len(coverage) if coverage else float("nan"),
        "link precision": sum(link_precision) / len(link_precision) if link_precision else float("nan"),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", metavar="REF", help="also measure the extraction and folding of this commit")
    parser.add_argument("--data", type=Path, default=SHARED_DATA, help="folder holding scifact/ and locomo/")
    parser.add_argument("--unjudged", action="store_true", help="print the concepts not judged yet, as TSV")
    parser.add_argument("--list", action="store_true", help="print every hub's concepts")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "concepts.md")
    args = parser.parse_args(argv)
    collections = {"small": {"small": small_hub()}}
    if (args.data / "locomo" / "locomo10.json").is_file():
        collections["locomo"] = locomo_hubs(args.data / "locomo")
    else:
        log(f"LoCoMo not found under {args.data}/locomo: skipped (see bench/results/README.md)")
    if (args.data / "scifact" / "corpus.jsonl").is_file():
        collections["scifact"] = scifact_hubs(args.data / "scifact")
    else:
        log(f"SciFact not found under {args.data}/scifact: skipped (see bench/results/README.md)")

    runs = {"after": concepts_after}
    if args.before:
        extract, fold = before_code(args.before)
        runs = {f"before ({args.before})": lambda docs: concepts_before(extract, fold, docs), **runs}
    judged, unjudged, rows = judgments(), [], []
    started = time.process_time()
    for label, run in runs.items():
        for collection, hubs in collections.items():
            m = measure(hubs, run, judged, unjudged)
            rows.append([collection, label, *m.values()])
            if args.list:
                for hub, docs in hubs.items():
                    print(f"## {label} {hub}")
                    for name, linked in run(docs):
                        print(f"  {name}: {', '.join(docs[int(d)][0][:30] for d in linked)}")
    cpu = time.process_time() - started
    if args.unjudged:
        for hub, name in dict.fromkeys(unjudged):
            print(f"{hub}\t{name}\t")
        return
    table = md_table(
        ["collection", "code", "hubs", "concepts per hub", "precision", "judged", "coverage", "link precision"],
        rows,
    )
    text = "\n\n".join(
        [
            "# Extractive concepts of a hub",
            machine_line(),
            f"Command: `python -m bench.studies.concepts{' --before ' + args.before if args.before else ''}` "
            f"({cpu:.0f} s of CPU).",
            __doc__.split("\n\n", 1)[1].split("\n\n    python")[0],
            table,
            f"{len(set(unjudged))} concepts not judged (left out of precision)."
            if unjudged
            else "Every concept judged.",
        ]
    )
    print(table)
    args.out.write_text(text + "\n")
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
