"""The voting round's clock and its points, as pure functions.

The Django services own the database, the locks and the ledger; this module only says
how many seconds are left and who earns what, so that the rules in docs/rules.md live in one
place that can be tested without a database (and property-tested with hypothesis).

Every number of docs/rules.md is a keyword argument with the game's default, so a test, a
setting or a future variant of the game can change it without touching the rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from collections.abc import Hashable

__all__ = [
    "ROUND_SECONDS",
    "CLUE_COST_SECONDS",
    "POT",
    "Outcome",
    "AwardKind",
    "AwardRole",
    "Award",
    "remaining_seconds",
    "round_deadline",
    "voter_points",
    "round_awards",
]

ROUND_SECONDS = 180.0
"""A round's length: the clock starts when the voter presses start."""

CLUE_COST_SECONDS = 10.0
"""Each clue moves the round's clock forward by this much."""

POT = 120
"""Points at stake on a correct vote: voter and authors share exactly this (zero-sum)."""


class Outcome(StrEnum):
    """How a round ended. A StrEnum, so the plain strings of the database compare equal."""

    CORRECT = "correct"
    WRONG = "wrong"
    TIMEOUT = "timeout"
    REPORTED = "reported"


class AwardKind(StrEnum):
    """The ledger's kinds that a round can produce (write and like come from elsewhere)."""

    VERIFY = "verify"
    FOOL = "fool"


class AwardRole(StrEnum):
    """Which part of the round earned the award, so the ledger row can name its cause."""

    VOTER = "voter"
    TRUE_CLAIM_AUTHOR = "true_claim_author"
    FALSE_CLAIM_AUTHOR = "false_claim_author"


@dataclass(frozen=True, slots=True)
class Award:
    """One ledger row to write: ``player`` earns ``amount`` points of ``kind``.

    ``role`` tells the service which claim caused a fool award, so it can link the row
    to that claim and notify its author. ``amount`` is always positive.
    """

    player: Hashable
    amount: int
    kind: AwardKind
    role: AwardRole


def _elapsed_seconds(started_at: datetime | float, now: datetime | float) -> float:
    if isinstance(started_at, datetime) and isinstance(now, datetime):
        delta: float = (now - started_at).total_seconds()
    elif not isinstance(started_at, datetime) and not isinstance(now, datetime):
        delta = float(now) - float(started_at)
    else:
        raise TypeError("started_at and now must both be datetimes or both be seconds")
    # A clock that steps back (NTP, two servers) must never give the voter extra time.
    return max(0.0, delta)


def _check_clock_settings(reveals: int, duration: float, clue_cost: float) -> None:
    if reveals < 0:
        raise ValueError(f"reveals must be >= 0, got {reveals}")
    if duration <= 0:
        raise ValueError(f"duration must be > 0, got {duration}")
    if clue_cost < 0:
        raise ValueError(f"clue_cost must be >= 0, got {clue_cost}")


def remaining_seconds(
    *,
    started_at: datetime | float,
    now: datetime | float,
    reveals: int,
    duration: float = ROUND_SECONDS,
    clue_cost: float = CLUE_COST_SECONDS,
) -> float:
    """Seconds left in a round: ``duration - elapsed - clue_cost * reveals``.

    ``started_at`` and ``now`` are both timezone-aware datetimes (the server's clock, as
    stored on the round) or both plain seconds (e.g. ``time.monotonic()`` in a bench).
    The clock is passed in, never read here, so that tests can freeze it.

    The result is not clamped: ``<= 0`` means the round has timed out, and the caller
    decides what that does. Elapsed time is never negative.
    """
    _check_clock_settings(reveals, duration, clue_cost)
    return duration - _elapsed_seconds(started_at, now) - clue_cost * reveals


def round_deadline(
    *,
    started_at: datetime,
    reveals: int,
    duration: float = ROUND_SECONDS,
    clue_cost: float = CLUE_COST_SECONDS,
) -> datetime:
    """The moment the round times out, given the clues revealed so far.

    The database holds the deadline: each reveal moves it ``clue_cost``
    seconds earlier, so storing this value after every reveal keeps
    ``remaining_seconds(now=deadline)`` at exactly zero.
    """
    _check_clock_settings(reveals, duration, clue_cost)
    return started_at + timedelta(seconds=duration - clue_cost * reveals)


def voter_points(remaining: float, pot: int = POT) -> int:
    """Points a correct vote earns now: ``min(pot, floor(remaining))``, never below 0.

    Each second is a point, capped at the pot: a voter who answers within the first
    ``duration - pot`` seconds (60 s by default) without clues takes the whole pot.
    """
    if pot < 0:
        raise ValueError(f"pot must be >= 0, got {pot}")
    if math.isnan(remaining):
        raise ValueError("remaining is NaN")
    if remaining >= pot:  # also keeps floor() away from +inf
        return pot
    if remaining <= 0:  # and from -inf
        return 0
    return math.floor(remaining)


def round_awards(
    *,
    outcome: Outcome | str,
    remaining: float,
    voter: Hashable,
    true_claim_author: Hashable,
    false_claim_author: Hashable,
    pot: int = POT,
) -> list[Award]:
    """The ledger rows a finished round produces.

    A correct vote pays the voter ``P = voter_points(remaining, pot)`` (kind verify) and
    splits what is left on the table, ``pot - P``, between the two claims' authors (kind
    fool): each gets half, and an odd point goes to the false claim's author, whose claim
    did the fooling. The rows always add up to exactly ``pot``: the game is zero-sum.

    A wrong vote, a timeout or a report pays nobody: a wrong vote so that impossible
    (mislabelled) claims earn their authors nothing, a report because the round is void.

    Rows are per role, never merged: an author who wrote both claims gets two fool rows
    (one per claim), and a voter who is also an author (pairing forbids it, but the sum
    must still hold) gets a verify row and a fool row. So each row has one cause, and
    the sum per player is right. Zero-amount rows are left out.

    ``remaining`` is the time left when the vote came in; a vote at ``remaining <= 0``
    is a timeout, so a ``correct`` outcome with no time left raises ``ValueError``:
    the service must have recorded a timeout instead.
    """
    outcome = Outcome(outcome)
    if pot < 0:
        raise ValueError(f"pot must be >= 0, got {pot}")
    if outcome is not Outcome.CORRECT:
        return []
    if math.isnan(remaining) or remaining <= 0:
        raise ValueError(f"a vote with {remaining} s left is a timeout, not a correct vote")

    won = voter_points(remaining, pot)
    left_on_table = pot - won
    true_share = left_on_table // 2
    false_share = left_on_table - true_share  # gets the odd point

    rows = [
        Award(voter, won, AwardKind.VERIFY, AwardRole.VOTER),
        Award(true_claim_author, true_share, AwardKind.FOOL, AwardRole.TRUE_CLAIM_AUTHOR),
        Award(false_claim_author, false_share, AwardKind.FOOL, AwardRole.FALSE_CLAIM_AUTHOR),
    ]
    return [row for row in rows if row.amount > 0]
