"""Pseudonyms for the people in an export: salted hashes, the salt never written out.

The same person gets the same pseudonym as an author and as a voter within one export, so
researchers can study authors who vote; across exports the pseudonyms change, since every
export draws a new salt, unless the same salt file is given on purpose (to follow players
from one release to the next). Without the salt a pseudonym cannot be tied to an account.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from pathlib import Path

SALT_BYTES = 32


def new_salt() -> bytes:
    return secrets.token_bytes(SALT_BYTES)


def salt_from_file(path: Path) -> bytes:
    """The salt kept in ``path`` (created with a new random salt, readable by its owner
    only, when the file does not exist yet, so that the next export can reuse it)."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(mode=0o600)
        path.write_text(secrets.token_hex(SALT_BYTES) + "\n", encoding="ascii")
    salt = path.read_bytes().strip()
    if len(salt) < 16:
        raise ValueError(f"{path}: a salt needs at least 16 bytes")
    return salt


class Pseudonyms:
    """``pseudonyms(user_id)`` -> ``"p" + 16 hex digits`` (HMAC-SHA256 under the salt)."""

    def __init__(self, salt: bytes) -> None:
        self._salt = salt
        self._cache: dict[int, str] = {}

    def __call__(self, user_id: int) -> str:
        pseudonym = self._cache.get(user_id)
        if pseudonym is None:
            digest = hmac.new(self._salt, f"user:{user_id}".encode(), hashlib.sha256).hexdigest()
            pseudonym = "p" + digest[:16]
            if len(self._cache) < 100_000:  # bounded: memory must not grow with the players
                self._cache[user_id] = pseudonym
        return pseudonym
