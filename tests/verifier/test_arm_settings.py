"""A study's arm sets the model points its writers are paid for a verified claim that fooled
the model (``hooks.player_settings``: ``model_points``), and may hide the model's verdict from
them: the verdict is recorded all the same (the data never changes, only what is shown)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from foolgame.players.models import LedgerEntry, Notification
from foolgame.verifier import services
from foolgame.verifier.models import WrittenAgainst
from tests.arm_settings import ArmProvider, arm  # noqa: F401  (fixture)
from tests.authoring.conftest import GOOD_CLAIM, api_client, make_eiffel, post, sentence_ids
from tests.verifier.conftest import confirm_by_checkers
from tests.verifier.test_writing import GOLD, _fooling_claim, model  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


def test_model_points_are_the_authors_arms(model, arm: ArmProvider) -> None:
    claim = _fooling_claim(model)
    arm.give(claim.author, model_points=120)
    confirm_by_checkers(claim)
    assert services.model_points_award() == 1
    entry = LedgerEntry.objects.get(kind=LedgerEntry.Kind.MODEL)
    assert (entry.player_id, entry.amount) == (claim.author_id, 120)
    assert Notification.objects.get(kind=Notification.Kind.MODEL_FOOLED).points == 120
    assert services.model_points_award() == 0, "paid once"


def test_model_points_of_zero_mark_the_claim_paid_without_a_ledger_row(model, arm: ArmProvider) -> None:
    claim = _fooling_claim(model)
    arm.give(claim.author, model_points=0)
    confirm_by_checkers(claim)
    assert services.model_points_award() == 1
    assert WrittenAgainst.objects.get(claim=claim).paid
    assert not LedgerEntry.objects.filter(kind=LedgerEntry.Kind.MODEL).exists()


def test_a_hidden_verdict_is_recorded_as_a_shown_one(model, arm: ArmProvider) -> None:
    page = make_eiffel()
    writer = api_client("writer")
    arm.give(get_user_model().objects.get(username="writer"), model_verdict=False)
    task = post(writer, "/api/write-tasks", {"page": page.pk}).json()
    body = {"task": task["id"], "text": GOOD_CLAIM, "gold_sentence_ids": [sentence_ids(page)[GOLD]]}
    assert post(writer, "/api/claims/check", body).json()["verdict"] is None
    saved = post(writer, "/api/claims", body)
    assert saved.status_code == 201 and saved.json()["verdict"] is None
    written = WrittenAgainst.objects.get(claim_id=saved.json()["id"])
    assert written.version == model and written.label in ("SUPPORTS", "REFUTES") and written.tries == 1
