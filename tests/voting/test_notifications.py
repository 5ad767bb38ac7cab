"""Authors' notifications: written by the vote, like and moderation services, read once,
and only ever by their own player."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from foolgame.moderation.actions import claim_moderate, moderator_set
from foolgame.players.models import LedgerEntry, Notification
from foolgame.voting import services
from foolgame.voting.models import Round
from foolgame.voting.notifications import notifications_mark_read, notifications_unread_count, player_notifications
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


def play(game, *, correct: bool, like: int | None = None, clock=None, think: float = 0) -> Round:
    round_ = services.round_create(player=game.voter)
    services.round_start(round_id=round_.pk, player=game.voter)
    if think:
        clock.advance(think)
    false_index = Round.objects.get(pk=round_.pk).false_index
    services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=false_index if correct else 1 - false_index)
    if like is not None:
        services.round_like(round_id=round_.pk, player=game.voter, claim=false_index if like else 1 - false_index)
    return round_


def login(user) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.get("/api/auth/csrf")
    token = client.cookies["csrftoken"].value
    response = client.post("/api/auth/login", {"username": user.username, "password": PASSWORD}, content_type="application/json", headers={"X-CSRFToken": token})
    assert response.status_code == 200
    client.defaults["HTTP_X_CSRFTOKEN"] = client.cookies["csrftoken"].value
    return client


def test_a_wrong_vote_tells_both_authors_they_fooled_the_voter(game, fake_clock) -> None:
    play(game, correct=False)
    [tina] = Notification.objects.filter(player=game.true_author)
    [fred] = Notification.objects.filter(player=game.false_author)
    assert (tina.kind, tina.claim, tina.points) == ("fooled", game.true_claim, 0)
    assert (fred.kind, fred.claim) == ("fooled", game.false_claim)
    items = {n["claim"]["id"]: n["message"] for n in player_notifications(player=game.true_author)["items"]}
    assert items == {game.true_claim.pk: "You fooled a voter: they picked your true claim as the false one."}
    assert player_notifications(player=game.false_author)["items"][0]["message"] == "You fooled a voter: they took your false claim for true."
    assert not Notification.objects.filter(player=game.voter).exists()


def test_a_correct_vote_pays_authors_for_a_claim_hard_to_check(game, fake_clock) -> None:
    round_ = play(game, correct=True, clock=fake_clock, think=100)
    notes = Notification.objects.filter(kind="fool_points").order_by("player_id")
    ledger = {e.player_id: e.amount for e in LedgerEntry.objects.filter(kind="fool", cause=f"round:{round_.pk}")}
    assert {n.player_id: n.points for n in notes} == ledger
    assert sum(ledger.values()) == 120 - Round.objects.get(pk=round_.pk).vote.points > 0
    assert not Notification.objects.filter(kind="fooled").exists()
    message = player_notifications(player=game.false_author)["items"][0]["message"]
    assert message.startswith("Hard to check: a voter took their time on your claim")
    assert message.endswith(f"{ledger[game.false_author.pk]} points for you.")


def test_a_like_notifies_the_liked_claims_author(game, fake_clock) -> None:
    play(game, correct=True, like=1)
    [note] = Notification.objects.filter(kind="liked")
    assert (note.player, note.claim, note.points) == (game.false_author, game.false_claim, 10)
    assert player_notifications(player=game.false_author)["items"][0]["message"] == "A voter liked your claim. 10 points for you."


def test_moderators_remove_relabel_and_evidence_edits_notify_the_author(game) -> None:
    moderator = moderator_set(username=UserFactory(username="mona").username)
    claim_moderate(moderator=moderator, claim_id=game.true_claim.pk, action="keep", reason="Fine as it is.")
    assert not Notification.objects.exists()
    claim_moderate(moderator=moderator, claim_id=game.true_claim.pk, action="relabel", reason="The page refutes it.", label="REFUTES")
    other_gold = game.true_claim.page.sentences.exclude(pk__in=game.true_claim.gold_sentences.all()).first()
    claim_moderate(moderator=moderator, claim_id=game.true_claim.pk, action="edit_evidence", reason="Better evidence.", gold_sentence_ids=[other_gold.pk])
    claim_moderate(moderator=moderator, claim_id=game.true_claim.pk, action="remove", reason="Spam.")
    items = player_notifications(player=game.true_author)["items"]
    assert [(n["kind"], n["message"], n["reason"]) for n in items] == [
        ("moderated", "A moderator removed your claim from the game.", "Spam."),
        ("moderated", "A moderator changed the evidence sentences of your claim.", "Better evidence."),
        ("moderated", "A moderator changed your claim's label to false.", "The page refutes it."),
    ]
    groups = player_notifications(player=game.true_author)["notifications"]
    assert groups == [{"kind": "moderated", "count": 3, "message": "A moderator acted on your claims 3 times."}]


def test_marking_read_by_ids_and_up_to_an_id_counts_down_the_unread(game, fake_clock) -> None:
    for _ in range(3):
        play(game, correct=False)
        game.voter = UserFactory()  # a fresh voter for the next round
    ids = list(Notification.objects.filter(player=game.true_author).order_by("id").values_list("id", flat=True))
    assert notifications_unread_count(player=game.true_author) == 3
    assert notifications_mark_read(player=game.true_author, ids=[ids[1]]) == 1
    assert notifications_unread_count(player=game.true_author) == 2
    assert notifications_mark_read(player=game.true_author, up_to=ids[1]) == 1  # ids[0]; ids[1] already read
    assert [n["id"] for n in player_notifications(player=game.true_author)["items"]] == [ids[2]]
    assert notifications_unread_count(player=game.false_author) == 3


def test_a_player_cannot_mark_another_players_notifications(game, fake_clock) -> None:
    play(game, correct=False)
    tina_note = Notification.objects.get(player=game.true_author)
    assert notifications_mark_read(player=game.false_author, ids=[tina_note.pk]) == 0
    fred = login(game.false_author)
    response = fred.post("/api/me/notifications/read", json.dumps({"ids": [tina_note.pk]}), content_type="application/json")
    assert response.status_code == 200
    assert response.json() == {"marked": 0, "unread": 1}
    tina_note.refresh_from_db()
    assert tina_note.read_at is None
    assert login(game.true_author).get("/api/me/notifications").json()["unread"] == 1


def test_api_lists_unread_with_count_and_marks_read_by_id(game, fake_clock) -> None:
    play(game, correct=False)
    tina = login(game.true_author)
    body = tina.get("/api/me/notifications").json()
    assert body["unread"] == 1
    assert body["notifications"] == [{"kind": "fooled", "count": 1, "message": "1 player was fooled by your claims."}]
    [item] = body["items"]
    assert item["kind"] == "fooled" and item["claim"] == {"id": game.true_claim.pk, "text": game.true_claim.text} and item["read"] is False
    response = tina.post("/api/me/notifications/read", json.dumps({"ids": [item["id"]]}), content_type="application/json")
    assert response.json() == {"marked": 1, "unread": 0}
    body = tina.get("/api/me/notifications").json()
    assert (body["unread"], body["notifications"], body["items"]) == (0, [], [])
    assert body["since"] is not None


def test_marking_read_needs_ids_or_up_to_and_a_login(game) -> None:
    tina = login(game.true_author)
    response = tina.post("/api/me/notifications/read", json.dumps({}), content_type="application/json")
    assert response.status_code == 400
    response = tina.post("/api/me/notifications/read", json.dumps({"ids": ["x"]}), content_type="application/json")
    assert response.status_code == 400
    assert Client().post("/api/me/notifications/read", json.dumps({"up_to": 1}), content_type="application/json").status_code in (401, 403)
