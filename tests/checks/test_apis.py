"""The fact-check endpoints over HTTP: the documented shapes, one answer, only one's own."""

from __future__ import annotations

import pytest
from django.test import Client

from foolgame.checks.models import Check
from tests.checks.conftest import open_claim
from tests.factories import UserFactory
from tests.moderation.conftest import login

pytestmark = pytest.mark.django_db


def test_a_player_deals_and_answers_checks_over_rest(fake_clock) -> None:
    claim = open_claim("Vega", label="REFUTES")
    open_claim("Deneb")
    UserFactory(username="cora")
    client = login("cora")
    dealt = client.post("/api/checks", content_type="application/json")
    assert dealt.status_code == 201
    body = dealt.json()
    assert set(body) == {"id", "claim", "evidence", "expires_at"} and set(body["claim"]) == {"id", "text", "page"}
    assert "REFUTES" not in dealt.content.decode()
    answered = client.post(f"/api/checks/{body['id']}", {"label": "NOT ENOUGH INFO"}, content_type="application/json")
    assert answered.status_code == 200
    result = answered.json()
    assert set(result) == {"points", "streak", "counting", "message", "tally", "next"} and result["points"] == 0
    assert result["tally"] == {"answered": 1, "size": 20, "last": None} and result["streak"] == 1
    assert result["next"] is not None and result["next"]["claim"]["id"] != body["claim"]["id"]
    again = client.post(f"/api/checks/{body['id']}", {"label": "REFUTES"}, content_type="application/json")
    assert (again.status_code, again.json()["error"]["code"]) == (409, "check_answered")
    assert Check.objects.get(pk=body["id"]).label == "NOT ENOUGH INFO"
    assert claim.pk in {body["claim"]["id"], result["next"]["claim"]["id"]}


def test_bad_answers_get_a_clear_error_and_change_nothing(fake_clock) -> None:
    open_claim("Vega")
    UserFactory(username="cora")
    UserFactory(username="otto")
    cora, otto = login("cora"), login("otto")
    check_id = cora.post("/api/checks", content_type="application/json").json()["id"]
    bad = cora.post(f"/api/checks/{check_id}", {"label": "maybe"}, content_type="application/json")
    assert (bad.status_code, bad.json()["error"]["code"]) == (400, "invalid")
    theirs = otto.post(f"/api/checks/{check_id}", {"label": "SUPPORTS"}, content_type="application/json")
    assert (theirs.status_code, theirs.json()["error"]["code"]) == (404, "not_found")
    anonymous = Client().post(f"/api/checks/{check_id}", {"label": "SUPPORTS"}, content_type="application/json")
    assert anonymous.status_code == 403
    assert Check.objects.get(pk=check_id).answered_at is None
    nothing = otto.post("/api/checks", content_type="application/json")  # the claim is dealt to otto too: checks are independent
    assert nothing.status_code == 201
    assert otto.post("/api/checks", content_type="application/json").json()["id"] == nothing.json()["id"]


def test_nothing_left_is_a_409_with_its_code(fake_clock) -> None:
    UserFactory(username="cora")
    response = login("cora").post("/api/checks", content_type="application/json")
    assert (response.status_code, response.json()["error"]["code"]) == (409, "nothing_to_check")


def test_the_schema_documents_both_endpoints() -> None:
    schema = Client().get("/api/schema/?format=json").json()
    assert {"201", "409", "429"} <= set(schema["paths"]["/api/checks"]["post"]["responses"])
    answer = schema["paths"]["/api/checks/{check_id}"]["post"]
    assert {"200", "400", "404", "409"} <= set(answer["responses"])
