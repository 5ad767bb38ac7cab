from __future__ import annotations

import pytest

from foolgame.claims.models import Claim
from tests.factories import PageFactory, UserFactory
from tests.voting.conftest import fake_clock, make_claim  # noqa: F401  (fake_clock: the voting tests' fixture)


@pytest.fixture(autouse=True)
def least_checked_first(settings) -> None:
    """Deals pick the least-checked claims that need labels (no draw from every claim) unless a
    test turns the revisit share up."""
    settings.FM2_CHECKS = {**settings.FM2_CHECKS, "REVISIT_SHARE": 0.0}


def open_claim(title: str, *, label: str = "SUPPORTS", author=None) -> Claim:
    """A claim nobody settled: no release votes, no moderator's review."""
    author = author or UserFactory()
    return make_claim(PageFactory(title=title), label=label, author=author, text=f"{title} has a claim to check.")


def settled_claim(title: str, *, label: str = "REFUTES", votes: int = 10) -> Claim:
    """A release claim every voter of the original game judged as its label says."""
    claim = make_claim(PageFactory(title=title), label=label, author=UserFactory(), text=f"{title} has a settled claim.")
    Claim.objects.filter(pk=claim.pk).update(release_total_votes=votes, release_correct_votes=votes)
    claim.refresh_from_db()
    return claim
