"""Reads for live rooms: the scoreboard, who found a question's answer, and what a member's
round of a question may show while it plays.

Nothing here tells anyone how a member did on a question still playing: the scoreboard sums
finished questions only (a vote's points and ``correct`` would otherwise show on the board
the moment it is cast, and a canary's vote would give the answer to everyone else), and of
the question playing only the number of votes cast is told (``question_votes``), never whose.

Giving up is never a faster way to an answer than waiting (docs/rules.md): a member whose round of a
question was given up (a forfeit, a leave, or the host ending the
room) gets nothing of that question's answer before the question's own deadline, even when
the question ended early because of it (``given_up``): no answer, no result in their round,
and a scoreboard without that question (it would tell a canary's vote right from wrong)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from datetime import datetime

from django.db import connection
from django.db.models import Count, Max, Q, QuerySet, Sum

from foolgame.rooms.payloads import Found, Score, Winner
from foolgame.rooms.models import Room, RoomMember, RoomQuestion, RoomRound
from foolgame.core import clock
from foolgame.voting.models import Round, Vote
from foolgame.core.queries import compiled_rows

def given_up(prefix: str = "") -> Q:
    """A round (``prefix``: the path to it, e.g. ``"round__"``) given up: a forfeit (the round
    services store every give-up, a leave or the host's end included, as ``forfeited``; a
    report or a void is not one, and a timeout comes at the deadline)."""
    return Q(**{f"{prefix}state": Round.State.FORFEITED})


def _round_given_up(round_: Round) -> bool:
    """``given_up`` for a round in memory."""
    return round_.state == Round.State.FORFEITED


def withheld_questions(*, room: Room | int, player_id: int, now: datetime | None = None) -> set[int]:
    """The room's questions over whose answer this member may not see yet: they gave their
    round up and the question's deadline is still ahead. One query."""
    now = now or clock.now()
    plays = RoomRound.objects.filter(given_up("round__"), question__room=room, player_id=player_id, question__deadline__gt=now)
    return set(plays.values_list("question_id", flat=True))


def withheld_players(*, room: Room | int, now: datetime | None = None) -> set[int]:
    """The members of the room who may not see some question's answer yet (``withheld_questions``
    for anyone): the room's messages carry it, so only their sockets read their own view. One query."""
    now = now or clock.now()
    plays = RoomRound.objects.filter(given_up("round__"), question__room=room, question__deadline__gt=now)
    return set(plays.values_list("player_id", flat=True).distinct())


def room_scoreboard(*, room: Room, hide: Iterable[int] = ()) -> list[Score]:
    """Every member who plays (a host who does not play is on no board), ranked by the points
    their votes on the room's finished questions earned (the solo award: the points on the
    clock when the vote was right), then by right answers; equal scores share a rank. Members who left stay on it, marked. A question still playing
    counts for nobody until it is over; nor do the questions in ``hide`` (those whose answer
    the viewer may not see yet: ``withheld_questions``), nor a question the host skipped."""
    return room_results(room=room, hide=hide)[0]


def room_results(*, room: Room, question: RoomQuestion | None = None, hide: Iterable[int] = ()) -> tuple[list[Score], list[Found]]:
    """The scoreboard and who found ``question``'s false claim (``room_results_first``)."""
    rows, found, _ = room_results_first(room=room, question=question, hide=hide)
    return rows, found


def room_results_first(*, room: Room, question: RoomQuestion | None = None, hide: Iterable[int] = ()) -> tuple[list[Score], list[Found], Found | None]:
    """The scoreboard (``room_scoreboard``) and, for ``question`` (a finished one), the members
    who found its false claim, most points first, and the one who found it first (the
    earliest right vote; ``None`` when nobody did): two queries, the members and their votes'
    totals over the room's finished questions but those in ``hide`` and the skipped ones (with
    the points and time of a right vote on ``question``, skipped or not)."""
    counted = Q(question__skipped=False)
    sums: dict[str, Any] = {
        "points": Sum("round__vote__points", filter=counted),
        "correct": Count("pk", filter=counted & Q(round__vote__correct=True)),
        "voted": Count("round__vote", filter=counted),
    }
    if question is not None:
        right = Q(question_id=question.pk, round__vote__correct=True)
        sums["found"] = Max("round__vote__points", filter=right)
        sums["found_at"] = Max("round__vote__created", filter=right)  # one vote a round: that vote's time
    plays = RoomRound.objects.filter(question__room=room, question__state=RoomQuestion.State.DONE).exclude(question_id__in=list(hide))
    totals = {row["player_id"]: row for row in plays.values("player_id").annotate(**sums)} if room.current else {}  # none dealt yet: no query
    rows: list[Score] = []
    found: list[Found] = []
    first: tuple[Any, Found] | None = None

    def members() -> QuerySet[RoomMember]:
        return RoomMember.objects.filter(room=room).values_list("player_id", "player__username", "left_at")

    for player_id, username, left_at in compiled_rows("room_members", members, [room.pk]):  # every opening and answer: compiled once
        if player_id == room.host_id and not room.host_plays:
            continue  # a host who runs the room without playing is on no board
        total = totals.get(player_id, {})
        rows.append(
            {
                "rank": 0,  # set below, once sorted
                "username": username,
                "points": int(total.get("points") or 0),
                "correct": int(total.get("correct") or 0),
                "voted": int(total.get("voted") or 0),
                "host": player_id == room.host_id,
                "left": left_at is not None,
            }
        )
        if total.get("found") is not None:
            found.append({"username": username, "points": total["found"]})
            if first is None or (total["found_at"], username) < (first[0], first[1]["username"]):
                first = (total["found_at"], found[-1])
    rows.sort(key=lambda r: (-r["points"], -r["correct"], r["username"]))
    for i, row in enumerate(rows):
        same = i > 0 and (rows[i - 1]["points"], rows[i - 1]["correct"]) == (row["points"], row["correct"])
        row["rank"] = rows[i - 1]["rank"] if same else i + 1
    found.sort(key=lambda f: (-f["points"], f["username"]))
    return rows, found, (dict(first[1]) if first else None)  # type: ignore[return-value]


def room_winners(*, room: Room | int, hide: Iterable[int] = ()) -> list[Winner]:
    """Each finished question of the room (but those in ``hide``) and who found its false
    claim first (the earliest right vote; ``username`` None when nobody did), in order: two
    queries."""
    questions = RoomQuestion.objects.filter(room=room, state=RoomQuestion.State.DONE).exclude(pk__in=list(hide))
    winners: dict[int, Winner] = {
        number: {"number": number, "username": None, "points": None, "skipped": skipped}
        for number, skipped in questions.order_by("number").values_list("number", "skipped")
    }
    right = RoomRound.objects.filter(question__in=questions, round__vote__correct=True).order_by("question__number", "round__vote__created", "player__username")
    for number, username, points in right.values_list("question__number", "player__username", "round__vote__points"):
        if winners[number]["username"] is None:
            winners[number].update(username=username, points=points)
    return list(winners.values())


def _tally_sql() -> str:
    def table(model: Any) -> str:
        return connection.ops.quote_name(model._meta.db_table)

    def column(model: Any, name: str) -> str:
        return connection.ops.quote_name(model._meta.get_field(name).column)

    q, r, p, rd, v = RoomQuestion, Room, RoomRound, Round, Vote
    return (
        f"SELECT q.{column(q, 'room')}, r.{column(r, 'code')},"
        f" MAX(CASE WHEN q.{column(q, 'deadline')} <= %s THEN 1 ELSE 0 END),"
        f" COUNT(CASE WHEN rd.{column(rd, 'state')} = %s AND rd.{column(rd, 'deadline')} > %s THEN 1 END),"
        f" COUNT(CASE WHEN rd.{column(rd, 'state')} = %s THEN 1 END),"
        f" COUNT(v.{column(v, 'id')}), COUNT(p.{column(p, 'id')})"
        f" FROM {table(q)} q INNER JOIN {table(r)} r ON r.{column(r, 'id')} = q.{column(q, 'room')}"
        f" LEFT OUTER JOIN {table(p)} p ON p.{column(p, 'question')} = q.{column(q, 'id')}"
        f" LEFT OUTER JOIN {table(rd)} rd ON rd.{column(rd, 'id')} = p.{column(p, 'round')}"
        f" LEFT OUTER JOIN {table(v)} v ON v.{column(v, 'round')} = rd.{column(rd, 'id')}"
        f" WHERE q.{column(q, 'id')} = %s AND q.{column(q, 'state')} = %s"
        f" GROUP BY q.{column(q, 'room')}, r.{column(r, 'code')}"
    )


_TALLY_SQL: dict[str, str] = {}  # by database vendor


def question_tally(*, question_id: int, now: datetime) -> tuple[int, str, bool, bool, int, int] | None:
    """A question still playing, as the room asks after each vote, in one unlocked query: its
    room's id and code, whether it is over (its deadline passed, or none of its rounds can take
    a vote: ``services._question_over``), whether any of its rounds still says playing, how
    many of its members have voted (``question_votes``: a count, never who) and how many were
    dealt it. None when it is done, or no such question.

    Written as SQL, kept per database vendor: the ORM's compilation of this aggregate over
    three joins cost a millisecond of CPU per vote, ten times its execution (bench_rooms_ws)."""
    sql = _TALLY_SQL.get(connection.vendor)
    if sql is None:
        sql = _TALLY_SQL[connection.vendor] = _tally_sql()
    at = connection.ops.adapt_datetimefield_value(now)
    playing = Round.State.PLAYING.value
    with connection.cursor() as cursor:
        cursor.execute(sql, [at, playing, at, playing, question_id, RoomQuestion.State.PLAYING.value])
        row = cursor.fetchone()
    if row is None:
        return None
    room_id, code, past_deadline, open_rounds, still, voted, dealt = row
    return room_id, code, bool(past_deadline) or not open_rounds, bool(still), voted, dealt


def question_votes(*, question: RoomQuestion) -> int:
    """How many votes were cast on this question so far: a count, never whose."""
    return RoomRound.objects.filter(question=question, round__vote__isnull=False).count()


def round_answer_withheld(*, round_: Round) -> bool:
    """Is this a member's round of a room question still playing, or one they gave up
    (``given_up``) before the question's deadline? Then no payload of the round carries its
    answer (result, labels, gold, whether the vote was right, the true clue counts): everyone
    gets it at once when the question is over, as on the room socket, and a member who gave
    up at its deadline, whichever transport the member plays the round with (REST twins,
    round socket).

    Free when the round was read with ``room_play__question`` selected (the round services'
    ``_get_round``); one query otherwise."""
    if Round.room_play.is_cached(round_):
        try:
            question = round_.room_play.question
        except RoomRound.DoesNotExist:
            return False
    else:
        question = RoomQuestion.objects.filter(plays__round_id=round_.pk).only("state", "deadline").first()
        if question is None:
            return False
    if question.state == RoomQuestion.State.PLAYING:
        return True
    return _round_given_up(round_) and clock.now() < question.deadline


def round_room_question(*, round_id: int) -> int | None:
    """The id of the room question this round was dealt for, or None for a solo round."""
    return RoomRound.objects.filter(round_id=round_id).values_list("question_id", flat=True).first()


def claims_shown_to_hosts(*, players: Any) -> Q:
    """The claims of the questions of rooms any of these players hosted without playing:
    they saw each answer on their screen, so none is ever dealt to them in a round
    (``hooks.claims_kept_from``), as a player is never dealt a claim twice."""
    shown = RoomQuestion.objects.filter(room__host__in=players, room__host_plays=False)
    return Q(pk__in=shown.values("left_claim_id")) | Q(pk__in=shown.values("right_claim_id"))


def room_host_id(*, code: str) -> int | None:
    """The id of the room's host, or None when no room has this code."""
    return Room.objects.filter(code=code.upper()).values_list("host_id", flat=True).first()
