"""Delivering one mail over SMTP with aiosmtplib, as MEMORYWIKI_SMTP_URL says.

smtp://host[:port] (default port 25) upgrades with STARTTLS whenever the server offers it;
smtps://host[:port] (default 465) speaks TLS from the first byte. A login comes from the URL's
user:password or from MEMORYWIKI_SMTP_USER / MEMORYWIKI_SMTP_PASSWORD.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from urllib.parse import unquote, urlsplit

import aiosmtplib

from ..config import Settings

_ADDRESS = re.compile(r"[^\s<>@]+@[^\s<>@]+")
_SECRET = re.compile(r"mw[a-z]_[A-Za-z0-9_-]+")


def _reply(exc: BaseException) -> BaseException:
    """The SMTP reply behind a failure: a refused recipient's own, when that is what it was."""
    refused = getattr(exc, "recipients", None)
    return refused[0] if isinstance(refused, list) and refused else exc


def permanent(exc: BaseException) -> bool:
    """A 5xx reply: the server will never take this mail, so it is not tried again."""
    code = getattr(_reply(exc), "code", None)
    return isinstance(code, int) and 500 <= code < 600


def safe_error(exc: BaseException) -> str:
    """What a failed delivery says in /healthz and the log: the kind of failure and the SMTP
    reply, with any address or link secret in it blanked out."""
    reply = _reply(exc)
    code = getattr(reply, "code", None)
    text = str(getattr(reply, "message", "") or reply)
    text = _SECRET.sub("[secret]", _ADDRESS.sub("[address]", text))[:200]
    return f"{type(exc).__name__}{f' {code}' if code else ''}: {text}".strip()


@dataclass(frozen=True)
class SmtpSender:
    host: str
    port: int
    tls: bool
    user: str | None
    password: str | None
    sender: str
    timeout: float

    @classmethod
    def from_settings(cls, settings: Settings) -> SmtpSender | None:
        if not settings.smtp_url:
            return None
        url = urlsplit(settings.smtp_url)
        tls = url.scheme == "smtps"
        return cls(
            host=url.hostname or "localhost",
            port=url.port or (465 if tls else 25),
            tls=tls,
            user=unquote(url.username) if url.username else settings.smtp_user,
            password=unquote(url.password) if url.password else settings.smtp_password,
            sender=settings.mail_from,
            timeout=settings.smtp_timeout,
        )

    def message(self, recipient: str, subject: str, body: str) -> EmailMessage:
        """The mail as it goes out. EmailMessage refuses CR or LF in a header, so an address
        that slipped through with one can never add a header."""
        msg = EmailMessage()
        msg["From"] = self.sender
        msg["To"] = recipient
        msg["Subject"] = subject
        msg["Date"] = formatdate(localtime=False)
        msg["Message-ID"] = make_msgid(domain="memorywiki")
        msg["Auto-Submitted"] = "auto-generated"
        msg.set_content(body)
        return msg

    async def send(self, recipient: str, subject: str, body: str) -> None:
        """Deliver the mail or raise (aiosmtplib.SMTPException, OSError, TimeoutError)."""
        await aiosmtplib.send(
            self.message(recipient, subject, body),
            hostname=self.host,
            port=self.port,
            username=self.user,
            password=self.password,
            use_tls=self.tls,
            start_tls=None if not self.tls else False,
            timeout=self.timeout,
        )
