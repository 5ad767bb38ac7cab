"""The studies' ``player_settings`` provider reads a participant's row once per request, however
often the request asks (a save asks two or three times), and never gives one player another's
arm: not within a request, not across requests in one process."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connection
from django.test.utils import CaptureQueriesContext

from foolgame.core import arms, hooks
from foolgame.evidence.services import page_top_lexical_hit
from foolgame.studies.models import Arm, Participant
from tests.authoring.conftest import eiffel, post, sentence_ids  # noqa: F401  (eiffel is a fixture)
from tests.studies.conftest import create_study, participant_client
from tests.studies.test_work import CLAIM

pytestmark = pytest.mark.django_db


@contextmanager
def one_request():
    """Django's request signals around the block, as a handler sends them (without closing the
    test's database connection, as the test client does)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    request_started.send(sender=None)
    try:
        yield
    finally:
        request_finished.send(sender=None)
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def participant_reads(queries) -> int:
    """How many of ``queries`` read a participant row by its account (the provider's read)."""
    return sum(1 for q in queries if 'FROM "studies_participant"' in q["sql"] and '"studies_participant"."user_id" =' in q["sql"])


def test_a_participants_save_reads_their_row_once(researcher, eiffel) -> None:
    slug = create_study(researcher, tasks={"write": 2}, arms=[{"name": "quiet", "settings": {"points_shown": False, "model_verdict": False}}],
                        participants=2, block_size=1)["slug"]
    client = participant_client(slug, "writer-1")
    task = post(client, "/api/write-tasks").json()
    top = page_top_lexical_hit(page=eiffel, query=CLAIM)
    gold = next(pk for pk in sentence_ids(eiffel)[2:] if pk != top)
    with CaptureQueriesContext(connection) as captured:
        response = post(client, "/api/claims", {"task": task["id"], "text": CLAIM, "gold_sentence_ids": [gold]})
    assert response.status_code == 201, response.content
    body = response.json()
    assert "points" not in body and body.get("verdict") is None  # the arm's settings were applied
    assert participant_reads(captured.captured_queries) == 1


def test_two_participants_in_one_request_and_across_requests_get_their_own_arms(researcher) -> None:
    slug = create_study(
        researcher, arms=[{"name": "ten", "settings": {"clue_seconds": 10}}, {"name": "twenty", "settings": {"clue_seconds": 20}}],
        participants=2, block_size=2,
    )["slug"]
    participant_client(slug, "a")
    participant_client(slug, "b")
    provider = hooks.player_settings.get()
    rows = {p.arm.name: p.user_id for p in Participant.objects.select_related("arm")}
    want = {"ten": 10, "twenty": 20}
    with one_request():  # one request asking for both, then again
        for _ in range(2):
            for name, user_id in rows.items():
                assert provider.settings_for(player_id=user_id)["clue_seconds"] == want[name]
        with CaptureQueriesContext(connection) as captured:
            provider.settings_for(player_id=rows["ten"])
        assert participant_reads(captured.captured_queries) == 0  # remembered for the request
    # The next request reads afresh: an arm changed between requests shows.
    Arm.objects.filter(name="ten").update(settings={"clue_seconds": 30})
    with one_request():
        assert provider.settings_for(player_id=rows["ten"])["clue_seconds"] == 30
        assert provider.settings_for(player_id=rows["twenty"])["clue_seconds"] == 20
    # Outside a request every ask reads.
    with CaptureQueriesContext(connection) as captured:
        provider.settings_for(player_id=rows["twenty"])
        provider.settings_for(player_id=rows["twenty"])
    assert participant_reads(captured.captured_queries) == 2
    assert provider.settings_for(player_id=int(researcher.session["_auth_user_id"])) == arms.defaults()
