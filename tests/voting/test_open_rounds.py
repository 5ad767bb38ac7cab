"""Open rounds: listing them to resume one after a reload, and forfeiting one."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from foolgame.core.errors import ServiceError
from foolgame.players.models import LedgerEntry
from foolgame.voting import services
from foolgame.voting.models import Round, SeenClaim
from tests.factories import PageFactory, UserFactory
from tests.voting.conftest import make_claim
from tests.voting.test_apis import login, post

pytestmark = pytest.mark.django_db


def add_pairs(n: int) -> None:
    """n more fair pairs, each on its own page, by authors other than the voter."""
    true_author, false_author = UserFactory(username="tom"), UserFactory(username="fay")
    for i in range(n):
        page = PageFactory(title=f"Extra page {i}")
        make_claim(page, label="SUPPORTS", author=true_author)
        make_claim(page, label="REFUTES", author=false_author)


def test_open_rounds_list_the_true_remaining_time_and_the_clues_bought(game, fake_clock) -> None:
    round_ = services.round_create(player=game.voter)
    services.round_start(round_id=round_.pk, player=game.voter)
    fake_clock.advance(20)
    services.round_reveal_clue(round_id=round_.pk, player=game.voter, claim_index=1)
    [state] = services.rounds_open_for_player(player=game.voter)
    assert state["id"] == round_.pk and state["status"] == "playing"
    assert state["remaining"] == pytest.approx(180 - 20 - 10)
    assert len(state["clues"][1]) == 1 and state["clues"][0] == []
    assert "result" not in state


def test_open_rounds_leave_out_other_players_and_ended_rounds(game, fake_clock) -> None:
    add_pairs(2)
    other = UserFactory(username="otto")
    services.round_start(round_id=services.round_create(player=other).pk, player=other)
    voted = services.round_create(player=game.voter)
    services.round_start(round_id=voted.pk, player=game.voter)
    services.vote_cast(round_id=voted.pk, player=game.voter, false_claim=0)
    dealt = services.round_create(player=game.voter)
    assert [s["id"] for s in services.rounds_open_for_player(player=game.voter)] == [dealt.pk]


def test_open_rounds_time_out_a_round_past_its_deadline_first(game, fake_clock) -> None:
    round_ = services.round_create(player=game.voter)
    services.round_start(round_id=round_.pk, player=game.voter)
    fake_clock.advance(181)
    assert services.rounds_open_for_player(player=game.voter) == []
    assert Round.objects.get(pk=round_.pk).state == Round.State.TIMED_OUT


def answer_free(state: dict, round_: Round) -> None:
    """Nothing of the round's answer in this state: no result, label, gold or true clue counts."""
    text = json.dumps(state)
    assert "result" not in state and "SUPPORTS" not in text and "REFUTES" not in text and "false_claim" not in text
    for claim in round_.claims:
        for gold in claim.gold_sentences.all():
            assert gold.text not in text


def test_forfeit_ends_a_playing_round_without_points_and_keeps_its_claims_dealt(game, fake_clock) -> None:
    round_ = services.round_create(player=game.voter)
    services.round_start(round_id=round_.pk, player=game.voter)
    fake_clock.advance(30)
    state = services.round_forfeit(round_id=round_.pk, player=game.voter)
    assert state["status"] == "forfeited"
    round_.refresh_from_db()
    assert round_.state == Round.State.FORFEITED
    assert round_.ended_at < round_.deadline == round_.answer_at
    assert not LedgerEntry.objects.exists()
    assert SeenClaim.objects.filter(player=game.voter).count() == 2
    with pytest.raises(ServiceError) as error:
        services.round_create(player=game.voter)
    assert error.value.code == "no_pair_available"


def test_forfeit_of_a_playing_round_shows_its_answer_only_at_its_deadline(game, fake_clock) -> None:
    round_ = services.round_create(player=game.voter)
    services.round_start(round_id=round_.pk, player=game.voter)
    fake_clock.advance(20)
    services.round_reveal_clue(round_id=round_.pk, player=game.voter, claim_index=0)  # the deadline moves to 170 s
    fake_clock.advance(10)
    state = services.round_forfeit(round_id=round_.pk, player=game.voter)
    answer_free(state, round_)
    assert state["claims"][0]["text"] == round_.left_claim.text  # it was seen: the texts stay
    round_.refresh_from_db()
    assert state["answer_at"] == (round_.started_at + timedelta(seconds=170)).isoformat()
    fake_clock.advance(139)  # one second before the deadline as it stood
    for seen in (services.round_get_state(round_id=round_.pk, player=game.voter), services.round_start(round_id=round_.pk, player=game.voter)):
        answer_free(seen, round_)
    fake_clock.advance(1)
    shown = services.round_get_state(round_id=round_.pk, player=game.voter)
    assert shown["status"] == "forfeited" and shown["result"]["false_claim"] == round_.false_index
    assert "correct" not in shown["result"] and "points" not in shown["result"]


def test_forfeit_of_a_dealt_round_shows_neither_claims_nor_answer_for_a_round_s_length(game, fake_clock) -> None:
    round_ = services.round_create(player=game.voter)
    state = services.round_forfeit(round_id=round_.pk, player=game.voter)
    answer_free(state, round_)
    assert state["status"] == "forfeited" and state["claims"] is None
    for claim in round_.claims:
        assert claim.text not in json.dumps(state)
    round_.refresh_from_db()
    assert round_.state == Round.State.FORFEITED and round_.started_at is None and round_.ended_at == fake_clock.current
    assert round_.answer_at == fake_clock.current + timedelta(seconds=180)
    assert SeenClaim.objects.filter(player=game.voter, round=round_).count() == 2
    fake_clock.advance(179)
    later = services.round_get_state(round_id=round_.pk, player=game.voter)
    answer_free(later, round_)
    assert later["claims"] is None
    with pytest.raises(ServiceError) as refused:  # no report of a claim never shown
        services.round_report(round_id=round_.pk, player=game.voter, claim=0, reason="spam")
    assert refused.value.code == "round_not_started"
    fake_clock.advance(1)
    shown = services.round_get_state(round_id=round_.pk, player=game.voter)
    assert [c["text"] for c in shown["claims"]] == [round_.left_claim.text, round_.right_claim.text]
    assert shown["result"]["false_claim"] == round_.false_index


def test_forfeit_frees_a_slot_when_three_rounds_are_open(game, fake_clock) -> None:
    add_pairs(3)
    rounds = [services.round_create(player=game.voter) for _ in range(3)]
    with pytest.raises(ServiceError) as error:
        services.round_create(player=game.voter)
    assert error.value.code == "too_many_open_rounds"
    services.round_forfeit(round_id=rounds[0].pk, player=game.voter)
    assert services.round_create(player=game.voter).state == Round.State.READY


def test_forfeit_after_the_vote_is_refused_and_changes_nothing(game, fake_clock) -> None:
    round_ = services.round_create(player=game.voter)
    services.round_start(round_id=round_.pk, player=game.voter)
    services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    with pytest.raises(ServiceError) as error:
        services.round_forfeit(round_id=round_.pk, player=game.voter)
    assert (error.value.code, error.value.status_code) == ("round_over", 409)
    assert Round.objects.get(pk=round_.pk).state == Round.State.VOTED


def test_forfeit_of_another_players_round_is_not_found(game, fake_clock) -> None:
    round_ = services.round_create(player=game.voter)
    with pytest.raises(ServiceError) as error:
        services.round_forfeit(round_id=round_.pk, player=game.true_author)
    assert (error.value.code, error.value.status_code) == ("round_not_found", 404)
    assert Round.objects.get(pk=round_.pk).state == Round.State.READY


def test_forfeit_after_the_deadline_is_the_timeout_itself(game, fake_clock) -> None:
    round_ = services.round_create(player=game.voter)
    services.round_start(round_id=round_.pk, player=game.voter)
    fake_clock.advance(200)
    services.round_forfeit(round_id=round_.pk, player=game.voter)
    round_.refresh_from_db()
    assert round_.state == Round.State.TIMED_OUT and round_.ended_at == round_.deadline


# --- over REST -----------------------------------------------------------------------------


def test_rest_lists_open_rounds_and_forfeits_one(game, fake_clock) -> None:
    client = login("vera")
    round_id = post(client, "/api/rounds").json()["id"]
    post(client, f"/api/rounds/{round_id}/start")
    listed = client.get("/api/rounds?open=1")
    assert listed.status_code == 200
    assert [r["id"] for r in listed.json()] == [round_id]
    assert listed.json()[0]["status"] == "playing"
    forfeit = post(client, f"/api/rounds/{round_id}/forfeit")
    assert forfeit.status_code == 200 and forfeit.json()["status"] == "forfeited"
    answer_free(forfeit.json(), Round.objects.get(pk=round_id))
    answer_free(client.get(f"/api/rounds/{round_id}").json(), Round.objects.get(pk=round_id))
    assert forfeit.json()["answer_at"] == Round.objects.get(pk=round_id).deadline.isoformat()
    assert client.get("/api/rounds?open=1").json() == []
    again = post(client, f"/api/rounds/{round_id}/forfeit")
    assert again.status_code == 409 and again.json()["error"]["code"] == "round_over"


@pytest.mark.parametrize("query", ["", "?open=0", "?open=yes"])
def test_rest_listing_rounds_needs_open_1(game, query) -> None:
    response = login("vera").get("/api/rounds" + query)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "open_required"


def test_rest_open_rounds_and_forfeit_need_a_login(game) -> None:
    round_ = services.round_create(player=game.voter)
    client = login("tina")
    client.logout()
    assert client.get("/api/rounds?open=1").status_code in (401, 403)
    assert post(client, f"/api/rounds/{round_.pk}/forfeit").status_code in (401, 403)
    assert Round.objects.get(pk=round_.pk).state == Round.State.READY


def test_rest_forfeit_of_an_unknown_round_is_404(game) -> None:
    response = post(login("vera"), "/api/rounds/999999/forfeit")
    assert response.status_code == 404 and response.json()["error"]["code"] == "round_not_found"


@pytest.fixture
def forfeit_limit(settings):
    settings.FM2 = {**settings.FM2, "FORFEITS_PER_HOUR": 2}


def test_the_forfeit_cap_is_far_under_the_deal_limit(settings) -> None:
    assert (settings.FM2["FORFEITS_PER_HOUR"], settings.FM2["DEALS_PER_HOUR"]) == (30, 360)
    assert settings.FM2["FORFEITS_PER_HOUR"] < settings.FM2["NEW_ACCOUNT_DEALS_PER_HOUR"] / 5


def test_forfeits_are_capped_per_hour(game, fake_clock, forfeit_limit) -> None:
    """Giving up shows a pair's answer without a vote (issue 36: answers collected by forfeit
    for another account): past the cap a give-up is refused and the round plays on."""
    add_pairs(4)
    for _ in range(2):
        round_ = services.round_create(player=game.voter)
        services.round_forfeit(round_id=round_.pk, player=game.voter)
        fake_clock.advance(60)
    third = services.round_create(player=game.voter)
    services.round_start(round_id=third.pk, player=game.voter)
    with pytest.raises(ServiceError) as refused:
        services.round_forfeit(round_id=third.pk, player=game.voter)
    assert (refused.value.code, refused.value.status_code) == ("forfeit_rate_limited", 429)
    assert 3600 - 120 - 5 <= refused.value.details["retry_after"] <= 3600 - 120 + 5
    assert Round.objects.get(pk=third.pk).state == Round.State.PLAYING  # nothing changed: it can still be played
    fake_clock.advance(3600 - 120 + 1)  # an hour after the first forfeit; the round ran out meanwhile
    fourth = services.round_create(player=game.voter)
    assert services.round_forfeit(round_id=fourth.pk, player=game.voter)["status"] == "forfeited"


def test_a_capped_forfeit_over_rest_is_429_with_retry_after_and_the_round_plays_on(game, fake_clock, forfeit_limit) -> None:
    add_pairs(3)
    client = login("vera")
    for _ in range(2):
        round_ = services.round_create(player=game.voter)
        assert post(client, f"/api/rounds/{round_.pk}/forfeit").status_code == 200
    third = services.round_create(player=game.voter)
    response = post(client, f"/api/rounds/{third.pk}/forfeit")
    assert response.status_code == 429
    error = response.json()["error"]
    assert error["code"] == "forfeit_rate_limited" and "gave up 2 rounds in the last hour" in error["message"]
    assert int(response["Retry-After"]) == error["details"]["retry_after"] > 0
    assert Round.objects.get(pk=third.pk).state == Round.State.READY
