"""Write kinds.json: one credential of each kind the tests plant, in its provider's real format.

The formats are those of public detector test fixtures (gitleaks' rule tests, Kingfisher's
rule examples), each filled with fresh random characters: a published example key is on
some detectors' allow lists, so a test planting one would prove nothing. Run it again only
to change the set (`python tests/data/secrets/make_secrets.py`); the output is committed.
"""

from __future__ import annotations

import base64
import json
import random
import string
from pathlib import Path

HERE = Path(__file__).parent
rng = random.Random(20260115)

UPPER, LOWER, DIGITS = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UPPER + LOWER + DIGITS
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def pick(chars: str, n: int) -> str:
    return "".join(rng.choice(chars) for _ in range(n))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jwt() -> str:
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {"sub": pick(DIGITS, 10), "name": "Dana Whitfield", "iat": 1767225600, "scope": "deploy admin"}
    return f"{header}.{b64url(json.dumps(claims).encode())}.{b64url(rng.randbytes(32))}"


def pem() -> str:
    body = base64.b64encode(rng.randbytes(1190)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END RSA PRIVATE KEY-----"


def kinds() -> list[dict[str, str]]:
    """(name, secret, how it sits in a session: the line it is pasted in)."""
    aws_id = "AKIA" + pick(UPPER + "234567", 16)
    aws_secret = pick(B64, 40)
    azure_key = base64.b64encode(rng.randbytes(64)).decode()
    db_password = pick(ALNUM, 12) + "!" + pick(ALNUM, 6)
    out = [
        ("aws-access-key", aws_id, f"export AWS_ACCESS_KEY_ID={aws_id}"),
        ("aws-secret-key", aws_secret, f"export AWS_SECRET_ACCESS_KEY={aws_secret}"),
        ("gcp-api-key", "AIza" + pick(URLSAFE, 35), "GOOGLE_API_KEY={}"),
        (
            "azure-storage-key",
            azure_key,
            "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acmeassets;"
            "AccountKey={};EndpointSuffix=core.windows.net",
        ),
        ("openai-api-key", "sk-proj-" + pick(URLSAFE, 74) + "T3BlbkFJ" + pick(URLSAFE, 74), "OPENAI_API_KEY={}"),
        ("anthropic-api-key", "sk-ant-api03-" + pick(URLSAFE, 93) + "AA", "ANTHROPIC_API_KEY={}"),
        ("huggingface-token", "hf_" + pick(UPPER + LOWER, 34), "HF_TOKEN={}"),
        ("github-token", "ghp_" + pick(ALNUM, 36), "git remote set-url origin https://{}@github.com/acme/api.git"),
        (
            "gitlab-token",
            "glpat-" + pick(URLSAFE, 20),
            'curl --header "PRIVATE-TOKEN: {}" https://gitlab.acme.io/api/v4/projects',
        ),
        (
            "slack-bot-token",
            f"xoxb-{pick(DIGITS, 12)}-{pick(DIGITS, 13)}-{pick(ALNUM, 24)}",
            "SLACK_BOT_TOKEN={}",
        ),
        (
            "slack-webhook",
            f"https://hooks.slack.com/services/T{pick(UPPER + DIGITS, 10)}/B{pick(UPPER + DIGITS, 10)}/{pick(ALNUM, 24)}",
            "the alerts webhook is {}",
        ),
        ("telegram-bot-token", f"{pick(DIGITS, 10)}:AA{pick(URLSAFE, 33)}", "TELEGRAM_BOT_TOKEN={}"),
        ("stripe-secret-key", "sk_live_" + pick(ALNUM, 99), "STRIPE_SECRET_KEY={}"),
        ("sendgrid-api-key", f"SG.{pick(URLSAFE, 22)}.{pick(URLSAFE, 43)}", "SENDGRID_API_KEY={}"),
        ("twilio-api-key", "SK" + pick(DIGITS + "abcdef", 32), "TWILIO_API_KEY={}"),
        ("npm-token", "npm_" + pick(ALNUM, 36), "//registry.npmjs.org/:_authToken={}"),
        ("jwt", jwt(), "Authorization: Bearer {}"),
        ("private-key", pem(), "{}"),
        (
            "database-url-password",
            db_password,
            "DATABASE_URL=postgresql://billing:{}@db-7.internal.acme.io:5432/billing",
        ),
    ]
    return [
        {"name": name, "secret": secret, "line": line.format(secret) if "{}" in line else line}
        for name, secret, line in out
    ]


if __name__ == "__main__":
    (HERE / "kinds.json").write_text(json.dumps(kinds(), indent=1) + "\n", encoding="utf-8")
