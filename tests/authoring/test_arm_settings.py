"""A study's arm changes a writer's game on the server (``hooks.player_settings``): the
model's verdict shown or hidden (asked and recorded all the same), hints offered or not,
points shown or not (paid all the same), and the pages write tasks come from."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from foolgame.core import hooks
from foolgame.players.models import LedgerEntry
from tests.arm_settings import ArmProvider, arm  # noqa: F401  (fixture)
from tests.authoring.conftest import GOOD_CLAIM, api_client, make_eiffel, post, sentence_ids
from tests.factories import CategoryFactory, PageFactory, SentenceFactory

pytestmark = pytest.mark.django_db

GOLD = 3  # the Eiffel page's "tallest structure" sentence, GOOD_CLAIM's evidence
VERDICT = {"version": 1, "label": "REFUTES", "probability": 0.9, "fooled": True}


class RecordingVerdicts(hooks.ModelVerdicts):
    """A model in the loop that answers one verdict and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    def on_draft(self, *, task: Any, text: str, gold: Any) -> dict[str, Any] | None:
        self.asked.append(("draft", text))
        return dict(VERDICT)

    def on_save(self, *, claim: Any, task: Any, gold: Any) -> dict[str, Any] | None:
        self.asked.append(("save", claim.text))
        return dict(VERDICT)


@pytest.fixture
def verdicts():
    default = hooks.model_verdicts.get()
    provider = RecordingVerdicts()
    hooks.model_verdicts.set(provider)
    try:
        yield provider
    finally:
        hooks.model_verdicts.set(default)


def user(username: str):
    return get_user_model().objects.get(username=username)


def test_the_verdict_hidden_by_the_arm_is_asked_but_never_shown(arm: ArmProvider, verdicts: RecordingVerdicts) -> None:
    page = make_eiffel()
    hidden, shown = api_client("hidden"), api_client("shown")
    arm.give(user("hidden"), model_verdict=False)
    gold = [sentence_ids(page)[GOLD]]
    tasks = {name: post(client, "/api/write-tasks", {"page": page.pk}).json()["id"] for name, client in (("hidden", hidden), ("shown", shown))}
    check = post(shown, "/api/claims/check", {"task": tasks["shown"], "text": GOOD_CLAIM, "gold_sentence_ids": gold}).json()
    assert check["ok"] and check["verdict"] == VERDICT, "a writer without overrides sees the verdict"
    body = {"task": tasks["hidden"], "text": GOOD_CLAIM, "gold_sentence_ids": gold}
    check = post(hidden, "/api/claims/check", body).json()
    assert check["ok"] and check["verdict"] is None
    saved = post(hidden, "/api/claims", body)
    assert saved.status_code == 201, saved.content
    assert saved.json()["verdict"] is None
    assert verdicts.asked == [("draft", GOOD_CLAIM), ("draft", GOOD_CLAIM), ("save", GOOD_CLAIM)], "the model is asked all the same"


def test_points_hidden_from_the_writer_are_paid_to_the_ledger(arm: ArmProvider) -> None:
    page = make_eiffel()
    writer = api_client("writer")
    arm.give(user("writer"), points_shown=False)
    task = post(writer, "/api/write-tasks", {"page": page.pk}).json()
    saved = post(writer, "/api/claims", {"task": task["id"], "text": GOOD_CLAIM, "gold_sentence_ids": [sentence_ids(page)[GOLD]]})
    assert saved.status_code == 201 and "points" not in saved.json()
    assert LedgerEntry.objects.get(player=user("writer"), kind="write").amount == 100
    me = writer.get("/api/me").json()
    assert "points" not in me and me["username"] == "writer"
    other = api_client("other")
    assert other.get("/api/me").json()["points"]["total"] == 0, "a player without overrides sees their points"


def test_hints_off_refuses_the_writing_hints(arm: ArmProvider) -> None:
    page = make_eiffel()
    writer, other = api_client("writer"), api_client("other")
    arm.give(user("writer"), hints=False)
    post(writer, "/api/write-tasks", {"page": page.pk})
    post(other, "/api/write-tasks", {"page": page.pk})
    refused = writer.get(f"/api/pages/{page.pk}/hints", {"q": "tallest tower"})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "hints_off"
    hints = other.get(f"/api/pages/{page.pk}/hints", {"q": "tallest tower"})
    assert hints.status_code == 200 and hints.json()


def test_write_tasks_come_only_from_the_players_pages(arm: ArmProvider) -> None:
    study_page = make_eiffel()
    elsewhere = PageFactory(title="Moon", category=CategoryFactory(name="Space", slug="space"))
    for position in range(4):
        SentenceFactory(page=elsewhere, position=position, text=f"The Moon has a fact number {position} about its craters.")
    writer = api_client("writer")
    arm.pages[user("writer").pk] = [study_page.pk]
    refused = post(writer, "/api/write-tasks", {"page": elsewhere.pk})
    assert refused.status_code == 404 and refused.json()["error"]["code"] == "no_page"
    for _ in range(2):
        task = post(writer, "/api/write-tasks")
        assert task.status_code == 201 and task.json()["page"] == study_page.pk
    assert post(writer, "/api/write-tasks", {"category": "space"}).json()["error"]["code"] == "no_page"
    stranger = api_client("stranger")
    assert post(stranger, "/api/write-tasks", {"page": elsewhere.pk}).status_code == 201, "a player without a study's pages writes about any page"
