"""Ids, bearer tokens and passwords.

Ids are short and URL-safe (no look-alike characters); tokens are long random strings
stored as sha256 (they carry enough entropy that a slow hash adds nothing); user-chosen
passwords get argon2.
"""

from __future__ import annotations

import hashlib
import re
import secrets

from argon2 import PasswordHasher, Type, extract_parameters
from argon2.exceptions import InvalidHashError, VerificationError
from memorywiki.formats.mdutil import page_hash
from memorywiki.formats.model import ID_ALPHABET, ID_LENGTH

_hasher = PasswordHasher()


def new_id() -> str:
    return "".join(secrets.choice(ID_ALPHABET) for _ in range(ID_LENGTH))


def looks_like_id(value: str) -> bool:
    return len(value) == ID_LENGTH and all(c in ID_ALPHABET for c in value)


def new_token(prefix: str) -> str:
    return f"{prefix}_{secrets.token_urlsafe(32)}"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def hash_password(password: str) -> str:
    return _hasher.hash(password)


_ARGON2ID = re.compile(
    r"^\$argon2id\$v=19\$m=\d{1,10},t=\d{1,10},p=\d{1,3}\$[A-Za-z0-9+/]{11,88}\$[A-Za-z0-9+/]{22,88}$"
)


def acceptable_password_hash(value: str) -> bool:
    """Whether a hash an import carries may guard a page here: argon2id, and no costlier to
    check than the hashes this server makes, so a stranger's guesses at that page cost the
    server what they cost for any other (a hash with a huge memory cost would make each
    guess a denial of service)."""
    if not _ARGON2ID.match(value):
        return False
    try:
        params = extract_parameters(value)
    except InvalidHashError:
        return False
    return (
        params.type is Type.ID
        and params.time_cost <= _hasher.time_cost
        and 8 * params.parallelism <= params.memory_cost <= _hasher.memory_cost
        and params.parallelism <= _hasher.parallelism
        and 16 <= params.hash_len <= 64
    )


def verify_password(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def source_hash(title: str, markdown: str) -> str:
    return page_hash(title, markdown)
