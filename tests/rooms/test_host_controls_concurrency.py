"""The host's end, skip and play again against the members' votes and each other, on
PostgreSQL (SQLite serialises writers): one end wins, every vote either counts or is refused,
and nothing is paid twice or paid for a skipped question."""

from __future__ import annotations

import random
import threading
from collections import Counter

import pytest
from django.db import close_old_connections, connection

from foolgame.core.errors import ServiceError
from foolgame.players.models import Guest, LedgerEntry
from foolgame.rooms import services
from foolgame.rooms.models import Room, RoomMember, RoomQuestion, RoomRound
from foolgame.voting import services as rounds
from foolgame.voting.models import Round, Vote
from tests.concurrency import race
from tests.factories import UserFactory
from tests.rooms.conftest import claim_pool

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("postgresql_only")]


def crowd(size: int) -> tuple[Room, list]:
    claim_pool(pages=3)
    host = UserFactory(username="hana")
    room = services.room_create(host=host, questions=2, host_plays=True)
    members = [UserFactory(username=f"kid{n}") for n in range(size)]
    for member in members:
        services.room_join(code=room.code, player=member)
    services.room_next_question(code=room.code, player=host)
    return room, [host, *members]


def run_all(actions: list) -> list[object]:
    barrier = threading.Barrier(len(actions))
    results: list[object] = [None] * len(actions)

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = actions[i]()
        except ServiceError as error:
            results[i] = error
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(actions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


@pytest.mark.parametrize("skip", [False, True])
def test_the_hosts_end_races_the_votes(skip) -> None:
    room, people = crowd(8)
    host, members = people[0], people[1:]
    question = RoomQuestion.objects.get(room=room)
    plays = dict(RoomRound.objects.filter(question=question).values_list("player_id", "round_id"))

    def voter(member):
        return lambda: ("vote", rounds.vote_cast(round_id=plays[member.pk], player=member, false_claim=question.false_claim_index))

    def end():
        return ("end", services.room_question_end(code=room.code, player=host, skip=skip))

    actions = [voter(m) for m in members] + [end] * 3
    random.shuffle(actions)
    results = run_all(actions)
    ended = [r for r in results if isinstance(r, tuple) and r[0] == "end"]
    refused_ends = [r for r in results if isinstance(r, ServiceError) and r.code == "no_question_playing"]
    # The host never votes: only an end finishes the question, and one of the three does.
    assert (len(ended), len(refused_ends)) == (1, 2), results
    question.refresh_from_db()
    assert question.state == "done" and question.ended_early and question.skipped == skip
    votes = Vote.objects.filter(round__room_play__question=question)
    acked = [r for r in results if isinstance(r, tuple) and r[0] == "vote"]
    assert len(acked) == votes.count(), "a vote acknowledged is a vote stored, and the reverse"
    assert all(r.code in ("round_over", "round_expired", "no_question_playing") for r in results if isinstance(r, ServiceError))
    states = Counter(Round.objects.filter(room_play__question=question).values_list("state", flat=True))
    assert states["voted"] == votes.count() and states["voted"] + states["timeout"] == len(people)
    assert not votes.filter(settled=False).exists(), "every vote is settled once the question is done"
    paid = LedgerEntry.objects.filter(cause__in=[f"round:{r}" for r in plays.values()])
    if question.skipped:
        assert not paid.exists() and set(votes.values_list("unpaid", flat=True)) == ({"question_skipped"} if votes.exists() else set())
    else:
        assert paid.filter(kind="verify").count() == votes.filter(correct=True).count(), "each right vote paid once"


def test_play_again_twice_at_once_opens_one_room() -> None:
    room, people = crowd(4)
    services.room_leave(code=room.code, player=people[0])
    outcomes = race(6, lambda: services.room_play_again(code=room.code, player=people[0]))
    assert outcomes == Counter({"ok": 6})
    assert Room.objects.count() == 2 and RoomMember.objects.filter(room__code=Room.objects.get(code=room.code).next_room.code).count() == 5


def test_a_flood_of_guest_joins_from_one_address_stops_at_its_share(settings) -> None:
    settings.FM2_GUESTS = {**settings.FM2_GUESTS, "GUESTS_PER_IP": 5}
    claim_pool(pages=1)
    room = services.room_create(host=UserFactory(username="hana"))
    names = iter(range(1000))
    lock = threading.Lock()

    def join():
        with lock:
            n = next(names)
        return services.room_join_as_guest(code=room.code, nickname=f"flood{n}", ip="10.9.9.9")

    outcomes = race(12, join)
    assert outcomes == Counter({"ok": 5, "guest_throttled": 7}) and Guest.objects.count() == 5
    assert RoomMember.objects.filter(room=room).count() == 1 + outcomes["ok"]
