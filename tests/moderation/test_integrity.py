"""Improbable players: held by the refresh, off the boards and the ratings, marked in the
export, and the moderators' queue of held players (foolgame.moderation.integrity)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import Client

from foolgame.moderation import integrity, tasks
from foolgame.moderation.models import PlayerAuditRecord, PlayerHold
from foolgame.players.models import LedgerEntry, PlayerRating
from foolgame.voting import services as voting
from foolgame.voting.models import Round, Vote
from foolgame.voting.ratings import ratings_rate_vote, skill_table
from scoring.integrity import Population, bucket_of
from tests.factories import UserFactory
from foolgame.claims.models import Claim
from tests.moderation.conftest import claim_pair, login, make_claim, play, post

pytestmark = pytest.mark.django_db

# Everyone is right 55% of the time within 8 s without a clue, players hardly differ there;
# with time to read, 78%, and players differ by a logit.
POPULATION = Population(
    overall=0.75,
    rates={**{bucket_of(0, s): 0.55 for s in range(8)}, bucket_of(0, 45): 0.78, bucket_of(0, 90): 0.78},
    spreads={**{bucket_of(0, s): 0.3 for s in range(8)}, bucket_of(0, 45): 1.0, bucket_of(0, 90): 1.0},
    votes=10_000,
)


@pytest.fixture
def population(monkeypatch: pytest.MonkeyPatch) -> Population:
    """The refreshes test against a fixed population (its fit is tested on its own)."""
    monkeypatch.setattr(integrity, "integrity_population", lambda: POPULATION)
    cache.delete(integrity.POPULATION_CACHE_KEY)
    yield POPULATION
    cache.delete(integrity.POPULATION_CACHE_KEY)


@pytest.fixture
def pairs(db):
    """Enough pairs for 30 rounds, each on a page of its own."""
    return [claim_pair(title=f"Topic {i}") for i in range(30)]


def hold_of(player) -> PlayerHold | None:
    return PlayerHold.objects.filter(player=player).first()


def cheat(player, clock, rounds: int = 25, seconds: float = 3) -> None:
    for _ in range(rounds):
        play(player, clock, correct=True, seconds=seconds)


def test_the_population_reads_each_votes_clues_and_seconds(pairs, fake_clock) -> None:
    player = UserFactory(username="paula")
    play(player, fake_clock, correct=True, seconds=3)
    play(player, fake_clock, correct=False, seconds=40, clues=2)
    population = integrity.integrity_population()
    assert population.votes == 2
    assert {bucket for bucket, tally in population.tallies.items() if tally.votes} == {bucket_of(0, 3), bucket_of(2, 40 + 0.0)}
    assert population.vote_ids == tuple(Vote.objects.order_by("id").values_list("id", flat=True))


def test_a_player_right_every_time_in_seconds_is_held_with_the_evidence(pairs, fake_clock, population) -> None:
    cheater, honest = UserFactory(username="speedy"), UserFactory(username="steady")
    cheat(cheater, fake_clock)
    for n in range(10):
        play(honest, fake_clock, correct=n % 4 != 0, seconds=45)
    assert integrity.integrity_refresh_recent() == 1
    hold = hold_of(cheater)
    assert hold is not None and hold.held and hold.status == "held"
    assert hold.reasons == ["improbable_accuracy"]
    run = hold.evidence["improbable"]
    assert (run["votes"], run["right"]) == (25, 25)
    assert run["expected"] == pytest.approx(25 * 0.55, abs=0.01)
    assert run["p_value"] < settings.FM2_INTEGRITY["ALPHA"] and hold.p_value == pytest.approx(run["p_value"], rel=1e-2)
    assert run["median_seconds"] == 3.0 and run["clues"] == 0
    assert hold_of(honest) is None
    # Refreshing again changes nothing.
    assert integrity.integrity_refresh_recent() == 0
    assert PlayerHold.objects.count() == 1


def test_votes_on_pairs_another_account_forfeited_are_held_with_the_linked_account(pairs, fake_clock, population) -> None:
    collector, voter = UserFactory(username="collector"), UserFactory(username="replayer")
    for _ in range(25):
        round_ = voting.round_create(player=collector)
        voting.round_forfeit(round_id=round_.pk, player=collector)
    given_up = Round.objects.filter(player=collector, state__in=integrity.given_up_states())
    assert given_up.count() == 25
    fake_clock.advance(60)
    cheat(voter, fake_clock, rounds=25, seconds=4)
    integrity.integrity_check(player_ids=[voter.pk, collector.pk], population=POPULATION)
    hold = hold_of(voter)
    assert hold is not None and "follows_give_ups" in hold.reasons
    follows = hold.evidence["follows"]
    assert (follows["source"], follows["source_id"], follows["sources"]) == ("collector", collector.pk, 1)
    assert follows["votes"] == follows["right"] >= 20  # the pairs of 25 of the 30 pages were collected
    assert hold.evidence["linked_accounts"] == ["collector"]
    claims = {c for r in given_up for c in (r.left_claim_id, r.right_claim_id)}
    assert set(follows["claims"]) <= claims
    assert hold_of(collector) is None  # forfeits earn nothing: only the voter is held


def test_a_voters_test_compiles_its_queries_once_and_finds_what_djangos_queries_find(pairs, fake_clock, monkeypatch) -> None:
    """The test after votes reads its rows with SQL compiled once on PostgreSQL (issue 42: building
    them was most of the worker's CPU): a second test of the same voter compiles no query there,
    and finds the same verdict, rows and evidence as Django's own queries, own votes left out
    of the population and another account's give-ups linked."""
    from django.db import connection
    from django.db.models.sql.compiler import SQLCompiler

    collector, voter = UserFactory(username="collector"), UserFactory(username="replayer")
    for _ in range(25):
        voting.round_forfeit(round_id=voting.round_create(player=collector).pk, player=collector)
    fake_clock.advance(60)
    cheat(voter, fake_clock, rounds=25, seconds=4)
    population = integrity.integrity_population()
    assert population.vote_ids is not None and population.votes == 25
    first = integrity.integrity_test(player_id=voter.pk, since_vote=0, population=population)
    compiled: list[str] = []
    as_sql = SQLCompiler.as_sql
    monkeypatch.setattr(SQLCompiler, "as_sql", lambda self, *a, **k: compiled.append(self.query.model.__name__) or as_sql(self, *a, **k))
    again = integrity.integrity_test(player_id=voter.pk, since_vote=0, population=population, held=False)
    if connection.vendor == "postgresql":
        assert compiled == []
    monkeypatch.setattr(integrity, "_values", lambda name, build, params: [tuple(row) for row in build()])
    djangos = integrity.integrity_test(player_id=voter.pk, since_vote=0, population=population)
    assert first == again == djangos
    assert first.tested_votes == 25 and [row.id for row in first.rows] == list(Vote.objects.filter(round__player=voter).order_by("id").values_list("id", flat=True))
    assert first.follow is not None and first.follow.source == collector.pk and first.reasons


def test_a_held_player_is_off_the_leaderboards_and_the_skill_table(pairs, fake_clock, settings) -> None:
    settings.FM2_RATINGS = {**settings.FM2_RATINGS, "SKILL_MIN_VOTES": 1}
    held, other = UserFactory(username="held"), UserFactory(username="other")
    for player in (held, other):
        play(player, fake_clock, correct=True, seconds=20)
    for vote in Vote.objects.all():
        ratings_rate_vote(vote_id=vote.pk)
    client = Client()

    def boards() -> list[set[str]]:
        return [{row["username"] for row in client.get(f"/api/leaderboard?kind={kind}").json()} for kind in ("total", "verify", "skill")]

    assert all({"held", "other"} <= board for board in boards())
    PlayerHold.objects.create(player=held, p_value=1e-9, held_at=Vote.objects.first().created)
    assert all("held" not in board and "other" in board for board in boards())
    assert "held" not in {row["username"] for row in skill_table()}
    assert "held" not in client.get("/leaderboard/").content.decode()
    assert LedgerEntry.objects.filter(player=held).exists()  # the ledger is history: nothing is taken back


def test_a_held_players_votes_are_not_rated_until_cleared(pairs, fake_clock, moderator) -> None:
    player = UserFactory(username="held")
    PlayerHold.objects.create(player=player, p_value=1e-9, held_at=fake_clock())
    round_ = play(player, fake_clock, correct=True, seconds=20)
    assert ratings_rate_vote(vote_id=round_.vote.pk) is False
    assert not PlayerRating.objects.filter(player=player).exists()
    claims = [round_.left_claim, round_.right_claim]
    for claim in claims:
        claim.refresh_from_db()
        assert claim.rating is None
    assert Vote.objects.get(pk=round_.vote.pk).rated  # done with: the sweep does not come back to it
    integrity.player_hold_moderate(moderator=moderator, player_id=player.pk, action="clear", reason="A quiz champion.")
    later = play(player, fake_clock, correct=True, seconds=20)
    assert ratings_rate_vote(vote_id=later.vote.pk) is True
    assert PlayerRating.objects.get(player=player).votes == 1


def test_a_cleared_player_is_held_again_only_for_new_evidence(pairs, fake_clock, population, moderator) -> None:
    cheater = UserFactory(username="speedy")
    cheat(cheater, fake_clock, rounds=25)
    integrity.integrity_refresh_recent()
    first = hold_of(cheater)
    integrity.player_hold_moderate(moderator=moderator, player_id=cheater.pk, action="clear", reason="Knows the topics by heart.")
    assert integrity.integrity_refresh_recent() == 0
    assert hold_of(cheater).status == "cleared" and not hold_of(cheater).held
    assert hold_of(cheater).cleared_through_vote == first.evidence_through_vote
    # A few ordinary votes are no new evidence.
    for n in range(4):
        play(cheater, fake_clock, correct=n % 2 == 0, seconds=45)
    assert integrity.integrity_refresh_recent() == 0 and not hold_of(cheater).held
    # One more right in seconds would hold the player again if the cleared votes still
    # counted; alone it does not.
    cheat(cheater, fake_clock, rounds=1)
    assert integrity.integrity_check(player_ids=[cheater.pk], population=POPULATION) == []
    assert not hold_of(cheater).held


def test_a_new_run_after_a_clear_holds_again(fake_clock, population, moderator) -> None:
    for i in range(50):
        claim_pair(title=f"Page {i}")
    cheater = UserFactory(username="speedy")
    cheat(cheater, fake_clock, rounds=25)
    integrity.integrity_refresh_recent()
    integrity.player_hold_moderate(moderator=moderator, player_id=cheater.pk, action="clear", reason="Benefit of the doubt.")
    cleared_through = hold_of(cheater).cleared_through_vote
    cheat(cheater, fake_clock, rounds=25)
    assert integrity.integrity_refresh_recent() == 1
    hold = hold_of(cheater)
    assert hold.held and hold.status == "held"
    assert hold.evidence["since_vote"] == cleared_through
    assert hold.evidence["improbable"]["first_vote"] > cleared_through


def test_a_confirmed_hold_stays_as_the_moderator_left_it(pairs, fake_clock, population, moderator) -> None:
    cheater = UserFactory(username="speedy")
    cheat(cheater, fake_clock, rounds=25)
    integrity.integrity_refresh_recent()
    integrity.player_hold_moderate(moderator=moderator, player_id=cheater.pk, action="confirm", reason="Same device as collector.")
    before = hold_of(cheater)
    cheat(cheater, fake_clock, rounds=5)
    integrity.integrity_refresh_recent()
    after = hold_of(cheater)
    assert (after.status, after.held, after.evidence, after.updated) == ("confirmed", True, before.evidence, before.updated)


def test_the_quality_refresh_after_votes_tests_their_voters(pairs, fake_clock, population) -> None:
    cheater = UserFactory(username="speedy")
    rounds = [play(cheater, fake_clock, correct=True, seconds=3) for _ in range(25)]
    assert hold_of(cheater) is None  # the test's transaction never commits: no task ran
    tasks.refresh_claims_quality.delay([rounds[-1].left_claim_id, rounds[-1].right_claim_id])
    assert hold_of(cheater) is not None and hold_of(cheater).held


def test_after_votes_a_player_is_tested_once_per_new_vote_not_once_per_batch(pairs, fake_clock, population, monkeypatch) -> None:
    """A room's 20 votes on one pair arrive in many batches: each batch tests the players
    whose vote on those claims it has not seen tested yet, not everyone who voted on them;
    a player's next vote is tested again. The periodic refresh still tests every voter."""
    tested: list[str] = []
    test = integrity.integrity_test

    def counting(*, player_id, **kwargs):
        tested.append(names[player_id])
        return test(player_id=player_id, **kwargs)

    monkeypatch.setattr(integrity, "integrity_test", counting)
    ann, bo = UserFactory(username="ann"), UserFactory(username="bo")
    names = {ann.pk: "ann", bo.pk: "bo"}
    first = play(ann, fake_clock, correct=True)
    claims = [first.left_claim_id, first.right_claim_id]
    tasks.refresh_claims_quality.delay(claims)
    assert tested == ["ann"]
    tasks.refresh_claims_quality.delay(claims)
    assert tested == ["ann"], "nothing new: nobody tested again"
    second = play(bo, fake_clock, correct=False)
    tasks.refresh_claims_quality.delay(claims + [second.left_claim_id, second.right_claim_id])
    assert tested == ["ann", "bo"], "only the new vote's player"
    third = play(ann, fake_clock, correct=True)
    tasks.refresh_claims_quality.delay(claims + [third.left_claim_id, third.right_claim_id])
    assert tested == ["ann", "bo", "ann"], "a player's new vote is tested"
    integrity.integrity_refresh_recent()
    assert sorted(tested[3:]) == ["ann", "bo"], "the periodic refresh tests everyone who voted"


def test_the_periodic_refresh_is_scheduled_and_holds(pairs, fake_clock, population) -> None:
    schedule = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "foolgame.moderation.tasks.refresh_integrity" in schedule
    cheater = UserFactory(username="speedy")
    cheat(cheater, fake_clock, rounds=25)
    assert tasks.refresh_integrity.delay().get() == 1
    assert hold_of(cheater).held


def test_the_refresh_command_tests_every_voter(pairs, fake_clock, population) -> None:
    from io import StringIO

    from django.core.management import call_command

    cheater = UserFactory(username="speedy")
    cheat(cheater, fake_clock, rounds=25)
    out = StringIO()
    call_command("refresh_integrity", stdout=out)
    assert out.getvalue().startswith("1 newly held; holds: 1 held")
    assert hold_of(cheater).held


def test_given_up_rounds_are_timeouts_and_forfeits() -> None:
    states = integrity.given_up_states()
    assert "timeout" in states
    assert ("forfeited" in states) == hasattr(Round.State, "FORFEITED")


# --- the export ------------------------------------------------------------------------------


def test_the_export_marks_a_held_voters_votes(tmp_path: Path) -> None:
    from foolgame.dataset.exporter import ExportOptions
    from foolgame.dataset.services import dataset_export
    from tests.dataset.conftest import make_claim as dataset_claim, play as ended_round
    from tests.factories import PageFactory

    authors = [UserFactory(username=f"author_{i}") for i in range(2)]
    held, honest = UserFactory(username="held"), UserFactory(username="honest")
    for p in range(4):
        page = PageFactory(title=f"Topic {p}")
        true_claim = dataset_claim(page, label="SUPPORTS", author=authors[0], text=f"Topic {p} was founded in {1800 + p}.")
        false_claim = dataset_claim(page, label="REFUTES", author=authors[1], text=f"Topic {p} was never founded by anyone.")
        ended_round(held if p % 2 else honest, true_claim, false_claim, correct=True)
    PlayerHold.objects.create(player=held, p_value=1e-9, held_at=Round.objects.first().ended_at)
    out = tmp_path / "out"
    dataset_export(out_dir=out, options=ExportOptions(splits=(1, 0, 0)), salt=b"a fixed salt for the tests, 32 bytes")
    lines = [json.loads(line) for line in (out / "votes.jsonl").read_text().splitlines()]
    held_topics = {line["true_claim"] for line in lines if line["voter_held"]}
    assert len(lines) == 4 and len(held_topics) == 2
    texts = {json.loads(line)["id"]: json.loads(line)["text"] for line in (out / "train.jsonl").read_text().splitlines()}
    assert {texts[claim] for claim in held_topics} == {"Topic 1 was founded in 1801.", "Topic 3 was founded in 1803."}


# --- the moderators' queue -------------------------------------------------------------------


ENDPOINTS = [
    ("get", "/api/moderation/players"),
    ("post", "/api/moderation/players/{id}/actions"),
    ("get", "/moderation/players/"),
]


@pytest.fixture
def held(db, fake_clock):
    player = UserFactory(username="speedy")
    return PlayerHold.objects.create(
        player=player,
        reasons=["improbable_accuracy", "follows_give_ups"],
        evidence={
            "alpha": 1e-4, "tested_votes": 25, "since_vote": 0, "through_vote": 99, "population_votes": 5000, "population_accuracy": 0.77,
            "improbable": {"start": 0, "end": 25, "votes": 25, "right": 25, "expected": 13.75, "run_p_value": 1e-8, "windows": 4,
                           "p_value": 4e-8, "first_vote": 75, "last_vote": 99, "median_seconds": 3.0, "clues": 0},
            "follows": {"source_id": 7, "source": "collector", "votes": 25, "right": 25, "expected": 13.75, "run_p_value": 1e-8,
                        "sources": 1, "p_value": 1e-8, "vote_ids": [75, 76], "claims": [11, 12]},
            "linked_accounts": ["collector"],
        },
        p_value=1e-8,
        evidence_through_vote=99,
        held_at=fake_clock(),
    )


@pytest.mark.parametrize(("method", "url"), ENDPOINTS)
def test_everyone_but_moderators_gets_403_and_nothing_changes(held, method, url) -> None:
    UserFactory(username="pat")
    for client in (Client(), login("pat")):
        if method == "post":
            response = post(client, url.format(id=held.player_id), {"action": "clear", "reason": "x"})
        else:
            response = client.get(url)
        assert response.status_code == 403
    assert hold_of(held.player).status == "held" and not PlayerAuditRecord.objects.exists()


def test_the_queue_shows_held_players_with_their_evidence(held, moderator) -> None:
    PlayerHold.objects.create(player=UserFactory(username="cleared"), status="cleared", held=False, p_value=1e-6, held_at=held.held_at)
    client = login("mona")
    body = client.get("/api/moderation/players").json()
    assert body["count"] == 1
    item = body["results"][0]
    assert (item["id"], item["username"], item["status"], item["held"]) == (held.player_id, "speedy", "held", True)
    assert item["evidence"]["improbable"]["right"] == 25 and item["evidence"]["linked_accounts"] == ["collector"]
    assert item["reasons_text"][0].startswith("Right far more often")
    assert [i["username"] for i in client.get("/api/moderation/players?status=cleared").json()["results"]] == ["cleared"]
    assert client.get("/api/moderation/players?status=nope").json()["error"]["code"] == "invalid_status"
    page = client.get("/moderation/players/").content.decode()
    assert "speedy" in page and "collector" in page and "25 right of 25" in page
    assert "Held players" in client.get("/moderation/").content.decode()


def test_clearing_a_player_is_audited_and_returns_them(held, moderator) -> None:
    response = post(login("mona"), f"/api/moderation/players/{held.player_id}/actions", {"action": "clear", "reason": "Plays the quiz league."})
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["held"], body["acted_by"]) == ("cleared", False, "mona")
    record = PlayerAuditRecord.objects.get()
    assert (record.moderator, record.player_id, record.action, record.reason) == (moderator, held.player_id, "clear", "Plays the quiz league.")
    assert record.before["status"] == "held" and record.after == {**record.before, "status": "cleared", "held": False, "cleared_through_vote": 99}
    assert body["audit"]["id"] == record.pk
    with pytest.raises(TypeError):
        record.save()
    assert "Plays the quiz league." in login("mona").get("/moderation/players/").content.decode()


def test_confirming_keeps_the_hold(held, moderator) -> None:
    response = post(login("mona"), f"/api/moderation/players/{held.player_id}/actions", {"action": "confirm", "reason": "Twin of collector."})
    assert response.status_code == 200 and (response.json()["status"], response.json()["held"]) == ("confirmed", True)
    assert PlayerAuditRecord.objects.get().action == "confirm"


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"action": "ban", "reason": "x"}, 400, "invalid_action"),
        ({"action": "clear", "reason": "  "}, 400, "reason_required"),
        ({"action": "clear"}, 400, "reason_required"),
        ({"action": "clear", "reason": "x" * 1001}, 400, "reason_too_long"),
        ([1, 2], 400, "invalid"),
    ],
)
def test_a_bad_action_is_refused_and_changes_nothing(held, moderator, body, status, code) -> None:
    response = post(login("mona"), f"/api/moderation/players/{held.player_id}/actions", body)
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)
    assert hold_of(held.player).status == "held" and not PlayerAuditRecord.objects.exists()


def test_acting_on_a_player_never_held_or_already_cleared_is_refused(held, moderator) -> None:
    client = login("mona")
    assert post(client, "/api/moderation/players/999999/actions", {"action": "clear", "reason": "x"}).status_code == 404
    assert post(client, f"/api/moderation/players/{held.player_id}/actions", {"action": "clear", "reason": "ok"}).status_code == 200
    again = post(client, f"/api/moderation/players/{held.player_id}/actions", {"action": "clear", "reason": "ok"})
    assert (again.status_code, again.json()["error"]["code"]) == (409, "already_cleared")
    confirm = post(client, f"/api/moderation/players/{held.player_id}/actions", {"action": "confirm", "reason": "ok"})
    assert (confirm.status_code, confirm.json()["error"]["code"]) == (409, "hold_not_open")
    assert PlayerAuditRecord.objects.count() == 1


# --- on an empty instance: the release's prior, and each suspect without their own votes ------


def votes_until_held(player, clock, *, rounds: int, seconds: float, clues: int = 0) -> int | None:
    """Play right answers (with ``clues`` bought each), testing after each vote as the game
    does (the claims' quality refresh, with the cached population); the vote the hold came
    after."""
    for n in range(1, rounds + 1):
        round_ = play(player, clock, correct=True, seconds=seconds, clues=clues)
        tasks.refresh_claims_quality.delay([round_.left_claim_id, round_.right_claim_id])
        if (hold := hold_of(player)) is not None and hold.held:
            return n
    return None


def test_on_an_empty_instance_thirty_right_in_a_row_in_four_seconds_are_held_within_thirty_votes(pairs, fake_clock) -> None:
    """No other votes at all: the population is the cheater's own, left out, so the bar is the
    release's prior (a pair read in 4 s is right about 60% of the time)."""
    cache.delete(integrity.POPULATION_CACHE_KEY)
    cheater = UserFactory(username="speedy")
    held_after = votes_until_held(cheater, fake_clock, rounds=30, seconds=4)
    assert held_after is not None and held_after <= 30
    hold = hold_of(cheater)
    assert hold.reasons == ["improbable_accuracy"]
    assert hold.evidence["population_votes"] >= 1  # the population held the cheater's votes; the test left them out
    assert cheater.username not in {row["username"] for row in Client().get("/api/leaderboard?kind=total").json()}


def test_on_an_empty_instance_thirty_right_with_one_clue_in_eight_seconds_are_held_within_thirty_votes(pairs, fake_clock) -> None:
    """Issue 36: "30/30 with one clue at 8 s, p = 0.17". A clue is one more sentence to read
    in the same seconds, not an answer at a glance: held within 30 votes."""
    cache.delete(integrity.POPULATION_CACHE_KEY)
    cheater = UserFactory(username="cluey")
    held_after = votes_until_held(cheater, fake_clock, rounds=30, seconds=8, clues=1)
    assert held_after is not None and held_after <= 30
    assert hold_of(cheater).reasons == ["improbable_accuracy"]
    assert hold_of(cheater).evidence["improbable"]["clues"] >= held_after - 1


def test_on_an_empty_instance_thirty_right_with_one_clue_at_a_readers_pace_are_not_held(pairs, fake_clock) -> None:
    """The same accuracy, 30 of 30 with one clue, in 40 s a vote: time to read both claims and
    the clue, a strong player's run, not held."""
    cache.delete(integrity.POPULATION_CACHE_KEY)
    reader = UserFactory(username="careful")
    assert votes_until_held(reader, fake_clock, rounds=30, seconds=40, clues=1) is None
    integrity.integrity_check(player_ids=[reader.pk])  # the periodic refresh too
    assert hold_of(reader) is None


def test_a_relay_of_another_accounts_forfeited_claims_in_new_pairs_is_held_within_fifty_votes(fake_clock) -> None:
    """Account A forfeits 48 rounds (each the only pair of its page); then each page gets a
    second false claim, and A's false claim has been voted on a lot, so B is dealt A's true
    claim beside a claim A never saw: a vote following a give-up of the same claim, not the
    same pair. B answers in about a second: held within 50 votes, linked to A."""
    cache.delete(integrity.POPULATION_CACHE_KEY)
    pairs = [claim_pair(title=f"Relay {i}") for i in range(48)]
    source, relay = UserFactory(username="source"), UserFactory(username="relay")
    for _ in pairs:
        round_ = voting.round_create(player=source)
        voting.round_forfeit(round_id=round_.pk, player=source)
        fake_clock.advance(150)  # 24 forfeits an hour, under the cap (FORFEITS_PER_HOUR)
    given_up = {frozenset((r.left_claim_id, r.right_claim_id)) for r in Round.objects.filter(player=source)}
    for true_claim, false_claim in pairs:
        make_claim(true_claim.page, label="REFUTES", author=UserFactory(username=f"new-{true_claim.page.title}"))
        Claim.objects.filter(pk=false_claim.pk).update(release_correct_votes=40, release_total_votes=50)
    fake_clock.advance(200)  # past the forfeited rounds' deadlines: A has seen the answers
    held_after = votes_until_held(relay, fake_clock, rounds=48, seconds=1)
    assert held_after is not None and held_after <= 48
    dealt = [frozenset((r.left_claim_id, r.right_claim_id)) for r in Round.objects.filter(player=relay)]
    assert not set(dealt) & given_up, "no pair of the relay's was one A gave up"
    hold = hold_of(relay)
    integrity.integrity_check(player_ids=[relay.pk])  # the periodic refresh: the evidence so far
    hold.refresh_from_db()
    assert "follows_give_ups" in hold.reasons and hold.evidence["linked_accounts"] == ["source"]
