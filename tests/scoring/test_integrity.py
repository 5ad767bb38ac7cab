"""scoring.integrity: the tails, the population's buckets, the scans and the follow test."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats

from scoring import integrity
from scoring.integrity import CastVote, GiveUp, Population, VoteFact

ALPHA = 1e-4  # the setting's default (FM2_INTEGRITY ALPHA)
DAY = 86400.0


def brute_tail(probabilities: list[float], k: int) -> float:
    total = 0.0
    for outcome in itertools.product((0, 1), repeat=len(probabilities)):
        if sum(outcome) >= k:
            total += math.prod(p if o else 1 - p for p, o in zip(probabilities, outcome))
    return total


@pytest.mark.parametrize(("n", "p", "k"), [(10, 0.5, 7), (30, 0.55, 30), (40, 0.8, 35), (20, 0.3, 0), (20, 0.3, 21), (1, 0.9, 1)])
def test_poisson_binomial_tail_with_equal_chances_is_the_binomial_tail(n: int, p: float, k: int) -> None:
    assert integrity.poisson_binomial_tail([p] * n, k) == pytest.approx(stats.binom.sf(k - 1, n, p), rel=1e-9, abs=1e-300)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.01, 0.99), min_size=1, max_size=8), st.integers(0, 9))
def test_poisson_binomial_tail_matches_enumeration(probabilities: list[float], k: int) -> None:
    assert integrity.poisson_binomial_tail(probabilities, k) == pytest.approx(brute_tail(probabilities, k), rel=1e-9, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.05, 0.95), min_size=1, max_size=30), st.floats(0.0, 2.0), st.data())
def test_person_tail_is_a_probability_that_falls_as_right_votes_rise(rates: list[float], spread: float, data: st.DataObject) -> None:
    k = data.draw(st.integers(0, len(rates)))
    here = integrity.person_tail(rates, [spread] * len(rates), k)
    more = integrity.person_tail(rates, [spread] * len(rates), k + 1)
    assert 0.0 <= more <= here <= 1.0


def test_person_tail_without_spread_is_the_poisson_binomial_tail_rounded_up() -> None:
    rates = [0.55] * 30
    exact = integrity.poisson_binomial_tail(rates, 30)
    assert exact <= integrity.person_tail(rates, [0.0] * 30, 30) <= exact + 2e-12


def test_a_spread_of_skill_makes_a_perfect_run_likelier() -> None:
    """A strong player is more likely than the average one to get 30 of 30."""
    assert integrity.person_tail([0.55] * 30, [1.0] * 30, 30) > 100 * integrity.person_tail([0.55] * 30, [0.0] * 30, 30)


@pytest.mark.parametrize(
    ("clues", "seconds", "bucket"),
    [
        (0, 0.0, (0, 0)), (0, 1.9, (0, 0)), (0, 3.9, (0, 2)), (0, 4.0, (0, 3)), (1, 8.0, (1, 7)), (1, 10.0, (1, 9)), (1, 14.9, (1, 10)),
        (2, 31.0, (2, 13)), (4, 200.0, (3, 15)), (9, -1.0, (4, 0)),
    ],
)
def test_bucket_of(clues: int, seconds: float, bucket: tuple[int, int]) -> None:
    assert integrity.bucket_of(clues, seconds) == bucket


@pytest.mark.parametrize(
    ("n", "windows"),
    [
        (0, []),
        (5, [(0, 5)]),
        (20, [(0, 20)]),
        (30, [(0, 20), (0, 30), (10, 30)]),
        (45, [(0, 20), (0, 40), (0, 45), (5, 45), (10, 30), (20, 40), (25, 45)]),
    ],
)
def test_windows_of(n: int, windows: list[tuple[int, int]]) -> None:
    assert integrity.windows_of(n) == windows


def test_windows_cover_every_run_of_forty_with_one_of_twenty_or_more() -> None:
    for n in range(40, 200, 7):
        windows = integrity.windows_of(n)
        for start in range(0, n - 40 + 1):
            assert any(start <= a and b <= start + 40 and b - a >= 20 for a, b in windows)


def population_of(fast_rate: float = 0.55, slow_rate: float = 0.8) -> Population:
    """Everyone right about ``fast_rate`` of the time in under 8 s without a clue, and
    ``slow_rate`` at 30 s; how far players spread comes from the votes."""
    rng = np.random.default_rng(1)
    by_player: dict[int, list[VoteFact]] = {}
    for player in range(300):
        skill = rng.normal(0.0, 1.0)
        fast = [VoteFact(bool(rng.random() < fast_rate), 0, float(rng.uniform(1, 8))) for _ in range(10)]
        slow_p = 1 / (1 + math.exp(-(math.log(slow_rate / (1 - slow_rate)) + skill)))
        slow = [VoteFact(bool(rng.random() < slow_p), 0, float(rng.uniform(30, 60))) for _ in range(40)]
        by_player[player] = fast + slow
    return integrity.population_fit(by_player)


@pytest.fixture(scope="module")
def population() -> Population:
    return population_of()


def test_population_fit_reads_accuracy_by_bucket_and_the_spread_of_players(population: Population) -> None:
    fast, slow = integrity.bucket_of(0, 2.5), integrity.bucket_of(0, 40.0)
    assert population.accuracy(fast) == pytest.approx(0.55, abs=0.05)
    assert population.accuracy(slow) == pytest.approx(0.76, abs=0.03)  # 0.8 at the average skill; the spread pulls it down
    # Players differ in skill when they have time to read, not when they guess.
    assert population.spread(fast) < 0.4  # at or near the floor, 0.3
    assert 0.6 < population.spread(slow) < 1.4


def test_population_fit_smooths_a_rare_bucket_towards_its_clue_group() -> None:
    votes = {1: [VoteFact(True, 0, 40.0)] * 100 + [VoteFact(False, 0, 40.0)] * 100, 2: [VoteFact(True, 0, 1.0)]}
    population = integrity.population_fit(votes, prior_votes=20, prior=None)
    assert population.accuracy(integrity.bucket_of(0, 1.0)) == pytest.approx((1 + 20 * (101 + 20 * 0.5) / (201 + 20)) / 21, rel=1e-3)
    assert population.spread(integrity.bucket_of(0, 1.0)) == 1.0  # nobody revisited it: the default
    assert population.accuracy(integrity.bucket_of(3, 1.0)) == pytest.approx(population.overall)  # never seen


def test_population_fit_starts_each_bucket_from_the_releases_prior() -> None:
    votes = {1: [VoteFact(True, 0, 40.0)] * 100 + [VoteFact(False, 0, 40.0)] * 100, 2: [VoteFact(True, 0, 1.0)]}
    population = integrity.population_fit(votes, prior_votes=20)
    fast, slow = integrity.bucket_of(0, 1.0), integrity.bucket_of(0, 40.0)
    assert population.accuracy(fast) == pytest.approx((1 + 20 * 0.5) / 21)  # one vote beside the prior's chance
    assert population.spread(fast) == integrity.SPREAD_FLOOR
    assert population.accuracy(slow) == pytest.approx((100 + 20 * integrity.fm2_prior(slow)[0]) / 220)
    assert population.accuracy(integrity.bucket_of(3, 1.0)) == pytest.approx(integrity.CHANCE)  # never seen: the prior's
    assert population.accuracy(integrity.bucket_of(3, 200.0)) == pytest.approx(integrity.FM2_ACCURACY)


def test_the_releases_prior_is_chance_before_reading_and_eighty_percent_after() -> None:
    no_clue = [integrity.fm2_prior((0, s)) for s in range(len(integrity.SECOND_EDGES) + 1)]
    assert no_clue[0] == (0.5, integrity.SPREAD_FLOOR)  # under 2 s nobody has read two claims
    assert no_clue[-1] == (pytest.approx(0.8), integrity.SKILL_SPREAD)  # the paper's 80% of votes right
    assert [r for r, _ in no_clue] == sorted(r for r, _ in no_clue)
    assert [s for _, s in no_clue] == sorted(s for _, s in no_clue)
    slowest = len(integrity.SECOND_EDGES)
    for clues in range(1, len(integrity.CLUE_EDGES) + 1):
        with_clues = [integrity.fm2_prior((clues, s)) for s in range(slowest + 1)]
        assert with_clues[0] == (0.5, integrity.SPREAD_FLOOR)  # a clue bought is one more sentence to read, not an answer
        assert with_clues[-1] == (pytest.approx(0.8), integrity.SKILL_SPREAD)
        # Never ahead of fewer clues at the same speed: more to read in the same seconds.
        fewer = [integrity.fm2_prior((clues - 1, s)) for s in range(slowest + 1)]
        assert all(r <= f + 1e-12 for (r, _), (f, _) in zip(with_clues, fewer))
    assert integrity.fm2_prior(integrity.bucket_of(1, 9.0))[0] < integrity.fm2_prior(integrity.bucket_of(0, 9.0))[0] < integrity.FM2_ACCURACY


def test_a_clue_is_read_at_the_release_evidence_sentences_length() -> None:
    """``CLUE_TOKENS`` is the FM2 dev split's retrieved evidence sentences' mean length."""
    path = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "fm2" / "dev.jsonl"
    if not path.exists():
        pytest.skip("the FM2 dev split is not here")
    lengths = [len(e["text"].split()) for line in path.open() for e in json.loads(line)["retrieved_evidence"]]
    assert round(sum(lengths) / len(lengths)) == integrity.CLUE_TOKENS


def everyone(seed: int = 7, players: int = 40, votes: int = 30) -> dict[int, list[VoteFact]]:
    rng = np.random.default_rng(seed)
    return {
        p: [VoteFact(bool(rng.random() < 0.7), int(rng.integers(0, 3)), float(rng.choice([1.0, 3.0, 9.0, 45.0]))) for _ in range(votes)]
        for p in range(players)
    }


@pytest.mark.parametrize("prior", [integrity.fm2_prior, None])
def test_a_population_without_one_players_votes_is_the_fit_of_the_others(prior) -> None:
    votes = everyone()
    left_out = integrity.population_fit(votes, prior=prior).excluding(votes[3])
    others = integrity.population_fit({p: v for p, v in votes.items() if p != 3}, prior=prior)
    assert left_out.votes == others.votes
    for bucket in others.rates:
        assert left_out.accuracy(bucket) == pytest.approx(others.accuracy(bucket), rel=1e-9)
        assert left_out.spread(bucket) == pytest.approx(others.spread(bucket), rel=1e-9)


def test_a_population_made_by_hand_is_left_as_it_is() -> None:
    population = Population(overall=0.7, rates={(0, 0): 0.55}, spreads={(0, 0): 0.3})
    assert population.excluding([VoteFact(True, 0, 1.0)]) is population


def first_flagged(votes: list[VoteFact], others: dict[int, list[VoteFact]], *, leave_out: bool = True, prior=integrity.fm2_prior) -> int | None:
    """After how many of ``votes`` the account is flagged, tested as the game tests it: against a
    population fitted on everyone's votes, its own included, then (``leave_out``) taken out."""
    for k in range(1, len(votes) + 1):
        population = integrity.population_fit({**others, "suspect": votes[:k]}, prior=prior)
        if leave_out:
            population = population.excluding(votes[:k])
        evidence = integrity.improbable_run(votes[:k], population, alpha=ALPHA)
        if evidence is not None and evidence.flagged(ALPHA):
            return k
    return None


def test_on_an_empty_instance_thirty_right_in_a_row_in_four_seconds_are_flagged_within_thirty() -> None:
    votes = [VoteFact(True, 0, 4.0)] * 30
    assert first_flagged(votes, {}) is not None and first_flagged(votes, {}) <= 30
    # Fitted on its own votes, without the prior, the cheater was its own alibi (issue 36).
    assert first_flagged(votes, {}, leave_out=False, prior=None) is None


def test_in_a_small_class_a_streak_in_seconds_is_flagged_within_thirty() -> None:
    rng = np.random.default_rng(8)
    streak = [VoteFact(True, 0, float(s)) for s in rng.uniform(2, 5, 30)]
    found = first_flagged(streak, everyone(players=29))
    assert found is not None and found <= 30


def test_on_an_empty_instance_a_strong_player_taking_their_time_is_not_flagged() -> None:
    rng = np.random.default_rng(3)
    votes = [VoteFact(bool(rng.random() < 0.95), 0, float(rng.uniform(30, 60))) for _ in range(300)]
    population = integrity.population_fit({"strong": votes}).excluding(votes)
    evidence = integrity.improbable_run(votes, population, alpha=ALPHA)
    assert evidence is not None and not evidence.flagged(ALPHA)


def test_on_an_empty_instance_a_relay_of_given_up_claims_in_a_second_is_flagged_within_fifty() -> None:
    """48 right in about a second, each on a claim another account gave up beside a claim it
    never saw: both tests flag it well within 50 votes against the prior alone."""
    rng = np.random.default_rng(9)
    facts = [VoteFact(True, 0, float(s)) for s in rng.uniform(0.8, 1.4, 48)]
    population = integrity.population_fit({"relay": facts}).excluding(facts)
    give_ups = [GiveUp("source", (f"t{i}", f"f{i}"), 60.0 * i) for i in range(48)]
    votes = [CastVote(i, "relay", (f"t{i}", f"other{i}"), 60.0 * i + 30, facts[i]) for i in range(48)]
    following = integrity.following_evidence(integrity.follows(votes, give_ups, window_seconds=DAY), population, alpha=ALPHA)
    assert following["relay"].flagged(ALPHA) and following["relay"].votes == 48
    run = integrity.improbable_run(facts, population, alpha=ALPHA)
    assert run is not None and run.flagged(ALPHA)


def test_on_an_empty_instance_thirty_right_in_eight_seconds_with_one_clue_are_flagged_within_thirty() -> None:
    """Issue 36: "30/30 with one clue at 8 s, p = 0.17". A clue was assumed to decide the pair
    at a glance, so a script that bought one escaped at any speed; now a clue is one more
    sentence to read in the same seconds."""
    rng = np.random.default_rng(36)
    votes = [VoteFact(True, 1, float(s)) for s in rng.uniform(7.5, 8.5, 30)]
    found = first_flagged(votes, {})
    assert found is not None and found <= 30
    one_second = [VoteFact(True, 1, float(s)) for s in rng.uniform(1.0, 2.0, 30)]
    assert first_flagged(one_second, {}) is not None


def test_on_an_empty_instance_the_same_run_with_a_clue_at_a_readers_pace_is_not_flagged() -> None:
    """The same 30 of 30 with one clue, in the 20 to 60 s a person takes to read the claims
    and the clue: a strong player, not held."""
    rng = np.random.default_rng(36)
    votes = [VoteFact(True, 1, float(s)) for s in rng.uniform(20.0, 60.0, 30)]
    assert first_flagged(votes, {}) is None
    strong = [VoteFact(bool(rng.random() < 0.9), 1, float(rng.uniform(20.0, 60.0))) for _ in range(300)]
    population = integrity.population_fit({"strong": strong}).excluding(strong)
    evidence = integrity.improbable_run(strong, population, alpha=ALPHA)
    assert evidence is not None and not evidence.flagged(ALPHA)


def test_on_an_empty_instance_a_relay_in_eight_seconds_with_a_clue_is_flagged_within_fifty() -> None:
    """The relay of issue 36 played at the clue cheater's pace: each vote on a claim another
    account gave up, one clue bought, 7.5-8.5 s."""
    rng = np.random.default_rng(10)
    facts = [VoteFact(True, 1, float(s)) for s in rng.uniform(7.5, 8.5, 50)]
    give_ups = [GiveUp("source", (f"t{i}", f"f{i}"), 60.0 * i) for i in range(50)]
    for k in range(1, 51):
        population = integrity.population_fit({"relay": facts[:k]}).excluding(facts[:k])
        votes = [CastVote(i, "relay", (f"t{i}", f"other{i}"), 60.0 * i + 30, facts[i]) for i in range(k)]
        following = integrity.following_evidence(integrity.follows(votes, give_ups, window_seconds=DAY), population, alpha=ALPHA)
        run = integrity.improbable_run(facts[:k], population, alpha=ALPHA)
        if ("relay" in following and following["relay"].flagged(ALPHA)) or (run is not None and run.flagged(ALPHA)):
            break
    else:
        pytest.fail("the relay was not flagged within 50 votes")


def test_thirty_right_in_a_row_without_a_clue_in_seconds_is_flagged(population: Population) -> None:
    rng = np.random.default_rng(2)
    run = [VoteFact(True, 0, float(s)) for s in rng.uniform(2, 5, 30)]
    evidence = integrity.improbable_run(run, population, alpha=ALPHA)
    assert evidence is not None and evidence.flagged(ALPHA)
    assert (evidence.votes, evidence.right) == (30, 30)
    assert evidence.expected == pytest.approx(30 * 0.55, abs=1.5)


def test_forty_right_in_four_seconds_is_flagged(population: Population) -> None:
    evidence = integrity.improbable_run([VoteFact(True, 0, 4.0)] * 40, population, alpha=ALPHA)
    assert evidence is not None and evidence.flagged(ALPHA)


def test_a_strong_player_taking_their_time_is_not_flagged(population: Population) -> None:
    """95% right at 30-60 s, 300 votes: a rare player, but a person."""
    rng = np.random.default_rng(3)
    votes = [VoteFact(bool(rng.random() < 0.95), 0, float(rng.uniform(30, 60))) for _ in range(300)]
    evidence = integrity.improbable_run(votes, population, alpha=ALPHA)
    assert evidence is not None and not evidence.flagged(ALPHA)


def test_an_average_player_who_guesses_fast_is_not_flagged(population: Population) -> None:
    rng = np.random.default_rng(4)
    votes = [VoteFact(bool(rng.random() < 0.55), 0, float(rng.uniform(1, 8))) for _ in range(200)]
    evidence = integrity.improbable_run(votes, population, alpha=ALPHA)
    assert evidence is not None and not evidence.flagged(ALPHA)


def test_a_streak_after_honest_play_is_found_where_it_is(population: Population) -> None:
    rng = np.random.default_rng(5)
    honest = [VoteFact(bool(rng.random() < 0.8), 0, float(rng.uniform(30, 60))) for _ in range(200)]
    streak = [VoteFact(True, 0, float(s)) for s in rng.uniform(2, 5, 60)]
    evidence = integrity.improbable_run(honest + streak, population, alpha=ALPHA)
    assert evidence is not None and evidence.flagged(ALPHA)
    assert evidence.start >= 180 and evidence.right >= 0.9 * evidence.votes


@settings(max_examples=30, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=60))
@example([True] * 60)  # flagged: the p-values are compared on at least one list
@example([False] * 10 + [True] * 40)
def test_the_quick_bound_never_hides_a_flag(correct: list[bool]) -> None:
    """With alpha the scan skips windows a bound clears; the verdict is the full scan's."""
    population = Population(overall=0.7, rates={(0, 0): 0.55}, spreads={(0, 0): 0.3})
    votes = [VoteFact(c, 0, 1.0) for c in correct]
    full = integrity.improbable_run(votes, population)
    quick = integrity.improbable_run(votes, population, alpha=1e-3)
    assert full is not None and quick is not None
    assert full.flagged(1e-3) == quick.flagged(1e-3)
    if full.flagged(1e-3):
        assert quick.p_value == pytest.approx(full.p_value)


def test_no_votes_no_evidence(population: Population) -> None:
    assert integrity.improbable_run([], population) is None


# --- following give-ups ---------------------------------------------------------------------


def cast(i: int, player: str, claims: tuple[str, str], at: float, correct: bool = True, seconds: float = 4.0) -> CastVote:
    return CastVote(i, player, claims, at, VoteFact(correct, 0, seconds))


def test_a_vote_follows_another_accounts_give_up_of_one_of_its_claims_within_the_window() -> None:
    give_ups = [GiveUp("alice", ("x1", "y1"), 100.0), GiveUp("bob", ("x2", "y2"), 100.0), GiveUp("alice", ("x3", "y3"), 100.0)]
    votes = [
        cast(1, "bob", ("x1", "z1"), 160.0),  # one claim alice gave up, a minute before: follows alice
        cast(2, "bob", ("x2", "y2"), 160.0),  # bob's own give-up: follows nobody
        cast(3, "bob", ("x3", "y3"), 50.0),  # before alice gave it up
        cast(4, "carl", ("y3", "x9"), 100.0 + DAY + 1),  # after the window
        cast(5, "carl", ("y1", "x3"), 200.0),  # two claims of alice's: follows her once
    ]
    found = integrity.follows(votes, give_ups, window_seconds=DAY)
    assert {key: [v.id for v in vs] for key, vs in found.items()} == {("bob", "alice"): [1], ("carl", "alice"): [5]}


def test_forty_right_replays_of_another_accounts_forfeits_are_flagged_with_the_source(population: Population) -> None:
    give_ups = [GiveUp("collector", (f"t{i}", f"f{i}"), 60.0 * i) for i in range(40)]
    votes = [cast(i, "voter", (f"t{i}", f"f{i}"), 60.0 * i + 30) for i in range(40)]
    evidence = integrity.following_evidence(integrity.follows(votes, give_ups, window_seconds=DAY), population, alpha=ALPHA)
    assert set(evidence) == {"voter"}
    found = evidence["voter"]
    assert found.flagged(ALPHA) and found.source == "collector"
    assert (found.votes, found.right, found.sources) == (40, 40, 1)
    assert found.claims[:2] == ("t0", "f0")


def test_honest_voters_after_timeouts_are_not_flagged(population: Population) -> None:
    rng = np.random.default_rng(6)
    give_ups = [GiveUp(f"slow{i % 7}", (f"t{i}", f"f{i}"), 10.0 * i) for i in range(400)]
    votes = [cast(i, f"v{i % 20}", (f"t{i}", f"f{i}"), 10.0 * i + 5, bool(rng.random() < 0.8), float(rng.uniform(30, 60))) for i in range(400)]
    evidence = integrity.following_evidence(integrity.follows(votes, give_ups, window_seconds=DAY), population)
    assert len(evidence) == 20
    assert not any(e.flagged(ALPHA) for e in evidence.values())
    assert all(e.sources == 7 for e in evidence.values())
