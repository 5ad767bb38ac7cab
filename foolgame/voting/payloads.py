"""What a round's player sees: the round's clock in seconds and points, its state, the clues,
and the answer once it may be shown. No payload carries a label, a gold sentence or whether
a vote was right before the round's answer is due (``answer_not_due``; a grouped round's,
e.g. a room's, when its group says so: ``core.hooks.round_groups``)."""

from datetime import datetime
from typing import Any, Literal, NotRequired, TypedDict, cast

from django.conf import settings
from django.db.models import QuerySet

from foolgame.claims.models import Claim, ClaimGold
from foolgame.core import clock, hooks
from foolgame.core.queries import compiled_rows
from foolgame.voting.models import ClueReveal, Round, Vote
from foolgame.voting.selectors import player_streak
from scoring.rounds import remaining_seconds, round_deadline, voter_points


# --- the wire shapes ------------------------------------------------------------------------
# What the REST views return and the round socket sends; ``tests/test_wire_shapes.py`` holds
# each against its OpenAPI serializer (``voting.apis``) and its row in docs/websocket.md.
# (No ``from __future__ import annotations`` in this module: Python 3.11 reads NotRequired
# from a TypedDict's evaluated annotations only.)


class PageRef(TypedDict):
    id: int
    title: str


class Clue(TypedDict):
    position: int
    text: str
    section_header: str


class ShownClaim(TypedDict):
    text: str
    page: PageRef


class Evidence(TypedDict):
    text: str
    section_header: str


class Answer(TypedDict):
    """The answer, once the round's may be shown."""

    false_claim: int
    labels: list[str]
    gold: list[list[Evidence]]


class RatingChange(TypedDict):
    """The player's skill rating (1500 scale) just before and after a round's rating update."""

    before: int
    after: int
    change: int


class Result(TypedDict):
    """A vote's result (the ``result`` frame, the vote's REST answer, a state's ``result``):
    the answer and how the vote did; a timed-out or given-up round's has the answer and the
    player's standing only, and a live room's round while its question plays only ``remaining``."""

    correct: NotRequired[bool]
    points: NotRequired[int]
    remaining: NotRequired[float]
    false_claim: NotRequired[int]
    labels: NotRequired[list[str]]
    gold: NotRequired[list[list[Evidence]]]
    unpaid: NotRequired[str]
    message: NotRequired[str]
    picked: NotRequired[int]
    rating: NotRequired[RatingChange | None]
    rating_pending: NotRequired[bool]
    streak: NotRequired[int]


class RoundState(TypedDict):
    """The round as its player may see it now (``round_state``; the ``state`` frame)."""

    id: int
    status: str
    pages: list[PageRef]
    started_at: str | None
    deadline: str | None
    clue_cost: int
    claims: list[ShownClaim] | None
    remaining: float | None
    points: NotRequired[int]
    clues: list[list[Clue]]
    clues_left: NotRequired[list[int]]
    result: NotRequired[Result]
    message: NotRequired[str]
    answer_at: NotRequired[str | None]


class PastRound(TypedDict):
    """A round of the player's history (``GET /api/me/rounds``): only rounds whose answer is
    out for them, so it may say which claim was false and how they did."""

    id: int
    status: str
    pages: list[PageRef]
    claims: list[ShownClaim]
    outcome: Literal["right", "wrong", "timeout", "forfeited", "reported"]
    picked: int | None
    false_claim: int
    points: NotRequired[int]
    ended_at: str | None
    room: bool
    ended_by_room: bool


class ClueResult(TypedDict):
    """A clue bought (the ``clue`` frame, the reveal's REST answer)."""

    claim: int
    clue: Clue
    clues_left: int
    remaining: float
    points: NotRequired[int]
    deadline: str


class ClockFrame(TypedDict):
    """``tick`` (the clock), and ``timeout`` with both at 0. A round played with points hidden
    (``Round.points_shown``, a study's arm) ticks without ``points``."""

    remaining: float
    points: NotRequired[int]


class VoidFrame(TypedDict):
    remaining: float
    points: int
    message: str


class ForfeitedFrame(TypedDict):
    remaining: float
    points: int
    answer_at: str | None
    message: str


# ``for`` is a keyword: the class syntax cannot name it.
OkFrame = TypedDict("OkFrame", {"for": Literal["like", "report", "leave"]})


class ErrorFrame(TypedDict):
    code: str
    message: str



def game_settings() -> dict[str, Any]:
    return settings.FM2


def round_fields_for(*, player_id: int) -> dict[str, Any]:
    """The game a round dealt to the player now is played under, as ``Round`` fields: its
    clock, whether clues are offered, whether points are shown (``hooks.player_settings``:
    a study's arm may change them; the game's defaults for everyone else)."""
    mine = hooks.player_settings.get().settings_for(player_id=player_id)
    return {
        "round_seconds": int(mine["round_seconds"]),
        "clue_seconds": int(mine["clue_seconds"]),
        "hints": bool(mine["hints"]),
        "points_shown": bool(mine["points_shown"]),
    }


def round_seconds(round_: Round) -> int:
    """The round's clock in seconds: what it was dealt under, else the game's default."""
    return round_.round_seconds if round_.round_seconds is not None else int(game_settings()["ROUND_SECONDS"])


def clue_seconds(round_: Round) -> int:
    """What a clue costs on the round's clock: what it was dealt under, else the default."""
    return round_.clue_seconds if round_.clue_seconds is not None else int(game_settings()["CLUE_COST_SECONDS"])


def deadline_after(round_: Round, reveals: int) -> datetime:
    assert round_.started_at is not None
    return round_deadline(started_at=round_.started_at, reveals=reveals, duration=round_seconds(round_), clue_cost=clue_seconds(round_))


def round_remaining(round_: Round, *, now: datetime | None = None, reveals: int | None = None) -> float:
    """Seconds left on the round's clock: 180 - elapsed - 10 x reveals (the round's own
    clock: ``round_seconds``, ``clue_seconds``), from stored timestamps."""
    if round_.started_at is None:
        return float(round_seconds(round_))
    if reveals is None:
        reveals = round_.reveals.count()
    return remaining_seconds(
        started_at=round_.started_at,
        now=now or clock.now(),
        reveals=reveals,
        duration=round_seconds(round_),
        clue_cost=clue_seconds(round_),
    )


def points_hidden(payload: Any, round_: Round) -> Any:
    """``payload`` without its ``points`` when the round is played with points hidden from its
    player (``Round.points_shown``: a study's arm). Only what is shown changes: the vote and the
    ledger keep what it paid."""
    if not round_.points_shown:
        payload.pop("points", None)
        if isinstance(payload.get("result"), dict):
            payload["result"].pop("points", None)
    return payload


def round_points(remaining: float) -> int:
    """What a correct vote would earn the voter now."""
    return voter_points(remaining, pot=game_settings()["ROUND_POT"]) if remaining > 0 else 0


def clue_payload(claim: Claim, position: int) -> Clue:
    clue = claim.clues[position]
    return {"position": position, "text": clue["text"], "section_header": clue.get("section_header", "")}


def gold_payloads(claims: tuple[Claim, ...]) -> list[list[Evidence]]:
    """Each claim's gold sentences, in their order, read in one query."""
    gold: dict[int, list[Evidence]] = {claim.pk: [] for claim in claims}

    def links() -> QuerySet[ClaimGold]:
        return ClaimGold.objects.filter(claim_id__in=list(gold)).order_by("claim_id", "position", "id").values_list("claim_id", "sentence__text", "sentence__section_header")

    rows = compiled_rows(f"gold_payloads:{len(gold)}", links, list(gold))
    for claim_id, text, header in rows:
        gold[claim_id].append({"text": text, "section_header": header})
    return [gold[claim.pk] for claim in claims]


def round_state(round_: Round, *, now: datetime | None = None, reveals: list[ClueReveal] | None = None) -> RoundState:
    """The round as its player may see it now. Before the vote: no label, no gold sentence,
    no clue not yet bought; before the start: not even the claims' text. A room's round
    over before its question shows no result and padded clue counts until the question is
    over (``round_answer_withheld``): the answer is the whole room's at once. ``reveals``: the
    round's clue reveals when the caller knows them (a round started just now has none)."""
    state: dict[str, Any] = {
        "id": round_.pk,
        "status": round_.state,
        "pages": [{"id": c.page_id, "title": c.page.title} for c in round_.claims],
        "started_at": round_.started_at.isoformat() if round_.started_at else None,
        "deadline": round_.deadline.isoformat() if round_.deadline and round_.state == Round.State.PLAYING else None,
        "clue_cost": clue_seconds(round_),
    }
    now = now or clock.now()
    hidden = answer_not_due(round_, now)
    if round_.state == Round.State.FORFEITED:
        state["answer_at"] = round_.answer_at.isoformat() if round_.answer_at else None
        if hidden:
            state["message"] = FORFEIT_MESSAGE
    if round_.state == Round.State.READY:
        state.update({"claims": None, "remaining": float(round_seconds(round_)), "points": round_points(float(round_seconds(round_))), "clues": [[], []]})
        return cast(RoundState, points_hidden(state, round_))
    if round_.state == Round.State.FORFEITED and round_.started_at is None and hidden:
        # Given up before the start: nothing was shown, so nothing is until its answer's time.
        state.update({"claims": None, "remaining": None, "points": 0, "clues": [[], []]})
        return cast(RoundState, points_hidden(state, round_))
    if reveals is None:
        reveals = list(round_.reveals.all())
    remaining = round_remaining(round_, now=now, reveals=len(reveals)) if round_.state == Round.State.PLAYING else None
    if round_.state in (Round.State.VOTED, Round.State.TIMED_OUT, Round.State.REPORTED, Round.State.VOIDED, Round.State.FORFEITED):
        remaining = 0.0 if round_.state == Round.State.TIMED_OUT else None
    clues: list[list[Clue]] = [[], []]
    for reveal in reveals:
        claim = round_.claims[reveal.claim_index]
        if reveal.position < len(claim.clues):  # a moderator's evidence edit may have shortened it
            clues[reveal.claim_index].append(clue_payload(claim, reveal.position))
    state.update(
        {
            "claims": [{"text": c.text, "page": {"id": c.page_id, "title": c.page.title}} for c in round_.claims],
            "remaining": None if remaining is None else round(max(remaining, 0.0), 2),
            "points": round_points(remaining) if remaining is not None else 0,
            "clues": clues,
            "clues_left": clues_left(round_, [len(c) for c in clues]),
        }
    )
    if round_.state == Round.State.FORFEITED:
        if hidden:
            state["clues_left"] = clues_left(round_, [len(c) for c in clues], padded=True)
        else:
            state["result"] = outcome_result(round_)
    elif round_.state in (Round.State.VOTED, Round.State.TIMED_OUT, Round.State.REPORTED) and hooks.round_groups.get().answer_withheld(round_):
        state["clues_left"] = clues_left(round_, [len(c) for c in clues], padded=True)
    elif round_.state == Round.State.VOTED:
        state["result"] = result_payload(round_, round_.vote)
    elif round_.state == Round.State.REPORTED and hidden:
        state["answer_at"] = round_.deadline.isoformat()
        state["clues_left"] = clues_left(round_, [len(c) for c in clues], padded=True)
    elif round_.state in (Round.State.TIMED_OUT, Round.State.REPORTED):
        state["result"] = outcome_result(round_)
    elif round_.state == Round.State.VOIDED:
        state["message"] = VOIDED_MESSAGE
    return cast(RoundState, points_hidden(state, round_))


VOIDED_MESSAGE = "A moderator changed a claim of this round, so it ends without points. Start a new round."


FORFEIT_MESSAGE = "You gave up this round. Its answer is shown when the round would have ended had you waited (answer_at)."


UNPAID_MESSAGES = {
    "moderator_saw_claim": "You saw one of these claims with its answer as a moderator before voting, so this vote pays nothing "
    "to anyone and does not count in the ratings.",
    "question_skipped": "The host skipped this room question, so no vote on it pays anything or counts in the ratings.",
    "guest": "You play as a guest: your points count in this room, not on the game's boards, and your votes pay the "
    "claims' authors nothing. Set a password to keep your account and play for real.",
}


def answer_not_due(round_: Round, now: datetime) -> bool:
    """Is this a round given up (a forfeit, or a solo round ended by a report) whose answer
    is not out yet? A solo forfeit's answer comes at its ``answer_at``, a reported round's at
    its deadline (giving up is never a faster way to an answer than waiting); a room's
    round's when its question is over, as every member's (``round_answer_withheld``)."""
    groups = hooks.round_groups.get()
    if round_.state == Round.State.REPORTED and not groups.in_group(round_):
        # A solo round ended by a report during play: a report is not a faster way to the
        # answer than waiting either (the answer-leak walk found this one), so its answer comes
        # at the deadline the round had when it was reported.
        return round_.deadline is not None and now < round_.deadline
    if round_.state != Round.State.FORFEITED:
        return False
    if groups.in_group(round_):
        return groups.answer_withheld(round_)
    return round_.answer_at is not None and now < round_.answer_at


def clues_left(round_: Round, bought: list[int], *, padded: bool = False) -> list[int]:
    """Clues still to buy per claim. While the round is playing (or ``padded``: a room's
    round over before its question) both claims show the longer list's length less what was
    bought, so the lengths never tell which claim is false (a claim whose list runs out
    answers ``no_more_clues``); once over, the true numbers."""
    if not round_.hints:  # played without clues (a study's arm): none is offered
        return [0, 0]
    lengths = [len(c.clues) for c in round_.claims]
    if padded or round_.state == Round.State.PLAYING:
        return [max(max(lengths) - n, 0) for n in bought]
    return [max(length - n, 0) for length, n in zip(lengths, bought)]


def answer_payload(round_: Round) -> Answer:
    """The answer, shown once the round is over."""
    return {
        "false_claim": round_.false_index,
        "labels": [Claim.Label.REFUTES if i == round_.false_index else Claim.Label.SUPPORTS for i in (0, 1)],
        "gold": gold_payloads(round_.claims),
    }


def vote_ack(vote: Vote) -> Result:
    """A vote on a room's round while its question plays: in, and with how much time; not
    whether it was right (the room socket's ``voted`` frame)."""
    return {"remaining": round(vote.remaining, 2)}


def result_payload(round_: Round, vote: Vote) -> Result:
    result: Result = {
        "correct": vote.correct,
        "points": vote.points,
        "remaining": round(vote.remaining, 2),
        **answer_payload(round_),
        "picked": vote.false_claim_index,
        **standing_payload(round_, rating_pending=not vote.rated and not vote.unpaid),
    }
    if vote.unpaid:
        result.update({"unpaid": vote.unpaid, "message": UNPAID_MESSAGES.get(vote.unpaid, "This vote pays nothing.")})
    return cast(Result, points_hidden(result, round_))


def outcome_result(round_: Round) -> Result:
    """The result of a round over without a vote (timed out, given up, reported): the answer,
    and the player's standing after it (a started round given up is rated as a wrong vote)."""
    return {**answer_payload(round_), **standing_payload(round_, rating_pending=round_.forfeit_rated is False)}


class Standing(TypedDict):
    rating: RatingChange | None
    rating_pending: bool
    streak: int


def standing_payload(round_: Round, *, rating_pending: bool) -> Standing:
    """How the round moved the player's skill rating (``rating``: null until its rating update
    ran, ``rating_pending`` while it is on its way, after the commit, by a batched task; null
    for good for a round that rates nobody) and their current streak of right answers."""
    rating: RatingChange | None = None
    if round_.rating_before is not None and round_.rating_after is not None:
        before, after = round(round_.rating_before), round(round_.rating_after)
        rating = {"before": before, "after": after, "change": after - before}
    return {"rating": rating, "rating_pending": rating_pending and rating is None, "streak": player_streak(player_id=round_.player_id)}


def answer_out(round_: Round, now: datetime) -> bool:
    """Does ``round_state`` show this round's answer (its ``result``) now? The same rules, as
    a yes or no: after a vote (a room's once its question is over), a timeout, a report (a
    solo one from its deadline), a forfeit from its ``answer_at``; never for a voided round
    or an open one. The history (``past_round``) lists only such rounds."""
    if round_.state == Round.State.FORFEITED:
        return not answer_not_due(round_, now)
    if round_.state not in (Round.State.VOTED, Round.State.TIMED_OUT, Round.State.REPORTED):
        return False
    if hooks.round_groups.get().answer_withheld(round_):
        return False
    return round_.state != Round.State.REPORTED or not answer_not_due(round_, now)


OUTCOMES = {Round.State.TIMED_OUT: "timeout", Round.State.FORFEITED: "forfeited", Round.State.REPORTED: "reported"}


def past_round(round_: Round) -> PastRound:
    """One row of the history; for a round whose answer is out (``answer_out``) only."""
    vote = getattr(round_, "vote", None) if round_.state == Round.State.VOTED else None
    claims: list[ShownClaim] = [{"text": c.text, "page": {"id": c.page_id, "title": c.page.title}} for c in round_.claims]
    row: PastRound = {
        "id": round_.pk,
        "status": round_.state,
        "pages": [c["page"] for c in claims],
        "claims": claims,
        "outcome": ("right" if vote.correct else "wrong") if vote is not None else OUTCOMES[round_.state],  # type: ignore[typeddict-item]
        "picked": vote.false_claim_index if vote is not None else None,
        "false_claim": round_.false_index,
        "points": vote.points if vote is not None else 0,
        "ended_at": round_.ended_at.isoformat() if round_.ended_at else None,
        "room": (room := hooks.round_groups.get().in_group(round_)),
        # The host ended the room while this round played: stored as an unrated give-up
        # (``forfeit_rated`` None), which was not the player's doing.
        "ended_by_room": room and round_.state == Round.State.FORFEITED and round_.forfeit_rated is None,
    }
    return cast(PastRound, points_hidden(row, round_))
