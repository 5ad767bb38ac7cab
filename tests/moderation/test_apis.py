"""The queue and action endpoints, the pages, and 403 for everyone but moderators."""

from __future__ import annotations

import pytest
from django.test import Client

from foolgame.claims.models import Claim
from foolgame.players.models import PlayerRating
from foolgame.moderation import actions, quality
from foolgame.moderation.models import AuditRecord
from foolgame.voting.models import Report
from tests.factories import CategoryFactory, UserFactory
from tests.moderation.conftest import claim_pair, login, post

pytestmark = pytest.mark.django_db

ENDPOINTS = [
    ("get", "/api/moderation/queue"),
    ("get", "/api/moderation/audit"),
    ("post", "/api/moderation/claims/{id}/actions"),
    ("get", "/moderation/"),
    ("get", "/moderation/audit/"),
]


def reported(claim: Claim, *reasons_notes: tuple[str, str]) -> None:
    for n, (reason, note) in enumerate(reasons_notes):
        Report.objects.create(claim=claim, reporter=UserFactory(username=f"rep-{claim.pk}-{n}"), reason=reason, note=note)
    quality.quality_refresh(claim_ids=[claim.pk])


@pytest.fixture
def queue_claims(db):
    """A reported claim (score 0.8), a too-hard one (0.46), a barely too-hard one (0.49) and a healthy one."""
    history = CategoryFactory(name="History")
    reported_claim, healthy = claim_pair(title="Rome", category=history)
    reported(reported_claim, ("wrong_label", "The page says the opposite."))
    hard, barely = claim_pair(title="Spotify", true_counts=(2, 8), false_counts=(40, 84))
    quality.quality_refresh_all(fit=False)
    return {"reported": reported_claim, "healthy": healthy, "hard": hard, "barely": barely}


@pytest.mark.parametrize(("method", "url"), ENDPOINTS)
def test_everyone_but_moderators_gets_403(db, method, url) -> None:
    true_claim, _ = claim_pair()
    UserFactory(username="pat")
    for client in (Client(), login("pat")):
        response = getattr(client, method)(url.format(id=true_claim.pk), content_type="application/json", data={"action": "remove", "reason": "x"} if method == "post" else None)
        assert response.status_code == 403
    assert Claim.objects.get(pk=true_claim.pk).status == "active"


def test_queue_lists_reports_first_then_the_lowest_scores_with_everything_a_moderator_needs(moderator, queue_claims) -> None:
    body = login("mona").get("/api/moderation/queue").json()
    ids = [item["id"] for item in body["results"]]
    assert ids == [queue_claims["reported"].pk, queue_claims["hard"].pk, queue_claims["barely"].pk]
    assert body["count"] == 3
    first, hard = body["results"][0], body["results"][1]
    assert first["why"] == ["reports"] and first["open_reports"] == 1
    assert first["reports"][0] | {"created": None} == {
        "id": first["reports"][0]["id"], "reporter": first["reports"][0]["reporter"], "reason": "wrong_label",
        "note": "The page says the opposite.", "created": None, "open": True, "counts_for_hiding": True,
    }
    assert hard["why"] == ["too_hard"] and hard["votes"]["total"] == 8 and hard["votes"]["correct"] == 2
    assert hard["score"] == pytest.approx(6 / 13, abs=1e-4)
    assert hard["interval"][0] < hard["score"] < hard["interval"][1]
    assert hard["flags"]["out_of_play"] is True and "too hard" in hard["reasons"][0]
    assert hard["gold"] and hard["gold"][0]["text"] and hard["clues"][-1]["text"] == hard["gold"][0]["text"]
    assert hard["page"]["title"] == "Spotify"


@pytest.mark.parametrize(("query", "expected"), [("reason=reports", ["reported"]), ("reason=too_hard", ["hard", "barely"]), ("reason=too_easy", []), ("category=history", ["reported"]), ("category=History&reason=too_hard", [])])
def test_queue_filters_by_reason_and_category(moderator, queue_claims, query, expected) -> None:
    body = login("mona").get(f"/api/moderation/queue?{query}").json()
    assert [item["id"] for item in body["results"]] == [queue_claims[name].pk for name in expected]


@pytest.mark.parametrize("query", ["reason=spam", "limit=0", "limit=x"])
def test_bad_queue_filters_are_400(moderator, query) -> None:
    response = login("mona").get(f"/api/moderation/queue?{query}")
    assert response.status_code == 400 and response.json()["error"]["code"] in {"invalid_reason", "invalid_limit"}


def test_remove_over_the_api_returns_the_claim_after_the_action_and_leaves_the_queue(moderator, queue_claims) -> None:
    client = login("mona")
    claim = queue_claims["reported"]
    response = post(client, f"/api/moderation/claims/{claim.pk}/actions", {"action": "remove", "reason": "Mislabelled beyond repair."})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["id"] == claim.pk and body["status"] == "removed" and body["removed_reason"] == "Mislabelled beyond repair."
    assert body["flags"]["out_of_play"] is True
    assert body["audit"]["action"] == "remove" and body["audit"]["moderator"] == "mona"
    assert claim.pk not in [item["id"] for item in client.get("/api/moderation/queue").json()["results"]]
    log = client.get(f"/api/moderation/audit?claim={claim.pk}").json()
    assert [(r["action"], r["reason"], r["before"]["status"], r["after"]["status"]) for r in log] == [("remove", "Mislabelled beyond repair.", "active", "removed")]


def test_relabel_and_edit_evidence_over_the_api(moderator, queue_claims) -> None:
    client = login("mona")
    claim = queue_claims["hard"]
    body = post(client, f"/api/moderation/claims/{claim.pk}/actions", {"action": "relabel", "reason": "Label was flipped.", "label": "REFUTES"}).json()
    assert body["label"] == "REFUTES" and body["flags"]["kept"] is True and body["why"] == []
    sentence = claim.clues[0]["sentence_id"]
    body = post(client, f"/api/moderation/claims/{claim.pk}/actions", {"action": "edit_evidence", "reason": "Better gold.", "gold_sentence_ids": [sentence]}).json()
    assert [g["sentence_id"] for g in body["gold"]] == [sentence]
    assert AuditRecord.objects.filter(claim=claim).count() == 2


@pytest.mark.parametrize(
    ("payload", "status", "code"),
    [
        ({"action": "ban", "reason": "x"}, 400, "invalid_action"),
        ({"action": "remove"}, 400, "reason_required"),
        ({"action": "relabel", "reason": "x", "label": "SUPPORTS"}, 400, "label_unchanged"),
        ({"action": "edit_evidence", "reason": "x", "gold_sentence_ids": [1, 2, 3]}, 400, "invalid_gold"),
        (["remove"], 400, "invalid"),
    ],
)
def test_bad_action_over_the_api_is_4xx_with_a_code_and_changes_nothing(moderator, queue_claims, payload, status, code) -> None:
    claim = queue_claims["hard"]
    response = post(login("mona"), f"/api/moderation/claims/{claim.pk}/actions", payload)
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)
    assert Claim.objects.filter(pk=claim.pk).values("status", "label").get() == {"status": "active", "label": "SUPPORTS"}
    assert not AuditRecord.objects.exists()


def test_unknown_claim_is_404_over_the_api(moderator) -> None:
    response = post(login("mona"), "/api/moderation/claims/999999/actions", {"action": "keep", "reason": "x"})
    assert (response.status_code, response.json()["error"]["code"]) == (404, "claim_not_found")


def test_actions_need_the_csrf_token(moderator, queue_claims) -> None:
    client = login("mona")
    del client.defaults["HTTP_X_CSRFTOKEN"]
    response = post(client, f"/api/moderation/claims/{queue_claims['hard'].pk}/actions", {"action": "remove", "reason": "x"})
    assert response.status_code == 403 and Claim.objects.get(pk=queue_claims["hard"].pk).status == "active"


def test_queue_page_and_audit_page_show_the_work(moderator, queue_claims) -> None:
    client = login("mona")
    page = client.get("/moderation/").content.decode()
    assert queue_claims["reported"].text in page and "The page says the opposite." in page and queue_claims["healthy"].text not in page
    assert 'href="/moderation/"' in client.get("/").content.decode(), "moderators get a nav link"
    actions.claim_moderate(moderator=moderator, claim_id=queue_claims["hard"].pk, action="keep", reason="Hard but right.")
    audit = client.get("/moderation/audit/").content.decode()
    assert "Hard but right." in audit and "mona" in audit


def test_players_get_no_nav_link(db) -> None:
    UserFactory(username="pat")
    assert 'href="/moderation/"' not in login("pat").get("/").content.decode()


def test_schema_describes_the_moderation_endpoints(db) -> None:
    schema = Client().get("/api/schema/?format=json").json()
    assert {"/api/moderation/queue", "/api/moderation/claims/{claim_id}/actions", "/api/moderation/audit"} <= set(schema["paths"])


def test_queue_shows_each_claims_difficulty_with_its_deviation_beside_the_smoothed_rate(moderator, queue_claims) -> None:
    # Rated players average 1700 and rated claims 1800: break-even is 1400 on the 1500 scale.
    PlayerRating.objects.create(player=UserFactory(), rating=1700.0, deviation=80.0, votes=30)
    Claim.objects.filter(pk=queue_claims["hard"].pk).update(rating=2200.0, rating_deviation=40.0)
    Claim.objects.filter(pk=queue_claims["reported"].pk).update(rating=1400.0, rating_deviation=300.0)
    body = login("mona").get("/api/moderation/queue").json()
    by_id = {item["id"]: item for item in body["results"]}
    hard, reported_item, barely = by_id[queue_claims["hard"].pk], by_id[queue_claims["reported"].pk], by_id[queue_claims["barely"].pk]
    assert hard["difficulty"] | {"reason": ""} == {"rating": 2200, "deviation": 40, "too_hard": True, "reason": ""}
    assert "average player would be right" in hard["difficulty"]["reason"]
    assert reported_item["difficulty"]["too_hard"] is False, "a wide interval says nothing yet"
    assert barely["difficulty"] is None, "no vote in this game: unrated"
    page = login("mona").get("/moderation/").content.decode()
    assert "2200 ± 40" in page and "Hard by rating" in page and "no vote here yet" in page
    after = post(login("mona"), f"/api/moderation/claims/{queue_claims['hard'].pk}/actions", {"action": "keep", "reason": "Hard but right."})
    assert after.json()["difficulty"]["too_hard"] is True, "the action's answer shows the claim as the queue does"
