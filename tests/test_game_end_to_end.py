"""Two players write claims and play each other's claims over the API; the ledger follows
GAME.md to the point: 100 per claim written, P = min(120, floor(remaining)) for a correct
vote with the rest to the authors, nothing for a wrong one, 10 for a like."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from foolgame.claims.models import Claim
from foolgame.evidence.services import page_top_lexical_hit
from foolgame.voting.models import Round
from tests.authoring.conftest import api_client, eiffel, post, sentence_ids  # noqa: F401  (eiffel is a fixture)
from tests.voting.conftest import FakeClock

pytestmark = pytest.mark.django_db

WORDINGS = [
    "For four decades nothing humans built was higher than the Eiffel Tower.",
    "No building on Earth topped the Eiffel Tower for some forty years.",
    "People put up nothing taller than the Eiffel Tower for roughly four decades.",
    "For about forty years the Eiffel Tower stood higher than anything else made by people.",
    "The Eiffel Tower kept its height record among human works for close to four decades.",
    "Humans made nothing higher than the Eiffel Tower during the four decades after it opened.",
]
# A second author's own wordings: the same claim twice on one page is refused (near_duplicate).
OTHER_WORDINGS = [
    "Visitors reach three levels of the Eiffel Tower and can eat in its restaurants.",
    "Gustave Eiffel's company needed about two years to build the tower in Paris.",
    "The Eiffel Tower is roughly as tall as a building with eighty storeys.",
    "Hundreds of millions of tourists have climbed the Eiffel Tower since 1889.",
    "The Eiffel Tower stands on the Champ de Mars, a park in Paris.",
    "Wrought iron in a lattice makes up the frame of the Eiffel Tower.",
]


def write_both_labels(client: Client, page, wordings: list[str] = WORDINGS) -> dict[str, int]:
    """Take tasks until this player has written one TRUE and one FALSE claim."""
    written: dict[str, int] = {}
    for wording in wordings:
        task = post(client, "/api/write-tasks").json()
        top = page_top_lexical_hit(page=page, query=wording)
        gold = next(pk for pk in sentence_ids(page)[2:] if pk != top)  # never the top hit: gold_too_easy
        response = post(client, "/api/claims", {"task": task["id"], "text": wording, "gold_sentence_ids": [gold]})
        assert response.status_code == 201, response.content
        assert response.json()["points"] == 100
        written.setdefault(task["veracity"], response.json()["id"])
        if len(written) == 2:
            return written
    raise AssertionError(f"the server never assigned both veracities: {written}")


def play(client: Client, clock: FakeClock, *, seconds: float, clues: int, correct: bool) -> dict:
    round_id = post(client, "/api/rounds").json()["id"]
    assert post(client, f"/api/rounds/{round_id}/start").status_code == 200
    for _ in range(clues):
        assert post(client, f"/api/rounds/{round_id}/reveal", {"claim": 0}).status_code == 200
    clock.advance(seconds)
    false_index = Round.objects.get(pk=round_id).false_index
    result = post(client, f"/api/rounds/{round_id}/vote", {"false_claim": false_index if correct else 1 - false_index}).json()
    return {"round": round_id, **result}


def test_two_players_play_each_others_claims(eiffel, monkeypatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr("foolgame.core.clock.now", clock)
    alice, bob = api_client("alice"), api_client("bob")
    alice_claims = write_both_labels(alice, eiffel)
    bob_claims = write_both_labels(bob, eiffel, OTHER_WORDINGS)
    alice_written = Claim.objects.filter(author__username="alice").count()
    bob_written = Claim.objects.filter(author__username="bob").count()

    # Bob finds Alice's fib after 70.6 s and two clues: 180 - 70.6 - 20 = 89.4 -> 89 for him,
    # 31 for Alice (both claims are hers, so both shares).
    bob_round = play(bob, clock, seconds=70.6, clues=2, correct=True)
    dealt = Round.objects.get(pk=bob_round["round"])
    assert {dealt.left_claim.author.username, dealt.right_claim.author.username} == {"alice"}
    assert bob_round["correct"] is True and bob_round["points"] == 89
    assert post(bob, f"/api/rounds/{bob_round['round']}/like", {"claim": 0}).status_code == 200

    # Alice is fooled by Bob's claims: nobody earns anything.
    alice_round = play(alice, clock, seconds=30, clues=0, correct=False)
    dealt = Round.objects.get(pk=alice_round["round"])
    assert {dealt.left_claim.author.username, dealt.right_claim.author.username} == {"bob"}
    assert alice_round["correct"] is False and alice_round["points"] == 0

    alice_points = alice.get("/api/me").json()["points"]
    bob_points = bob.get("/api/me").json()["points"]
    assert alice_points == {"write": 100 * alice_written, "verify": 0, "fool": 31, "like": 10, "check": 0, "model": 0, "total": 100 * alice_written + 41}
    assert bob_points == {"write": 100 * bob_written, "verify": 89, "fool": 0, "like": 0, "check": 0, "model": 0, "total": 100 * bob_written + 89}
    assert set(alice_claims) == set(bob_claims) == {"TRUE", "FALSE"}
    notes = bob.get("/api/me/notifications").json()["notifications"]
    assert {"kind": "fooled", "count": 1, "message": "1 player was fooled by your claims."} in notes
