"""Live rooms' services: create, join, leave, deal a question, finish it, end the room.

A question is one fair pair dealt for the whole room and played as one ordinary round per
member present (``voting.Round``), all started at the same server instant: the round's own
services buy clues, take the vote, write the awards to the ledger and feed the export, so a
room vote is a solo vote in every record.

The clock. docs/rules.md's round lasts ROUND_SECONDS (180 s) and a correct vote pays
``min(120, floor(remaining))``. A room's ``seconds`` may only shorten that clock: each member's
round is stored as a 180 s round whose clock started ``180 - seconds`` before the question
(``started_at`` is the clock's origin), so its deadline is the question's deadline, a clue
still costs 10 s of the member's own time, and every check of the round services holds
unchanged. The awards are the game's rule on that remaining time: a 180 s question pays as a
solo round; a shorter one pays the voter at most its seconds (60 s: at most 60 points) and the
rest of the 120 to the authors, still zero-sum.

Locking rule: a service that changes a room takes the room's row lock first, then its
question's, then (through the round services) a round's; dealing locks the members' rows,
then the pair's claim rows in id order, as a vote does; a vote takes its round's locks, and
only after its commit asks the room whether the question is over. Side effects (socket
messages, the finish task) wait for the commit.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timedelta
from typing import Any, cast

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef, Q

from foolgame.core.errors import ServiceError
from foolgame.claims.models import Claim
from foolgame.pages.models import Category
from foolgame.players.services import guest_create
from foolgame.rooms import events
from foolgame.rooms.payloads import QuestionView, RoomAnswer, RoomState, Score, VotesCount, Winner
from foolgame.rooms.models import Room, RoomMember, RoomQuestion, RoomRound
from foolgame.core.throttle import throttle_bump
from foolgame.rooms.selectors import question_tally, question_votes, room_results_first, room_scoreboard, room_winners, withheld_players, withheld_questions
from foolgame.core import clock
from foolgame.voting.counters import claim_refs_lock
from foolgame.voting import dealing, payloads
from foolgame.voting import services as rounds
from foolgame.voting.models import Round, SeenClaim
from foolgame.voting.selectors import claims_for_players

logger = logging.getLogger(__name__)

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud and typed


def _options() -> dict[str, Any]:
    return settings.FM2_ROOMS


def _round_seconds() -> int:
    return int(settings.FM2["ROUND_SECONDS"])


# --- create, join, leave -------------------------------------------------------------------


def room_create(
    *, host: AbstractBaseUser, category: str | None = None, questions: int | None = None, seconds: int | None = None, host_plays: bool = False
) -> Room:
    """A new room in its lobby, with its host as its first member and a fresh join code.
    ``host_plays`` ("I'll play too"): the host is dealt each question like every member;
    else (the default, a teacher at the projector) the host runs the room and plays nothing:
    no round, not in the answers-in count, the finish, the scoreboard or the podium."""
    options = _options()
    questions = options["DEFAULT_QUESTIONS"] if questions is None else questions
    seconds = _round_seconds() if seconds is None else seconds
    if not 1 <= questions <= options["MAX_QUESTIONS"]:
        raise ServiceError("invalid_questions", f"A room plays 1 to {options['MAX_QUESTIONS']} questions.")
    if not options["MIN_SECONDS"] <= seconds <= _round_seconds():
        raise ServiceError("invalid_seconds", f"A question lasts {options['MIN_SECONDS']} to {_round_seconds()} seconds.")
    category = (category or "").strip()
    if category and not Category.objects.filter(Q(slug=category) | Q(name__iexact=category)).exists():
        raise ServiceError("unknown_category", "No such category.")
    now = clock.now()
    with transaction.atomic():
        get_user_model().objects.select_for_update().filter(pk=host.pk).first()  # the host's caps hold under concurrent creates
        _check_room_caps(host, now)
        for _ in range(10):
            code = "".join(random.choices(CODE_ALPHABET, k=options["CODE_LENGTH"]))
            try:
                with transaction.atomic():
                    room = Room.objects.create(
                        code=code, host=host, category=category, questions=questions, seconds=seconds, created=now, host_plays=bool(host_plays)
                    )
                break
            except IntegrityError:
                continue
        else:  # pragma: no cover - 32^6 codes
            raise ServiceError("try_again", "Could not find a free room code; try again.", status_code=409)
        RoomMember.objects.create(room=room, player=host, joined_at=now, seen_at=now)
        events.prepare_task_on_commit(room)
    return room


def _check_room_caps(host: AbstractBaseUser, now: datetime) -> None:
    """At most MAX_OPEN_ROOMS_PER_HOST rooms of one host not ended, and ROOMS_PER_HOUR made
    in the last hour, counted from the stored rooms; the caller holds the host's row lock."""
    options = _options()
    open_codes = list(Room.objects.filter(host=host).exclude(state=Room.State.ENDED).order_by("created").values_list("code", flat=True))
    if len(open_codes) >= options["MAX_OPEN_ROOMS_PER_HOST"]:
        raise ServiceError(
            "too_many_open_rooms",
            f"You host {len(open_codes)} rooms already (at most {options['MAX_OPEN_ROOMS_PER_HOST']}); end one first.",
            status_code=409,
            details={"rooms": open_codes},
        )
    limit = options["ROOMS_PER_HOUR"]
    recent = list(Room.objects.filter(host=host, created__gt=now - timedelta(hours=1)).order_by("-created").values_list("created", flat=True)[:limit])
    if len(recent) >= limit:
        again = recent[-1] + timedelta(hours=1)
        wait = max(1, math.ceil((again - now).total_seconds()))
        raise ServiceError(
            "room_rate_limited",
            f"You made {limit} rooms in the last hour; you can host again in {wait} s.",
            status_code=429,
            retry_after=wait,
            details={"retry_after": wait, "retry_at": again.isoformat()},
        )


def _check_join_leave_rate(player: AbstractBaseUser) -> None:
    """At most JOIN_LEAVES_PER_WINDOW joins and leaves per player per window, across rooms:
    each one sends every member a members frame. Counted before anything is written, so a
    refused call changes nothing (the refused ones count too)."""
    options = _options()
    count, wait = throttle_bump("room-join-leave", (str(player.pk),), int(options["JOIN_LEAVE_WINDOW_SECONDS"]))
    if count > options["JOIN_LEAVES_PER_WINDOW"]:
        raise ServiceError(
            "join_leave_rate_limited",
            f"At most {options['JOIN_LEAVES_PER_WINDOW']} joins and leaves in {options['JOIN_LEAVE_WINDOW_SECONDS']} s; try again in {wait} s.",
            status_code=429,
            retry_after=wait,
            details={"retry_after": wait},
        )


def _get_room(code: str, *, lock: bool = False) -> Room:
    rooms = Room.objects.select_related("host")
    if lock:
        rooms = rooms.select_for_update(of=("self",))
    room = rooms.filter(code=str(code).upper()).first()
    if room is None:
        raise ServiceError("room_not_found", "No room has this code.", status_code=404)
    return room


def _hosted_room(code: str, player: AbstractBaseUser, *, only: str) -> Room:
    """The room ``code``, its row locked, when ``player`` hosts it; anyone else gets 403
    ``not_host`` ("Only the host <only>.")."""
    room = _get_room(code, lock=True)
    if room.host_id != player.pk:
        raise ServiceError("not_host", f"Only the host {only}.", status_code=403)
    return room


def room_join(*, code: str, player: AbstractBaseUser) -> RoomState:
    """Join a room by its code (again after leaving is fine). A player who joins while a
    question plays watches it and gets the next one.

    Locking: the room's row, so the member cap holds."""
    _check_join_leave_rate(player)
    now = clock.now()
    with transaction.atomic():
        room = _get_room(code, lock=True)
        if room.state == Room.State.ENDED:
            raise ServiceError("room_over", "This room has ended.", status_code=409)
        member = RoomMember.objects.filter(room=room, player=player).first()
        if member is None:
            if RoomMember.objects.filter(room=room, left_at__isnull=True).count() >= _options()["MAX_MEMBERS"]:
                raise ServiceError("room_full", f"A room holds at most {_options()['MAX_MEMBERS']} players.", status_code=409)
            RoomMember.objects.create(room=room, player=player, joined_at=now, seen_at=now)
        else:
            member.left_at, member.seen_at = None, now
            member.save(update_fields=["left_at", "seen_at"])
        events.members_changed_on_commit(room)
    return room_state(code=room.code, player=player)


def room_join_as_guest(*, code: str, nickname: str, ip: str | None) -> tuple[AbstractBaseUser, RoomState]:
    """Someone without an account joins with a nickname: a guest account is made for them
    (``players.services.guest_create``: the nickname checked as a user name, throttled per
    client address) and joins the room, in one transaction, so a join refused (no such room,
    ended, full) leaves no account. The room is looked at first: a flood of guest joins to a
    room that cannot take them makes no accounts."""
    room = _get_room(code)
    if room.state == Room.State.ENDED:
        raise ServiceError("room_over", "This room has ended.", status_code=409)
    if RoomMember.objects.filter(room=room, left_at__isnull=True).count() >= _options()["MAX_MEMBERS"]:
        raise ServiceError("room_full", f"A room holds at most {_options()['MAX_MEMBERS']} players.", status_code=409)
    with transaction.atomic():
        guest = guest_create(nickname=nickname, ip=ip)
        state = room_join(code=room.code, player=guest)
    return guest, state


def room_leave(*, code: str, player: AbstractBaseUser) -> dict[str, Any]:
    """Leave the room. The host leaving ends it (an open question ends at once; votes already
    cast keep their points). Anyone else gives up their round of the open question, which
    then ends if everyone else has voted."""
    _check_join_leave_rate(player)
    now = clock.now()
    with _finishing() as settle:
        room = _get_room(code, lock=True)
        member = RoomMember.objects.filter(room=room, player=player).first()
        if member is None:
            raise ServiceError("not_a_member", "You are not in this room.", status_code=403)
        if member.left_at is None:
            member.left_at = now
            member.save(update_fields=["left_at"])
        question = _open_question(room)
        if room.state != Room.State.ENDED and room.host_id == player.pk:
            if question is not None:
                _finish_question(room, question.pk, now, settle, force=True)
            _end_room(room, Room.EndReason.HOST_LEFT, now)
        elif room.state != Room.State.ENDED:
            if question is not None:
                _forfeit(question.plays.filter(player=player, round__state=Round.State.PLAYING).values_list("round_id", "player_id"))
                _finish_question(room, question.pk, now, settle)
            events.members_changed_on_commit(room)
    return {"ok": True}


def room_member_seen(*, room_id: int, player_id: int, present: bool = True) -> None:
    """The member is here now (a REST read, the host's start), or their socket just closed
    (``present=False``: absent at once, and the host-away time counts from now). Open sockets
    are renewed in bulk by ``room_members_seen``."""
    now = clock.now()
    seen = now if present else now - timedelta(seconds=_options()["PRESENT_SECONDS"] + 1)
    RoomMember.objects.filter(room_id=room_id, player_id=player_id).update(seen_at=seen)


def room_members_seen(*, member_ids: list[int]) -> int:
    """The members whose sockets one process holds open are present now (one UPDATE)."""
    return RoomMember.objects.filter(pk__in=member_ids, left_at__isnull=True).update(seen_at=clock.now())


def _present_players(room: Room, now: datetime) -> list[int]:
    """The members present who play (a host who does not play is never one)."""
    since = now - timedelta(seconds=_options()["PRESENT_SECONDS"])
    members = RoomMember.objects.filter(room=room, left_at__isnull=True, seen_at__gte=since)
    if not room.host_plays:
        members = members.exclude(player_id=room.host_id)
    return sorted(members.values_list("player_id", flat=True))


def _pool_players(room: Room, players: list[Any]) -> list[Any]:
    """Whom the room's pair must be fair to: the players dealt, and a host who does not play
    (they see every answer: none of their own claims, nor one they were dealt or checked)."""
    if room.host_plays or any(p.pk == room.host_id for p in players):
        return players
    return [*players, room.host]


# --- questions -------------------------------------------------------------------------------


def room_next_question(*, code: str, player: AbstractBaseUser) -> dict[str, Any]:
    """The host deals the next question: one fair pair for every member present (none written
    by any of them, none dealt to any of them before), one round each, all started now.

    Locking: the room's row, then the present members' rows in id order (as a solo deal
    locks its player's), so no solo deal of theirs runs in between; the unique (player,
    claim) rows back it up."""
    now = clock.now()
    with _finishing() as settle:
        room = _hosted_room(code, player, only="starts the questions")
        if room.state == Room.State.ENDED:
            raise ServiceError("room_over", "This room has ended.", status_code=409)
        question = _open_question(room)
        if question is not None and not _finish_question(room, question.pk, now, settle):
            raise ServiceError("question_playing", "Wait until everyone has voted or the time is up.", status_code=409)
        if room.state == Room.State.ENDED:  # that was the last question
            raise ServiceError("room_over", "This room has ended.", status_code=409)
        room_member_seen(room_id=room.pk, player_id=player.pk)  # the host is here: they act
        present = _present_players(room, now)
        if not present:
            raise ServiceError("nobody_present", "Nobody is in the room to play.", status_code=409)
        players = list(get_user_model().objects.select_for_update().filter(pk__in=present).order_by("pk"))
        pool = claims_for_players(players=_pool_players(room, players), category=room.category or None)
        pair = _prepared_pair(room, pool) or _deal_room_pair(pool)
        if pair is None:
            raise ServiceError("no_pair_available", "No fair pair of claims is left for everyone in this room.", status_code=404)
        left, right = pair if random.random() < 0.5 else pair[::-1]
        question = _deal(room, players, left.id, right.id, 0 if left.label == Claim.Label.REFUTES else 1, now)
    return {"number": question.number, "deadline": question.deadline.isoformat()}


def room_question_end(*, code: str, player: AbstractBaseUser, skip: bool = False) -> dict[str, Any]:
    """The host ends the question playing now (``skip``: and drops it), as if its clock had
    run out at this instant: the rounds not voted on time out (no points, not rated), the
    answer goes out to every socket at once, with its deadline moved to now also to a member
    who gave up on it. A skipped question's votes pay nothing (``Vote.unpaid``
    ``question_skipped``: it waited for its answer, so nothing was paid yet) and count on no
    scoreboard; it still is one of the room's questions. After the last one the room ends.

    Locking: the room's row, then the question's, then each round's (``_finish_question``)."""
    now = clock.now()
    with _finishing() as settle:
        room = _hosted_room(code, player, only="ends or skips a question")
        if room.state == Room.State.ENDED:
            raise ServiceError("room_over", "This room has ended.", status_code=409)
        question = _open_question(room)
        if question is None or not _finish_question(room, question.pk, now, settle, early="skip" if skip else "end"):
            raise ServiceError("no_question_playing", "No question is playing now.", status_code=409)
        room_member_seen(room_id=room.pk, player_id=player.pk)  # the host is here: they act
    return {"number": question.number, "skipped": skip}


def room_question_voted(*, question_id: int) -> tuple[bool, VotesCount | None]:
    """After a vote (or another end of a round) on a room's question: end the question when
    that was the last round it waited for (as ``room_question_finish``), else read how many of
    its members have voted now, for the room's ``votes`` message. Returns whether this call
    ended it, and the count (None once the question is over). One query when it plays on
    (``room_question_finish`` then ``room_votes_counted`` took four)."""
    now = clock.now()
    tally = question_tally(question_id=question_id, now=now)
    if tally is None:
        return False, None
    room_id, code, over, still, voted, dealt = tally
    if over:
        with _finishing() as settle:
            room = Room.objects.select_for_update().get(pk=room_id)
            return _finish_question(room, question_id, now, settle, over=(room_id, still)), None  # paid on leaving the block
    return False, {"code": code, "question_id": question_id, "votes": voted, "players": dealt}


def room_votes_counted(*, question_id: int, counted: VotesCount | None = None) -> bool:
    """After a vote (or another end of a round) on a question still playing: every socket of
    the room gets how many of its members have voted (the ``votes`` frame: a count, never
    who). Sent only when the count moved since the last one this cache saw, so reads that ask
    (``round_settled`` is sent by a round's reads too) cost one count and no broadcast.
    ``counted``: the count ``room_question_voted`` just read. Returns True when it sent one."""
    if counted is None:
        tally = question_tally(question_id=question_id, now=clock.now())
        if tally is None:
            return False
        counted = {"code": tally[1], "question_id": question_id, "votes": tally[4], "players": tally[5]}
    code, votes = counted["code"], counted["votes"]
    key = f"rooms:votes:{code}:{question_id}"  # with the room's random code: ids restart with a new database, the cache may not
    try:
        if cache.get(key) == votes:
            return False
        cache.set(key, votes, timeout=int(_round_seconds()) + 60)
    except Exception:  # noqa: BLE001 - the cache is an optimisation: without it, send anyway
        logger.warning("rooms: the votes count of question %s was sent without the cache", question_id)
    events.votes_counted_on_commit(code, question_id=question_id, votes=votes, players=counted["players"])
    return True


def room_play_again(*, code: str, player: AbstractBaseUser) -> Room:
    """The host of an ended room opens a new one with the same settings and moves the room's
    members (those who had not left) into it: they are members at once, present for
    ``PRESENT_SECONDS`` (their page, which finds the new room in the old one's ``next``, then
    opens its socket), and may leave as from any room. The host's caps on rooms hold as for
    any new room. Asked again, it answers the same new room.

    Locking: the old room's row, then (``room_create``) the host's."""
    now = clock.now()
    with transaction.atomic():
        room = _hosted_room(code, player, only="plays the room again")
        if room.state != Room.State.ENDED:
            raise ServiceError("room_not_over", "Play again once the room has ended.", status_code=409)
        if room.next_room_id is not None:
            return Room.objects.get(pk=room.next_room_id)
        new = room_create(host=player, category=room.category or None, questions=room.questions, seconds=room.seconds, host_plays=room.host_plays)
        moved = RoomMember.objects.filter(room=room, left_at__isnull=True).exclude(player_id=player.pk).values_list("player_id", flat=True)
        RoomMember.objects.bulk_create(RoomMember(room=new, player_id=p, joined_at=now, seen_at=now) for p in moved)
        room.next_room = new
        room.save(update_fields=["next_room"])
        events.members_changed_on_commit(new)
    return new


def _deal_room_pair(pool: Any) -> Any:
    """The solo dealer over the room's pool, but its first claim drawn at random from the
    dealer's least-voted window rather than its least-voted claim: rooms dealt at the same
    moment then rarely share a pair, so their votes (each locks its pair's claim rows) do
    not queue behind each other. Falls back on the solo dealer's whole policy."""
    window = dealing.deal_window(pool)
    random.shuffle(window)
    pair = dealing.pair_from(pool, window, lambda anchor: random.choice)
    return pair if pair is not None else dealing.deal_pair(pool)


def _prepared_key(room_id: int) -> str:
    return f"rooms:next-pair:{room_id}"


def room_prepare_pair(*, room_id: int) -> bool:
    """Choose the room's next pair ahead of its deal (a task, after each deal and when the
    room is made): the dealer's reads of the pool for every member then run in a worker while
    the question plays, not in the web process at the moment every room ends a question and
    deals the next. Kept in the cache for the deal after the current question only; the deal
    checks it against the members present then (``_prepared_pair``) and deals afresh when it
    no longer fits. Returns True when a pair was put aside."""
    room = Room.objects.filter(pk=room_id).first()
    if room is None or room.state == Room.State.ENDED or room.current >= room.questions:
        return False
    players = list(get_user_model().objects.filter(pk__in=_present_players(room, clock.now())))
    pair = _deal_room_pair(claims_for_players(players=_pool_players(room, players), category=room.category or None)) if players else None
    if pair is None:  # the deal will say why, with the players it finds
        return False
    prepared = {"after": room.current, "claims": [pair[0].id, pair[1].id]}
    cache.set(_prepared_key(room.pk), prepared, timeout=room.seconds + _options()["PREPARED_PAIR_SECONDS"])
    return True


def _prepared_pair(room: Room, pool: Any) -> Any:
    """The pair ``room_prepare_pair`` put aside for this deal when both claims are still in
    the pool of the players dealt to now (playable, none written by any of them or dealt to
    any of them: one query), else None. A cache that fails is no pair, never a failed deal."""
    try:
        prepared = cache.get(_prepared_key(room.pk))
    except Exception:
        logger.warning("rooms: the prepared pair of room %s could not be read", room.pk, exc_info=True)
        return None
    if not isinstance(prepared, dict) or prepared.get("after") != room.current:
        return None
    found = dealing.candidates(pool.filter(pk__in=prepared["claims"]).values_list(*dealing.DEAL_FIELDS))
    if len(found) != 2 or found[0].label == found[1].label:
        return None
    return tuple(found)


def _deal(room: Room, players: list[AbstractBaseUser], left_id: int, right_id: int, false_index: int, now: datetime) -> RoomQuestion:
    """Write the question, one playing round per player and the claims as seen by each; on
    commit, every socket of the room gets the question and a worker is asked to finish it at
    its deadline. The rounds' clock origin is set so that their deadline is the question's."""
    # The rows written below reference both claims, which takes a key-share lock on each in
    # column order; a moderator locks a claim for update before the rounds it voids, and
    # votes take the same key-share locks in id order. Taking them here in id order first
    # keeps one order with both.
    claim_refs_lock(claim_ids=(left_id, right_id))
    deadline = now + timedelta(seconds=room.seconds)
    origin = deadline - timedelta(seconds=_round_seconds())
    room.current += 1
    room.state = Room.State.PLAYING
    room.save(update_fields=["current", "state"])
    question = RoomQuestion.objects.create(
        room=room, number=room.current, left_claim_id=left_id, right_claim_id=right_id, false_claim_index=false_index, started_at=now, deadline=deadline
    )
    made = Round.objects.bulk_create(
        Round(player=p, left_claim_id=left_id, right_claim_id=right_id, false_claim_index=false_index, state=Round.State.PLAYING, started_at=origin, deadline=deadline)
        for p in players
    )
    try:
        with transaction.atomic():
            SeenClaim.objects.bulk_create(SeenClaim(player_id=r.player_id, claim_id=c, round=r) for r in made for c in (left_id, right_id))
    except IntegrityError:
        raise ServiceError("no_pair_available", "Those claims were just dealt to a player of the room; try again.", status_code=409) from None
    RoomRound.objects.bulk_create(RoomRound(question=question, player_id=r.player_id, round=r) for r in made)
    question = RoomQuestion.objects.select_related("left_claim__page", "right_claim__page").get(pk=question.pk)
    events.question_started_on_commit(room, question, {r.player_id: r.pk for r in made})
    events.finish_task_on_commit(question)
    if question.number < room.questions:
        events.prepare_task_on_commit(room)
    return question


def _open_question(room: Room) -> RoomQuestion | None:
    if room.current == 0:  # in its lobby: no question yet
        return None
    return RoomQuestion.objects.filter(room=room, number=room.current, state=RoomQuestion.State.PLAYING).first()


def _question_over(question_id: int, now: datetime) -> tuple[int, bool] | None:
    """When this question is still playing but over (its deadline passed, or no round of it
    can take a vote): its room, and whether any of its rounds still says playing (one past
    its deadline, to be timed out); else None. One unlocked query. Both answers hold once
    read: a question over stays over and no round goes back to playing, so a finish may
    trust a look taken before its lock."""
    playing = Round.objects.filter(room_play__question_id=OuterRef("pk"), state=Round.State.PLAYING)
    row = (
        RoomQuestion.objects.filter(pk=question_id, state=RoomQuestion.State.PLAYING)
        .annotate(open=Exists(playing.filter(deadline__gt=now)), playing=Exists(playing))
        .values_list("room_id", "deadline", "open", "playing")
        .first()
    )
    return (row[0], row[3]) if row is not None and (now >= row[1] or not row[2]) else None


def room_question_finish(*, question_id: int) -> bool:
    """End the question if the database says it is over: its deadline has passed, or every
    round of it is over (voted, timed out, given up). Called after each vote, by the sockets
    at the deadline, by the finish task and the sweep; a question already done, or not over,
    is left as it is (an unlocked look first, so the calls that find nothing cost no lock).
    Returns True when this call ended it."""
    now = clock.now()
    over = _question_over(question_id, now)
    if over is None:
        return False
    with _finishing() as settle:
        room = Room.objects.select_for_update().get(pk=over[0])
        return _finish_question(room, question_id, now, settle, over=over)  # paid on leaving the block


def _finish_question(
    room: Room,
    question_id: int,
    now: datetime,
    settle: list[int],
    *,
    force: bool = False,
    over: tuple[int, bool] | None = None,
    early: str | None = None,
) -> bool:
    """Under the room's lock: end the question when it is over (``force``: now, giving up
    every round still open, for a caller that then ends the room with its own reason;
    ``over``: what ``_question_over`` found before the lock, else it looks now; ``early``:
    the host ends it now, ``"end"`` or ``"skip"``: its clock runs out at this instant, so the
    rounds still open time out (as at a deadline: no points, not rated) and its ``deadline``
    becomes now, which also brings the answer to a member who gave up on it, at once with
    everyone; a skipped question's votes pay nothing, and it counts on no scoreboard). Rounds
    past their deadline are timed out by the round services. On commit every socket gets the
    answer, who found it and the scoreboard; after the last question, the room's end.

    ``settle``: the question's rounds are added to it, for the caller's ``_finishing`` to pay
    their votes once its transaction is over. Paying 20 votes (their ledger rows, their
    notifications) took as long as the rest of the finish together, and the answer waited
    for it: under load it took the room's answer past 200 ms after the last vote."""
    question = RoomQuestion.objects.select_for_update(of=("self",)).select_related("left_claim__page", "right_claim__page").get(pk=question_id)
    if question.state != RoomQuestion.State.PLAYING:
        return False
    if not force and early is None:
        over = over or _question_over(question.pk, now)
        if over is None:
            return False
    plays = list(question.plays.values_list("round_id", "player_id", "round__state"))  # one query, not one for the open ones and one for all
    still_open = [(round_id, player_id) for round_id, player_id, state in plays if state == Round.State.PLAYING]
    round_ids = [round_id for round_id, _, _ in plays]
    if force:
        _forfeit(still_open, rated=False)  # the host ended it, not the members: no rating
    elif early is not None:
        for round_id, _ in list(still_open):
            if not rounds.round_time_out(round_id=round_id):
                rounds.round_expire(round_id=round_id)
        if now < question.deadline:
            question.deadline, question.ended_early = now, True
        if early == "skip":
            question.skipped = True
            rounds.votes_unpay(round_ids=round_ids, reason="question_skipped")
    elif over is not None and over[1]:  # none says playing after the room's last vote: no query
        for round_id, _ in still_open:
            rounds.round_expire(round_id=round_id)
    question.state, question.ended_at = RoomQuestion.State.DONE, min(now, question.deadline)
    question.save(update_fields=["state", "ended_at", "deadline", "ended_early", "skipped"])
    settle += round_ids
    last = question.number >= room.questions
    answer = question_answer(question, room=room, over=last or force, counted=(question_votes(question=question), len(plays)))
    withheld = withheld_players(room=room, now=now)  # who gave up: their sockets read their own view
    events.question_ended_on_commit(room, answer, withheld=withheld, question_deadline=question.deadline)
    if last and not force:
        _end_room(room, Room.EndReason.DONE, now, scoreboard=answer["scoreboard"], withheld=withheld)
    return True


_settled_here: ContextVar[bool] = ContextVar("rooms_settled_here", default=False)


@contextmanager
def rounds_settled_here() -> Iterator[None]:
    """Round services called inside end a room's round whose question the caller settles
    itself: ``round_settled``, which they send after their commit (in the context of their
    call, ``core.events.hook_on_commit``), then leaves the question to it
    (``rooms.rounds.room_round_settled``). The room service's own finish, which gives up the
    rounds still open and ends the question in one transaction (``_finishing``), and the room
    socket, which acks a vote before it asks whether the question is over
    (``RoomConsumer.on_vote``: the voter's ack comes before the room's answer)."""
    token = _settled_here.set(True)
    try:
        yield
    finally:
        _settled_here.reset(token)


def rounds_settled_by_caller() -> bool:
    """Inside ``rounds_settled_here``?"""
    return _settled_here.get()


@contextmanager
def _finishing() -> Iterator[list[int]]:
    """A transaction that may end questions (``_finish_question``), then the votes on their
    rounds paid (``rounds.votes_settle``) after its commit, so that everyone's answer went out
    first. Yields the list ``_finish_question`` adds those rounds to. Votes not due yet wait
    (a member gave up before the deadline); a transaction that raises pays nothing; should
    the payment fail or the process die first, the round sweep pays whatever is left
    unsettled within a minute. The rounds it ends are its own to settle
    (``rounds_settled_here``)."""
    round_ids: list[int] = []
    with rounds_settled_here(), transaction.atomic():
        yield round_ids
    if not round_ids:
        return
    try:
        rounds.votes_settle(round_ids=round_ids)
    except Exception:  # the question is over and its answer out: the sweep pays the votes
        logger.exception("rooms: the votes of rounds %s were left to the sweep", round_ids[:3])


def _forfeit(plays: Iterable[tuple[int, int]], *, rated: bool = True) -> None:
    """Give up these rounds now without points (the round service's forfeit); a round that
    got its vote meanwhile keeps it. ``rated``: a member who leaves mid-question gives up a
    round they saw, a wrong vote in the ratings; rounds ended by the host are not rated."""
    User = get_user_model()
    for round_id, player_id in list(plays):
        try:
            rounds.round_forfeit(round_id=round_id, player=User(pk=player_id), rated=rated)
        except ServiceError:
            pass


GAVE_UP_ANSWER_KEYS = ("question_id", "number", "questions", "skipped", "ended_early", "scoreboard", "over", "votes", "players")
"""What the ``answer`` of a question they gave up shows a member before its deadline."""
WATCHER_ANSWER_KEYS = ("question_id", "number", "questions", "found", "first", "skipped", "ended_early", "scoreboard", "over", "votes", "players")
"""What the ``answer`` of a question they only watched (were not dealt) shows a member."""


def question_answer(
    question: RoomQuestion, *, room: Room, over: bool = False, hide: Iterable[int] = (), counted: tuple[int, int] | None = None
) -> RoomAnswer:
    """What everyone sees once a question is over: the answer, who found it, the scoreboard
    (without the questions in ``hide``: ``withheld_questions``), and the final answers-in
    count (``votes`` of ``players``: the last vote ends the question, and its count comes
    with the answer, so every screen reaches "4/4"); ``counted``: that count, when read."""
    scoreboard, found, first = room_results_first(room=room, question=question, hide=hide)
    votes, players = counted if counted is not None else (question_votes(question=question), question.plays.count())
    return {
        "question_id": question.pk,
        "number": question.number,
        "questions": room.questions,
        **payloads.answer_payload(question),
        "found": found,
        "first": first,
        "skipped": question.skipped,
        "ended_early": question.ended_early,
        "scoreboard": scoreboard,
        "over": over,
        "votes": votes,
        "players": players,
    }


def _end_room(room: Room, reason: str, now: datetime, *, scoreboard: list[Score] | None = None, withheld: set[int] | None = None) -> None:
    """``scoreboard``: the one its last answer just read, when nothing has changed since;
    ``withheld``: the members who gave up a question whose deadline is ahead, read with it."""
    room.state, room.ended_at, room.end_reason = Room.State.ENDED, now, reason
    room.save(update_fields=["state", "ended_at", "end_reason"])
    events.room_ended_on_commit(
        room, scoreboard=scoreboard, winners=room_winners(room=room), withheld=withheld_players(room=room, now=now) if withheld is None else withheld
    )


def room_answer_for(*, question_id: int, player_id: int, answer: RoomAnswer) -> RoomAnswer:
    """The room's ``answer`` message as a member who gave up a question may see it now (the
    sockets of ``withheld_players`` ask): that question's answer only from its deadline (before
    it, no answer and no "who found it"), and a scoreboard without the questions they may not
    see yet. Anyone else's is the message as it is. Two or three queries."""
    question = RoomQuestion.objects.select_related("room").filter(pk=question_id).first()
    if question is None:
        return answer
    hidden = withheld_questions(room=question.room_id, player_id=player_id)
    if not hidden:
        return answer
    shown: RoomAnswer = {**answer, "scoreboard": room_scoreboard(room=question.room, hide=hidden)}
    if question_id in hidden:
        shown = cast(RoomAnswer, {k: v for k, v in shown.items() if k in GAVE_UP_ANSWER_KEYS})
    return shown


def room_end_for(*, room_id: int, player_id: int, scoreboard: list[Score], winners: list[Winner]) -> tuple[list[Score], list[Winner]]:
    """An ``ended`` message's scoreboard and question winners as this member may see them
    now: without the questions they gave up before their deadline (``withheld_questions``)."""
    hidden = withheld_questions(room=room_id, player_id=player_id)
    room = Room.objects.filter(pk=room_id).first() if hidden else None
    if room is None:
        return scoreboard, winners
    return room_scoreboard(room=room, hide=hidden), room_winners(room=room, hide=hidden)


def room_board_for(*, room_id: int, player_id: int, scoreboard: list[Score]) -> list[Score]:
    """A ``members`` or ``ended`` message's scoreboard as this member may see it now: without
    the questions they gave up before their deadline (``withheld_questions``)."""
    hidden = withheld_questions(room=room_id, player_id=player_id)
    if not hidden:
        return scoreboard
    room = Room.objects.filter(pk=room_id).first()
    return scoreboard if room is None else room_scoreboard(room=room, hide=hidden)


# --- what a member sees -------------------------------------------------------------------


def room_state(*, code: str, player: AbstractBaseUser) -> RoomState:
    """The room as this player may see it now: its settings and how many members it has;
    for a member (or one who left), the scoreboard of the finished questions and the current
    question with their own round (before the question is over: no answer, even after their
    vote; of the others, only how many have voted) or, for a member who joined during it,
    none (watching: not even the claims). Anyone else sees what they need to join, not the
    scoreboard. A question found over its deadline is finished first."""
    return _room_state(code=code, player=player)[0]


def room_socket_state(*, code: str, player: AbstractBaseUser) -> tuple[RoomState, int, int | None]:
    """``room_state`` for a room socket opening, with the ids its socket keeps: the room's and
    the player's membership (None for one who never joined)."""
    state, room, member = _room_state(code=code, player=player)
    return state, room.pk, member.pk if member is not None else None


def _room_state(*, code: str, player: AbstractBaseUser) -> tuple[RoomState, Room, RoomMember | None]:
    room = _get_room(code)
    question = _open_question(room)
    if question is not None and room_question_finish(question_id=question.pk):
        room = _get_room(code)
    member = RoomMember.objects.filter(room=room, player=player).first()
    if member is not None and member.left_at is None and room.state != Room.State.ENDED:
        room_member_seen(room_id=room.pk, player_id=player.pk)  # a REST client is present too
    state: RoomState = {
        "code": room.code,
        "host": room.host.username,
        "is_host": room.host_id == player.pk,
        "member": member is not None and member.left_at is None,
        "state": room.state,
        "end_reason": room.end_reason or None,
        "category": room.category or None,
        "questions": room.questions,
        "seconds": room.seconds,
        "number": room.current,
        "clue_cost": settings.FM2["CLUE_COST_SECONDS"],
        "host_plays": room.host_plays,
        "members": 0,  # below: from the scoreboard's rows for a member, which list everyone
        "scoreboard": None,
        "question": None,
        "winners": None,
        "next": None,
    }
    if member is None:
        members = RoomMember.objects.filter(room=room, left_at__isnull=True)
        state["members"] = (members if room.host_plays else members.exclude(player_id=room.host_id)).count()
        return state, room, member
    hidden = withheld_questions(room=room, player_id=player.pk) if room.current else set()  # given up before their deadline
    state["scoreboard"] = room_scoreboard(room=room, hide=hidden)
    state["members"] = sum(not row["left"] for row in state["scoreboard"])
    if room.state == Room.State.ENDED:
        state["winners"] = room_winners(room=room, hide=hidden)
        if room.next_room_id is not None and member.left_at is None:
            state["next"] = Room.objects.filter(pk=room.next_room_id).values_list("code", flat=True).first()
    if room.current == 0:
        return state, room, member
    question = (
        RoomQuestion.objects.select_related("left_claim__page", "right_claim__page").filter(room=room, number=room.current).first()
    )
    if question is not None:
        state["question"] = question_view(question, room=room, player_id=player.pk, hide=hidden)
    return state, room, member


def question_view(question: RoomQuestion, *, room: Room, player_id: int, hide: set[int] | None = None) -> QuestionView:
    """The question as this member sees it: their own round, how many voted, and once it
    is over its answer, but not for a member who watched it (only who found it) and none
    for one who gave their round up, before the question's deadline (``hide``: the
    questions they may not see yet, ``withheld_questions``)."""
    now = clock.now()
    hide = withheld_questions(room=room, player_id=player_id, now=now) if hide is None else hide
    view: QuestionView = cast(QuestionView, {
        "id": question.pk,
        "number": question.number,
        "status": question.state,
        "started_at": question.started_at.isoformat(),
        "deadline": question.deadline.isoformat(),
        "remaining": round(max((question.deadline - now).total_seconds(), 0.0), 2) if question.state == RoomQuestion.State.PLAYING else None,
        "round": None,
    })
    play = RoomRound.objects.filter(question=question, player_id=player_id).first()
    if play is not None:
        own = rounds.round_get_state(round_id=play.round_id, player=get_user_model()(pk=player_id))
        if question.state == RoomQuestion.State.PLAYING:
            own.pop("result", None)  # nobody sees the answer before the question is over
        view["round"] = own
    view["votes"] = question_votes(question=question)
    view["players"] = question.plays.count()
    hosting = player_id == room.host_id and not room.host_plays  # runs the room: sees what the projector shows
    if hosting:
        view["claims"] = [{"text": c.text, "page": {"id": c.page_id, "title": c.page.title}} for c in question.claims]
    if question.state == RoomQuestion.State.DONE and question.pk not in hide:
        answer = question_answer(question, room=room, hide=hide, counted=(view["votes"], view["players"]))
        if play is None and not hosting:  # a watcher was not dealt this pair: its answer stays unseen
            answer = cast(RoomAnswer, {k: answer[k] for k in ("found", "first", "skipped", "ended_early")})  # type: ignore[literal-required]
        view["answer"] = answer
    return view


# --- the clock's sweep ------------------------------------------------------------------------


def rooms_sweep() -> int:
    """Finish every question over its deadline and end every room whose host has been away
    for HOST_AWAY_SECONDS (periodic task). Returns how many it changed."""
    now = clock.now()
    changed = sum(
        room_question_finish(question_id=pk)
        for pk in RoomQuestion.objects.filter(state=RoomQuestion.State.PLAYING, deadline__lte=now).values_list("pk", flat=True)
    )
    away = now - timedelta(seconds=_options()["HOST_AWAY_SECONDS"])
    gone = Room.objects.exclude(state=Room.State.ENDED).filter(members__player_id=F("host_id"), members__seen_at__lt=away)
    for code in list(gone.values_list("code", flat=True)):
        with _finishing() as settle:
            room = _get_room(code, lock=True)
            if room.state == Room.State.ENDED:
                continue
            question = _open_question(room)
            if question is not None:
                _finish_question(room, question.pk, now, settle, force=True)
            _end_room(room, Room.EndReason.HOST_GONE, now)
            changed += 1
    return changed

