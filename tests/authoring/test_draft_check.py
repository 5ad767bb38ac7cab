"""POST /api/claims/check: what a save would say about a draft, saving and paying nothing.

Each test puts the same draft to the check and then to a save, and holds them to the same
codes, so the page cannot tell the author "fine" about a claim the save then refuses.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from foolgame.authoring import services
from foolgame.authoring.models import WriteTask
from foolgame.claims.models import Claim
from foolgame.pages.models import Page
from foolgame.voting.models import Round
from tests.authoring.conftest import GOOD_CLAIM, TOO_EASY_CLAIM, post, sentence_ids
from tests.authoring.test_apis import nothing_stored, take_task
from tests.factories import ClaimFactory

pytestmark = pytest.mark.django_db


def check(client: Client, task: int, text: str, gold: list[int] | None = None, status: int = 200) -> dict:
    response = post(client, "/api/claims/check", {"task": task, "text": text, "gold_sentence_ids": gold or []})
    assert response.status_code == status, response.content
    return response.json()


def codes(items: list[dict]) -> list[str]:
    return [item["code"] for item in items]


def save_codes(client: Client, task: int, text: str, gold: list[int]) -> tuple[int, list[str], list[str]]:
    """Status, problem codes and warning codes of a real save."""
    response = post(client, "/api/claims", {"task": task, "text": text, "gold_sentence_ids": gold})
    body = response.json()
    if response.status_code == 201:
        return 201, [], codes(body["warnings"])
    error = body["error"]
    return response.status_code, codes(error.get("details") or [error]), []


@pytest.mark.parametrize(
    ("text", "code", "status"),
    [
        ("asdf qwer zxcv uiop hjkl", "text_no_words", 400),
        ("😀 😀 😀 😀 😀", "text_no_words", 400),
        ("Bananas grow quickly in warm humid climates near oceans.", "text_off_page", 400),
        ("Eiffel", "text_too_short", 400),
        # Issue 24: page words in no sentence's order, the attack's shape and a shuffled claim.
        ("lattice iron Mars wrought Champ tower Eiffel Tower", "not_a_sentence", 400),
        ("decades than higher For built humans Tower. four was the nothing Eiffel", "not_a_sentence", 400),
        # Issue 36: a template of page words with grammar reads as a sentence, not as a claim.
        ("Eiffel Tower was the visitors of in the.", "not_fluent", 400),
        ("The Eiffel Tower was the of between in levels.", "not_fluent", 400),
    ],
)
def test_a_blocking_text_rule_has_the_same_code_as_the_save_and_stores_nothing(
    author: Client, eiffel: Page, text: str, code: str, status: int
) -> None:
    task = take_task(author)["id"]
    gold = [sentence_ids(eiffel)[3]]
    body = check(author, task, text, gold)
    assert body["ok"] is False and codes(body["problems"]) == [code] and body["warnings"] == []
    nothing_stored(task)
    assert save_codes(author, task, text, gold) == (status, [code], [])


def test_a_draft_is_checked_on_its_text_before_any_gold_is_ticked(author: Client, eiffel: Page) -> None:
    task = take_task(author)["id"]
    body = check(author, task, "asdf qwer zxcv uiop hjkl")
    assert codes(body["problems"]) == ["text_no_words"]  # no gold_count nagging while typing
    body = check(author, task, GOOD_CLAIM)
    assert body == {"ok": True, "problems": [], "warnings": [], "verdict": None}
    nothing_stored(task)


def test_a_near_duplicate_is_named_while_typing_without_naming_the_claim(author: Client, rival: Client, eiffel: Page) -> None:
    gold = [sentence_ids(eiffel)[3]]
    first = take_task(author)["id"]
    assert save_codes(author, first, GOOD_CLAIM, gold)[0] == 201
    task = take_task(rival)["id"]
    again = "  for four decades, nothing humans built was higher than the Eiffel-Tower!!! "
    body = check(rival, task, again)
    assert codes(body["problems"]) == ["near_duplicate"]
    assert GOOD_CLAIM not in str(body) and str(first) not in str(body["problems"])
    assert save_codes(rival, task, again, gold) == (409, ["near_duplicate"], [])
    assert Claim.objects.count() == 1


def test_a_one_word_edit_is_named_while_typing(author: Client, rival: Client, eiffel: Page) -> None:
    gold = [sentence_ids(eiffel)[3]]
    assert save_codes(author, take_task(author)["id"], GOOD_CLAIM, gold)[0] == 201
    task = take_task(rival)["id"]
    flipped = "For four decades nothing humans built is higher than the Eiffel Tower."
    assert codes(check(rival, task, flipped)["problems"]) == ["near_duplicate"]
    assert save_codes(rival, task, flipped, gold) == (409, ["near_duplicate"], [])
    assert Claim.objects.count() == 1


def test_gold_rules_run_once_gold_is_ticked(author: Client, eiffel: Page) -> None:
    task = take_task(author)["id"]
    gold = [sentence_ids(eiffel)[3]]
    assert codes(check(author, task, TOO_EASY_CLAIM, gold)["problems"]) == ["gold_too_easy"]
    assert codes(check(author, task, GOOD_CLAIM, [sentence_ids(eiffel)[3]] * 2)["problems"]) == ["gold_duplicate"]
    nothing_stored(task)
    assert save_codes(author, task, TOO_EASY_CLAIM, gold) == (400, ["gold_too_easy"], [])


@pytest.mark.parametrize(
    ("text", "warning"),
    [
        ("It was higher than anything humans had built for four decades.", "not_standalone"),
        ("For four decades nothing humans built was higher than this Paris landmark.", "not_standalone"),
    ],
)
def test_warnings_are_the_ones_the_save_gives(author: Client, eiffel: Page, text: str, warning: str) -> None:
    task = take_task(author)["id"]
    gold = [sentence_ids(eiffel)[3]]
    body = check(author, task, text, gold)
    assert body["ok"] is True and body["problems"] == [] and codes(body["warnings"]) == [warning]
    assert save_codes(author, task, text, gold) == (201, [], [warning])


def test_close_to_an_existing_claim_and_giveaway_warnings_show_while_typing(
    author: Client, rival: Client, eiffel: Page, monkeypatch
) -> None:
    gold = [sentence_ids(eiffel)[3]]
    assert save_codes(author, take_task(author)["id"], GOOD_CLAIM, gold)[0] == 201
    task = take_task(rival)
    label = WriteTask.objects.get(pk=task["id"]).label
    monkeypatch.setattr(services, "giveaway_guess", lambda *, text: (label, 0.93))
    near = "For four decades nothing humans built was taller than the Eiffel Tower in Paris."  # close, two words away
    body = check(rival, task["id"], near)
    assert codes(body["warnings"]) == ["close_to_existing_claim", "giveaway"]
    assert "93%" in body["warnings"][1]["message"]
    assert save_codes(rival, task["id"], near, gold) == (201, [], ["close_to_existing_claim", "giveaway"])


def test_the_check_pays_nothing_and_leaves_the_task_open(author: Client, eiffel: Page) -> None:
    task = take_task(author)["id"]
    for _ in range(3):
        assert check(author, task, GOOD_CLAIM, [sentence_ids(eiffel)[3]])["ok"] is True
    nothing_stored(task)
    assert save_codes(author, task, GOOD_CLAIM, [sentence_ids(eiffel)[3]])[0] == 201


def test_another_players_task_is_refused(author: Client, rival: Client, eiffel: Page) -> None:
    task = take_task(author)["id"]
    body = check(rival, task, GOOD_CLAIM, status=403)
    assert body["error"]["code"] == "task_not_yours"
    assert "Eiffel" not in str(body)


def test_unknown_used_and_expired_tasks_are_refused_as_a_save_would(author: Client, eiffel: Page) -> None:
    assert check(author, 999999, GOOD_CLAIM, status=404)["error"]["code"] == "task_not_found"
    used = take_task(author)["id"]
    assert save_codes(author, used, GOOD_CLAIM, [sentence_ids(eiffel)[3]])[0] == 201
    assert check(author, used, "The Eiffel Tower is in Paris, France.", status=409)["error"]["code"] == "task_used"
    expired = take_task(author)["id"]
    WriteTask.objects.filter(pk=expired).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert check(author, expired, "The Eiffel Tower is in Paris, France.", status=410)["error"]["code"] == "task_expired"


def test_the_check_needs_a_login_and_a_csrf_token(author: Client, eiffel: Page) -> None:
    task = take_task(author)["id"]
    assert Client().post("/api/claims/check", {"task": task, "text": GOOD_CLAIM}, content_type="application/json").status_code == 403
    response = author.post("/api/claims/check", {"task": task, "text": GOOD_CLAIM}, content_type="application/json")
    assert response.status_code == 403


def test_checks_are_capped_per_player_and_minute(author: Client, eiffel: Page, settings) -> None:
    settings.FM2 = {**settings.FM2, "DRAFT_CHECKS_PER_MINUTE": 3}
    task = take_task(author)["id"]
    for _ in range(3):
        check(author, task, GOOD_CLAIM)
    response = post(author, "/api/claims/check", {"task": task, "text": GOOD_CLAIM})
    assert response.status_code == 429 and response.json()["error"]["code"] == "check_throttled"
    assert 0 < int(response["Retry-After"]) <= 60


def test_no_checks_on_the_page_of_a_round_the_player_is_playing(author: Client, eiffel: Page) -> None:
    task = take_task(author)["id"]
    ids = sentence_ids(eiffel)
    player = get_user_model().objects.get(username="author")
    now = timezone.now()
    Round.objects.create(
        player=player,
        left_claim=ClaimFactory(page=eiffel, gold=[eiffel.sentences.get(pk=ids[0])]),
        right_claim=ClaimFactory(page=eiffel, label="REFUTES", gold=[eiffel.sentences.get(pk=ids[1])]),
        state="playing",
        started_at=now,
        deadline=now + timedelta(minutes=3),
    )
    body = check(author, task, TOO_EASY_CLAIM, [ids[3]], status=403)
    assert body["error"]["code"] == "check_during_round"


def test_the_schema_describes_the_check(author: Client) -> None:
    paths = author.get("/api/schema/?format=json").json()["paths"]
    assert "post" in paths["/api/claims/check"]


# --- A write task on a page the player chose -----------------------------------------------------


def test_a_write_task_on_a_chosen_page_uses_that_page(author: Client, eiffel: Page, settings) -> None:
    from tests.factories import PageFactory, SentenceFactory

    settings.FM2 = {**settings.FM2, "MAX_OPEN_WRITE_TASKS": 5}
    priority = PageFactory(title="Louvre", priority=True, category=eiffel.category)
    SentenceFactory.create_batch(3, page=priority)
    assert take_task(author)["page"] == priority.pk  # the server's pick
    task = take_task(author, page=eiffel.pk, category="some-other-category")  # the category is ignored
    assert task["page"] == eiffel.pk and task["page_title"] == "Eiffel Tower" and task["veracity"] in ("TRUE", "FALSE")


def test_a_write_task_on_an_unknown_page_is_refused(author: Client, eiffel: Page) -> None:
    response = post(author, "/api/write-tasks", {"page": 999999})
    assert response.status_code == 404 and response.json()["error"]["code"] == "unknown_page"
    assert WriteTask.objects.count() == 0


def test_a_write_task_on_a_page_with_too_few_sentences_is_refused(author: Client, eiffel: Page) -> None:
    from tests.factories import PageFactory, SentenceFactory

    stub = PageFactory(title="Stub")
    SentenceFactory(page=stub)
    response = post(author, "/api/write-tasks", {"page": stub.pk})
    assert response.status_code == 409 and response.json()["error"]["code"] == "page_not_writable"
    assert "too few sentences" in response.json()["error"]["message"]
    assert WriteTask.objects.count() == 0


def test_a_chosen_page_still_counts_against_the_open_task_cap(author: Client, eiffel: Page, settings) -> None:
    settings.FM2 = {**settings.FM2, "MAX_OPEN_WRITE_TASKS": 1}
    take_task(author, page=eiffel.pk)
    response = post(author, "/api/write-tasks", {"page": eiffel.pk})
    assert response.status_code == 409 and response.json()["error"]["code"] == "too_many_open_tasks"


def test_a_page_id_of_the_wrong_type_is_refused(author: Client, eiffel: Page) -> None:
    response = post(author, "/api/write-tasks", {"page": "eiffel"})
    assert response.status_code == 400
    assert WriteTask.objects.count() == 0
