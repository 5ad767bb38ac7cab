"""Pseudonyms for the people in an export: salted hashes, the salt never written out.

Across exports the pseudonyms change, since every export draws a new salt, unless the same
salt file is given on purpose (a later export then names the runs it still cuts the same
way alike; the caps below may cut them differently as the leaderboards move). Without the
salt a pseudonym cannot be tied to an account by itself; but what a pseudonym did can be,
by summing it and comparing with the public leaderboards (with one pseudonym per
person, that join named every player of a simulated 240-player game). So the export names
*runs* (:class:`Fragments`): an author's claims and a voter's rounds are cut into runs, each
with its own pseudonym, and a run ends before what it shows would let it out-score the
K-th best player of any leaderboard. An author's runs and the same person's voting runs are
never tied together.

Rooms' results are public too. After each question of a live room, every member
sees who found it (usernames, with their points) and the scoreboard (who voted), and knows
the pair's texts, hence its claim ids in the export: joined with ``votes.jsonl``, a question
with one finder named that finder's run, and with it the run's other rounds (one player's
three runs in an attack). No cut of runs helps there, since one vote is enough:
so a room's round is exported with ``voter: null``, in no run (the exporter's
``_write_votes``), and its vote still counts in the claims' totals. What the room join can
still learn is the row of a finder the room named: its clues bought and time bucket, no
other record of theirs (``tests/dataset/linkage.py``, ``room_reidentify``).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
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
    """``pseudonyms.named(key)`` -> ``"p" + 16 hex digits`` (HMAC-SHA256 of the key under the salt)."""

    def __init__(self, salt: bytes) -> None:
        self._salt = salt

    def named(self, key: str) -> str:
        """The pseudonym of a key: a run of one person's records (see :class:`Fragments`)."""
        return "p" + hmac.new(self._salt, key.encode(), hashlib.sha256).hexdigest()[:16]


class Fragments:
    """``fragments(user_id, shown)`` -> the pseudonym of the user's current run.

    ``shown`` is what this record adds to the least points the public leaderboards must
    show for its run's owner, per kind (e.g. ``{"write": 100, "total": 100}``). A run ends,
    and the record starts the next one, when adding it would pass ``caps`` in some kind:
    the K-th highest points of that kind (see ``foolgame.dataset.exporter.linkage_caps``),
    so at least K players could own any run. Records go in the order the export writes
    them, so a run is a stretch of one person's claims (or rounds) in that order.
    Memory: one small entry per person.
    """

    def __init__(self, pseudonyms: Pseudonyms, *, role: str, caps: Mapping[str, int], max_records: int) -> None:
        self._pseudonyms = pseudonyms
        self._role = role
        self._caps = caps
        self._max_records = max_records
        self._runs: dict[int, tuple[int, dict[str, int], str]] = {}

    def __call__(self, user_id: int, shown: Mapping[str, int]) -> str:
        run, sums, name = self._runs.get(user_id, (0, {}, ""))
        if sums and (
            sums["records"] >= self._max_records
            or any(sums.get(kind, 0) + points > self._caps.get(kind, 0) for kind, points in shown.items() if points)
        ):
            run, sums, name = run + 1, {}, ""
        sums["records"] = sums.get("records", 0) + 1
        for kind, points in shown.items():
            sums[kind] = sums.get(kind, 0) + points
        # The run's pseudonym is hashed once, at its first record (one HMAC per run, not per record).
        name = name or self._pseudonyms.named(f"{self._role}:{user_id}:{run}")
        self._runs[user_id] = (run, sums, name)
        return name
