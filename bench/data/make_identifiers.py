"""Writes identifiers.json: exact-identifier questions among look-alike decoys (issue 37).

    python bench/data/make_identifiers.py     # rewrites bench/data/identifiers.json

Ninety-six short notes written to look alike: six kinds of record (incident, error code,
commit, setting, part, request id), sixteen of each, from one template per kind and one shared
vocabulary, so that vectors see sixteen near-copies and only the identifier tells them apart.
Each identifier has decoys that differ from it by one swapped or changed character (INC-20417
beside INC-20471), which an embedder reads as the same string. Four notes of each kind are
asked for, three ways: the identifier alone, the identifier with the template's own words, and
a question in plain words; the one note holding the identifier is the answer. The notes' titles
say only their kind, never the identifier. Deterministic (seeded): the file is committed.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 37

SERVICES = ["checkout", "billing", "search", "login", "upload", "export", "mailer", "reports"]
TEAMS = ["payments", "platform", "storage", "identity", "growth", "data"]
ACTIONS = [
    "rolled back the last deploy",
    "restarted the worker pool",
    "raised the connection limit",
    "cleared the stale cache entries",
    "moved traffic to the standby region",
    "disabled the new feature flag",
]
CAUSES = [
    "a connection pool ran dry under load",
    "a schema migration held a lock too long",
    "a certificate expired on the edge proxy",
    "a retry loop flooded the queue",
    "a disk filled up with debug logs",
    "a timeout was set in seconds instead of milliseconds",
]


def _swap(ident: str, rng: random.Random) -> str:
    """A near-miss of `ident`: two neighbouring alphanumerics swapped, or one digit changed."""
    chars = list(ident)
    spots = [
        i for i in range(len(chars) - 1) if chars[i].isalnum() and chars[i + 1].isalnum() and chars[i] != chars[i + 1]
    ]
    if spots and rng.random() < 0.6:
        i = rng.choice(spots)
        chars[i], chars[i + 1] = chars[i + 1], chars[i]
    else:
        digits = [i for i, c in enumerate(chars) if c.isdigit()]
        i = rng.choice(digits)
        chars[i] = str((int(chars[i]) + rng.randint(1, 8)) % 10)
    return "".join(chars)


def _family(make, rng: random.Random, n: int) -> list[str]:
    """n distinct identifiers: a few originals, each with near-miss decoys."""
    out: list[str] = []
    while len(out) < n:
        base = make(rng)
        group = [base]
        while len(group) < 4:
            twin = _swap(base, rng)
            if twin not in group:
                group.append(twin)
        out += [g for g in group if g not in out]
    return out[:n]


KINDS = {
    "incident": (
        lambda r: f"INC-{r.randint(10000, 99999)}",
        "Incident notes",
        "## What happened\n\nDuring {ident} the {service} service returned errors for {minutes} minutes "
        "because {cause}. The {team} team {action} and the error rate went back to normal.",
        "what happened during incident {ident} and how was it fixed",
    ),
    "error": (
        lambda r: f"ERR_{r.choice(['QUOTA', 'AUTH', 'SYNC', 'RATE'])}_{r.randint(1000, 9999)}",
        "Error code notes",
        "## Error code\n\nThe {service} service logs {ident} when {cause}. If you see it, the {team} team "
        "suggests that you check the dashboard first; last time they {action}.",
        "what does the error code {ident} mean in the logs",
    ),
    "commit": (
        lambda r: "".join(r.choice("0123456789abcdef") for _ in range(8)),
        "Deploy notes",
        "## Deploy\n\nCommit {ident} went out to the {service} service on a Tuesday. Shortly after, "
        "{cause}; the {team} team {action} within {minutes} minutes.",
        "which deploy shipped commit {ident} and what went wrong",
    ),
    "setting": (
        lambda r: (
            f"MW_{r.choice(['FLUSH', 'SYNC', 'CACHE', 'POOL'])}_{r.choice(['INTERVAL', 'TIMEOUT', 'LIMIT', 'SIZE'])}_{r.choice(['MS', 'KB', 'N'])}{r.randint(2, 9)}"
        ),
        "Configuration notes",
        "## Setting\n\nThe {service} service reads {ident} at start-up. It was changed after {cause}, "
        "and the {team} team {action} while it was tuned over {minutes} minutes.",
        "what is the setting {ident} for and why was it changed",
    ),
    "part": (
        lambda r: f"RX-{r.randint(100, 999)}-{r.choice('ABCDEFGH')}{r.randint(1, 9)}",
        "Hardware notes",
        "## Part\n\nThe {service} rack uses part {ident} in its power supply. It failed once when "
        "{cause}, and the {team} team {action} before replacing it within {minutes} minutes.",
        "which rack uses the part {ident} and when did it fail",
    ),
    "request": (
        lambda r: f"req-{r.randint(1000, 9999)}-{r.choice('abcdefgh')}{r.choice('qrstuvwxyz')}{r.randint(10, 99)}",
        "Request traces",
        "## Trace\n\nRequest {ident} reached the {service} service and stalled for {minutes} seconds "
        "because {cause}. The {team} team {action} after reading its trace.",
        "why did the request {ident} stall and what was done",
    ),
}

PER_KIND = 16
ASKED_PER_KIND = 4


def build() -> dict:
    rng = random.Random(SEED)
    docs, questions = [], []
    for kind, (make, title, body, natural) in KINDS.items():
        idents = _family(make, rng, PER_KIND)
        keys = []
        for i, ident in enumerate(idents):
            key = f"{kind}-{i:02d}"
            keys.append((key, ident))
            text = body.format(
                ident=ident,
                service=rng.choice(SERVICES),
                team=rng.choice(TEAMS),
                action=rng.choice(ACTIONS),
                cause=rng.choice(CAUSES),
                minutes=rng.randint(3, 59),
            )
            docs.append({"key": key, "title": title, "markdown": text})
        # ask for originals and near-misses alike: the first of each group of four, and one twin
        asked = [keys[0], keys[1], keys[4], keys[9]][:ASKED_PER_KIND]
        for key, ident in asked:
            questions += [
                {"text": ident, "relevant": key, "form": "identifier alone"},
                {
                    "text": f"{title.lower().rstrip('s')} {ident}",
                    "relevant": key,
                    "form": "identifier and the template's words",
                },
                {"text": natural.format(ident=ident), "relevant": key, "form": "plain question"},
            ]
    return {"seed": SEED, "docs": docs, "questions": questions}


if __name__ == "__main__":
    out = HERE / "identifiers.json"
    out.write_text(json.dumps(build(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}")
