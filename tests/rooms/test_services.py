"""Live rooms' rules: codes and members, one fair pair for the whole room on one clock,
the solo round's awards and ledger per player, the end of a question and of the room."""

from __future__ import annotations

import pytest
from django.db.models import Sum

from foolgame.core.errors import ServiceError
from foolgame.players.models import LedgerEntry
from foolgame.rooms import services
from foolgame.rooms.models import Room, RoomQuestion, RoomRound
from foolgame.voting import services as rounds
from foolgame.voting.models import Round, SeenClaim, Vote
from tests.factories import PageFactory, UserFactory
from tests.rooms.conftest import claim_pool, current, here
from tests.voting.conftest import make_claim

pytestmark = pytest.mark.django_db


def rounds_of(question: RoomQuestion) -> dict[str, Round]:
    return {play.player.username: play.round for play in RoomRound.objects.filter(question=question).select_related("round", "player")}


def test_create_gives_a_short_code_and_the_host_is_a_member(db) -> None:
    host = UserFactory()
    room = services.room_create(host=host, questions=4, seconds=90, host_plays=True)
    assert len(room.code) == 6 and room.code.isalnum() and room.state == "lobby"
    state = services.room_state(code=room.code.lower(), player=host)
    assert state["is_host"] and state["member"] and [r["username"] for r in state["scoreboard"]] == [host.username]


@pytest.mark.parametrize(
    ("options", "code"),
    [({"questions": 0}, "invalid_questions"), ({"questions": 21}, "invalid_questions"), ({"seconds": 29}, "invalid_seconds"),
     ({"seconds": 181}, "invalid_seconds"), ({"category": "Nope"}, "unknown_category")],
)
def test_create_refuses_bad_settings(db, options, code) -> None:
    with pytest.raises(ServiceError) as error:
        services.room_create(host=UserFactory(), **options)
    assert error.value.code == code and not Room.objects.exists()


def test_only_the_host_starts_a_question(party) -> None:
    with pytest.raises(ServiceError) as error:
        services.room_next_question(code=party.room.code, player=party.players[0])
    assert (error.value.code, error.value.status_code) == ("not_host", 403)


def test_a_question_is_one_pair_for_everyone_on_one_clock(party, fake_clock) -> None:
    services.room_next_question(code=party.room.code, player=party.host)
    question = current(party.room)
    mine = rounds_of(question)
    assert set(mine) == {"hana", "pia", "otto"}
    assert {(r.left_claim_id, r.right_claim_id, r.false_claim_index, r.deadline, r.state) for r in mine.values()} == {
        (question.left_claim_id, question.right_claim_id, question.false_claim_index, question.deadline, "playing")
    }
    assert (question.deadline - question.started_at).total_seconds() == 180
    state = rounds.round_get_state(round_id=mine["pia"].pk, player=party.players[0])
    assert state["remaining"] == 180 and state["points"] == 120 and "result" not in state


def test_the_pair_is_never_written_by_or_dealt_before_to_anyone_in_the_room(db, fake_clock) -> None:
    claim_pool(pages=3)
    host, guest = UserFactory(username="hana"), UserFactory(username="gus")
    seen_round = rounds.round_create(player=host)  # the host played one of the three pairs solo
    seen = {seen_round.left_claim_id, seen_round.right_claim_id}
    page = PageFactory(title="Own")  # and the guest wrote this one
    own = {make_claim(page, label="SUPPORTS", author=guest).pk, make_claim(page, label="REFUTES", author=guest).pk}
    room = services.room_create(host=host, questions=5)
    services.room_join(code=room.code, player=guest)
    dealt = set()
    for _ in range(2):
        services.room_next_question(code=room.code, player=host)
        question = current(room)
        dealt |= {question.left_claim_id, question.right_claim_id}
        fake_clock.advance(181)
        assert services.room_question_finish(question_id=question.pk)
        here(room, guest)
    assert len(dealt) == 4 and not dealt & (seen | own)
    with pytest.raises(ServiceError) as error:  # what is left: the host's solo pair, the guest's own
        services.room_next_question(code=room.code, player=host)
    assert error.value.code == "no_pair_available"
    assert SeenClaim.objects.filter(player=guest).count() == 4


def test_votes_pay_as_solo_rounds_and_the_question_ends_when_everyone_voted(party, fake_clock) -> None:
    services.room_next_question(code=party.room.code, player=party.host)
    question = current(party.room)
    mine = rounds_of(question)
    fake_clock.advance(100)  # 80 s left: a right vote earns 80, its authors share 40
    rounds.vote_cast(round_id=mine["hana"].pk, player=party.host, false_claim=question.false_claim_index)
    rounds.round_reveal_clue(round_id=mine["pia"].pk, player=party.players[0], claim_index=0)
    rounds.vote_cast(round_id=mine["pia"].pk, player=party.players[0], false_claim=question.false_claim_index)
    assert not services.room_question_finish(question_id=question.pk), "otto has not voted"
    rounds.vote_cast(round_id=mine["otto"].pk, player=party.players[1], false_claim=1 - question.false_claim_index)
    assert services.room_question_finish(question_id=question.pk)
    question.refresh_from_db()
    assert question.state == "done"
    points = dict(LedgerEntry.objects.filter(kind="verify").values_list("player__username").annotate(Sum("amount")))
    assert points == {"hana": 80, "pia": 70}
    assert LedgerEntry.objects.filter(cause=f"round:{mine['hana'].pk}").aggregate(s=Sum("amount"))["s"] == 120
    state = services.room_state(code=party.room.code, player=party.players[1])
    assert [(r["username"], r["points"], r["rank"]) for r in state["scoreboard"]] == [("hana", 80, 1), ("pia", 70, 2), ("otto", 0, 3)]
    answer = state["question"]["answer"]
    assert answer["false_claim"] == question.false_claim_index and answer["gold"][0]
    assert answer["found"] == [{"username": "hana", "points": 80}, {"username": "pia", "points": 70}]


def test_who_found_a_question_counts_that_question_only(party, fake_clock) -> None:
    services.room_next_question(code=party.room.code, player=party.host)
    first = current(party.room)
    for name, player in (("hana", party.host), ("pia", party.players[0]), ("otto", party.players[1])):
        rounds.vote_cast(round_id=rounds_of(first)[name].pk, player=player, false_claim=first.false_claim_index)
    assert services.room_question_finish(question_id=first.pk)
    services.room_next_question(code=party.room.code, player=party.host)
    second = current(party.room)
    fake_clock.advance(30)  # 150 s left: a right vote earns 120
    rounds.vote_cast(round_id=rounds_of(second)["pia"].pk, player=party.players[0], false_claim=second.false_claim_index)
    rounds.vote_cast(round_id=rounds_of(second)["hana"].pk, player=party.host, false_claim=1 - second.false_claim_index)
    rounds.vote_cast(round_id=rounds_of(second)["otto"].pk, player=party.players[1], false_claim=1 - second.false_claim_index)
    assert services.room_question_finish(question_id=second.pk)
    answer = services.room_state(code=party.room.code, player=party.host)["question"]["answer"]
    assert answer["found"] == [{"username": "pia", "points": 120}], "hana and otto found the first question, not this one"
    assert [(r["username"], r["points"], r["correct"]) for r in answer["scoreboard"]] == [("pia", 240, 2), ("hana", 120, 1), ("otto", 120, 1)]


def test_the_answer_is_held_back_until_the_question_is_over(party, fake_clock) -> None:
    services.room_next_question(code=party.room.code, player=party.host)
    question = current(party.room)
    rounds.vote_cast(round_id=rounds_of(question)["pia"].pk, player=party.players[0], false_claim=0)
    view = services.room_state(code=party.room.code, player=party.players[0])["question"]
    assert view["round"]["status"] == "voted" and "result" not in view["round"] and "answer" not in view


def test_shorter_question_moves_the_clock_origin_so_awards_follow_the_time_left(party, fake_clock) -> None:
    room = services.room_create(host=party.host, questions=1, seconds=60)
    services.room_join(code=room.code, player=party.players[0])
    services.room_next_question(code=room.code, player=party.host)
    question = current(room)
    pia = rounds_of(question)["pia"]
    assert (question.deadline - question.started_at).total_seconds() == 60
    assert rounds.round_get_state(round_id=pia.pk, player=party.players[0])["remaining"] == 60
    fake_clock.advance(15)
    ack = rounds.vote_cast(round_id=pia.pk, player=party.players[0], false_claim=question.false_claim_index)
    assert ack == {"remaining": 45}  # the answer (and so the points) wait for the question's end
    assert Vote.objects.get(round=pia).points == 45


def test_time_up_times_out_the_rounds_left_and_a_late_vote_is_refused(party, fake_clock) -> None:
    services.room_next_question(code=party.room.code, player=party.host)
    question = current(party.room)
    fake_clock.advance(180)
    assert services.room_question_finish(question_id=question.pk)
    assert {r.state for r in Round.objects.filter(room_play__question=question)} == {"timeout"}
    with pytest.raises(ServiceError) as error:
        rounds.vote_cast(round_id=rounds_of(question)["pia"].pk, player=party.players[0], false_claim=0)
    assert error.value.code == "round_over"
    assert not LedgerEntry.objects.exists()


def test_a_late_joiner_watches_and_plays_the_next_question(party, fake_clock) -> None:
    services.room_next_question(code=party.room.code, player=party.host)
    late = UserFactory(username="lou")
    view = services.room_join(code=party.room.code, player=late)["question"]
    assert view["round"] is None and view["status"] == "playing"
    fake_clock.advance(181)
    services.room_question_finish(question_id=current(party.room).pk)
    here(party.room, late)
    watched = services.room_state(code=party.room.code, player=late)["question"]["answer"]
    assert set(watched) == {"found", "first", "skipped", "ended_early"}, "a pair never dealt to the watcher keeps its answer"
    services.room_next_question(code=party.room.code, player=party.host)
    assert "lou" in rounds_of(current(party.room))


def test_absent_members_are_not_dealt(party, fake_clock) -> None:
    services.room_member_seen(room_id=party.room.pk, player_id=party.players[1].pk, present=False)
    services.room_next_question(code=party.room.code, player=party.host)
    assert set(rounds_of(current(party.room))) == {"hana", "pia"}


def test_next_question_waits_for_the_current_one(party, fake_clock) -> None:
    services.room_next_question(code=party.room.code, player=party.host)
    with pytest.raises(ServiceError) as error:
        services.room_next_question(code=party.room.code, player=party.host)
    assert error.value.code == "question_playing"
    fake_clock.advance(181)
    here(party.room, *party.players)
    services.room_next_question(code=party.room.code, player=party.host)  # finishes the due one first
    assert current(party.room).number == 2


def test_the_room_ends_after_its_last_question(party, fake_clock) -> None:
    for _ in range(3):
        services.room_next_question(code=party.room.code, player=party.host)
        fake_clock.advance(181)
        services.room_question_finish(question_id=current(party.room).pk)
    party.room.refresh_from_db()
    assert (party.room.state, party.room.end_reason) == ("ended", "done")
    with pytest.raises(ServiceError) as error:
        services.room_next_question(code=party.room.code, player=party.host)
    assert error.value.code == "room_over"


def test_the_host_leaving_ends_the_room_and_open_rounds_without_points(party, fake_clock) -> None:
    services.room_next_question(code=party.room.code, player=party.host)
    question = current(party.room)
    mine = rounds_of(question)
    rounds.vote_cast(round_id=mine["pia"].pk, player=party.players[0], false_claim=question.false_claim_index)
    services.room_leave(code=party.room.code, player=party.host)
    party.room.refresh_from_db()
    question.refresh_from_db()
    assert (party.room.state, party.room.end_reason, question.state) == ("ended", "host_left", "done")
    assert {u: r.state for u, r in ((u, Round.objects.get(pk=r.pk)) for u, r in mine.items())} == {"hana": "forfeited", "pia": "voted", "otto": "forfeited"}
    with pytest.raises(ServiceError) as error:
        services.room_join(code=party.room.code, player=UserFactory())
    assert error.value.code == "room_over"


def test_the_host_leaving_during_the_last_question_ends_the_room_once(db, fake_clock, monkeypatch) -> None:
    claim_pool()
    host, guest = UserFactory(username="hana"), UserFactory(username="gus")
    room = services.room_create(host=host, questions=1)
    services.room_join(code=room.code, player=guest)
    services.room_next_question(code=room.code, player=host)
    ended: list[str] = []
    monkeypatch.setattr(services.events, "room_ended_on_commit", lambda room, **kwargs: ended.append(room.end_reason))
    services.room_leave(code=room.code, player=host)
    room.refresh_from_db()
    assert (room.state, room.end_reason) == ("ended", "host_left")
    assert ended == ["host_left"], "one end for the sockets, with the reason the room ended early"


def test_a_player_leaving_gives_up_their_round_and_can_end_the_question(party, fake_clock) -> None:
    services.room_next_question(code=party.room.code, player=party.host)
    question = current(party.room)
    mine = rounds_of(question)
    for who, player in (("hana", party.host), ("pia", party.players[0])):
        rounds.vote_cast(round_id=mine[who].pk, player=player, false_claim=0)
    services.room_leave(code=party.room.code, player=party.players[1])
    question.refresh_from_db()
    assert question.state == "done" and Round.objects.get(pk=mine["otto"].pk).state == "forfeited"
    assert [r["left"] for r in services.room_state(code=party.room.code, player=party.host)["scoreboard"] if r["username"] == "otto"] == [True]


def test_sweep_finishes_due_questions_and_ends_rooms_whose_host_is_gone(party, fake_clock) -> None:
    services.room_next_question(code=party.room.code, player=party.host)
    fake_clock.advance(181)
    assert services.rooms_sweep() == 1
    assert current(party.room).state == "done"
    fake_clock.advance(301)
    assert services.rooms_sweep() == 1
    party.room.refresh_from_db()
    assert (party.room.state, party.room.end_reason) == ("ended", "host_gone")


def test_room_is_full_at_its_cap(party, settings) -> None:
    settings.FM2_ROOMS = {**settings.FM2_ROOMS, "MAX_MEMBERS": 3}
    with pytest.raises(ServiceError) as error:
        services.room_join(code=party.room.code, player=UserFactory())
    assert error.value.code == "room_full"


def test_the_tasks_finish_a_due_question_and_sweep(party, fake_clock) -> None:
    from foolgame.rooms import tasks

    services.room_next_question(code=party.room.code, player=party.host)
    question = current(party.room)
    assert tasks.finish_question(question.pk) is False, "not due: nothing to do"
    fake_clock.advance(180)
    assert tasks.finish_question(question.pk) is True
    assert tasks.finish_question(question.pk) is False, "a second delivery does nothing"
    assert tasks.sweep_rooms() == 0


@pytest.mark.django_db
def test_a_room_socket_opens_in_the_lobby_with_its_members_count_in_four_queries(party, django_assert_max_num_queries) -> None:
    """400 sockets open at once: the count of members present comes from the scoreboard's
    rows (which list everyone, those who left marked), not from a query of its own."""
    services.room_leave(code=party.room.code, player=party.players[1])
    with django_assert_max_num_queries(4):
        state, room_id, member_id = services.room_socket_state(code=party.room.code, player=party.players[0])
    assert (state["members"], room_id, state["member"]) == (2, party.room.pk, True)
    assert [row["left"] for row in sorted(state["scoreboard"], key=lambda r: r["username"])] == [False, True, False]
    left = services.room_state(code=party.room.code, player=party.players[1])
    assert (left["members"], left["member"]) == (2, False)
    stranger = services.room_state(code=party.room.code, player=UserFactory(username="sam"))
    assert (stranger["members"], stranger["member"], stranger["scoreboard"]) == (2, False, None)
