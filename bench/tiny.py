"""Tiny generated datasets in BEIR and LoCoMo layout, for --smoke runs and CI.

python -m bench.tiny OUT_DIR     # writes OUT_DIR/beir and OUT_DIR/locomo
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

TOPICS = {
    "glacier": "glacier ice melt alpine meltwater moraine crevasse snowpack",
    "vaccine": "vaccine antibody immune response dose booster antigen trial",
    "espresso": "espresso coffee grinder crema roast bean barista extraction",
    "compiler": "compiler parser bytecode register allocation optimisation lexer",
    "orchard": "orchard apple pruning blossom pollination harvest cider",
    "telescope": "telescope mirror galaxy redshift spectrum observatory lens",
    "marathon": "marathon runner pace training mileage hydration finish",
    "volcano": "volcano magma eruption lava ash crater tectonic",
}
FILLER = "the study reports that results were observed in several settings with further analysis".split()


def make_beir(folder: Path, docs_per_topic: int = 5, seed: int = 3) -> Path:
    rng = random.Random(seed)
    folder = Path(folder)
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    corpus, queries, qrels = [], [], []
    for t, (topic, words) in enumerate(TOPICS.items()):
        vocab = words.split()
        for i in range(docs_per_topic):
            body = " ".join(rng.choice(vocab if rng.random() < 0.5 else FILLER) for _ in range(60))
            corpus.append(
                {"_id": f"{topic}-{i}", "title": f"{topic.title()} note {i}", "text": body.capitalize() + "."}
            )
        qid = f"q{t}"
        queries.append({"_id": qid, "text": f"what is known about {vocab[0]} {vocab[1]} and {vocab[2]}"})
        for i in range(2):
            qrels.append((qid, f"{topic}-{i}", 1))
    with open(folder / "corpus.jsonl", "w") as fh:
        fh.writelines(json.dumps(d) + "\n" for d in corpus)
    with open(folder / "queries.test.jsonl", "w") as fh:
        fh.writelines(json.dumps(q) + "\n" for q in queries)
    with open(folder / "qrels" / "test.tsv", "w") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        fh.writelines(f"{q}\t{d}\t{s}\n" for q, d, s in qrels)
    return folder


def make_locomo(folder: Path, conversations: int = 2, sessions: int = 2, turns: int = 6, seed: int = 5) -> Path:
    rng = random.Random(seed)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    topics = list(TOPICS.items())
    samples, qa = [], []
    for c in range(conversations):
        sid = f"conv-{c}"
        conv = {"speaker_a": "Ana", "speaker_b": "Ben"}
        for s in range(1, sessions + 1):
            conv[f"session_{s}_date_time"] = f"10:00 am on {s} May, 2023"
            items = []
            for t in range(1, turns + 1):
                topic, words = topics[(c * 7 + s * 3 + t) % len(topics)]
                text = f"I have been thinking about {topic}: " + " ".join(rng.sample(words.split(), 4)) + "."
                item = {"speaker": "Ana" if t % 2 else "Ben", "dia_id": f"D{s}:{t}", "text": text}
                if t == 2:
                    item["blip_caption"] = f"a photo of a {topic}"
                items.append(item)
                if t in (1, 4):
                    qa.append(
                        {
                            "sample_id": sid,
                            "qa_index": len(qa),
                            "question": f"What did they say about {topic}?",
                            "answer": topic,
                            "category": 1 + (t + s) % 4,
                            "evidence": [f"D{s}:{t}"],
                            "evidence_unresolved": [],
                            "evidence_sessions": [s],
                        }
                    )
            conv[f"session_{s}"] = items
        samples.append({"sample_id": sid, "conversation": conv, "qa": []})
    (folder / "locomo10.json").write_text(json.dumps(samples))
    with open(folder / "locomo10_qa_normalized.jsonl", "w") as fh:
        fh.writelines(json.dumps(q) + "\n" for q in qa)
    return folder


if __name__ == "__main__":
    out = Path(sys.argv[1])
    make_beir(out / "beir")
    make_locomo(out / "locomo")
    print(out)
