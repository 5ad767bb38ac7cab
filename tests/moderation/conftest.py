from __future__ import annotations

import json

import pytest
from django.test import Client

from foolgame.claims.models import Claim
from foolgame.moderation.actions import moderator_set
from foolgame.voting import services as voting
from foolgame.voting.models import Round
from tests.factories import PASSWORD, PageFactory, UserFactory
from tests.voting.conftest import FakeClock, fake_clock, make_claim  # noqa: F401  (fixtures shared with voting)


@pytest.fixture
def moderator(db):
    user = UserFactory(username="mona")
    moderator_set(username=user.username)
    return user


def claim_pair(*, title: str = "Saturn", true_counts: tuple[int, int] = (0, 0), false_counts: tuple[int, int] = (0, 0), category=None):
    """A page with a true and a false claim by two authors; counts are the release's (correct, votes)."""
    page = PageFactory(title=title, **({"category": category} if category else {}))
    true_claim = make_claim(page, label="SUPPORTS", author=UserFactory(username=f"tina-{title}"), text=f"{title} is true about itself.")
    false_claim = make_claim(page, label="REFUTES", author=UserFactory(username=f"fred-{title}"), text=f"{title} is false about itself.")
    for claim, (correct, votes) in ((true_claim, true_counts), (false_claim, false_counts)):
        Claim.objects.filter(pk=claim.pk).update(release_correct_votes=correct, release_total_votes=votes)
        claim.refresh_from_db()
    return true_claim, false_claim


def play(player, clock: FakeClock, *, correct: bool, seconds: float = 10, clues: int = 0) -> Round:
    """Deal, start and vote a round for ``player``."""
    round_ = voting.round_create(player=player)
    voting.round_start(round_id=round_.pk, player=player)
    for _ in range(clues):
        voting.round_reveal_clue(round_id=round_.pk, player=player, claim_index=0)
    clock.advance(seconds)
    voting.vote_cast(round_id=round_.pk, player=player, false_claim=round_.false_index if correct else 1 - round_.false_index)
    round_.refresh_from_db()
    return round_


def login(username: str) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.get("/api/auth/csrf")
    token = client.cookies["csrftoken"].value
    response = client.post("/api/auth/login", {"username": username, "password": PASSWORD}, content_type="application/json", headers={"X-CSRFToken": token})
    assert response.status_code == 200
    client.defaults["HTTP_X_CSRFTOKEN"] = client.cookies["csrftoken"].value
    return client


def post(client: Client, url: str, data: object = None):
    return client.post(url, json.dumps(data if data is not None else {}), content_type="application/json")
