"""A solo vote's queries, counted (issue 42): what it runs in its transaction and after it, on
the database this pass runs on (SQLite on the embedded default's, PostgreSQL on the services
pass), over the service the round socket calls and over ``POST /api/rounds/<id>/vote``; and the
vote's answer, field by field, as it was before the vote was cut to these queries.

A change that adds a query to a vote fails here: it must say why, and change the count."""

from __future__ import annotations

import json
import threading

import pytest
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext

from foolgame.claims.models import Claim
from foolgame.moderation.models import Sighting
from foolgame.voting import services
from foolgame.voting.models import Round, Vote
from tests.factories import PASSWORD
from tests.voting.conftest import make_claim
from tests.waiting import wait_for

GOLD_FALSE = [{"text": "Decisive evidence for Saturn/fred/1.", "section_header": ""}]
GOLD_TRUE = [{"text": "Decisive evidence for Saturn/tina/0.", "section_header": ""}]
ANSWER = {"false_claim": 0, "labels": ["REFUTES", "SUPPORTS"], "gold": [GOLD_FALSE, GOLD_TRUE]}

# The answers the vote gave before it was cut to fewer queries (recorded from the service as it
# was then, with the false claim dealt on the left), each case after its start and a wait.
ANSWERS_BEFORE = {
    "right_fast": {"correct": True, "points": 120, "remaining": 150.0, **ANSWER, "picked": 0, "rating": None, "rating_pending": True, "streak": 1},
    "right_slow": {"correct": True, "points": 80, "remaining": 80.0, **ANSWER, "picked": 0, "rating": None, "rating_pending": True, "streak": 1},
    "wrong": {"correct": False, "points": 0, "remaining": 150.0, **ANSWER, "picked": 1, "rating": None, "rating_pending": True, "streak": 0},
    "moderator_saw_claim": {
        "correct": True,
        "points": 0,
        "remaining": 150.0,
        **ANSWER,
        "picked": 0,
        "rating": None,
        "rating_pending": False,
        "streak": 1,
        "unpaid": "moderator_saw_claim",
        "message": "You saw one of these claims with its answer as a moderator before voting, so this vote pays nothing "
        "to anyone and does not count in the ratings.",
    },
    "points_hidden": {"correct": True, "remaining": 150.0, **ANSWER, "picked": 0, "rating": None, "rating_pending": True, "streak": 1},
}

# What each statement of a vote is for, known by how it starts.
ROLES = [
    ('SELECT "voting_round"."id"', "round"),  # the round, its claims and pages, the unpaid checks; locked
    ('INSERT INTO "voting_vote"', "vote"),
    ('INSERT INTO "players_ledgerentry"', "ledger"),
    ('INSERT INTO "players_notification"', "notifications"),
    ('UPDATE "voting_round"', "round update"),
    ('SELECT "claims_claimgold"', "gold"),  # the answer's gold sentences, after the commit
    ('SELECT "voting_vote"."correct"', "streak"),  # the player's streak, after the commit
]
IN_TRANSACTION = {
    "right_fast": ["round", "vote", "ledger", "round update"],
    "right_slow": ["round", "vote", "ledger", "notifications", "round update"],
    "wrong": ["round", "vote", "notifications", "round update"],
    "moderator_saw_claim": ["round", "vote", "round update"],
    "points_hidden": ["round", "vote", "ledger", "round update"],
}
AFTER_COMMIT = ["gold", "streak"]

pytestmark = pytest.mark.django_db


def role(sql: str) -> str:
    for start, name in ROLES:
        if sql.startswith(start):
            return name
    return sql[:80]


def split_at_commit(queries: list[dict]) -> tuple[list[str], list[str]]:
    """The vote's statements inside its transaction (a savepoint inside the test's own
    transaction) and after it, by role; BEGIN, COMMIT and savepoints left out."""
    inside, after, depth, closed = [], [], 0, False
    for query in queries:
        sql = query["sql"]
        if sql.startswith(("SAVEPOINT", "BEGIN")):
            depth += 1
        elif sql.startswith(("RELEASE SAVEPOINT", "COMMIT", "ROLLBACK")):
            depth -= 1
            closed = closed or depth == 0
        else:
            (after if closed else inside).append(role(sql))
    return inside, after


def dealt(game, *, points_shown: bool = True) -> Round:
    """A started round with the false claim on the left (the recorded answers' side)."""
    round_ = services.round_create(player=game.voter)
    if round_.false_index != 0:
        Round.objects.filter(pk=round_.pk).update(left_claim=round_.right_claim, right_claim=round_.left_claim, false_claim_index=0)
    if not points_shown:
        Round.objects.filter(pk=round_.pk).update(points_shown=False)
    services.round_start(round_id=round_.pk, player=game.voter)
    return Round.objects.get(pk=round_.pk)


@pytest.mark.parametrize("case", list(ANSWERS_BEFORE))
def test_a_solo_votes_answer_is_unchanged_and_its_queries_counted(game, fake_clock, case) -> None:
    round_ = dealt(game, points_shown=case != "points_hidden")
    fake_clock.advance(100 if case == "right_slow" else 30)
    if case == "moderator_saw_claim":
        Sighting.objects.create(moderator=game.voter, claim=game.true_claim, first_seen=fake_clock.current)
    with CaptureQueriesContext(connection) as queries:
        result = services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=1 if case == "wrong" else 0)
    assert json.loads(json.dumps(result)) == ANSWERS_BEFORE[case]
    inside, after = split_at_commit(queries.captured_queries)
    assert (inside, after) == (IN_TRANSACTION[case], AFTER_COMMIT), "a vote's queries changed: say why, and change the count"


def test_a_fast_right_vote_is_four_statements_in_its_transaction_and_two_reads_after(game, fake_clock) -> None:
    """The count the issue asked for, on this pass's database: was 8 on PostgreSQL (the claims'
    lock, the round's, the unpaid check, the vote, the ledger, the round's update, the gold and
    the streak, all in the transaction) and 7 on SQLite (no claims' lock there)."""
    round_ = dealt(game)
    fake_clock.advance(30)
    with CaptureQueriesContext(connection) as queries:
        services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=0)
    inside, after = split_at_commit(queries.captured_queries)
    assert (len(inside), len(after)) == (4, 2), (inside, after)
    locked = queries.captured_queries[1]["sql"]
    if connection.vendor == "postgresql":  # one statement takes the claims' locks, then the round's
        assert locked.endswith('FOR KEY SHARE OF "claims_claim", T4 FOR UPDATE OF "voting_round"'), locked[-120:]
    else:
        assert "FOR " not in locked[-200:]


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("postgresql_only")
def test_a_votes_read_is_compiled_once_on_postgresql(game, fake_clock, monkeypatch) -> None:
    """The one read carries the check's parameters (the moment, the player) beside the key, and
    its SQL is still kept from the first vote: later votes build and compile no round query.
    (SQLite takes the moment as text Django adapts, so there it is compiled every time.)"""
    from django.db.models.sql.compiler import SQLCompiler

    first = dealt(game)
    services.vote_cast(round_id=first.pk, player=game.voter, false_claim=0)
    page = game.true_claim.page
    second = Round.objects.create(
        player=game.voter,
        left_claim=make_claim(page, label="REFUTES", author=game.false_author),
        right_claim=make_claim(page, label="SUPPORTS", author=game.true_author),
        false_claim_index=0,
    )
    services.round_start(round_id=second.pk, player=game.voter)
    compiled: list[object] = []
    as_sql = SQLCompiler.as_sql
    monkeypatch.setattr(SQLCompiler, "as_sql", lambda self, *a, **k: compiled.append(self.query.model) or as_sql(self, *a, **k))
    fake_clock.advance(30)
    with transaction.atomic():  # the vote's own queries: its after-commit tasks run at the end of this block
        assert services.vote_cast(round_id=second.pk, player=game.voter, false_claim=0)["correct"] is True
        seen = list(compiled)
    assert Round not in seen, seen


def test_a_vote_over_rest_runs_the_same_statements(game, fake_clock) -> None:
    """``POST /api/rounds/<id>/vote``: the vote's own statements are the service's; the rest of
    the request is the session, the user and the middleware's checks, counted too."""
    round_ = dealt(game)
    fake_clock.advance(30)
    client = Client()
    assert client.login(username=game.voter.username, password=PASSWORD)
    with CaptureQueriesContext(connection) as queries:
        response = client.post(f"/api/rounds/{round_.pk}/vote", json.dumps({"false_claim": 0}), content_type="application/json")
    assert response.status_code == 200
    assert response.json() == ANSWERS_BEFORE["right_fast"]
    roles = [role(q["sql"]) for q in queries.captured_queries]
    vote = [r for r in roles if r in {name for _, name in ROLES}]
    assert vote == IN_TRANSACTION["right_fast"] + AFTER_COMMIT, roles
    statements = [q["sql"] for q in queries.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT", "BEGIN", "COMMIT"))]
    assert len(statements) == REST_STATEMENTS, [s[:80] for s in statements]


REST_STATEMENTS = 7
"""A REST vote's statements: the session's user (the session itself is read from the cache,
``foolgame.sessions``), then the vote's 4 + 2."""


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("postgresql_only")
def test_a_vote_waiting_on_a_moderators_claim_lock_has_not_locked_its_round(game) -> None:
    """The one statement locks the claims before the round, as the two statements did: a vote
    held by a moderator's lock on a claim (taken before the rounds the moderator voids) holds
    no lock on its round meanwhile, so the two cannot deadlock."""
    round_ = dealt(game)
    held, release, outcome = threading.Event(), threading.Event(), []

    def moderator() -> None:
        try:
            with transaction.atomic():
                list(Claim.objects.select_for_update().filter(pk=game.true_claim.pk))
                held.set()
                release.wait(90)
        finally:
            connection.close()

    def vote() -> None:
        try:
            outcome.append(services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=0)["correct"])
        except Exception as error:  # reported by the assertion below
            outcome.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=moderator), threading.Thread(target=vote)]
    threads[0].start()
    assert held.wait(30)
    threads[1].start()
    try:

        def vote_waits() -> bool:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s",
                    ['SELECT "voting_round"."id"%'],  # its start: the activity's text is cut at 1 kB
                )
                return cursor.fetchone()[0] == 1

        def activity() -> str:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pid, state, wait_event_type, wait_event, left(query, 60), right(query, 60) FROM pg_stat_activity WHERE datname = current_database()")
                return "\n".join(map(str, cursor.fetchall())) + f"\nvote: {outcome}"

        wait_for(vote_waits, what="the vote to wait for the claim's lock", seconds=30, explain=activity)
        with transaction.atomic():  # the round is free: NOWAIT would raise were it locked
            assert list(Round.objects.select_for_update(nowait=True).filter(pk=round_.pk).values_list("state", flat=True)) == ["playing"]
    finally:
        release.set()
        for thread in threads:
            thread.join(timeout=30)
    assert outcome == [True]
    assert Vote.objects.filter(round=round_).count() == 1
