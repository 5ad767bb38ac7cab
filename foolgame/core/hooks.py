"""Every hook through which a higher app reacts to a lower one, in one file.

Apps stand in layers (``tests/test_layers.py``): a lower app never imports a higher one. When
something a lower app does must change a higher one's state (a vote makes a claim's quality
flags stale; a room's round settles and its question may be over; an import adds sentences
that need an index), the lower app sends a hook here and the higher app connects its
receiver in its ``AppConfig.ready()``. The lower app names what happened, never who cares.

A ``Hook`` has any number of receivers, called in the order they connected, with keyword
arguments only; ``send`` returns their answers (a hook that asks a question, e.g.
``hints_allowed``, reads them). A receiver that raises propagates to the sender, as a direct
call would: hooks move who knows whom, not what happens. ``Slot`` holds one provider with a
default (``round_groups``), for a lower app that needs a policy a higher app may set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet


class Hook:
    def __init__(self, name: str, doc: str) -> None:
        self.name, self.__doc__ = name, doc
        self.receivers: list[Callable[..., Any]] = []

    def connect(self, receiver: Callable[..., Any]) -> Callable[..., Any]:
        """Add ``receiver`` (once: ``ready()`` may run again in tests). Usable as a decorator."""
        if receiver not in self.receivers:
            self.receivers.append(receiver)
        return receiver

    def send(self, **kwargs: Any) -> list[Any]:
        return [receiver(**kwargs) for receiver in list(self.receivers)]

    def __repr__(self) -> str:
        return f"<Hook {self.name}: {len(self.receivers)} receivers>"


# --- pages and claims: imports -------------------------------------------------------------

sentences_added = Hook(
    "sentences_added",
    """An import added or replaced sentences of these pages (``page_ids``), inside its
    transaction: their search indexes are stale. (evidence builds them after the commit.)""",
)

sentences_cited = Hook(
    "sentences_cited",
    """Which of these sentences (``sentence_ids``) does something cite and so must be kept
    (retired, not deleted) when an import drops them from their page? Each receiver returns a
    set of ids. (claims: the ones cited as gold.)""",
)

claims_imported = Hook(
    "claims_imported",
    """An import created these claims (``claim_ids``), inside its transaction. (moderation
    computes their quality flags from the release's vote counts.)""",
)

# --- evidence: who may read a page's hints --------------------------------------------------

page_in_play = Hook(
    "page_in_play",
    """Is ``player_id`` in a game on a claim about the page ``page_id``? Then nothing that
    reads the page for them (hints, draft checks) may run: the free top-10 would hand a voter
    the gold sentence. (voting answers True for an open round on one of its claims.)""",
)

hints_allowed = Hook(
    "hints_allowed",
    """May ``player_id`` read hints for the page ``page_id``? Each receiver answers True when
    its own rule lets them; the hints need one True. (authoring: an open write task on the
    page.)""",
)

# --- voting: rounds, votes and reports -------------------------------------------------------

claims_voted = Hook(
    "claims_voted",
    """A vote on a round of these claims (``claim_ids``) is being written, inside its
    transaction: what is derived from their votes is stale. (moderation refreshes their
    quality flags after the commit, batched.)""",
)

claim_reported = Hook(
    "claim_reported",
    """A player reported this claim (``claim_id``), inside the report's transaction.
    (moderation refreshes its quality flags after the commit.)""",
)

rounds_voted = Hook(
    "rounds_voted",
    """Has the player ``player_id`` finished a round with a vote (solo or in a room)? Each
    receiver answers True or False. (voting answers; players finishes the first-run tutorial
    of a player who has, and has saved a claim.)""",
)

claims_kept_from = Hook(
    "claims_kept_from",
    """Which claims must never be dealt in a round to any of ``players``? Each receiver returns
    a ``Q`` over claims to exclude. (checks: the claims they checked, whose evidence they read;
    rooms: the claims of rooms they hosted without playing, whose answers they saw;
    moderation: the claims they saw with their answer as moderators.)""",
)

round_settled = Hook(
    "round_settled",
    """A round service committed a vote, a report or a forfeit on the round ``round_id`` of a
    group (sent once, after the commit, whatever the transport), or its player is about to
    read it (``round_read``): an app that plays rounds in groups ends the group when nothing
    is left to wait for. (rooms ends the room's question.)""",
)


# --- checks: validation ----------------------------------------------------------------------

check_answered = Hook(
    "check_answered",
    """A player answered the check ``check_id`` of the claim ``claim_id``, inside the answer's
    transaction: its claim's gold label may have changed. (verifier has the model answer the
    same claim and pays its author if people now confirm a label the model got wrong.)""",
)

# --- the skill board --------------------------------------------------------------------------

skill_board_machines = Hook(
    "skill_board_machines",
    """Which machine players does the skill board show in a row of their own, on the players'
    scale? Each receiver returns a list of ``{"name", "skill", "rating", "deviation",
    "votes", "active"}``. (verifier: its model versions.)""",
)


class RoundGroups:
    """How voting treats rounds that a higher app plays in groups (a room's question): the
    answer of a grouped round is the group's, out for everyone at once. This default has no
    groups: every round is a solo round. rooms sets its own in ``RoomsConfig.ready()``."""

    related: tuple[str, ...] = ()
    """``select_related`` paths that make ``in_group`` and ``answer_withheld`` free for a round
    read with them."""

    def solo(self, prefix: str = "") -> Q:
        """The rounds (``prefix``: the path to them) that belong to no group."""
        return Q()

    def in_group(self, round_: Any) -> bool:
        return False

    def answer_withheld(self, round_: Any) -> bool:
        """Must every payload of this round leave its answer out for now (its group's
        answer is not out for everyone)?"""
        return False

    def forfeit_answer_at(self, round_: Any) -> datetime | None:
        """When a started grouped round given up shows its answer: the group's own clock, not
        the member's (None: the round's own deadline)."""
        return None

    def votes_due(self, votes: QuerySet[Any], now: datetime) -> list[int]:
        """The ids of these unsettled votes whose answer is out for everyone now, so they may
        be paid, notified and rated."""
        return list(votes.values_list("pk", flat=True))


class Slot:
    """One provider of a policy, with a default until a higher app sets its own."""

    def __init__(self, name: str, default: Any) -> None:
        self.name, self.provider = name, default

    def set(self, provider: Any) -> None:
        self.provider = provider

    def get(self) -> Any:
        return self.provider


round_groups = Slot("round_groups", RoundGroups())


class ModelVerdicts:
    """How authoring asks the model in the loop for its verdict on a claim and its gold
    sentences while it is written. This default has no model, so no verdict; verifier sets
    its own in ``VerifierConfig.ready()``. A verdict is a dict (``version``, ``label``,
    ``probability``, ``fooled``), or ``{"pending": True, ...}`` while the model loads."""

    def on_draft(self, *, task: Any, text: str, gold: Sequence[Any]) -> dict[str, Any] | None:
        """A draft that passes every rule of the text, with ``gold`` ticked (a try)."""
        return None

    def on_save(self, *, claim: Any, task: Any, gold: Sequence[Any]) -> dict[str, Any] | None:
        """A claim being saved, inside the save's transaction: record the version it was
        written against."""
        return None


model_verdicts = Slot("model_verdicts", ModelVerdicts())


class PlayRules:
    """What a higher app decides about what voting may deal and whose play counts: the claims
    taken out of play, the claims a player saw with their answer outside a round, the players
    held as improbable. Each answer is a ``Q`` over the claims or players (``prefix``: the
    path to them from the model voting queries), or None for none; voting applies it as it
    stands and never names the higher app's models or relations, so its queries stay in its
    layer (``tests/test_layers.py`` reads them). This default has no such rules; moderation
    sets its own in ``ModerationConfig.ready()``."""

    def claims_out_of_play(self, prefix: str = "") -> Q | None:
        """The claims that may be dealt to nobody (reported until reviewed, too hard and not
        kept: moderation's ``ClaimQuality.out_of_play``)."""
        return None

    def claims_answer_seen(self, *, player_id: int, at: datetime, prefix: str = "") -> Q | None:
        """The claims the player had seen with their answer (label and gold) by the moment
        ``at`` outside a round (a moderator's ``Sighting``): a vote on one pays nobody and is
        not rated (``Vote.unpaid``)."""
        return None

    def players_held(self, prefix: str = "") -> Q | None:
        """The players held out of the leaderboards and the ratings (an improbable player's
        ``PlayerHold``, until a moderator clears it)."""
        return None


play_rules = Slot("play_rules", PlayRules())
