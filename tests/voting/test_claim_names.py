"""``reveal`` takes ``claim`` where ``vote`` takes ``false_claim`` (issue 39): each takes the
other's name too, over REST and on the round socket; the stable names still work, and two
names that disagree are refused with nothing changed."""

from __future__ import annotations

import pytest

from foolgame.core.sockets import FrameError, claim_field
from foolgame.voting.models import ClueReveal, Round, Vote
from tests.voting.test_apis import login, post

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("frame", "field", "also", "value"),
    [
        ({"claim": 1}, "claim", "false_claim", 1),
        ({"false_claim": 0}, "claim", "false_claim", 0),
        ({"false_claim": 1}, "false_claim", "claim", 1),
        ({"claim": 0}, "false_claim", "claim", 0),
        ({"claim": 1, "false_claim": 1}, "false_claim", "claim", 1),
    ],
)
def test_either_name_gives_the_claim(frame: dict, field: str, also: str, value: int) -> None:
    assert claim_field(frame, field, also=also) == value


@pytest.mark.parametrize("frame", [{"claim": 1, "false_claim": 0}, {}, {"claim": 2}, {"false_claim": True}])
def test_two_names_that_disagree_or_none_are_refused(frame: dict) -> None:
    with pytest.raises(FrameError):
        claim_field(frame, "false_claim", also="claim")


def test_rest_reveal_and_vote_take_either_name(game) -> None:
    client = login("vera")
    round_id = post(client, "/api/rounds").json()["id"]
    post(client, f"/api/rounds/{round_id}/start")
    assert post(client, f"/api/rounds/{round_id}/reveal", {"false_claim": 0}).status_code == 200  # reveal, vote's name
    assert post(client, f"/api/rounds/{round_id}/reveal", {"claim": 1}).status_code == 200
    assert ClueReveal.objects.filter(round_id=round_id).count() == 2
    refused = post(client, f"/api/rounds/{round_id}/vote", {"claim": 0, "false_claim": 1})
    assert refused.status_code == 400 and not Vote.objects.exists()
    round_ = Round.objects.get(pk=round_id)
    voted = post(client, f"/api/rounds/{round_id}/vote", {"claim": round_.false_index})  # vote, reveal's name
    assert voted.status_code == 200 and Vote.objects.get().false_claim_index == round_.false_index
