"""A room's next pair chosen by a worker while its question plays: the deal uses it without
reading the pool, but only while it is still fair for the members present at the deal."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from foolgame.rooms import events, services
from foolgame.rooms.models import RoomQuestion
from foolgame.rooms.tasks import prepare_pair
from foolgame.voting import services as rounds
from tests.factories import PageFactory, UserFactory
from tests.rooms.conftest import claim_pool, current, here
from tests.voting.conftest import make_claim

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def clear_cache():
    cache.clear()
    yield
    cache.clear()


def pair_of(question: RoomQuestion) -> set[int]:
    return {question.left_claim_id, question.right_claim_id}


def no_pool_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(pool):
        raise AssertionError("the deal read the pool instead of using the prepared pair")

    monkeypatch.setattr(services, "_deal_room_pair", refuse)


def test_the_next_pair_is_chosen_ahead_and_the_deal_uses_it_without_reading_the_pool(party, fake_clock, monkeypatch) -> None:
    services.room_next_question(code=party.room.code, player=party.host)
    first = current(party.room)
    assert prepare_pair(party.room.pk) is True  # the worker, while the question plays
    prepared = cache.get(services._prepared_key(party.room.pk))
    assert prepared["after"] == 1 and not set(prepared["claims"]) & pair_of(first)
    fake_clock.advance(181)
    services.room_question_finish(question_id=first.pk)
    here(party.room, *party.players)
    no_pool_reads(monkeypatch)
    services.room_next_question(code=party.room.code, player=party.host)
    second = current(party.room)
    assert pair_of(second) == set(prepared["claims"])
    labels = {second.left_claim.label, second.right_claim.label}
    assert labels == {"SUPPORTS", "REFUTES"}
    assert second.claims[second.false_claim_index].label == "REFUTES", "the false index comes from the labels, not the cache"


def test_a_prepared_pair_written_by_a_member_who_joined_since_is_not_dealt(db, fake_clock) -> None:
    claim_pool(pages=2)
    host, guest = UserFactory(username="hana"), UserFactory(username="gus")
    page = PageFactory(title="Own")
    own = {make_claim(page, label="SUPPORTS", author=guest).pk, make_claim(page, label="REFUTES", author=guest).pk}
    room = services.room_create(host=host, questions=3)
    # Put aside while only the host was here: the guest's own pair was fair for the host.
    cache.set(services._prepared_key(room.pk), {"after": 0, "claims": sorted(own)})
    services.room_join(code=room.code, player=guest)
    services.room_next_question(code=room.code, player=host)
    assert not pair_of(current(room)) & own


def test_a_prepared_pair_dealt_to_a_member_since_is_not_dealt_again(party, fake_clock) -> None:
    solo = rounds.round_create(player=party.players[0])  # after the pair was put aside
    cache.set(services._prepared_key(party.room.pk), {"after": 0, "claims": [solo.left_claim_id, solo.right_claim_id]})
    services.room_next_question(code=party.room.code, player=party.host)
    assert not pair_of(current(party.room)) & {solo.left_claim_id, solo.right_claim_id}


def test_a_pair_prepared_for_an_earlier_question_is_ignored(party, fake_clock, monkeypatch) -> None:
    services.room_next_question(code=party.room.code, player=party.host)
    first = current(party.room)
    cache.set(services._prepared_key(party.room.pk), {"after": 0, "claims": sorted(pair_of(first))})  # before question 1
    fake_clock.advance(181)
    services.room_question_finish(question_id=first.pk)
    here(party.room, *party.players)
    services.room_next_question(code=party.room.code, player=party.host)
    assert not pair_of(current(party.room)) & pair_of(first)


def test_a_failing_cache_still_deals(party, fake_clock, monkeypatch) -> None:
    def broken(*args, **kwargs):
        raise ConnectionError("redis is down")

    monkeypatch.setattr(services.cache, "get", broken)
    services.room_next_question(code=party.room.code, player=party.host)
    assert len(pair_of(current(party.room))) == 2


def test_nothing_is_prepared_for_an_ended_room_or_after_the_last_question(party, fake_clock) -> None:
    room = services.room_create(host=UserFactory(), questions=1, host_plays=True)
    services.room_next_question(code=room.code, player=room.host)
    assert prepare_pair(room.pk) is False, "its one question is dealt: no next pair"
    services.room_leave(code=party.room.code, player=party.host)
    assert prepare_pair(party.room.pk) is False
    assert cache.get(services._prepared_key(party.room.pk)) is None


def test_making_a_room_and_each_deal_but_the_last_ask_a_worker_for_the_next_pair(db, fake_clock, monkeypatch) -> None:
    claim_pool(pages=3)
    sent: list[tuple[str, tuple]] = []
    monkeypatch.setattr(events, "task_runs_eagerly", lambda task: False)
    monkeypatch.setattr(events, "task_on_commit", lambda task, *args, **options: sent.append((task.name, args)))
    host = UserFactory()
    room = services.room_create(host=host, questions=2, host_plays=True)
    for _ in range(2):
        services.room_next_question(code=room.code, player=host)
        fake_clock.advance(181)
        services.room_question_finish(question_id=current(room).pk)
    prepared = [args for name, args in sent if name.endswith("rooms.tasks.prepare_pair")]
    assert prepared == [(room.pk,), (room.pk,)], "at creation and after question 1; none after the last"
