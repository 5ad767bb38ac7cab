"""Issue 12, abuse that breaks the game for others: mass reports, the clue-count leak, a
relabel during an open round, and the answer of a finished round."""

from __future__ import annotations

import pytest

from foolgame.core.errors import ServiceError
from foolgame.moderation.actions import claim_moderate, moderator_set
from foolgame.moderation.models import ClaimQuality
from foolgame.moderation.selectors import claim_review, moderation_queue
from foolgame.voting import services
from foolgame.voting.models import Report, Round
from tests.factories import PageFactory, UserFactory
from tests.voting.conftest import make_claim


def _pairs(n: int, *, clues: tuple[int, int] = (3, 3)):
    """n pages, each with a true and a false claim (clue lists of the given lengths)."""
    author = UserFactory(username="author")
    out = []
    for i in range(n):
        page = PageFactory(title=f"Page {i}")
        out.append(
            (
                make_claim(page, label="SUPPORTS", author=author, n_clues=clues[0], text=f"Page {i} is true about itself."),
                make_claim(page, label="REFUTES", author=author, n_clues=clues[1], text=f"Page {i} is false about itself."),
            )
        )
    return out


def _deal_and_start(player) -> Round:
    round_ = services.round_create(player=player)
    services.round_start(round_id=round_.pk, player=player)
    return round_


def _report_both(player, round_: Round) -> None:
    services.round_report(round_id=round_.pk, player=player, claim=0, reason="spam")
    services.round_report(round_id=round_.pk, player=player, claim=1, reason="spam")


def test_three_fresh_accounts_reporting_every_claim_hide_none_and_all_reach_the_queue(db, fake_clock, django_capture_on_commit_callbacks):
    _pairs(2)
    for n in range(3):
        attacker = UserFactory(username=f"fresh{n}")
        for _ in range(2):
            with django_capture_on_commit_callbacks(execute=True):
                _report_both(attacker, _deal_and_start(attacker))
    assert Report.objects.count() == 12
    assert not ClaimQuality.objects.filter(hidden_until_review=True).exists()
    queued = list(moderation_queue(reason="reports"))
    assert len(queued) == 4
    reports = [r for claim in queued for r in claim_review(claim)["reports"]]
    assert len(reports) == 12 and all(not r["counts_for_hiding"] and r["open"] for r in reports)


def test_reports_of_trusted_players_still_hide_a_claim(db, fake_clock, settings, django_capture_on_commit_callbacks):
    settings.FM2 = {**settings.FM2, "REPORT_TRUST_MIN_VOTES": 0, "REPORT_TRUST_MIN_ACCOUNT_HOURS": 1}
    _pairs(1)
    reporters = [UserFactory(username=f"old{n}") for n in range(3)]
    fake_clock.advance(2 * 3600)  # the accounts are now old enough
    for player in reporters:
        with django_capture_on_commit_callbacks(execute=True):
            _report_both(player, _deal_and_start(player))
    assert Report.objects.filter(counts_for_hiding=True).count() == 6
    assert ClaimQuality.objects.filter(hidden_until_review=True).count() == 2


def test_a_player_is_rate_limited_after_the_reports_limit_and_the_refusal_ends_no_round(db, fake_clock, settings):
    settings.FM2 = {**settings.FM2, "REPORTS_PER_WINDOW": 3, "REPORT_WINDOW_SECONDS": 600, "REPORTS_PER_DAY": 5}
    _pairs(6)
    player = UserFactory(username="spammer")
    for _ in range(3):
        services.round_report(round_id=_deal_and_start(player).pk, player=player, claim=0, reason="spam")
    round_ = _deal_and_start(player)
    with pytest.raises(ServiceError) as error:
        services.round_report(round_id=round_.pk, player=player, claim=0, reason="spam")
    assert (error.value.code, error.value.status_code) == ("report_rate_limited", 429)
    assert "again in 10 min" in error.value.message
    round_.refresh_from_db()
    assert round_.state == Round.State.PLAYING
    assert Report.objects.filter(reporter=player).count() == 3
    fake_clock.advance(601)  # the window passed; the day's limit is next
    services.round_report(round_id=round_.pk, player=player, claim=0, reason="spam")
    services.round_report(round_id=_deal_and_start(player).pk, player=player, claim=0, reason="spam")
    with pytest.raises(ServiceError) as error:
        services.round_report(round_id=_deal_and_start(player).pk, player=player, claim=0, reason="spam")
    assert error.value.code == "report_rate_limited"


def test_a_report_from_a_round_that_ended_long_ago_is_refused_but_one_just_after_the_vote_counts(db, fake_clock):
    _pairs(2)
    player = UserFactory(username="late")
    old = _deal_and_start(player)
    services.vote_cast(round_id=old.pk, player=player, false_claim=0)
    services.round_report(round_id=old.pk, player=player, claim=0, reason="wrong_label")  # just after the vote: fine
    fake_clock.advance(3600)
    with pytest.raises(ServiceError) as error:
        services.round_report(round_id=old.pk, player=player, claim=1, reason="wrong_label")
    assert (error.value.code, error.value.status_code) == ("report_window_closed", 409)
    assert Report.objects.filter(reporter=player).count() == 1


def test_before_the_vote_both_claims_show_the_same_clues_left_whatever_their_list_lengths(db, fake_clock):
    _pairs(4, clues=(2, 7))
    player = UserFactory(username="counter")
    for _ in range(4):
        round_ = _deal_and_start(player)
        state = services.round_get_state(round_id=round_.pk, player=player)
        assert state["clues_left"][0] == state["clues_left"][1] == 8
        revealed = services.round_reveal_clue(round_id=round_.pk, player=player, claim_index=round_.false_index)
        assert revealed["clues_left"] == 7
        state = services.round_get_state(round_id=round_.pk, player=player)
        assert state["clues_left"][round_.false_index] == state["clues_left"][1 - round_.false_index] - 1 == 7
        services.vote_cast(round_id=round_.pk, player=player, false_claim=round_.false_index)
        state = services.round_get_state(round_id=round_.pk, player=player)
        assert state["clues_left"][round_.false_index] == 7  # the true number, once over
        assert state["clues_left"][1 - round_.false_index] == 3


@pytest.fixture
def moderator(db):
    user = UserFactory(username="mona")
    moderator_set(username=user.username)
    return user


def test_a_relabel_during_a_playing_round_voids_it_and_the_late_vote_scores_nothing(db, fake_clock, moderator):
    ((true_claim, _),) = _pairs(1)
    player = UserFactory(username="victim")
    round_ = _deal_and_start(player)
    claim_moderate(moderator=moderator, claim_id=true_claim.pk, action="relabel", reason="it is false", label="REFUTES")
    round_.refresh_from_db()
    assert (round_.state, round_.void_action) == (Round.State.VOIDED, "relabel")  # the export says why
    with pytest.raises(ServiceError) as error:
        services.vote_cast(round_id=round_.pk, player=player, false_claim=0)
    assert error.value.code == "round_over"
    assert not hasattr(Round.objects.get(pk=round_.pk), "vote") or not Round.objects.filter(pk=round_.pk, vote__isnull=False).exists()
    state = services.round_get_state(round_id=round_.pk, player=player)
    assert state["status"] == "voided" and state["points"] == 0 and "moderator" in state["message"]


def test_a_removal_voids_playing_rounds_withdraws_unstarted_ones_and_voided_rounds_are_not_open(db, fake_clock, moderator):
    _pairs(6)
    player, waiting = UserFactory(username="playing"), UserFactory(username="waiting")
    playing = [_deal_and_start(player) for _ in range(services.MAX_OPEN_ROUNDS)]
    claim_moderate(moderator=moderator, claim_id=playing[0].left_claim_id, action="remove", reason="spam")
    playing[0].refresh_from_db()
    assert playing[0].state == Round.State.VOIDED and not playing[0].is_open and playing[0].void_action == "remove"
    assert services.round_create(player=player).state == Round.State.READY  # a voided round is not open
    ready = services.round_create(player=waiting)
    claim_moderate(moderator=moderator, claim_id=ready.right_claim_id, action="relabel", reason="wrong", label=ready.left_claim.label)
    assert not Round.objects.filter(pk=ready.pk).exists()  # never started: withdrawn, nothing was shown


def test_a_relabel_after_the_vote_never_changes_the_finished_rounds_answer(db, fake_clock, moderator):
    _pairs(1)
    player = UserFactory(username="voter")
    round_ = _deal_and_start(player)
    result = services.vote_cast(round_id=round_.pk, player=player, false_claim=round_.false_index)
    true_claim = round_.claims[1 - round_.false_index]
    claim_moderate(moderator=moderator, claim_id=true_claim.pk, action="relabel", reason="it is false", label="REFUTES")
    state = services.round_get_state(round_id=round_.pk, player=player)
    assert state["status"] == "voted"
    assert state["result"]["false_claim"] == result["false_claim"] == round_.false_index
    assert state["result"]["correct"] is True
    assert state["result"]["labels"] == result["labels"]
