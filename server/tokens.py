"""Ids, bearer tokens and passwords.

Ids are short and URL-safe (no look-alike characters); tokens are long random strings
stored as sha256 (they carry enough entropy that a slow hash adds nothing); user-chosen
passwords get argon2.
"""

from __future__ import annotations

import hashlib
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

ID_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
ID_LENGTH = 10

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


def verify_password(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def source_hash(title: str, markdown: str) -> str:
    return hashlib.sha256(f"{title}\n{markdown}".encode("utf-8")).hexdigest()
