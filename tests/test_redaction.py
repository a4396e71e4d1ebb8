"""The redaction engine on its own (server/redaction/): what it takes out of a text, what it
leaves, and that a match in another reading of the text maps back to the characters it came
from. The write paths that call it are tried against a running server in test_secrets.py."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import uuid
from pathlib import Path

import pytest
from memorywiki.server.redaction import kind_of, redact_text
from memorywiki.server.redaction.views import all_views, joined, unescaped, url_decoded

KINDS = {k["name"]: k for k in json.loads((Path(__file__).parent / "data" / "secrets" / "kinds.json").read_text())}
GITHUB = KINDS["github-token"]["secret"]
OPENAI = KINDS["openai-api-key"]["secret"]


def test_kinds_are_the_rules_ids_without_their_catalog():
    assert kind_of("betterleaks.github-pat") == "github-pat"
    assert kind_of("betterleaks.auth0-client-secret.1") == "auth0-client-secret"
    assert kind_of("veles.secrets/sendgrid") == "sendgrid"


@pytest.mark.parametrize(
    "text",
    [
        'a "quoted\\/path\\u003d" and \\_escaped\\* words\nnext ' + "x" * 40 + "\n" + "y" * 20,
        "percent %2F%3D%2B and %zz and %C3%A9 stays",
        "wrapped " + "k" * 30 + "\n" + "m" * 30 + "\n" + "short\n",
    ],
)
def test_every_view_maps_each_of_its_characters_back_to_where_it_came_from(text):
    views = all_views(text) + [v for v in (unescaped(text), url_decoded(text)) if v is not None] + joined(text)
    assert views
    for view in views:
        for i, char in enumerate(view.text):
            start, end = view.to_original(i, i + 1)
            source = text[start:end]
            # the character itself, or the escape / line break it was read from
            assert char in source or source.startswith(("\\", "%")) or "\n" in source, (view.name, i, char, source)


def test_unicode_before_a_secret_does_not_shift_what_is_cut():
    out, report = redact_text(f"héllo wörld 漢字 {GITHUB} ünïcode")
    assert out == "héllo wörld 漢字 [redacted: github-pat] ünïcode" and report.secrets == 1


def test_redacting_twice_changes_nothing_more():
    text = "\n".join(k["line"] for k in KINDS.values())
    once, first = redact_text(text)
    twice, second = redact_text(once)
    assert twice == once and first.secrets == 19 and second.secrets == 0


def test_a_secret_is_redacted_wherever_else_it_appears():
    out, report = redact_text(f"export GITHUB_TOKEN={GITHUB}\n\n$ echo $GITHUB_TOKEN\n{GITHUB}\n")
    assert GITHUB not in out and report.kinds == {"github-pat": 2}


def test_markdown_escapes_a_converter_wrote_hide_nothing():
    escaped = KINDS["stripe-secret-key"]["secret"].replace("_", "\\_")
    out, report = redact_text(f"STRIPE\\_SECRET\\_KEY={escaped}")
    assert out == "STRIPE\\_SECRET\\_KEY=[redacted: stripe-access-token]" and report.secrets == 1


def test_a_wrapped_key_is_joined_but_its_neighbours_keep_their_lines():
    webhook = KINDS["slack-webhook"]["secret"]
    telegram = KINDS["telegram-bot-token"]["line"]
    jwt, pem = KINDS["jwt"]["line"], KINDS["private-key"]["line"]
    text = f"hook {webhook}\n    {telegram}\n{jwt}\n{pem}\nDone.\n"
    out, report = redact_text(text)
    assert out == (
        "hook [redacted: slack-webhook-url]\n    TELEGRAM_BOT_TOKEN=[redacted: telegram-bot-api-token]\n"
        "Authorization: Bearer [redacted: jwt]\n[redacted: private-key]\nDone.\n"
    )
    assert report.secrets == 4

    wrapped = "\n".join(OPENAI[i : i + 64] for i in range(0, len(OPENAI), 64))
    out, report = redact_text(f"OPENAI_API_KEY=\n{wrapped}\nthen the build ran\n")
    assert out == "OPENAI_API_KEY=\n[redacted: openai-api-key]\nthen the build ran\n"


def test_base64_and_percent_encoding_hide_nothing():
    blob = base64.b64encode(f"token={GITHUB}\n".encode()).decode()
    out, _ = redact_text(f"echo {blob} | base64 -d")
    assert out == "echo [redacted: github-pat] | base64 -d"
    secret = KINDS["aws-secret-key"]["secret"]
    encoded = secret.replace("/", "%2F").replace("+", "%2B")
    out, report = redact_text(f"https://s3.amazonaws.com/b/k?aws_secret_access_key={encoded}&x=1")
    assert encoded not in out and report.secrets == 1


def test_what_is_no_secret_is_left_as_written():
    rng = random.Random(7)
    clean = "\n".join(
        [
            f"sha256 {hashlib.sha256(b'x').hexdigest()} sha1 {hashlib.sha1(b'y').hexdigest()}",
            f"commit {hashlib.sha1(b'z').hexdigest()[:12]} and request id {uuid.UUID(int=rng.getrandbits(128))}",
            "![chart](data:image/png;base64," + base64.b64encode(rng.randbytes(600)).decode() + ")",
            "integrity=sha512-" + base64.b64encode(rng.randbytes(64)).decode(),
            "password = os.environ['DB_PASSWORD']  # read at start, never written down",
            "postgresql://user:${PGPASSWORD}@localhost/app and postgres://localhost:5432/app",
            "The key insight was that the token budget, not the secret sauce, set the limit.",
            "const apiKey = process.env.OPENAI_API_KEY ?? '';",
        ]
    )
    out, report = redact_text(clean)
    assert (out, report.secrets) == (clean, 0)


def test_private_spans_are_dropped_and_an_unclosed_tag_is_kept():
    out, report = redact_text("a <private>b\nc</private> d <Private>e</Private> f <private> g")
    assert out == "a  d  f <private> g" and report.private == 2 and report.secrets == 0
