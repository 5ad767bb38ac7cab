"""A room's question rates all its votes in one run of the rating task, when its answer is out."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from foolgame.rooms import services
from foolgame.voting import tasks
from foolgame.voting.models import Vote
from tests.rooms.conftest import fake_clock, party  # noqa: F401 - the rooms' fixtures
from tests.rooms.test_settle import voted_question

pytestmark = pytest.mark.django_db


def test_a_room_questions_votes_are_rated_in_one_run_of_nine_queries(party, fake_clock, django_capture_on_commit_callbacks, monkeypatch) -> None:  # noqa: F811
    """Rated one by one, each vote took 12 queries (15 for a newcomer: a savepoint and an insert)."""
    runs = []
    rate = tasks.ratings_rate_votes

    def counted(*, vote_ids: list[int]) -> int:
        with CaptureQueriesContext(connection) as queries:
            rated = rate(vote_ids=vote_ids)
        runs.append((sorted(vote_ids), rated, len(queries)))
        return rated

    monkeypatch.setattr(tasks, "ratings_rate_votes", counted)
    question, plays = voted_question(party, fake_clock)
    assert runs == [], "nobody is rated while the question plays"
    with django_capture_on_commit_callbacks(execute=True):
        assert services.room_question_finish(question_id=question.pk)
    votes = sorted(Vote.objects.filter(round__in=plays.values()).values_list("pk", flat=True))
    assert runs == [(votes, 3, 11)], "one run: 9 queries, and 2 to make the newcomers' rating rows"
    assert set(Vote.objects.filter(pk__in=votes).values_list("rated", flat=True)) == {True}
