"""A real SMTP server on loopback (aiosmtpd) that keeps what it receives, for the mail tests.

`refuse(code)` makes it answer every RCPT with that code (550: refused for good, 451: try
later) until `refuse(None)`; `wait_for(address)` waits for a mail to that address.
"""

from __future__ import annotations

import email
import email.policy
import socket
import threading
import time
from email.message import EmailMessage as Message

from aiosmtpd.controller import Controller


class Inbox:
    def __init__(self) -> None:
        self.mails: list[tuple[str, list[str], Message]] = []
        self.refusing: str | None = None
        self.lock = threading.Lock()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.refusing:
            return self.refusing
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.mails.append(
                (
                    envelope.mail_from,
                    list(envelope.rcpt_tos),
                    email.message_from_bytes(
                        envelope.original_content or envelope.content, policy=email.policy.default
                    ),
                )
            )
        return "250 Message accepted for delivery"


class SmtpServer:
    def __init__(self) -> None:
        self.inbox = Inbox()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.controller = Controller(self.inbox, hostname="127.0.0.1", port=self.port)
        self.controller.start()
        self.url = f"smtp://127.0.0.1:{self.port}"

    def reset(self) -> None:
        with self.inbox.lock:
            self.inbox.mails.clear()
        self.inbox.refusing = None

    def refuse(self, reply: str | None) -> None:
        self.inbox.refusing = reply

    def to(self, address: str) -> list[Message]:
        with self.inbox.lock:
            return [m for _, rcpts, m in self.inbox.mails if address.lower() in (r.lower() for r in rcpts)]

    def all(self) -> list[tuple[str, list[str], Message]]:
        with self.inbox.lock:
            return list(self.inbox.mails)

    def wait_for(self, address: str, count: int = 1, timeout: float = 20.0) -> list[Message]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.to(address)
            if len(got) >= count:
                return got
            time.sleep(0.05)
        raise AssertionError(f"no mail to {address} within {timeout} s (got {len(self.to(address))})")

    def stop(self) -> None:
        self.controller.stop()
