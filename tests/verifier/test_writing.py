"""Writers play against the active version: its verdict in the draft check and the save, the
tries they take, and the model points a confirmed fooling claim pays."""

from __future__ import annotations

import threading

import pytest
from django.test import Client

from foolgame.checks.models import ClaimValidation
from foolgame.claims.models import Claim
from foolgame.players.models import LedgerEntry, Notification
from foolgame.verifier import runtime, services
from foolgame.verifier.models import ClaimVerdict, Try, VerifierVersion, WrittenAgainst
from tests.authoring.conftest import GOOD_CLAIM, api_client, make_eiffel, post, sentence_ids
from tests.authoring.test_apis import take_task
from tests.verifier.conftest import confirm_by_checkers, learnable_claims

pytestmark = pytest.mark.django_db

GOLD = 3  # the Eiffel page's "tallest structure" sentence, GOOD_CLAIM's evidence


@pytest.fixture
def model() -> VerifierVersion:
    learnable_claims(pages=8)
    version = services.verifier_train_now()
    assert version is not None and version.status == VerifierVersion.Status.ACTIVE
    return version


def draft(client: Client, task: int, text: str, gold: list[int]) -> dict:
    response = post(client, "/api/claims/check", {"task": task, "text": text, "gold_sentence_ids": gold})
    assert response.status_code == 200, response.content
    return response.json()


def test_no_model_no_verdict() -> None:
    page = make_eiffel()
    author = api_client("author")
    task = take_task(author, category="geography")
    body = draft(author, task["id"], GOOD_CLAIM, [sentence_ids(page)[GOLD]])
    assert body["ok"] and body["verdict"] is None


def test_the_draft_check_shows_the_verdict_and_each_distinct_draft_is_one_try(model) -> None:
    page = make_eiffel()
    author = api_client("author")
    task = take_task(author, category="geography")
    gold = [sentence_ids(page)[GOLD]]
    body = draft(author, task["id"], GOOD_CLAIM, gold)
    verdict = body["verdict"]
    assert verdict["version"] == model.number and verdict["label"] in ("SUPPORTS", "REFUTES")
    assert 0.5 <= verdict["probability"] <= 1.0
    truth = "SUPPORTS" if task["veracity"] == "TRUE" else "REFUTES"
    assert verdict["fooled"] == (verdict["label"] != truth)
    draft(author, task["id"], GOOD_CLAIM + "  ", gold)  # the same draft again (spaces aside): no new try
    assert Try.objects.filter(task_id=task["id"]).count() == 1
    draft(author, task["id"], GOOD_CLAIM.replace("four decades", "forty years"), gold)
    assert Try.objects.filter(task_id=task["id"]).count() == 2
    # No verdict until the draft would save: no gold ticked yet.
    assert draft(author, task["id"], GOOD_CLAIM, [])["verdict"] is None


def test_the_save_records_the_version_written_against_with_its_verdict_and_tries(model) -> None:
    page = make_eiffel()
    author = api_client("author")
    task = take_task(author, category="geography")
    gold = [sentence_ids(page)[GOLD]]
    draft(author, task["id"], GOOD_CLAIM.replace("four decades", "forty years"), gold)
    draft(author, task["id"], GOOD_CLAIM, gold)
    response = post(author, "/api/claims", {"task": task["id"], "text": GOOD_CLAIM, "gold_sentence_ids": gold})
    assert response.status_code == 201, response.content
    saved = response.json()
    written = WrittenAgainst.objects.get(claim_id=saved["id"])
    assert written.version == model and written.tries == 2  # one other draft, then this one saved
    assert saved["verdict"]["label"] == written.label and saved["verdict"]["version"] == model.number
    assert ClaimVerdict.objects.filter(claim_id=saved["id"], version=model).exists()


def test_a_copy_of_a_claim_in_play_gets_no_verdict(model) -> None:
    """Three free accounts: one plays a round on the page, another pastes the claim into a
    draft of its own on the same page. A near duplicate never reaches the model, so the
    verdict is no oracle for the round's answer."""
    page = make_eiffel()
    writer = api_client("writer")
    task = take_task(writer, category="geography")
    gold = [sentence_ids(page)[GOLD]]
    assert post(writer, "/api/claims", {"task": task["id"], "text": GOOD_CLAIM, "gold_sentence_ids": gold}).status_code == 201
    copier = api_client("copier")
    other = take_task(copier, category="geography")
    body = draft(copier, other["id"], GOOD_CLAIM, gold)
    assert "near_duplicate" in [p["code"] for p in body["problems"]]
    assert body["verdict"] is None
    assert not Try.objects.filter(task_id=other["id"]).exists()


def test_a_model_still_loading_answers_pending_without_holding_the_request(model, settings, monkeypatch) -> None:
    settings.FM2_VERIFIER = {**settings.FM2_VERIFIER, "BLOCKING_LOAD": False}
    runtime.forget()
    release = threading.Event()
    built = threading.Event()
    real_build = runtime.build

    def slow_build(version, blob=None):
        release.wait(30)
        verifier = real_build(version, blob)
        built.set()
        return verifier

    monkeypatch.setattr(runtime, "build", slow_build)
    page = make_eiffel()
    author = api_client("author")
    task = take_task(author, category="geography")
    body = draft(author, task["id"], GOOD_CLAIM, [sentence_ids(page)[GOLD]])
    assert body["verdict"] == {"version": model.number, "pending": True, "message": body["verdict"]["message"]}
    assert not built.is_set()  # the request came back while the model was still loading
    release.set()
    assert built.wait(30)


def _fooling_claim(model: VerifierVersion) -> Claim:
    """A game claim its version got wrong at the save."""
    page = make_eiffel()
    author = api_client("fooler")
    task = take_task(author, category="geography")
    response = post(author, "/api/claims", {"task": task["id"], "text": GOOD_CLAIM, "gold_sentence_ids": [sentence_ids(page)[GOLD]]})
    claim = Claim.objects.get(pk=response.json()["id"])
    wrong = "REFUTES" if claim.label == "SUPPORTS" else "SUPPORTS"
    WrittenAgainst.objects.filter(claim=claim).update(label=wrong, supports=0.9 if wrong == "SUPPORTS" else 0.1)
    return claim


def test_model_points_wait_for_people_to_confirm_the_label_and_are_paid_once(model) -> None:
    claim = _fooling_claim(model)
    assert services.model_points_award() == 0  # only the author says so yet
    ClaimValidation.objects.create(claim=claim, labels=4, gold_label="-")  # checked, no gold label yet
    assert services.model_points_award() == 0
    ClaimValidation.objects.filter(claim=claim).update(gold_label=claim.label)  # by checkers nobody knows
    assert services.model_points_award() == 0
    confirm_by_checkers(claim)  # three independent checkers whose labels count
    assert services.model_points_award() == 1
    assert services.model_points_award() == 0
    entry = LedgerEntry.objects.get(kind=LedgerEntry.Kind.MODEL)
    assert entry.player_id == claim.author_id and entry.amount == 50 and entry.claim_id == claim.pk
    note = Notification.objects.get(kind=Notification.Kind.MODEL_FOOLED)
    assert note.player_id == claim.author_id and note.points == 50


def test_a_claim_people_dispute_or_the_model_got_right_pays_nothing(model) -> None:
    claim = _fooling_claim(model)
    ClaimValidation.objects.create(claim=claim, labels=4, gold_label="REFUTES" if claim.label == "SUPPORTS" else "SUPPORTS")
    assert services.model_points_award() == 0
    confirm_by_checkers(claim)
    WrittenAgainst.objects.filter(claim=claim).update(label=claim.label)  # the model got it right after all
    assert services.model_points_award() == 0
    assert not LedgerEntry.objects.filter(kind=LedgerEntry.Kind.MODEL).exists()


def test_model_points_are_capped_a_day_and_a_claim_over_the_cap_is_paid_later(model, settings) -> None:
    """Four fresh accounts can check a claim as its author says: the points such a ring could
    farm are bounded a day, and what is over the cap waits rather than vanishes."""
    from datetime import timedelta

    settings.FM2_VERIFIER = {**settings.FM2_VERIFIER, "MODEL_POINTS_PER_DAY": 50}
    first = _fooling_claim(model)
    author = first.author
    page = first.page
    second = Claim.objects.create(page=page, text=first.text + " Really.", label=first.label, author=author)
    WrittenAgainst.objects.create(claim=second, version=model, label="REFUTES" if first.label == "SUPPORTS" else "SUPPORTS", supports=0.5)
    for claim in (first, second):
        confirm_by_checkers(claim)
    assert services.model_points_award() == 1
    assert LedgerEntry.objects.filter(kind=LedgerEntry.Kind.MODEL).count() == 1
    assert services.model_points_award() == 0  # still within the day
    LedgerEntry.objects.filter(kind=LedgerEntry.Kind.MODEL).update(created=LedgerEntry.objects.get(kind="model").created - timedelta(days=1, minutes=1))
    assert services.model_points_award() == 1
    assert LedgerEntry.objects.filter(kind=LedgerEntry.Kind.MODEL, player=author).count() == 2
