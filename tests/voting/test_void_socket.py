"""A round voided by moderation while its socket is open: the player is told at once."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from foolgame.moderation.actions import claim_moderate, moderator_set
from foolgame.voting import services
from tests.factories import UserFactory
from tests.voting.test_consumers import connect, frame

pytestmark = [pytest.mark.django_db(transaction=True)]


async def test_a_relabel_during_play_sends_a_void_frame_and_a_late_vote_is_refused(game, fake_clock) -> None:
    def setup():
        moderator = UserFactory(username="mona")
        moderator_set(username=moderator.username)
        return moderator, services.round_create(player=game.voter)

    moderator, round_ = await database_sync_to_async(setup)()
    ws = await connect(round_.pk, game.voter)
    await ws.send_json_to({"type": "start"})
    await frame(ws, "state")
    await database_sync_to_async(claim_moderate)(
        moderator=moderator, claim_id=game.true_claim.pk, action="relabel", reason="It is false.", label="REFUTES"
    )
    void = await frame(ws, "void")
    assert void["points"] == 0 and "moderator" in void["message"]
    await ws.send_json_to({"type": "vote", "false_claim": 0})
    error = await frame(ws, "error")
    assert error["code"] == "round_over"
    await ws.disconnect()
