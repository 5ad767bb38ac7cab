from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from foolgame.claims.models import Claim
from tests.factories import ClaimFactory, PageFactory, SentenceFactory, UserFactory


class FakeClock:
    """The server clock, moved by hand: tests never sleep to make time pass."""

    def __init__(self) -> None:
        self.current = timezone.now()

    def __call__(self) -> datetime:
        return self.current

    def advance(self, seconds: float) -> None:
        self.current += timedelta(seconds=seconds)


@pytest.fixture
def fake_clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    clock = FakeClock()
    monkeypatch.setattr("foolgame.core.clock.now", clock)
    return clock


def make_claim(page, *, label: str, author, n_clues: int = 3, text: str | None = None) -> Claim:
    tag = f"{page.title}/{author.username}/{Claim.objects.count()}"
    sentences = [SentenceFactory(page=page, text=f"Retrieved sentence {i} for {tag}.") for i in range(n_clues)]
    gold = SentenceFactory(page=page, text=f"Decisive evidence for {tag}.")
    clues = [{"sentence_id": s.pk, "text": s.text, "section_header": "History"} for s in sentences]
    clues.append({"sentence_id": gold.pk, "text": gold.text, "section_header": ""})
    kwargs = {"text": text} if text else {}
    return ClaimFactory(page=page, label=label, author=author, gold=[gold], clues=clues, **kwargs)


@dataclass
class Game:
    voter: object
    true_author: object
    false_author: object
    true_claim: Claim
    false_claim: Claim


@pytest.fixture
def game(db) -> Game:
    page = PageFactory(title="Saturn")
    true_author, false_author = UserFactory(username="tina"), UserFactory(username="fred")
    return Game(
        voter=UserFactory(username="vera"),
        true_author=true_author,
        false_author=false_author,
        true_claim=make_claim(page, label="SUPPORTS", author=true_author, text="Saturn is the sixth planet from the Sun."),
        false_claim=make_claim(page, label="REFUTES", author=false_author, text="Saturn has no rings at all."),
    )
