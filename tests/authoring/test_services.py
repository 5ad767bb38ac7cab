"""Veracity balance of write tasks and the giveaway detector, at the service level."""

from __future__ import annotations

import random

import pytest
from django.db import transaction

from foolgame.authoring import giveaway, services
from foolgame.authoring.models import GiveawayModel, WriteTask
from foolgame.authoring.selectors import Balance, veracity_balance
from foolgame.authoring.tasks import giveaway_train
from foolgame.claims.models import Claim
from tests.factories import CategoryFactory, ClaimFactory, PageFactory, SentenceFactory, UserFactory


@pytest.mark.parametrize(
    "overall, category, expected",
    [
        (Balance(0, 0), None, None),  # a coin toss
        (Balance(10, 9), None, "FALSE"),
        (Balance(9, 10), None, "TRUE"),
        (Balance(50, 50), Balance(6, 4), "FALSE"),  # the category leans TRUE
        (Balance(45, 55), Balance(5, 5), "TRUE"),  # the pool leans FALSE, the category is even
        # The category would pass 55% FALSE with FALSE; TRUE leaves both pools in the band.
        (Balance(54, 46), Balance(5, 6), "TRUE"),
        # Both pools pull: the one further out wins.
        (Balance(70, 30), Balance(4, 6), "FALSE"),
    ],
)
def test_veracity_choice_keeps_pools_near_even(overall: Balance, category: Balance | None, expected: str | None) -> None:
    seen = {services.veracity_choose(overall=overall, category=category, rng=random.Random(seed)) for seed in range(20)}
    assert seen == ({"TRUE", "FALSE"} if expected is None else {expected})


@pytest.mark.django_db
def test_many_tasks_keep_every_writer_and_what_they_write_near_even(settings) -> None:
    # 240 tasks from 5 players, half left open: the open-task cap is not what this tests.
    settings.FM2 = {**settings.FM2, "MAX_OPEN_WRITE_TASKS": 1000}
    rng = random.Random(7)
    categories = [CategoryFactory(name=name) for name in ("History", "Sports", "Music")]
    for index in range(12):
        page = PageFactory(category=categories[index % 3])
        SentenceFactory.create_batch(2, page=page)
        # A lopsided pool to start from (History all TRUE, Sports all FALSE): it does not move
        # what a writer is handed, which is balanced on their own labels only.
        label = {0: Claim.Label.SUPPORTS, 1: Claim.Label.REFUTES, 2: rng.choice(Claim.Label.values)}[index % 3]
        ClaimFactory.create_batch(3, page=page, label=label)
    players = UserFactory.create_batch(5)
    handed: dict[int, list[str]] = {category.pk: [] for category in categories}
    for turn in range(240):
        task = services.write_task_create(player=players[turn % 5], rng=rng)
        handed[task.page.category_id].append(task.veracity)
        if turn % 2:  # half the tasks become claims at once, half stay open
            Claim.objects.create(page=task.page, text="x", label=task.label, author=task.player)
            WriteTask.objects.filter(pk=task.pk).update(used_at=task.created)
    for player in players:
        mine = veracity_balance(author=player)
        assert mine.true + mine.false == 48 and abs(mine.true - mine.false) <= 2, (player, mine)
        for category in categories:
            own = veracity_balance(category_id=category.pk, author=player)
            assert abs(own.true - own.false) <= 2, (player, category.name, own)
    # What is handed out in all is the writers' sums: each within 2, so the 240 within 2 per
    # writer. Ties between pages are broken at random by the database, so which writer ends
    # 2 apart changes from run to run; 25 seeds gave totals of 0 to 6 apart and per category
    # 0 to 4 apart (of about 80), while balancing on the lopsided pool would hand History's
    # writers FALSE nearly every time.
    every = [v for values in handed.values() for v in values]
    assert abs(every.count("TRUE") - every.count("FALSE")) <= 2 * len(players)
    for values in handed.values():
        assert abs(values.count("TRUE") - values.count("FALSE")) <= 2 * len(players)


@pytest.mark.django_db
def test_the_veracity_handed_out_does_not_depend_on_other_players_labels() -> None:
    """Two pools that differ only in the labels of claims the writer did not write: the same
    writer with the same coin is handed the same veracity in both (tests/test_noninterference.py
    walks the same through the API)."""
    page = PageFactory(category=CategoryFactory())
    SentenceFactory.create_batch(2, page=page)
    others = ClaimFactory.create_batch(6, page=page, label=Claim.Label.SUPPORTS)
    writer = UserFactory()
    ClaimFactory(page=page, author=writer, label=Claim.Label.REFUTES)
    handed = []
    for label in (Claim.Label.SUPPORTS, Claim.Label.REFUTES):
        Claim.objects.filter(pk__in=[c.pk for c in others]).update(label=label)
        with transaction.atomic():
            handed.append(services.write_task_create(player=writer, rng=random.Random(3)).veracity)
            transaction.set_rollback(True)
    assert handed == ["TRUE", "TRUE"]  # the writer's own claim is FALSE: TRUE, whatever the pool


@pytest.mark.django_db
def test_expired_tasks_stop_counting_towards_the_balance() -> None:
    page = PageFactory()
    SentenceFactory.create_batch(2, page=page)
    task = services.write_task_create(player=UserFactory())
    assert veracity_balance() in (Balance(1, 0), Balance(0, 1))
    WriteTask.objects.filter(pk=task.pk).update(expires_at=task.created)
    assert veracity_balance() == Balance(0, 0)


def test_confident_threshold_is_the_lowest_cut_that_is_right_often_enough() -> None:
    import numpy as np

    probabilities = np.array([0.95] * 10 + [0.8] * 10 + [0.6] * 20)
    correct = np.array([True] * 9 + [False] + [True] * 7 + [False] * 3 + [True] * 10 + [False] * 10)
    threshold, share, precision = giveaway.confident_threshold(probabilities, correct, target_precision=0.75, min_support=10)
    assert (threshold, share, precision) == (0.8, 0.5, 0.8)
    assert giveaway.confident_threshold(probabilities, correct, target_precision=0.99, min_support=10)[0] == giveaway.NEVER


# A pool whose wording gives FALSE claims away: every false claim says "never".
TRUE_TEMPLATES = ["{} was founded in the north", "{} has a large harbour", "{} is known for its bridges", "{} hosts a yearly festival"]
FALSE_TEMPLATES = ["{} never had any harbour", "{} was never founded at all", "{} never hosted a festival", "{} never built bridges"]


def artifact_pool(pages: int = 8, first: int = 0) -> None:
    author = UserFactory()
    for index in range(first, first + pages):
        page = PageFactory(title=f"Town {index}")
        for template in TRUE_TEMPLATES:
            ClaimFactory(page=page, author=author, text=template.format(page.title), label=Claim.Label.SUPPORTS)
        for template in FALSE_TEMPLATES:
            ClaimFactory(page=page, author=author, text=template.format(page.title), label=Claim.Label.REFUTES)


@pytest.mark.django_db
def test_detector_trains_on_active_claims_and_flags_a_giveaway() -> None:
    artifact_pool()
    Claim.objects.filter(pk=Claim.objects.first().pk).update(status=Claim.Status.REMOVED)
    model_id = giveaway_train.delay(force=True).get()
    stored = GiveawayModel.objects.get(pk=model_id)
    assert stored.examples == 63 and stored.cv_accuracy > 0.9 and stored.cv_accuracy_by_page > 0.9
    assert stored.threshold <= 1
    label, probability = services.giveaway_guess(text="Town 3 never had a cathedral") or ("none", 0)
    assert label == "REFUTES" and probability >= stored.threshold
    assert services.giveaway_guess(text="Town 3 has a cathedral") in (None, ("SUPPORTS", pytest.approx(1, abs=0.5)))


@pytest.mark.django_db
def test_detector_warning_names_the_giveaway_when_it_guesses_the_authors_label(django_capture_on_commit_callbacks) -> None:
    artifact_pool()
    services.giveaway_train_now(force=True)
    page = PageFactory(title="Town 3b")
    sentences = SentenceFactory.create_batch(3, page=page)
    task = services.write_task_create(player=UserFactory(), category=page.category.slug)
    WriteTask.objects.filter(pk=task.pk).update(veracity="FALSE")
    with django_capture_on_commit_callbacks(execute=True):
        claim, warnings, _ = services.claim_create(
            author=task.player, task_id=task.pk, text="Town 3b never had any cathedral at all", gold_sentence_ids=[sentences[2].pk]
        )
    assert "giveaway" in [w["code"] for w in warnings]


@pytest.mark.django_db
def test_retraining_waits_for_enough_new_claims(django_capture_on_commit_callbacks, settings) -> None:
    settings.FM2 = {**settings.FM2, "GIVEAWAY_MIN_CLAIMS": 20, "GIVEAWAY_RETRAIN_EVERY": 5}
    artifact_pool(pages=2)  # 16 claims: below the first threshold
    assert not services.giveaway_retrain_due()
    artifact_pool(pages=1, first=2)  # 24
    assert services.giveaway_retrain_due()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with transaction.atomic():
            services.giveaway_retrain_on_commit()
        assert GiveawayModel.objects.count() == 0  # nothing before the commit
    assert len(callbacks) == 1 and GiveawayModel.objects.count() == 1
    assert not services.giveaway_retrain_due()
    assert giveaway_train.delay().get() is None  # a second delivery does nothing
    ClaimFactory.create_batch(5, label=Claim.Label.SUPPORTS)
    assert services.giveaway_retrain_due()


@pytest.mark.django_db
def test_train_giveaway_command_stores_a_detector_or_says_why_not() -> None:
    from io import StringIO

    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError):
        call_command("train_giveaway")
    artifact_pool(pages=3)
    out = StringIO()
    call_command("train_giveaway", stdout=out)
    assert "24 claims" in out.getvalue() and GiveawayModel.objects.count() == 1


@pytest.mark.django_db
def test_the_save_that_makes_a_retrain_due_answers_before_the_training_ends(django_capture_on_commit_callbacks, settings, monkeypatch) -> None:
    """The embedded default has no worker: the first claim saved after an import used to wait
    13-19 s for the detector to train inside its request. Now training runs on the background
    thread and the save comes back while it is still running."""
    import threading

    from foolgame.core import events

    settings.FM2_JOBS = {**settings.FM2_JOBS, "BACKGROUND_THREAD": True}
    settings.FM2 = {**settings.FM2, "GIVEAWAY_MIN_CLAIMS": 20}
    artifact_pool(pages=3)  # 24 claims, no detector yet: the next save makes a training due
    release, started, finished = threading.Event(), threading.Event(), threading.Event()
    threads: list[str] = []

    def slow_training(*, force: bool = False) -> None:
        threads.append(threading.current_thread().name)
        started.set()
        release.wait(30)
        finished.set()

    monkeypatch.setattr("foolgame.authoring.tasks.giveaway_train_now", slow_training)
    page = PageFactory(title="Town 99")
    sentences = SentenceFactory.create_batch(3, page=page)
    task = services.write_task_create(player=UserFactory(), category=page.category.slug)
    with django_capture_on_commit_callbacks(execute=True):
        claim, _, _ = services.claim_create(author=task.player, task_id=task.pk, text="Town 99 has a cathedral", gold_sentence_ids=[sentences[1].pk])
    assert claim.pk and not finished.is_set()  # the save is back; the training is not done
    release.set()
    assert events.background_idle(timeout=30) and finished.is_set()
    assert started.is_set() and threads[0].startswith("fm2-background")
