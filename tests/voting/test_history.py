"""The player's history of rounds (``GET /api/me/rounds`` and the profile page): their own
finished rounds whose answer is out, newest first, with the claims, their pick, which claim
was false, the outcome and the points; nothing of a round whose answer is not out yet."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from foolgame.moderation.actions import claim_moderate, moderator_set
from foolgame.voting import payloads, services
from foolgame.voting.models import Round
from tests.factories import PageFactory, UserFactory
from tests.voting.conftest import make_claim

pytestmark = pytest.mark.django_db


def pairs(n: int) -> None:
    tina, fred = UserFactory(username="tina"), UserFactory(username="fred")
    for i in range(n):
        page = PageFactory(title=f"History page {i}")
        make_claim(page, label="SUPPORTS", author=tina, text=f"History page {i} is true in every way.")
        make_claim(page, label="REFUTES", author=fred, text=f"History page {i} is false in every way.")


def end(player, outcome: str, fake_clock) -> Round:
    round_ = services.round_create(player=player)
    if outcome == "open":
        return round_
    services.round_start(round_id=round_.pk, player=player)
    if outcome in ("right", "wrong"):
        guess = round_.false_index if outcome == "right" else 1 - round_.false_index
        services.vote_cast(round_id=round_.pk, player=player, false_claim=guess)
    elif outcome == "timeout":
        fake_clock.advance(181)
        services.round_expire(round_id=round_.pk)
    elif outcome == "forfeited":
        services.round_forfeit(round_id=round_.pk, player=player)
    elif outcome == "reported":
        services.round_report(round_id=round_.pk, player=player, claim=0, reason="spam")
    elif outcome == "voided":
        moderator = moderator_set(username=UserFactory().username)
        claim = round_.left_claim
        claim_moderate(moderator=moderator, claim_id=claim.pk, action="remove", reason="test")
    fake_clock.advance(5)
    return Round.objects.get(pk=round_.pk)


def client_of(player) -> Client:
    client = Client()
    client.force_login(player)
    return client


def test_the_history_lists_finished_rounds_newest_first_with_how_the_player_did(fake_clock) -> None:
    pairs(3)
    vera = UserFactory(username="vera")
    right, wrong, late = end(vera, "right", fake_clock), end(vera, "wrong", fake_clock), end(vera, "timeout", fake_clock)
    body = client_of(vera).get("/api/me/rounds").json()
    assert [r["id"] for r in body["rounds"]] == [late.pk, wrong.pk, right.pk] and body["next_offset"] is None
    first = body["rounds"][2]
    assert first["outcome"] == "right" and first["picked"] == right.false_index == first["false_claim"]
    assert first["points"] == right.vote.points > 0 and first["room"] is False
    assert [c["text"] for c in first["claims"]] == [right.left_claim.text, right.right_claim.text]
    assert first["pages"] == [c["page"] for c in first["claims"]]
    assert body["rounds"][1]["outcome"] == "wrong" and body["rounds"][1]["picked"] == 1 - wrong.false_index
    assert body["rounds"][1]["points"] == 0
    assert body["rounds"][0]["outcome"] == "timeout" and body["rounds"][0]["picked"] is None


def test_a_round_whose_answer_is_not_out_is_not_listed(fake_clock) -> None:
    pairs(5)
    vera = UserFactory(username="vera")
    end(vera, "open", fake_clock)
    given_up = end(vera, "forfeited", fake_clock)
    reported = end(vera, "reported", fake_clock)
    end(vera, "voided", fake_clock)
    client = client_of(vera)
    assert client.get("/api/me/rounds").json()["rounds"] == []
    # At the round's deadline the answer of a forfeit and of a report is out: then listed.
    fake_clock.advance(180)
    listed = {r["id"]: r["outcome"] for r in client.get("/api/me/rounds").json()["rounds"]}
    assert listed == {given_up.pk: "forfeited", reported.pk: "reported"}


def test_only_the_players_own_rounds_are_listed(fake_clock) -> None:
    pairs(2)
    vera, otto = UserFactory(username="vera"), UserFactory(username="otto")
    end(vera, "right", fake_clock)
    assert client_of(otto).get("/api/me/rounds").json() == {"rounds": [], "next_offset": None}
    assert Client().get("/api/me/rounds").status_code == 403


def test_a_room_round_is_listed_once_its_question_is_over(fake_clock) -> None:
    from foolgame.rooms import services as rooms
    from foolgame.rooms.models import RoomQuestion, RoomRound
    from tests.rooms.conftest import claim_pool

    claim_pool()
    host, pia = UserFactory(username="hana"), UserFactory(username="pia")
    room = rooms.room_create(host=host, questions=2, host_plays=True)
    rooms.room_join(code=room.code, player=pia)
    rooms.room_next_question(code=room.code, player=host)
    question = RoomQuestion.objects.get(room=room, number=1)
    play = RoomRound.objects.get(question=question, player=pia)
    services.vote_cast(round_id=play.round_id, player=pia, false_claim=0)
    client = client_of(pia)
    assert client.get("/api/me/rounds").json()["rounds"] == []  # the host has not voted: the question plays
    assert "Your rounds" in client.get("/accounts/me/").content.decode()
    services.vote_cast(round_id=RoomRound.objects.get(question=question, player=host).round_id, player=host, false_claim=1)
    rooms.room_question_finish(question_id=question.pk)
    (row,) = client.get("/api/me/rounds").json()["rounds"]
    assert row["id"] == play.round_id and row["room"] is True and row["picked"] == 0


def test_a_round_of_a_room_its_host_ended_reads_room_ended_not_given_up(fake_clock) -> None:
    """Issue 39: the host ended the room while their round (and pia's) played: not a give-up
    of theirs. A member who leaves gives up: that stays "Given up"."""
    from foolgame.rooms import services as rooms
    from foolgame.rooms.models import RoomQuestion, RoomRound
    from tests.rooms.conftest import claim_pool

    claim_pool()
    host, pia, otto = UserFactory(username="hana"), UserFactory(username="pia"), UserFactory(username="otto")
    room = rooms.room_create(host=host, questions=2, host_plays=True)
    for member in (pia, otto):
        rooms.room_join(code=room.code, player=member)
    rooms.room_next_question(code=room.code, player=host)
    question = RoomQuestion.objects.get(room=room, number=1)
    rooms.room_leave(code=room.code, player=otto)  # otto gives up his round
    rooms.room_leave(code=room.code, player=host)  # the host ends the room: hana's and pia's rounds end
    fake_clock.advance(181)  # past the question's deadline: the answer is out for everyone
    for player, word, ended in ((host, "Room ended", True), (pia, "Room ended", True), (otto, "Given up", False)):
        (row,) = client_of(player).get("/api/me/rounds").json()["rounds"]
        assert row["outcome"] == "forfeited" and row["ended_by_room"] is ended
        assert row["id"] == RoomRound.objects.get(question=question, player=player).round_id
        page = client_of(player).get("/accounts/me/").content.decode()
        assert f'<strong class="history-outcome">{word}</strong>' in page


def test_the_history_pages_by_offset_and_limit(fake_clock) -> None:
    pairs(5)
    vera = UserFactory(username="vera")
    ids = [end(vera, "right", fake_clock).pk for _ in range(5)][::-1]
    client = client_of(vera)
    first = client.get("/api/me/rounds?limit=2").json()
    assert [r["id"] for r in first["rounds"]] == ids[:2] and first["next_offset"] == 2
    second = client.get("/api/me/rounds?limit=2&offset=2").json()
    assert [r["id"] for r in second["rounds"]] == ids[2:4] and second["next_offset"] == 4
    last = client.get("/api/me/rounds?limit=2&offset=4").json()
    assert [r["id"] for r in last["rounds"]] == ids[4:] and last["next_offset"] is None


@pytest.mark.parametrize(("query", "code"), [("limit=0", "invalid_limit"), ("limit=51", "invalid_limit"), ("limit=x", "invalid_limit"), ("offset=-1", "invalid_offset")])
def test_a_bad_page_is_a_400(db, query: str, code: str) -> None:
    response = client_of(UserFactory()).get("/api/me/rounds?" + query)
    assert (response.status_code, response.json()["error"]["code"]) == (400, code)


def test_the_profile_lists_the_rounds_with_the_pick_and_the_false_claim(fake_clock) -> None:
    pairs(2)
    vera = UserFactory(username="vera")
    right = end(vera, "right", fake_clock)
    open_round = end(vera, "open", fake_clock)
    html = client_of(vera).get("/accounts/me/").content.decode()
    assert html.count('class="history-round') == 1
    assert right.claims[right.false_index].text in html and "Your pick" in html and f"+{right.vote.points} points" in html
    assert f'href="/pages/{right.left_claim.page_id}/"' in html
    # The open round's claims are not shown, and the labels are named as players read them.
    assert open_round.left_claim.text not in html and open_round.right_claim.text not in html
    assert "SUPPORTS" not in html and "REFUTES" not in html


def test_the_profile_pages_its_rounds(fake_clock) -> None:
    pairs(22)
    vera = UserFactory(username="vera")
    for _ in range(22):
        end(vera, "wrong", fake_clock)
    client = client_of(vera)
    first = client.get("/accounts/me/").content.decode()
    assert first.count('class="history-round') == 20 and "Older rounds" in first and "Newer rounds" not in first
    second = client.get("/accounts/me/?page=2").content.decode()
    assert second.count('class="history-round') == 2 and "Newer rounds" in second and "Older rounds" not in second


@pytest.mark.parametrize("outcome", ["open", "right", "wrong", "timeout", "forfeited", "reported", "voided"])
def test_answer_out_says_what_the_rounds_state_shows(fake_clock, outcome: str) -> None:
    """``answer_out`` (the history's filter) and ``round_state`` (every read) agree."""
    pairs(1)
    vera = UserFactory(username="vera")
    round_ = end(vera, outcome, fake_clock)
    for _ in range(2):
        fresh = Round.objects.select_related("left_claim__page", "right_claim__page").get(pk=round_.pk)
        now = fake_clock()
        assert payloads.answer_out(fresh, now) == ("result" in payloads.round_state(fresh, now=now)), outcome
        fake_clock.advance(200)


def next_step(html: str) -> str:
    """The profile's next-step box ('' when there is none)."""
    return html.split('class="next-step"', 1)[1].split("</section>", 1)[0] if 'class="next-step"' in html else ""


def test_a_new_player_is_offered_a_first_round_and_a_claim_to_write(db) -> None:
    box = next_step(client_of(UserFactory(username="newbie")).get("/accounts/me/").content.decode())
    assert "Your next step" in box and "Play your first round" in box and "Write a claim" in box


def test_a_player_who_has_played_is_offered_to_write(fake_clock) -> None:
    pairs(1)
    vera = UserFactory(username="vera")
    end(vera, "wrong", fake_clock)
    box = next_step(client_of(vera).get("/accounts/me/").content.decode())
    assert "Play your first round" not in box and "Write your first claim" in box
    make_claim(PageFactory(), label="SUPPORTS", author=vera)
    assert 'class="next-step"' not in client_of(vera).get("/accounts/me/").content.decode()


def test_the_history_request_body_is_json(fake_clock) -> None:
    pairs(1)
    vera = UserFactory(username="vera")
    end(vera, "right", fake_clock)
    assert json.loads(client_of(vera).get("/api/me/rounds").content)["rounds"][0]["status"] == "voted"
