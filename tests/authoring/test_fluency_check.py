"""The learnt fluency check in the save: trained on the instance's pages by `manage.py
train_fluency`, asked by every save once it exists, and never loaded before (a tiny BERT built
by the test stands in for MiniLM; bench/bench_fluency.py measures the real one)."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from foolgame.authoring import fluency
from foolgame.claims.models import Claim
from foolgame.pages.models import Page
from foolgame.players.models import LedgerEntry
from retrieval.fluency import META_FILE
from tests.authoring.conftest import GOOD_CLAIM, post, sentence_ids
from tests.factories import PageFactory, SentenceFactory
from tests.retrieval.test_fluency import _tiny_encoder

pytest.importorskip("torch")
pytestmark = pytest.mark.django_db


@pytest.fixture
def fluency_settings(settings, tmp_path: Path) -> Path:
    folder = tmp_path / "fluency"
    settings.FM2_FLUENCY = {**settings.FM2_FLUENCY, "MODEL_DIR": str(folder), "BASE_MODEL_PATH": str(_tiny_encoder(tmp_path / "tiny"))}
    return folder


def _set_bar(folder: Path, threshold: float, stamp: int, *, gate: float | None = None) -> None:
    meta_file = folder / META_FILE
    meta = json.loads(meta_file.read_text())
    meta["threshold"] = threshold
    meta["gate"] = gate
    meta_file.write_text(json.dumps(meta))
    os.utime(meta_file, (stamp, stamp))  # a new model to the process: it loads it again


def _save(author: Client, page: Page, *, check_first: bool = False, text: str = GOOD_CLAIM):
    task = post(author, "/api/write-tasks", {"page": page.pk}).json()
    claim = {"task": task["id"], "text": text, "gold_sentence_ids": [sentence_ids(page)[3]]}
    draft = post(author, "/api/claims/check", claim).json() if check_first else None
    return post(author, "/api/claims", claim), draft


def test_without_a_trained_model_nothing_is_loaded_and_the_word_rules_judge(fluency_settings: Path) -> None:
    assert fluency.fluency_scorer() is None
    assert fluency.learnt_fluency_problem("The king of Zulu crossed the temple by the poet.") is None


def test_train_fluency_trains_on_the_pages_and_every_save_then_asks_the_model(
    fluency_settings: Path, author: Client, eiffel: Page, settings
) -> None:
    for title in ("Hamlet", "Shaka", "Gandhi", "Paris"):
        SentenceFactory.create_batch(6, page=PageFactory(title=title))
    out = io.StringIO()
    call_command("train_fluency", examples=40, epochs=1, stdout=out, stderr=io.StringIO())
    assert "fluency model: 3 pages trained on" in out.getvalue() and "2 held-out pages" in out.getvalue()
    assert "the highest score of 12 texts" in out.getvalue() and "at most 7.7% of real claims" in out.getvalue()
    assert (fluency_settings / META_FILE).is_file()

    # A bar nothing reaches: refused, with the reason, and nothing stored.
    _set_bar(fluency_settings, -1e9, 1_000_000)
    refused, draft = _save(author, eiffel, check_first=True)
    assert refused.status_code == 400, refused.content
    error = refused.json()["error"]
    assert error["code"] == "not_fluent" and "words of the page put in a sentence's slots" in error["message"]
    assert Claim.objects.count() == 0 and LedgerEntry.objects.count() == 0
    # The draft check said the same before the save.
    assert draft["ok"] is False and [p["code"] for p in draft["problems"]] == ["not_fluent"]

    # A bar everything is under: the same claim is saved and paid.
    _set_bar(fluency_settings, 1e9, 2_000_000)
    saved, _ = _save(author, eiffel)
    assert saved.status_code == 201, saved.content
    assert Claim.objects.count() == 1


def test_the_word_order_rule_defers_to_a_model_that_vouches_for_the_claim(
    fluency_settings: Path, author: Client, eiffel: Page
) -> None:
    """A text the word-order rule takes for salad is saved when the trained model reads it as
    plainly as nine real claims in ten (at or below its gate), and refused as before when the
    model does not vouch for it, or when there is no model."""
    _pages_with_sentences(["Hamlet", "Shaka", "Gandhi", "Paris"])
    salad = "stood Tower decades higher for Eiffel nothing than built humans"
    refused, _ = _save(author, eiffel, text=salad)  # no model: the word rules alone
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "not_a_sentence"
    call_command("train_fluency", examples=40, epochs=1, stdout=io.StringIO(), stderr=io.StringIO())

    _set_bar(fluency_settings, 1e9, 3_000_000, gate=-1e9)  # vouches for nothing
    refused, _ = _save(author, eiffel, text=salad)
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "not_a_sentence"
    assert Claim.objects.count() == 0

    _set_bar(fluency_settings, 1e9, 4_000_000, gate=1e8)  # vouches for everything under the bar
    saved, _ = _save(author, eiffel, text=salad)
    assert saved.status_code == 201, saved.content
    assert Claim.objects.get().text == salad


def test_train_fluency_refuses_an_instance_without_pages(fluency_settings: Path) -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="two pages at least"):
        call_command("train_fluency", examples=8, epochs=1, stdout=io.StringIO(), stderr=io.StringIO())
    assert not fluency_settings.exists()


def _pages_with_sentences(titles: list[str]) -> None:
    for title in titles:
        SentenceFactory.create_batch(6, page=PageFactory(title=title))


def test_the_trainer_trains_once_the_instance_has_pages_enough_and_again_when_they_grow(fluency_settings: Path, settings) -> None:
    from foolgame.authoring.tasks import fluency_train

    settings.FM2_FLUENCY = {**settings.FM2_FLUENCY, "AUTO_TRAIN": True, "MIN_PAGES": 3, "RETRAIN_GROWTH": 0.25, "EXAMPLES": 40, "EPOCHS": 1}
    _pages_with_sentences(["Hamlet", "Shaka"])
    assert fluency.fluency_retrain_due() is False
    assert fluency_train.delay().get() is None and not fluency_settings.exists()  # two pages: nothing trained

    _pages_with_sentences(["Gandhi"])
    assert fluency.fluency_retrain_due() is True
    bar = fluency_train.delay().get()
    meta = json.loads((fluency_settings / META_FILE).read_text())
    assert bar == meta["threshold"] and meta["trained_pages"] + meta["held_out_pages"] == 3
    assert fluency.fluency_scorer() is not None  # the saves now ask it
    # The pages it knows: nothing due, and a second delivery trains nothing.
    assert fluency.fluency_retrain_due() is False and fluency_train.delay().get() is None

    _pages_with_sentences(["Paris"])  # 4 pages: a third more than the model knows
    assert fluency.fluency_retrain_due() is True
    fluency_train.delay().get()
    meta = json.loads((fluency_settings / META_FILE).read_text())
    assert meta["trained_pages"] + meta["held_out_pages"] == 4

    # The operator's switch: off, nothing is due however many pages come.
    settings.FM2_FLUENCY = {**settings.FM2_FLUENCY, "AUTO_TRAIN": False}
    _pages_with_sentences(["Rome", "Lima", "Oslo"])
    assert fluency.fluency_retrain_due() is False
    out = io.StringIO()
    call_command("train_fluency", if_due=True, stdout=out, stderr=io.StringIO())
    assert "nothing due" in out.getvalue()
    assert settings.CELERY_TASK_ROUTES["foolgame.authoring.tasks.fluency_train"] == {"queue": "models"}
    assert settings.CELERY_BEAT_SCHEDULE["fluency-train"]["task"] == "foolgame.authoring.tasks.fluency_train"


def test_two_trainers_at_once_train_once(fluency_settings: Path, settings) -> None:
    from django.core.cache import cache

    settings.FM2_FLUENCY = {**settings.FM2_FLUENCY, "AUTO_TRAIN": True, "MIN_PAGES": 2, "EXAMPLES": 40, "EPOCHS": 1}
    _pages_with_sentences(["Hamlet", "Shaka", "Gandhi"])
    cache.add(fluency.FLUENCY_TRAIN_LOCK, "another trainer", timeout=60)
    try:
        assert fluency.fluency_train_if_due() is None and not fluency_settings.exists()
        # The operator's command waits its turn too, and says why.
        from django.core.management.base import CommandError

        with pytest.raises(CommandError, match="another process"):
            call_command("train_fluency", examples=8, epochs=1, stdout=io.StringIO(), stderr=io.StringIO())
        assert not fluency_settings.exists()
    finally:
        cache.delete(fluency.FLUENCY_TRAIN_LOCK)
    assert fluency.fluency_train_if_due() is not None and (fluency_settings / META_FILE).is_file()
    assert cache.get(fluency.FLUENCY_TRAIN_LOCK) is None  # released
