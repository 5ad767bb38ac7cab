from __future__ import annotations

from dataclasses import dataclass

import pytest

from foolgame.rooms import services
from foolgame.rooms.models import Room, RoomQuestion
from tests.factories import PageFactory, UserFactory
from tests.voting.conftest import FakeClock, make_claim


@pytest.fixture
def fake_clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    clock = FakeClock()
    monkeypatch.setattr("foolgame.core.clock.now", clock)
    return clock


@dataclass
class Party:
    host: object
    players: list
    authors: list
    room: Room

    @property
    def everyone(self) -> list:
        return [self.host, *self.players]


def here(room: Room, *players) -> None:
    """These members' sockets renew their presence (tests move the clock past it)."""
    for player in players:
        services.room_member_seen(room_id=room.pk, player_id=player.pk)


def current(room: Room) -> RoomQuestion:
    """The room's current question, read afresh."""
    room.refresh_from_db()
    return RoomQuestion.objects.get(room=room, number=room.current)


def claim_pool(pages: int = 4, *, authors: list | None = None) -> list:
    """``pages`` pages each with one true and one false claim by two outside authors."""
    authors = authors or [UserFactory(username="tina"), UserFactory(username="fred")]
    for n in range(pages):
        page = PageFactory(title=f"Planet {n}")
        make_claim(page, label="SUPPORTS", author=authors[0], text=f"Planet {n} is round and orbits a star.")
        make_claim(page, label="REFUTES", author=authors[1], text=f"Planet {n} is a flat disc of cheese.")
    return authors


@pytest.fixture
def party(db) -> Party:
    """A host who plays too and two players in a 3-question room of 180 s, over a pool of four pairs."""
    authors = claim_pool()
    host = UserFactory(username="hana")
    players = [UserFactory(username="pia"), UserFactory(username="otto")]
    room = services.room_create(host=host, questions=3, host_plays=True)
    for player in players:
        services.room_join(code=room.code, player=player)
    return Party(host=host, players=players, authors=authors, room=room)
