"""Ratings for players and claims (scoring/ratings.py): Glicko-2 per vote, Rasch in batch."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from scoring.ratings import (
    DEFAULT_MAX_STEP,
    GLICKO_SCALE,
    Z_90,
    Rating,
    RoundVote,
    fit_rasch,
    glicko2_replay,
    glicko2_update,
    conservative,
    forfeit_update,
    is_provisional,
    is_too_hard,
    pair_target,
    round_update,
    to_rating_scale,
)
from scoring.ratings import _expit, _logit

# --- Glicko-2: the paper's worked example and tables -----------------------------------


def test_glickmans_worked_example_is_reproduced() -> None:
    """Glickman (2013), section "Example": 1500/200/0.06 against three opponents."""
    player = Rating(1500, 200, 0.06)
    games = [(Rating(1400, 30), 1.0), (Rating(1550, 100), 0.0), (Rating(1700, 300), 0.0)]
    after = glicko2_update(player, games)
    assert after.rating == pytest.approx(1464.06, abs=0.02)
    assert after.deviation == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=1e-5)


def test_the_worked_example_does_not_depend_on_the_games_order() -> None:
    player = Rating(1500, 200, 0.06)
    games = [(Rating(1400, 30), 1.0), (Rating(1550, 100), 0.0), (Rating(1700, 300), 0.0)]
    forward, backward = glicko2_update(player, games), glicko2_update(player, games[::-1])
    assert (forward.rating, forward.deviation, forward.volatility) == pytest.approx(
        (backward.rating, backward.deviation, backward.volatility)
    )


@pytest.mark.parametrize(
    ("rating", "expected_deviation"),
    [
        (Rating(1500, 200, 0.06), math.hypot(200 / GLICKO_SCALE, 0.06) * GLICKO_SCALE),  # 200.27
        (Rating(1700, 50, 0.06), math.hypot(50 / GLICKO_SCALE, 0.06) * GLICKO_SCALE),
        (Rating(1500, 349.9, 0.06), 350.0),  # capped at a newcomer's deviation
    ],
)
def test_a_period_without_games_only_widens_the_deviation(
    rating: Rating, expected_deviation: float
) -> None:
    after = glicko2_update(rating, [])
    assert after.rating == rating.rating
    assert after.volatility == rating.volatility
    assert after.deviation == pytest.approx(expected_deviation)


@pytest.mark.parametrize(
    ("logit", "rating"),
    [(0.0, 1500.0), (1.0, 1500 + GLICKO_SCALE), (-2.0, 1500 - 2 * GLICKO_SCALE)],
)
def test_logits_map_to_the_1500_scale(logit: float, rating: float) -> None:
    assert to_rating_scale(logit) == pytest.approx(rating)
    assert Rating(rating).mu == pytest.approx(logit)


@pytest.mark.parametrize(
    ("correct", "voter_moves", "claims_move"),
    [(True, "up", "down"), (False, "down", "up")],
)
def test_a_vote_moves_voter_and_claims_apart(
    correct: bool, voter_moves: str, claims_move: str
) -> None:
    voter, true_claim, false_claim = round_update(Rating(), Rating(), Rating(), correct)
    sign = {"up": 1, "down": -1}
    assert sign[voter_moves] * (voter.rating - 1500) > 0
    assert sign[claims_move] * (true_claim.rating - 1500) > 0
    assert sign[claims_move] * (false_claim.rating - 1500) > 0


def test_a_vote_between_newcomers_matches_the_hand_computed_update() -> None:
    """Voter 1500/350 against a pair of two newcomer claims (mu 0, phi in quadrature), with
    Glicko-2's own step (``max_step=None``)."""
    voter, true_claim, _ = round_update(Rating(), Rating(), Rating(), True, max_step=None)
    phi = 350 / GLICKO_SCALE
    pair_phi = math.sqrt(2) * phi
    g = 1 / math.sqrt(1 + 3 * pair_phi**2 / math.pi**2)
    v = 1 / (g * g * 0.25)
    phi_star = phi  # the newcomer's deviation is already at the cap
    new_phi = 1 / math.sqrt(1 / phi_star**2 + 1 / v)
    assert voter.deviation == pytest.approx(new_phi * GLICKO_SCALE, rel=1e-9)
    assert voter.rating == pytest.approx(1500 + GLICKO_SCALE * new_phi**2 * g * 0.5, rel=1e-9)
    assert true_claim.deviation < 350


@pytest.mark.parametrize("correct", [True, False])
def test_one_vote_moves_a_player_at_most_the_step_and_the_deviation_as_glicko_says(correct: bool) -> None:
    free = round_update(Rating(), Rating(), Rating(), correct, max_step=None)
    capped = round_update(Rating(), Rating(), Rating(), correct)
    assert abs(free[0].rating - 1500) > DEFAULT_MAX_STEP  # a newcomer's own step is ~146
    assert capped[0].rating == 1500 + (DEFAULT_MAX_STEP if correct else -DEFAULT_MAX_STEP)
    assert capped[0].deviation == free[0].deviation and capped[0].volatility == free[0].volatility
    assert capped[1:] == free[1:]  # claims are not capped
    small = round_update(Rating(1500, 60), Rating(1500, 60), Rating(1500, 60), correct)
    assert small == round_update(Rating(1500, 60), Rating(1500, 60), Rating(1500, 60), correct, max_step=None)  # within the cap: as is
    assert forfeit_update(Rating(), Rating(), Rating())[0].rating == 1500 - DEFAULT_MAX_STEP


@pytest.mark.parametrize(("deviation", "provisional"), [(350.0, True), (151.0, True), (150.0, False), (60.0, False)])
def test_a_rating_is_provisional_while_its_deviation_is_high(deviation: float, provisional: bool) -> None:
    assert is_provisional(deviation) is provisional


def test_an_upset_moves_ratings_more_than_an_expected_result() -> None:
    strong, easy = Rating(1900, 80), Rating(1200, 80)
    expected = round_update(strong, easy, easy, True)[0].rating - strong.rating
    upset = strong.rating - round_update(strong, easy, easy, False)[0].rating
    assert upset > expected > 0


def test_replay_applies_the_votes_in_the_order_given() -> None:
    votes = [
        RoundVote("ann", "t1", "f1", True),
        RoundVote("bob", "t1", "f2", False),
        RoundVote("ann", "t2", "f2", True),
    ]
    ratings = glicko2_replay(votes)
    voter, t1, f1 = round_update(Rating(), Rating(), Rating(), True)
    bob, t1, f2 = round_update(Rating(), t1, Rating(), False)
    ann, t2, f2 = round_update(voter, Rating(), f2, True)
    assert ratings.players == {"ann": ann, "bob": bob}
    assert ratings.claims == {"t1": t1, "f1": f1, "f2": f2, "t2": t2}
    assert glicko2_replay(votes) == ratings  # deterministic
    assert glicko2_replay(votes[::-1]).claims != ratings.claims  # and order matters


def test_replay_refuses_a_round_with_one_claim_twice() -> None:
    with pytest.raises(ValueError):
        glicko2_replay([RoundVote("ann", "c", "c", True)])


@pytest.mark.parametrize(
    "bad",
    [
        Rating(float("nan")),
        Rating(1500, 0.0),
        Rating(1500, -5.0),
        Rating(1500, 200, 0.0),
        Rating(float("inf")),
    ],
)
def test_impossible_ratings_are_refused(bad: Rating) -> None:
    with pytest.raises(ValueError):
        glicko2_update(bad, [(Rating(), 1.0)])
    with pytest.raises(ValueError):
        glicko2_update(Rating(), [(bad, 1.0)])


@pytest.mark.parametrize("score", [-0.1, 1.5, float("nan")])
def test_scores_outside_zero_to_one_are_refused(score: float) -> None:
    with pytest.raises(ValueError):
        glicko2_update(Rating(), [(Rating(), score)])


# --- Glicko-2: properties -------------------------------------------------------------

ratings = st.builds(
    Rating,
    rating=st.floats(min_value=0, max_value=3000),
    deviation=st.floats(min_value=1, max_value=350),
    volatility=st.floats(min_value=0.01, max_value=0.2),
)


@settings(max_examples=300, deadline=None)
@given(voter=ratings, true_claim=ratings, false_claim=ratings, correct=st.booleans())
def test_a_vote_never_produces_nan_and_keeps_deviations_in_bounds(
    voter: Rating, true_claim: Rating, false_claim: Rating, correct: bool
) -> None:
    for after in round_update(voter, true_claim, false_claim, correct):
        assert all(math.isfinite(x) for x in (after.rating, after.deviation, after.volatility))
        assert 0 < after.deviation <= 350
        assert after.volatility > 0


@settings(max_examples=300, deadline=None)
@given(voter=ratings, true_claim=ratings, false_claim=ratings, correct=st.booleans())
def test_the_winner_never_loses_rating_and_the_loser_never_gains(
    voter: Rating, true_claim: Rating, false_claim: Rating, correct: bool
) -> None:
    new_voter, new_true, new_false = round_update(voter, true_claim, false_claim, correct)
    if correct:  # the voter won, both claims lost
        assert new_voter.rating >= voter.rating
        assert new_true.rating <= true_claim.rating
        assert new_false.rating <= false_claim.rating
    else:
        assert new_voter.rating <= voter.rating
        assert new_true.rating >= true_claim.rating
        assert new_false.rating >= false_claim.rating


@settings(max_examples=300, deadline=None)
@given(player=ratings, opponent=ratings, score=st.sampled_from([0.0, 0.5, 1.0]))
def test_a_game_never_leaves_the_deviation_above_the_periods_widened_one(
    player: Rating, opponent: Rating, score: float
) -> None:
    """Step 7: the new deviation is below sqrt(phi^2 + sigma'^2), whatever the result."""
    after = glicko2_update(player, [(opponent, score)])
    widened = min(math.hypot(player.phi, after.volatility) * GLICKO_SCALE, 350)
    assert after.deviation < widened


@settings(max_examples=100, deadline=None)
@given(player=ratings, opponent=ratings, results=st.lists(st.booleans(), min_size=1, max_size=30))
def test_deviation_shrinks_as_games_come_in(
    player: Rating, opponent: Rating, results: list[bool]
) -> None:
    """Against a well-known opponent (deviation 30), a few games always beat no games."""
    known = Rating(opponent.rating, 30, 0.06)
    start = Rating(player.rating, 350, 0.06)
    current = start
    for won in results:
        current = glicko2_update(current, [(known, 1.0 if won else 0.0)])
    assert current.deviation < start.deviation


@settings(max_examples=300, deadline=None)
@given(voter=ratings, first=ratings, second=ratings, correct=st.booleans())
def test_the_two_claims_of_a_round_are_treated_alike(
    voter: Rating, first: Rating, second: Rating, correct: bool
) -> None:
    v1, a1, b1 = round_update(voter, first, second, correct)
    v2, b2, a2 = round_update(voter, second, first, correct)
    assert v1.rating == pytest.approx(v2.rating)
    assert v1.deviation == pytest.approx(v2.deviation)
    assert (a1.rating, b1.rating) == pytest.approx((a2.rating, b2.rating))


@settings(max_examples=300, deadline=None)
@given(
    rating=st.floats(min_value=500, max_value=2500),
    gap=st.floats(min_value=-800, max_value=800),
    deviation=st.floats(min_value=30, max_value=350),
)
def test_a_game_between_equally_known_players_is_zero_sum(
    rating: float, gap: float, deviation: float
) -> None:
    """Swapping winner and loser mirrors the update: what one gains the other loses."""
    winner, loser = Rating(rating + gap, deviation), Rating(rating, deviation)
    new_winner = glicko2_update(winner, [(loser, 1.0)])
    new_loser = glicko2_update(loser, [(winner, 0.0)])
    gained = new_winner.rating - winner.rating
    lost = loser.rating - new_loser.rating
    assert gained == pytest.approx(lost, rel=1e-6, abs=1e-9)
    assert new_winner.deviation == pytest.approx(new_loser.deviation)


# --- Rasch batch fit ------------------------------------------------------------------


def simulated_votes(
    seed: int, players: int = 300, claims: int = 400, votes_per_claim: int = 30
) -> tuple[list[RoundVote], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    skill = rng.normal(1.5, 1.0, players)
    difficulty = rng.normal(0.0, 1.0, claims)
    votes = []
    for _ in range(votes_per_claim):
        partners = rng.permutation(np.arange(1, claims, 2))
        for t, f in zip(range(0, claims, 2), partners):
            voter = int(rng.integers(players))
            p = special.expit(skill[voter] - difficulty[t] - difficulty[f])
            votes.append(RoundVote(voter, t, int(f), bool(rng.random() < p)))
    return votes, skill, difficulty


def test_rasch_recovers_known_difficulties_and_skills() -> None:
    votes, skill, difficulty = simulated_votes(seed=1)
    fit = fit_rasch(votes)
    assert fit.converged
    fitted = np.array([fit.claims[c].value for c in range(difficulty.size)])
    assert np.corrcoef(fitted, difficulty)[0, 1] > 0.85
    players = [p for p in range(skill.size) if p in fit.players]
    fitted_skill = np.array([fit.players[p].value for p in players])
    assert np.corrcoef(fitted_skill, skill[players])[0, 1] > 0.8
    # the break-even difficulty estimates the mean true skill (partners average 0)
    assert fit.break_even_difficulty() == pytest.approx(skill.mean(), abs=0.4)


def test_rasch_accounts_for_who_voted() -> None:
    """Two claims with the same counts: the one that beat strong voters is the harder."""
    votes = []
    for i in range(40):  # a league of 20 strong and 20 weak players on filler claims
        for j in range(10):
            strong = i < 20
            votes.append(RoundVote(f"p{i}", f"t{i}-{j}", f"f{i}-{j}", strong or j % 2 == 0))
    votes += [RoundVote(f"p{i}", "tough", f"g{i}", i % 2 == 0) for i in range(20)]  # strong
    votes += [RoundVote(f"p{i}", "soft", f"h{i}", i % 2 == 0) for i in range(20, 40)]  # weak
    fit = fit_rasch(votes)
    assert fit.claims["tough"].value > fit.claims["soft"].value


def test_rasch_standard_errors_shrink_with_votes() -> None:
    few = fit_rasch(simulated_votes(seed=2, votes_per_claim=5)[0])
    many = fit_rasch(simulated_votes(seed=2, votes_per_claim=40)[0])
    assert np.median([e.se for e in many.claims.values()]) < np.median(
        [e.se for e in few.claims.values()]
    )
    assert all(e.votes == 5 for e in few.claims.values())


def test_rasch_stays_finite_when_a_player_is_always_right() -> None:
    votes = [RoundVote("perfect", f"t{i}", f"f{i}", True) for i in range(30)]
    votes += [RoundVote("human", f"t{i}", f"f{i}", i % 3 != 0) for i in range(30)]
    fit = fit_rasch(votes)
    assert all(math.isfinite(e.value) and e.se > 0 for e in fit.players.values())
    assert fit.players["perfect"].value > fit.players["human"].value


def test_rasch_does_not_depend_on_the_votes_order() -> None:
    votes = simulated_votes(seed=3, players=50, claims=60, votes_per_claim=8)[0]
    forward, backward = fit_rasch(votes), fit_rasch(votes[::-1])
    for claim, estimate in forward.claims.items():
        assert backward.claims[claim].value == pytest.approx(estimate.value, abs=1e-3)


def test_rasch_solve_probability_follows_the_model() -> None:
    fit = fit_rasch(simulated_votes(seed=4, players=40, claims=40, votes_per_claim=6)[0])
    voter, t, f = next(iter(fit.players)), 0, 1
    eta = fit.intercept + fit.players[voter].value - fit.claims[t].value - fit.claims[f].value
    assert fit.solve_probability(voter, t, f) == pytest.approx(special.expit(eta))


@pytest.mark.parametrize(
    ("prior_sd", "votes"),
    [
        (1.0, []),
        (0.0, [RoundVote("a", "t", "f", True)]),
        (1.0, [RoundVote("a", "t", "t", True)]),
    ],
)
def test_rasch_refuses_what_it_cannot_fit(prior_sd: float, votes: list[RoundVote]) -> None:
    with pytest.raises(ValueError):
        fit_rasch(votes, prior_sd_skill=prior_sd)


# --- too hard from ratings -------------------------------------------------------------


@pytest.mark.parametrize(
    ("difficulty", "se", "z", "flagged"),
    [
        (2.0, 0.3, Z_90, True),  # lower end 1.51 above break-even 1.0
        (2.0, 0.7, Z_90, False),  # lower end 0.85: not sure enough
        (2.0, 0.7, 0.0, True),  # the point estimate alone is above
        (1.0, 0.0, 0.0, False),  # exactly break-even: right half the time is not too hard
        (0.5, 0.1, 0.0, False),
    ],
)
def test_too_hard_needs_the_lower_end_above_break_even(
    difficulty: float, se: float, z: float, flagged: bool
) -> None:
    verdict = is_too_hard(difficulty, se, break_even=1.0, z=z)
    assert bool(verdict) is flagged
    assert ("too hard" in verdict.reason) is flagged


def test_too_hard_reason_names_the_average_players_chance() -> None:
    verdict = is_too_hard(2.0, 0.1, break_even=1.0)
    assert f"{special.expit(-1.0):.0%}" in verdict.reason


@pytest.mark.parametrize(("se", "z"), [(-0.1, 1.0), (0.1, -1.0), (float("nan"), 1.0)])
def test_too_hard_refuses_impossible_inputs(se: float, z: float) -> None:
    with pytest.raises(ValueError):
        is_too_hard(1.0, se, break_even=0.0, z=z)


def test_rasch_flags_the_truly_hardest_claims() -> None:
    votes, skill, difficulty = simulated_votes(seed=5, votes_per_claim=40)
    fit = fit_rasch(votes)
    even = fit.break_even_difficulty()
    flagged = {c for c, e in fit.claims.items() if is_too_hard(e.value, e.se, break_even=even)}
    truly_hard = {c for c in range(difficulty.size) if difficulty[c] > skill.mean()}
    assert flagged, "some claims are too hard at 40 votes each"
    assert len(flagged & truly_hard) / len(flagged) > 0.7


# --- the dealer's target and the skill table's order -------------------------------------


@pytest.mark.parametrize(
    ("player", "solve_chance", "target"),
    [
        (1500.0, 0.5, 1500.0),  # an average player at even odds: two average claims
        (1500.0 + 2 * GLICKO_SCALE, 0.5, 1500.0 + GLICKO_SCALE),  # each claim carries half
        (1500.0, special.expit(1.0), 1500.0 - GLICKO_SCALE / 2),  # easier for a better chance
    ],
)
def test_pair_target_splits_the_players_level_over_two_claims(player: float, solve_chance: float, target: float) -> None:
    assert pair_target(Rating(player), solve_chance) == pytest.approx(target)


@given(
    player=st.floats(800, 2600),
    solve_chance=st.floats(0.05, 0.95),
)
def test_a_pair_at_the_target_is_solved_at_the_asked_chance(player: float, solve_chance: float) -> None:
    target = Rating(pair_target(Rating(player), solve_chance))
    assert special.expit(Rating(player).mu - 2 * target.mu) == pytest.approx(solve_chance)


@pytest.mark.parametrize("solve_chance", [0.0, 1.0, -0.1, float("nan")])
def test_pair_target_refuses_an_impossible_chance(solve_chance: float) -> None:
    with pytest.raises(ValueError):
        pair_target(Rating(), solve_chance)


def test_the_conservative_rating_puts_the_sure_player_above_the_lucky_newcomer() -> None:
    lucky = Rating(1700.0, 300.0)
    sure = Rating(1600.0, 60.0)
    assert conservative(sure) > conservative(lucky)
    assert conservative(Rating(1500.0, 100.0), k=1.0) == 1400.0


def test_a_rasch_fit_goes_on_as_glicko2_ratings_with_the_same_predictions() -> None:
    rng = np.random.default_rng(3)
    skills, difficulties = rng.normal(1.0, 1.0, 60), rng.normal(0.0, 1.0, 120)
    votes = []
    for _ in range(6000):
        voter, (t, f) = int(rng.integers(60)), rng.choice(120, 2, replace=False)
        p = special.expit(skills[voter] - difficulties[t] - difficulties[f])
        votes.append(RoundVote(voter, int(t), int(f), bool(rng.random() < p)))
    fit = fit_rasch(votes)
    ratings = fit.as_glicko2()
    for voter, t, f in [(0, 1, 2), (5, 40, 80), (59, 119, 3)]:
        eta = ratings.players[voter].mu - ratings.claims[t].mu - ratings.claims[f].mu
        assert special.expit(eta) == pytest.approx(fit.solve_probability(voter, t, f))
        assert ratings.claims[t].deviation == pytest.approx(GLICKO_SCALE * fit.claims[t].se)
    assert all(0 < r.deviation <= 350.0 for r in [*ratings.players.values(), *ratings.claims.values()])


@given(st.floats(min_value=-800, max_value=800, allow_nan=False))
def test_the_logistic_written_out_for_votes_matches_scipys(x: float) -> None:
    """A vote's update uses a hand-written logistic so web processes never load SciPy; it
    must agree with scipy.special.expit everywhere, overflow included (exp(800) is inf)."""
    assert _expit(x) == pytest.approx(float(special.expit(x)), rel=1e-12, abs=1e-300)
    if 1e-12 < _expit(x) < 1 - 1e-12:
        assert _logit(_expit(x)) == pytest.approx(float(special.logit(_expit(x))), rel=1e-9, abs=1e-12)
