from __future__ import annotations

import io
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from rest_framework.test import APIClient

from foolgame.claims.models import Claim
from foolgame.voting.models import ClueReveal, Like, Report, Round, Vote
from tests.factories import CategoryFactory, ClaimFactory, PageFactory, SentenceFactory, UserFactory


@pytest.fixture(autouse=True)
def datasets_cache_of_its_own(tmp_path, monkeypatch):
    """Each test's ``datasets.load_dataset`` caches under the test's own folder: the library
    keys a local folder's cache by its files' names and sizes, so two tests' exports named
    alike (``out``) of the same size would read each other's rows (seen on PostgreSQL, whose
    ids differ from test to test)."""
    try:
        import datasets
    except ImportError:
        return
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "datasets-cache")


@pytest.fixture
def exports_dir(settings, tmp_path):
    """Export folders under the test's own temporary directory."""
    settings.EXPORTS_DIR = tmp_path / "exports"
    return settings.EXPORTS_DIR


def client_for(user) -> APIClient:
    """An API client logged in as ``user`` (anonymous for None)."""
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def make_claim(page, *, label: str, author, text: str, n_clues: int = 3) -> Claim:
    """A claim with clues and a gold sentence whose texts name no player (unlike the
    voting tests' helper), so that the privacy test can search the files for names."""
    tag = f"{page.title}/{Claim.objects.count()}"
    sentences = [SentenceFactory(page=page, text=f"Retrieved sentence {i} for {tag}.") for i in range(n_clues)]
    gold = SentenceFactory(page=page, text=f"Decisive evidence for {tag}.", section_header="Facts")
    clues = [{"sentence_id": s.pk, "text": s.text, "section_header": "History"} for s in sentences]
    clues.append({"sentence_id": gold.pk, "text": gold.text, "section_header": "Facts"})
    return ClaimFactory(page=page, label=label, author=author, gold=[gold], clues=clues, text=text)


@dataclass
class World:
    users: list = field(default_factory=list)
    claims: dict[str, Claim] = field(default_factory=dict)
    rounds: list[Round] = field(default_factory=list)


def play(player, true_claim: Claim, false_claim: Claim, *, state: str = Round.State.VOTED, correct: bool = True,
         reveals: tuple[int, int] = (0, 0), like: Claim | None = None) -> Round:
    """An ended round with the true claim on the left."""
    start = timezone.now() - timedelta(minutes=5)
    round_ = Round.objects.create(player=player, left_claim=true_claim, right_claim=false_claim, state=state,
                                  started_at=start, deadline=start + timedelta(seconds=180), ended_at=start + timedelta(seconds=60))
    for index, count in enumerate(reveals):
        for position in range(count):
            ClueReveal.objects.create(round=round_, claim_index=index, position=position, revealed_at=start + timedelta(seconds=position))
    if state == Round.State.VOTED:
        Vote.objects.create(round=round_, false_claim_index=1 if correct else 0, correct=correct, points=90 if correct else 0,
                            remaining=90.5, created=start + timedelta(seconds=60))
        Like.objects.create(round=round_, claim=like, created=start + timedelta(seconds=61))
    return round_


@pytest.fixture
def world(db) -> World:
    """Six game pages with a true and a false claim each, one release page (dev), votes,
    a removed claim, a report and players with e-mail addresses."""
    history = CategoryFactory(name="History")
    world = World()
    authors = [UserFactory(username=f"author_{i}", email=f"author{i}@example.org") for i in range(3)]
    voters = [UserFactory(username=f"voter_{i}", email=f"voter{i}@example.org") for i in range(2)]
    world.users = authors + voters
    for p in range(6):
        page = PageFactory(title=f"Topic {p}", category=history)
        author = authors[p % 3]
        world.claims[f"t{p}"] = make_claim(page, label="SUPPORTS", author=author, text=f"Topic {p} was founded in {1800 + p}.")
        world.claims[f"f{p}"] = make_claim(page, label="REFUTES", author=author, text=f"Topic {p} was never founded by anyone.")
    release_page = PageFactory(title="Released page", category=history)
    released = make_claim(release_page, label="SUPPORTS", author=authors[0], text="The released page supports this claim.")
    Claim.objects.filter(pk=released.pk).update(
        external_id="01RELEASEDxyz", release_split="dev", release_total_votes=3, release_correct_votes=2,
        release_total_likes=1, release_retrieved=[{"sentence_id": 1, "text": "A release sentence.", "section_header": "Intro"}],
    )
    world.claims["released"] = Claim.objects.get(pk=released.pk)
    world.claims["follower"] = make_claim(release_page, label="REFUTES", author=authors[1], text="The released page refutes this other claim.")
    removed = make_claim(PageFactory(title="Removed topic", category=history), label="REFUTES", author=authors[2], text="A claim that moderators removed.")
    Claim.objects.filter(pk=removed.pk).update(status=Claim.Status.REMOVED, removed_reason="spam")
    world.claims["removed"] = Claim.objects.get(pk=removed.pk)
    c = world.claims
    world.rounds = [
        play(voters[0], c["t0"], c["f0"], correct=True, reveals=(2, 1), like=c["f0"]),
        play(voters[1], c["t0"], c["f0"], correct=False, reveals=(0, 3)),
        play(voters[0], c["t1"], c["f1"], state=Round.State.TIMED_OUT, reveals=(1, 0)),
        play(voters[1], c["released"], c["follower"], state=Round.State.REPORTED),
        play(voters[0], c["t2"], c["removed"], correct=True),
    ]
    Report.objects.create(claim=c["follower"], reporter=voters[1], round=world.rounds[3], reason="wrong_label", note="I think so")
    return world


@pytest.fixture
def demo(db) -> None:
    """The demo data of ``make run``: 20 release pages of the FM2 dev split, 216 claims."""
    call_command("load_demo", verbosity=0, stdout=io.StringIO())
