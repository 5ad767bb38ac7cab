"""Write tasks and claim creation over the REST API: every rule, each with its own code.

A refused claim must leave nothing behind: no claim, no gold, no points, the task unused.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from foolgame.authoring.models import WriteTask
from foolgame.claims.models import Claim, ClaimGold
from foolgame.evidence.services import page_top_lexical_hit
from foolgame.pages.models import Page
from foolgame.players.models import LedgerEntry
from tests.authoring.conftest import GOOD_CLAIM, TOO_EASY_CLAIM, post, sentence_ids
from tests.factories import PageFactory, SentenceFactory

pytestmark = pytest.mark.django_db


def take_task(client: Client, **data) -> dict:
    response = post(client, "/api/write-tasks", data)
    assert response.status_code == 201, response.content
    return response.json()


def nothing_stored(task_id: int | None = None) -> None:
    assert Claim.objects.count() == 0
    assert ClaimGold.objects.count() == 0
    assert LedgerEntry.objects.count() == 0
    if task_id is not None and WriteTask.objects.filter(pk=task_id).exists():
        assert WriteTask.objects.get(pk=task_id).used_at is None


def refused(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["code"] == code and error["message"]
    return error


def test_write_task_gives_a_page_a_veracity_and_a_deadline(author: Client, eiffel: Page) -> None:
    before = timezone.now()
    task = take_task(author)
    assert task["page"] == eiffel.pk and task["veracity"] in ("TRUE", "FALSE")
    row = WriteTask.objects.get(pk=task["id"])
    assert row.write_by - row.created == timedelta(minutes=8)
    assert row.expires_at - row.created == timedelta(minutes=10)
    assert row.created >= before


def test_write_task_needs_a_login(eiffel: Page) -> None:
    client = Client()
    assert client.post("/api/write-tasks", {}, content_type="application/json").status_code == 403


def test_write_task_in_an_unknown_category_is_refused(author: Client, eiffel: Page) -> None:
    refused(post(author, "/api/write-tasks", {"category": "knitting"}), 404, "unknown_category")
    assert WriteTask.objects.count() == 0


def test_write_task_in_a_category_uses_that_category(author: Client, eiffel: Page) -> None:
    other = PageFactory(title="Hamlet")
    SentenceFactory.create_batch(3, page=other)
    assert take_task(author, category=other.category.slug)["page"] == other.pk
    assert take_task(author, category="Geography")["page"] == eiffel.pk


def test_priority_pages_and_pages_with_few_claims_come_first(author: Client, eiffel: Page, settings) -> None:
    settings.FM2 = {**settings.FM2, "MAX_OPEN_WRITE_TASKS": 10}  # one author takes many tasks here
    busy = PageFactory(title="Busy page", category=eiffel.category)
    quiet = PageFactory(title="Quiet page", category=eiffel.category)
    for page in (busy, quiet):
        SentenceFactory.create_batch(3, page=page)
    from tests.factories import ClaimFactory

    ClaimFactory(page=eiffel)
    ClaimFactory.create_batch(2, page=busy)
    assert take_task(author)["page"] == quiet.pk  # no claims yet
    # the quiet page now has an open task, so the eiffel page (1 claim) and it tie
    pages = {take_task(author)["page"] for _ in range(2)}
    assert busy.pk not in pages
    busy.priority = True
    busy.save()
    assert take_task(author)["page"] == busy.pk


def test_a_good_claim_is_saved_with_its_clues_and_earns_100_write_points(author: Client, eiffel: Page) -> None:
    ids = sentence_ids(eiffel)
    assert page_top_lexical_hit(page=eiffel, query=GOOD_CLAIM) != ids[3]
    task = take_task(author)
    response = post(author, "/api/claims", {"task": task["id"], "text": f"  {GOOD_CLAIM}\n", "gold_sentence_ids": [ids[3]]})
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["points"] == 100 and isinstance(body["warnings"], list)
    claim = Claim.objects.get(pk=body["id"])
    assert claim.text == GOOD_CLAIM  # whitespace normalised
    assert claim.label == ("SUPPORTS" if task["veracity"] == "TRUE" else "REFUTES")
    assert [g.sentence_id for g in claim.gold_links.all()] == [ids[3]]
    assert claim.clues[-1]["sentence_id"] == ids[3]
    assert ids[3] not in [clue["sentence_id"] for clue in claim.clues[:-1]]
    assert set(claim.clues[0]) == {"sentence_id", "text", "section_header"}
    entry = LedgerEntry.objects.get()
    assert (entry.player.username, entry.amount, entry.kind, entry.claim_id, entry.cause) == ("author", 100, "write", claim.pk, f"claim:{claim.pk}")
    row = WriteTask.objects.get(pk=task["id"])
    assert row.used_at is not None and row.claim_id == claim.pk
    assert author.get("/api/me").json()["points"]["write"] == 100


def test_claims_need_a_login(eiffel: Page) -> None:
    client = Client()
    response = client.post("/api/claims", {"task": 1, "text": GOOD_CLAIM, "gold_sentence_ids": [1]}, content_type="application/json")
    assert response.status_code == 403


def test_claim_without_csrf_token_is_refused(author: Client, eiffel: Page) -> None:
    task = take_task(author)
    response = author.post(
        "/api/claims", {"task": task["id"], "text": GOOD_CLAIM, "gold_sentence_ids": [sentence_ids(eiffel)[3]]}, content_type="application/json"
    )
    refused(response, 403, "permission_denied")
    nothing_stored(task["id"])


def test_unknown_task_is_refused(author: Client, eiffel: Page) -> None:
    refused(post(author, "/api/claims", {"task": 999999, "text": GOOD_CLAIM, "gold_sentence_ids": [sentence_ids(eiffel)[3]]}), 404, "task_not_found")
    nothing_stored()


def test_another_players_task_is_refused(author: Client, rival: Client, eiffel: Page) -> None:
    task = take_task(rival)
    response = post(author, "/api/claims", {"task": task["id"], "text": GOOD_CLAIM, "gold_sentence_ids": [sentence_ids(eiffel)[3]]})
    refused(response, 403, "task_not_yours")
    nothing_stored(task["id"])


def test_expired_task_is_refused(author: Client, eiffel: Page) -> None:
    task = take_task(author)
    WriteTask.objects.filter(pk=task["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = post(author, "/api/claims", {"task": task["id"], "text": GOOD_CLAIM, "gold_sentence_ids": [sentence_ids(eiffel)[3]]})
    refused(response, 410, "task_expired")
    nothing_stored(task["id"])


def test_task_is_still_good_in_the_grace_period(author: Client, eiffel: Page) -> None:
    task = take_task(author)
    now = timezone.now()
    WriteTask.objects.filter(pk=task["id"]).update(write_by=now - timedelta(seconds=30), expires_at=now + timedelta(seconds=90))
    response = post(author, "/api/claims", {"task": task["id"], "text": GOOD_CLAIM, "gold_sentence_ids": [sentence_ids(eiffel)[3]]})
    assert response.status_code == 201


def test_reused_task_is_refused_and_pays_once(author: Client, eiffel: Page) -> None:
    task = take_task(author)
    payload = {"task": task["id"], "text": GOOD_CLAIM, "gold_sentence_ids": [sentence_ids(eiffel)[3]]}
    assert post(author, "/api/claims", payload).status_code == 201
    payload["text"] = "Before 1930 nothing humans built was higher than the Eiffel Tower."
    refused(post(author, "/api/claims", payload), 409, "task_used")
    assert Claim.objects.count() == 1 and LedgerEntry.objects.count() == 1


def test_gold_from_another_page_is_refused(author: Client, eiffel: Page) -> None:
    elsewhere = SentenceFactory(page=PageFactory())
    task = take_task(author, category="geography")
    response = post(author, "/api/claims", {"task": task["id"], "text": GOOD_CLAIM, "gold_sentence_ids": [sentence_ids(eiffel)[3], elsewhere.pk]})
    refused(response, 400, "gold_not_on_page")
    nothing_stored(task["id"])


def test_retired_or_unknown_gold_is_refused(author: Client, eiffel: Page) -> None:
    ids = sentence_ids(eiffel)
    eiffel.sentences.filter(pk=ids[3]).update(retired=True)
    task = take_task(author)
    refused(post(author, "/api/claims", {"task": task["id"], "text": GOOD_CLAIM, "gold_sentence_ids": [ids[3]]}), 400, "gold_not_on_page")
    refused(post(author, "/api/claims", {"task": task["id"], "text": GOOD_CLAIM, "gold_sentence_ids": [987654]}), 400, "gold_not_on_page")
    nothing_stored(task["id"])


@pytest.mark.parametrize("count", [0, 3])
def test_zero_or_three_gold_sentences_are_refused(author: Client, eiffel: Page, count: int) -> None:
    task = take_task(author)
    response = post(author, "/api/claims", {"task": task["id"], "text": GOOD_CLAIM, "gold_sentence_ids": sentence_ids(eiffel)[:count]})
    refused(response, 400, "gold_count")
    nothing_stored(task["id"])


def test_the_same_gold_sentence_twice_is_refused(author: Client, eiffel: Page) -> None:
    task = take_task(author)
    gold = sentence_ids(eiffel)[3]
    refused(post(author, "/api/claims", {"task": task["id"], "text": GOOD_CLAIM, "gold_sentence_ids": [gold, gold]}), 400, "gold_duplicate")
    nothing_stored(task["id"])


@pytest.mark.parametrize(
    "text, code",
    [
        ("", "text_empty"),
        ("   \n\t ", "text_empty"),
        ("Eiffel Tower tall", "text_too_short"),
        ("x" * 10_000, "text_too_long"),
        ("Eiffel Tower " * 31, "text_too_long"),  # 62 words in 403 characters
        ("The Eiffel Tower \x00 hides a NUL byte in Paris", "text_control_characters"),
        ("The Eiffel Tower \u202e sraey 14 rof tsellat", "text_control_characters"),
    ],
)
def test_bad_text_is_refused(author: Client, eiffel: Page, text: str, code: str) -> None:
    task = take_task(author)
    response = post(author, "/api/claims", {"task": task["id"], "text": text, "gold_sentence_ids": [sentence_ids(eiffel)[3]]})
    refused(response, 400, code)
    nothing_stored(task["id"])


@pytest.mark.parametrize(
    ("payload", "fields"),
    [
        ({"text": GOOD_CLAIM, "gold_sentence_ids": [1]}, ["task"]),  # no task
        ({"task": "one", "text": GOOD_CLAIM, "gold_sentence_ids": [1]}, ["task"]),
        ({"task": 1, "text": ["not", "a", "string"], "gold_sentence_ids": [1]}, ["text"]),
        ({"task": 1, "text": GOOD_CLAIM, "gold_sentence_ids": "1"}, ["gold_sentence_ids"]),
        ({"task": 1, "text": GOOD_CLAIM}, ["gold_sentence_ids"]),
        ({"task": 0, "text": None, "gold_sentence_ids": [1, "x"]}, ["task", "text", "gold_sentence_ids"]),
        ([GOOD_CLAIM], ["non_field_errors"]),
    ],
)
def test_malformed_requests_are_refused_naming_each_field_as_the_rules_are(author: Client, eiffel: Page, payload, fields: list[str]) -> None:
    """A malformed body's 400 ``invalid`` lists its fields in ``details`` in the shape the
    schema documents for this endpoint and the writing page reads: ``[{code, field, message}]``,
    as a claim that breaks the rules does (it was an object of fields, off the schema)."""
    error = refused(post(author, "/api/claims", payload), 400, "invalid")
    assert isinstance(error["details"], list)
    assert [d["field"] for d in error["details"]] == fields
    assert all(d["code"] == "invalid" and d["message"] for d in error["details"])
    nothing_stored()


def test_a_malformed_item_is_named_in_its_message(author: Client, eiffel: Page) -> None:
    error = refused(post(author, "/api/claims", {"task": 1, "text": GOOD_CLAIM, "gold_sentence_ids": [1, "x"]}), 400, "invalid")
    assert error["details"] == [{"code": "invalid", "field": "gold_sentence_ids", "message": "gold_sentence_ids[1]: A valid integer is required."}]


def test_other_endpoints_keep_details_as_an_object_of_fields(author: Client, eiffel: Page) -> None:
    error = refused(post(author, "/api/write-tasks", {"page": "x"}), 400, "invalid")
    assert error["details"] == {"page": ["A valid integer is required."]}


def test_every_broken_rule_is_named(author: Client, eiffel: Page) -> None:
    task = take_task(author)
    response = post(author, "/api/claims", {"task": task["id"], "text": "Short \x07 text", "gold_sentence_ids": []})
    error = refused(response, 400, "text_too_short")
    assert [d["code"] for d in error["details"]] == ["text_too_short", "text_control_characters", "gold_count"]
    assert {d["field"] for d in error["details"]} == {"text", "gold_sentence_ids"}
    nothing_stored(task["id"])


def test_gold_that_is_the_top_hit_is_too_easy(author: Client, eiffel: Page) -> None:
    ids = sentence_ids(eiffel)
    assert page_top_lexical_hit(page=eiffel, query=TOO_EASY_CLAIM) == ids[3]
    task = take_task(author)
    response = post(author, "/api/claims", {"task": task["id"], "text": TOO_EASY_CLAIM, "gold_sentence_ids": [ids[3]]})
    error = refused(response, 400, "gold_too_easy")
    assert [d["code"] for d in error["details"]] == ["gold_too_easy"]
    nothing_stored(task["id"])
    # Rewritten, the same task is still good.
    response = post(author, "/api/claims", {"task": task["id"], "text": GOOD_CLAIM, "gold_sentence_ids": [ids[3]]})
    assert response.status_code == 201


def test_a_second_gold_sentence_that_is_the_top_hit_is_too_easy(author: Client, eiffel: Page) -> None:
    ids = sentence_ids(eiffel)
    task = take_task(author)
    response = post(author, "/api/claims", {"task": task["id"], "text": TOO_EASY_CLAIM, "gold_sentence_ids": [ids[2], ids[3]]})
    refused(response, 400, "gold_too_easy")
    nothing_stored(task["id"])


def test_claim_copying_its_gold_is_refused(author: Client, eiffel: Page) -> None:
    ids = sentence_ids(eiffel)
    copy = "More than 300 million people visited the tower since its construction in 1889."
    # The earlier, identical sentence is the top hit: only copies_gold is broken.
    assert page_top_lexical_hit(page=eiffel, query=copy) == ids[5]
    task = take_task(author)
    error = refused(post(author, "/api/claims", {"task": task["id"], "text": copy, "gold_sentence_ids": [ids[6]]}), 400, "copies_gold")
    assert [d["code"] for d in error["details"]] == ["copies_gold"]
    # Copying the top hit too: both rules are named.
    error = refused(post(author, "/api/claims", {"task": task["id"], "text": copy, "gold_sentence_ids": [ids[5]]}), 400, "gold_too_easy")
    assert [d["code"] for d in error["details"]] == ["gold_too_easy", "copies_gold"]
    nothing_stored(task["id"])


def warning_codes(author: Client, eiffel: Page, text: str, gold: int = 3) -> list[str]:
    task = take_task(author)
    response = post(author, "/api/claims", {"task": task["id"], "text": text, "gold_sentence_ids": [sentence_ids(eiffel)[gold]]})
    assert response.status_code == 201, response.content
    return [w["code"] for w in response.json()["warnings"]]


def test_a_good_claim_has_no_warnings(author: Client, eiffel: Page) -> None:
    assert warning_codes(author, eiffel, GOOD_CLAIM) == []


@pytest.mark.parametrize(
    "text",
    [
        "It was higher than anything humans had built for four decades.",  # a pronoun opens it
        "For four decades nothing humans built was higher than this Paris landmark.",  # no word of the title
    ],
)
def test_a_claim_that_does_not_stand_alone_is_saved_with_a_warning(author: Client, eiffel: Page, text: str) -> None:
    assert warning_codes(author, eiffel, text) == ["not_standalone"]


def test_a_claim_close_to_an_existing_one_is_saved_with_a_warning(author: Client, eiffel: Page) -> None:
    assert warning_codes(author, eiffel, GOOD_CLAIM) == []
    near = "For four decades nothing humans built was taller than the Eiffel Tower in Paris."  # two words away
    assert warning_codes(author, eiffel, near) == ["close_to_existing_claim"]


def test_script_in_a_claim_is_stored_as_text_and_rendered_escaped(author: Client, eiffel: Page) -> None:
    text = "The Eiffel Tower <script>alert('fooled')</script> stood higher than anything for decades"
    task = take_task(author)
    response = post(author, "/api/claims", {"task": task["id"], "text": text, "gold_sentence_ids": [sentence_ids(eiffel)[3]]})
    assert response.status_code == 201, response.content
    assert Claim.objects.get().text == text
    html = author.get("/accounts/me/").content.decode()
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&#x27;fooled&#x27;)" in html


def test_schema_describes_the_authoring_endpoints(author: Client) -> None:
    paths = author.get("/api/schema/?format=json").json()["paths"]
    assert "post" in paths["/api/write-tasks"] and "post" in paths["/api/claims"]


# --- Junk, off-page and duplicate claims are refused before save (issue 12) ----------------------


@pytest.mark.parametrize(
    "text",
    [
        "- - - - - -",
        "😀 😀 😀 😀 😀",
        "asdf qwer zxcv uiop hjkl",
        "the the the the the",
        "1889 1930 330 41 81",
        "Eiffel ?? ?? ?? ?? !! !!",
    ],
)
def test_a_claim_without_real_words_is_refused_and_pays_nothing(author: Client, eiffel: Page, text: str) -> None:
    task = take_task(author)
    response = post(author, "/api/claims", {"task": task["id"], "text": text, "gold_sentence_ids": [sentence_ids(eiffel)[3]]})
    error = refused(response, 400, "text_no_words")
    assert [d["code"] for d in error["details"]] == ["text_no_words"]
    nothing_stored(task["id"])


def test_a_claim_naming_nothing_of_its_page_is_refused(author: Client, eiffel: Page) -> None:
    task = take_task(author)
    text = "Bananas grow quickly in warm humid climates near oceans."
    response = post(author, "/api/claims", {"task": task["id"], "text": text, "gold_sentence_ids": [sentence_ids(eiffel)[3]]})
    refused(response, 400, "text_off_page")
    nothing_stored(task["id"])


def test_a_claim_naming_a_word_of_a_sentence_but_not_the_title_is_saved_with_the_old_warning(author: Client, eiffel: Page) -> None:
    # The blocking rule is looser than the title warning: one content word of any sentence
    # of the page ("Paris" here) is enough to be saved.
    assert warning_codes(author, eiffel, "For four decades nothing humans built was higher than this Paris landmark.") == [
        "not_standalone"
    ]


@pytest.mark.parametrize(
    "again",
    [
        GOOD_CLAIM,
        GOOD_CLAIM.upper(),
        "  for four decades, nothing humans built was higher than the Eiffel-Tower!!! ",
    ],
)
def test_the_same_claim_again_is_refused_before_any_points(author: Client, rival: Client, eiffel: Page, again: str) -> None:
    assert warning_codes(author, eiffel, GOOD_CLAIM) == []
    task = take_task(rival)
    response = post(rival, "/api/claims", {"task": task["id"], "text": again, "gold_sentence_ids": [sentence_ids(eiffel)[3]]})
    error = refused(response, 409, "near_duplicate")
    assert GOOD_CLAIM not in str(error)  # the existing claim's text is not repeated back
    assert Claim.objects.count() == 1
    assert LedgerEntry.objects.count() == 1
    assert WriteTask.objects.get(pk=task["id"]).used_at is None


def test_an_active_claim_reversed_pays_nothing(author: Client, rival: Client, eiffel: Page) -> None:
    """Issue 24: an active claim with its words reversed passed the near-duplicate check and paid 100.
    Reversed words read as no sentence, so the save stops there (400) before the 409."""
    assert warning_codes(author, eiffel, GOOD_CLAIM) == []
    task = take_task(rival)
    reversed_words = " ".join(reversed(GOOD_CLAIM.split()))
    response = post(rival, "/api/claims", {"task": task["id"], "text": reversed_words, "gold_sentence_ids": [sentence_ids(eiffel)[3]]})
    refused(response, 400, "not_a_sentence")
    assert Claim.objects.count() == 1 and LedgerEntry.objects.count() == 1
    assert WriteTask.objects.get(pk=task["id"]).used_at is None


def test_an_active_claim_reversed_is_a_near_duplicate(author: Client, eiffel: Page) -> None:
    from foolgame.authoring.services import _near_duplicate

    assert warning_codes(author, eiffel, GOOD_CLAIM) == []
    reversed_words = " ".join(reversed(GOOD_CLAIM.split()))
    assert _near_duplicate(text=reversed_words, page=eiffel)
    assert not _near_duplicate(text="The tower has three levels for visitors, all with restaurants.", page=eiffel)


def test_a_near_duplicate_is_refused_and_a_close_claim_only_warned(author: Client, rival: Client, eiffel: Page) -> None:
    assert warning_codes(author, eiffel, GOOD_CLAIM) == []
    near = "For four decades nothing humans built was ever higher than the Eiffel Tower."
    task = take_task(rival)
    response = post(rival, "/api/claims", {"task": task["id"], "text": near, "gold_sentence_ids": [sentence_ids(eiffel)[3]]})
    refused(response, 409, "near_duplicate")
    assert Claim.objects.count() == 1
    # Close but two words away and below the refusal threshold: the soft warning band stays.
    assert warning_codes(rival, eiffel, "For four decades nothing humans built was taller than the Eiffel Tower in Paris.") == [
        "close_to_existing_claim"
    ]


@pytest.mark.parametrize(
    "edit",
    [
        "For five decades nothing humans built was higher than the Eiffel Tower.",  # a number changed: the meaning flips
        "For four decades nothing humans built is higher than the Eiffel Tower.",  # "was" to "is"
        "For four decades nothing humans built was higher than an Eiffel Tower.",  # "the" to "an"
        "For four decades nothing humans built wasn't higher than the Eiffel Tower.",  # "not" put in
        "For four decades nothing humans built was higher than the Eiffel",  # the last word dropped
        "For four decades nothing humans ever built was higher than the Eiffel Tower.",  # a word put in
    ],
)
@pytest.mark.parametrize("writer", ["rival", "author"])
def test_a_one_word_edit_of_an_active_claim_is_refused_whoever_writes_it(
    author: Client, rival: Client, eiffel: Page, edit: str, writer: str
) -> None:
    """Issue 36: a one-word edit of a live claim ("was" to "is" under the other label) saved with
    100 points and only a close_to_existing_claim warning; now it is a near-duplicate."""
    assert warning_codes(author, eiffel, GOOD_CLAIM) == []
    client = rival if writer == "rival" else author
    task = take_task(client)
    response = post(client, "/api/claims", {"task": task["id"], "text": edit, "gold_sentence_ids": [sentence_ids(eiffel)[3]]})
    error = refused(response, 409, "near_duplicate")
    assert "one word" in error["message"] and GOOD_CLAIM not in str(error)
    assert Claim.objects.count() == 1
    assert LedgerEntry.objects.count() == 1  # the first claim's write points only
    assert WriteTask.objects.get(pk=task["id"]).used_at is None


def test_a_one_word_edit_of_a_removed_claim_saves(author: Client, rival: Client, eiffel: Page) -> None:
    assert warning_codes(author, eiffel, GOOD_CLAIM) == []
    Claim.objects.update(status=Claim.Status.REMOVED)
    assert warning_codes(rival, eiffel, "For five decades nothing humans built was higher than the Eiffel Tower.") == []


def test_a_removed_claim_does_not_block_a_new_one(author: Client, rival: Client, eiffel: Page) -> None:
    assert warning_codes(author, eiffel, GOOD_CLAIM) == []
    Claim.objects.update(status=Claim.Status.REMOVED)
    assert warning_codes(rival, eiffel, GOOD_CLAIM) == []


# --- Open write tasks per player are capped --------------------------------------------------------


def test_open_write_tasks_are_capped_per_player(author: Client, rival: Client, eiffel: Page, settings) -> None:
    settings.FM2 = {**settings.FM2, "MAX_OPEN_WRITE_TASKS": 3}
    for _ in range(3):
        take_task(author)
    refused(post(author, "/api/write-tasks"), 409, "too_many_open_tasks")
    assert WriteTask.objects.count() == 3
    take_task(rival)  # the cap is per player


@pytest.mark.parametrize("freed", ["expired", "used"])
def test_an_expired_or_used_task_frees_a_slot(author: Client, eiffel: Page, settings, freed: str) -> None:
    settings.FM2 = {**settings.FM2, "MAX_OPEN_WRITE_TASKS": 2}
    first = take_task(author)
    take_task(author)
    refused(post(author, "/api/write-tasks"), 409, "too_many_open_tasks")
    if freed == "expired":
        WriteTask.objects.filter(pk=first["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    else:
        response = post(author, "/api/claims", {"task": first["id"], "text": GOOD_CLAIM, "gold_sentence_ids": [sentence_ids(eiffel)[3]]})
        assert response.status_code == 201, response.content
    take_task(author)


def test_the_write_page_says_why_no_task_is_given_past_the_cap(author: Client, eiffel: Page, settings) -> None:
    settings.FM2 = {**settings.FM2, "MAX_OPEN_WRITE_TASKS": 1}
    take_task(author)
    response = author.post("/write/", {}, headers={"X-CSRFToken": author.cookies["csrftoken"].value}, follow=True)
    assert "You already hold 1 open write task:" in response.content.decode()
    assert WriteTask.objects.count() == 1


# --- Claims per player are rate-limited and capped per day (issue 24) --------------------------------


def _save(client: Client, eiffel: Page, text: str = GOOD_CLAIM):
    task = take_task(client)
    return task, post(client, "/api/claims", {"task": task["id"], "text": text, "gold_sentence_ids": [sentence_ids(eiffel)[3]]})


def test_claims_beyond_the_window_limit_are_refused_with_retry_after(author: Client, eiffel: Page, settings) -> None:
    from django.contrib.auth import get_user_model

    from tests.factories import ClaimFactory

    settings.FM2 = {**settings.FM2, "CLAIMS_PER_WINDOW": 2, "CLAIM_WINDOW_SECONDS": 600}
    me = get_user_model().objects.get(username="author")
    ClaimFactory.create_batch(2, author=me, page=PageFactory(title="Hamlet"))
    task, response = _save(author, eiffel)
    error = refused(response, 429, "claim_rate_limited")
    assert 590 <= int(response["Retry-After"]) <= 600 and "10 min" in error["message"]
    assert Claim.objects.count() == 2 and LedgerEntry.objects.count() == 0
    assert WriteTask.objects.get(pk=task["id"]).used_at is None
    # Once the window has passed, the same save goes through.
    Claim.objects.update(created=timezone.now() - timedelta(minutes=11))
    assert post(author, "/api/claims", {"task": task["id"], "text": GOOD_CLAIM, "gold_sentence_ids": [sentence_ids(eiffel)[3]]}).status_code == 201


def test_claims_beyond_the_daily_cap_are_refused(author: Client, rival: Client, eiffel: Page, settings) -> None:
    from django.contrib.auth import get_user_model

    from tests.factories import ClaimFactory

    settings.FM2 = {**settings.FM2, "CLAIMS_PER_WINDOW": 100, "CLAIMS_PER_DAY": 2}
    me = get_user_model().objects.get(username="author")
    ClaimFactory.create_batch(2, author=me, page=PageFactory(title="Hamlet"))
    Claim.objects.update(created=timezone.now() - timedelta(hours=2))
    task, response = _save(author, eiffel)
    refused(response, 429, "claim_rate_limited")
    assert 21 * 3600 < int(response["Retry-After"]) <= 22 * 3600
    assert Claim.objects.count() == 2 and LedgerEntry.objects.count() == 0
    # The cap is per player: another writer is not held back.
    assert _save(rival, eiffel)[1].status_code == 201


# --- Templates of page words with grammar (issue 36) ----------------------------------------------

SHAKA = [
    ("Life", "Shaka kaSenzangakhona was the most influential monarch of the Zulu Kingdom."),
    ("Life", "He was born in 1787 near present-day Melmoth, the son of a chief."),
    ("Reign", "Shaka's reforms of the army made it a figure of fear in the region for some time."),
    ("Reign", "At sometime between 1816 and 1828 his kingdom grew from a small clan to a nation."),
    ("Death", "He was assassinated by his half-brothers in 1828."),
]


@pytest.fixture
def shaka(db) -> Page:
    page = PageFactory(title="Shaka")
    for position, (header, text) in enumerate(SHAKA):
        SentenceFactory(page=page, position=position, section_header=header, text=text)
    return page


@pytest.mark.parametrize(
    "template",
    [
        "Shaka was the sometime of between in figure.",  # the example, 12 of 12 paid before
        "Shaka was the army of fear in the.",
        "The of Shaka was born by 1787 in Melmoth.",
    ],
)
def test_a_template_of_page_words_is_refused_before_any_points(author: Client, shaka: Page, template: str) -> None:
    task = take_task(author, page=shaka.pk)
    response = post(author, "/api/claims", {"task": task["id"], "text": template, "gold_sentence_ids": [sentence_ids(shaka)[1]]})
    error = refused(response, 400, "not_fluent")
    assert error["message"].startswith("The claim does not read as a claim:")
    assert [d["code"] for d in error["details"]] == ["not_fluent"]
    assert Claim.objects.count() == 0 and ClaimGold.objects.count() == 0
    assert LedgerEntry.objects.count() == 0
    assert WriteTask.objects.get(pk=task["id"]).used_at is None


def test_a_real_claim_about_the_same_page_still_saves(author: Client, shaka: Page) -> None:
    task = take_task(author, page=shaka.pk)
    text = "No ruler of the Zulu people left a deeper mark than Shaka."
    gold = next(pk for pk in sentence_ids(shaka) if pk != page_top_lexical_hit(page=shaka, query=text))  # not too easy
    response = post(author, "/api/claims", {"task": task["id"], "text": text, "gold_sentence_ids": [gold]})
    assert response.status_code == 201, response.content
    assert response.json()["points"] == 100
    assert LedgerEntry.objects.get().amount == 100
