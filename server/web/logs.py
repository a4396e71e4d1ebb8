"""Secrets never reach a log line: the access log's request lines lose their token parts.

A sign-in link's secret rides after "#" and never reaches the server; an access token may
still come as `?access=` (the links owners handed out before), and uvicorn's access log would
print it. This filter rewrites the record before any handler sees it.
"""

from __future__ import annotations

import logging
import re

# what this server's tokens look like (server/tokens.py: "<prefix>_<random>"), and the query
# parameters that carry one
_TOKEN = re.compile(r"\bmw[a-z]_[A-Za-z0-9_-]{16,}")
_QUERY = re.compile(r"([?&](?:access|token)=)[^&\s]*", re.IGNORECASE)


def redact(text: str) -> str:
    return _TOKEN.sub("[secret]", _QUERY.sub(r"\1[secret]", text))


class RedactSecrets(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        return True


def redact_access_log() -> None:
    """Install the filter on uvicorn's loggers (once per process)."""
    for name in ("uvicorn.access", "uvicorn.error"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactSecrets) for f in logger.filters):
            logger.addFilter(RedactSecrets())
