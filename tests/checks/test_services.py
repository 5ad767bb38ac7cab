"""Fact checks: who gets which claim, one answer before the clock, points only for settled
claims, the weighted gold label and the disputes it raises, nothing of anyone else's label."""

from __future__ import annotations

from datetime import timedelta

import pytest

from foolgame.checks import services
from foolgame.checks.models import Check, ClaimValidation
from foolgame.claims.models import Claim
from foolgame.core.errors import ServiceError
from foolgame.moderation.actions import moderator_set, sightings_record
from foolgame.moderation.selectors import claim_review, moderation_queue
from foolgame.players.models import LedgerEntry
from foolgame.voting import services as rounds
from foolgame.voting.models import Report
from foolgame.voting.selectors import claims_for_player
from tests.checks.conftest import open_claim, settled_claim
from tests.factories import PageFactory, UserFactory
from tests.voting.conftest import make_claim

pytestmark = pytest.mark.django_db


def answer(player, label: str) -> dict:
    dealt = services.check_deal(player=player)
    return services.check_answer(check_id=dealt["id"], player=player, label=label)


def test_a_check_shows_the_claim_and_its_gold_evidence_never_its_label(fake_clock) -> None:
    claim = open_claim("Vega", label="REFUTES")
    checker = UserFactory()
    dealt = services.check_deal(player=checker)
    assert dealt["claim"] == {"id": claim.pk, "text": claim.text, "page": {"id": claim.page_id, "title": "Vega"}}
    assert [e["text"] for e in dealt["evidence"]] == [g.text for g in claim.gold_sentences.all()]
    assert "REFUTES" not in repr(dealt) and "label" not in repr(dealt)
    assert dealt["expires_at"] == (fake_clock.current + timedelta(seconds=45)).isoformat()


def test_a_reload_gets_the_open_check_back_not_a_second_one(fake_clock) -> None:
    open_claim("Vega")
    open_claim("Deneb")
    checker = UserFactory()
    first = services.check_deal(player=checker)
    assert services.check_deal(player=checker)["id"] == first["id"]
    assert Check.objects.filter(player=checker).count() == 1


def test_nobody_checks_their_own_claim_one_met_in_a_round_or_one_seen_as_a_moderator(fake_clock) -> None:
    writer, voter, moderator = UserFactory(), UserFactory(), UserFactory()
    page = PageFactory(title="Altair")
    own = make_claim(page, label="SUPPORTS", author=writer)
    other = make_claim(page, label="REFUTES", author=UserFactory())
    with pytest.raises(ServiceError) as error:  # writer: own claim out, the other one in
        assert services.check_deal(player=writer)["claim"]["id"] == other.pk
        services.check_answer(check_id=Check.objects.get(player=writer).pk, player=writer, label="REFUTES")
        services.check_deal(player=writer)
    assert error.value.code == "nothing_to_check" and error.value.status_code == 409
    rounds.round_create(player=voter)  # the pair is dealt to the voter in a round
    with pytest.raises(ServiceError) as error:
        services.check_deal(player=voter)
    assert error.value.code == "nothing_to_check"
    moderator_set(username=moderator.username)
    sightings_record(moderator=moderator, claim_ids=[own.pk, other.pk])
    with pytest.raises(ServiceError) as error:
        services.check_deal(player=moderator)
    assert error.value.code == "nothing_to_check"


def test_a_claim_checked_is_never_dealt_to_that_player_in_a_round(fake_clock) -> None:
    page = PageFactory(title="Rigel")
    make_claim(page, label="SUPPORTS", author=UserFactory())
    make_claim(page, label="REFUTES", author=UserFactory())
    checker = UserFactory()
    checked = services.check_deal(player=checker)["claim"]["id"]
    assert checked not in set(claims_for_player(player=checker).values_list("pk", flat=True))
    with pytest.raises(ServiceError) as error:
        rounds.round_create(player=checker)  # only one fair pair, and it holds the claim checked
    assert error.value.code == "no_pair_available"


def test_least_checked_claims_come_first(fake_clock) -> None:
    done, fresh = open_claim("Done"), open_claim("Fresh")
    ClaimValidation.objects.create(claim=done, labels=2)
    assert services.check_deal(player=UserFactory())["claim"]["id"] == fresh.pk


def test_an_answer_is_taken_once_by_its_player_before_its_clock_runs_out(fake_clock) -> None:
    open_claim("Vega")
    open_claim("Deneb")
    checker, other = UserFactory(), UserFactory()
    dealt = services.check_deal(player=checker)
    for label in ("MAYBE", "", None, 1):
        with pytest.raises(ServiceError) as error:
            services.check_answer(check_id=dealt["id"], player=checker, label=label)
        assert error.value.code == "invalid_label"
    with pytest.raises(ServiceError) as error:
        services.check_answer(check_id=dealt["id"], player=other, label="SUPPORTS")
    assert (error.value.code, error.value.status_code) == ("not_found", 404)
    services.check_answer(check_id=dealt["id"], player=checker, label="SUPPORTS")
    with pytest.raises(ServiceError) as error:
        services.check_answer(check_id=dealt["id"], player=checker, label="REFUTES")
    assert (error.value.code, error.value.status_code) == ("check_answered", 409)
    assert Check.objects.get(pk=dealt["id"]).label == "SUPPORTS"
    late = services.check_deal(player=checker)
    fake_clock.advance(45)
    with pytest.raises(ServiceError) as error:
        services.check_answer(check_id=late["id"], player=checker, label="SUPPORTS")
    assert (error.value.code, error.value.status_code) == ("check_expired", 409)
    assert Check.objects.get(pk=late["id"]).answered_at is None


def test_points_come_only_in_a_tally_for_settled_claims_answered_with_their_label(fake_clock, settings) -> None:
    """Twelve settled claims of both labels answered right and one open claim agreed with: no
    answer pays on its own; the tally of the thirteen pays 10 a right answer on a settled
    claim, one ledger row, and says how many matched, never which."""
    settings.FM2_CHECKS = {**settings.FM2_CHECKS, "TALLY_SIZE": 13, "PAY_MIN_GOLD": 10}
    labels = {}
    for n in range(12):
        labels[settled_claim(f"Settled {n}", label="REFUTES" if n % 3 else "SUPPORTS").text] = "REFUTES" if n % 3 else "SUPPORTS"
    open_claim("Open one", label="REFUTES")
    checker = UserFactory()
    results = []
    for _ in range(13):
        dealt = services.check_deal(player=checker)
        results.append(services.check_answer(check_id=dealt["id"], player=checker, label=labels.get(dealt["claim"]["text"], "REFUTES")))
    assert [r["points"] for r in results] == [0] * 12 + [120]
    assert [r["tally"]["answered"] for r in results] == list(range(1, 13)) + [0]
    assert results[-1]["tally"]["last"] == {"number": 1, "answered": 13, "gold": 12, "right": 12, "paid": True, "points": 120, "counting": True}
    assert list(LedgerEntry.objects.filter(player=checker, kind="check").values_list("amount", flat=True)) == [120]


def test_four_checks_against_the_author_put_the_claim_in_the_queue_as_disputed(fake_clock) -> None:
    claim = open_claim("Spica", label="SUPPORTS")
    checkers = [UserFactory() for _ in range(4)]
    for checker in checkers[:3]:
        answer(checker, "REFUTES")
    assert ClaimValidation.objects.get(claim=claim).gold_label == "-"  # 3 checks: too few
    assert claim.pk not in set(moderation_queue().values_list("pk", flat=True))
    answer(checkers[3], "NOT ENOUGH INFO")
    validation = ClaimValidation.objects.get(claim=claim)
    assert (validation.labels, validation.gold_label, validation.disputed) == (4, "REFUTES", True)
    assert claim.pk in set(moderation_queue(reason="disputed").values_list("pk", flat=True))
    review = claim_review(moderation_queue().get(pk=claim.pk))
    assert "disputed" in review["why"] and review["flags"]["disputed"]
    assert review["validation"] == {"gold_label": "REFUTES", "labels": {"REFUTES": 3, "NOT ENOUGH INFO": 1}}


def test_checks_that_agree_with_the_author_raise_no_dispute(fake_clock) -> None:
    claim = open_claim("Spica", label="SUPPORTS")
    for label in ("SUPPORTS", "SUPPORTS", "REFUTES", "SUPPORTS"):
        answer(UserFactory(), label)
    assert ClaimValidation.objects.get(claim=claim).gold_label == "SUPPORTS"
    assert claim.pk not in set(moderation_queue().values_list("pk", flat=True))


def test_a_checker_wrong_on_settled_claims_stops_counting_at_the_tally_and_is_told(fake_clock, settings) -> None:
    settings.FM2_CHECKS = {**settings.FM2_CHECKS, "TALLY_SIZE": 5, "MIN_GOLD": 5}
    settled = [settled_claim(f"Settled {n}", label="REFUTES") for n in range(6)]
    spammer = UserFactory()
    results = [answer(spammer, "SUPPORTS") for _ in range(5)]
    # Every answer before the tally says what the first said: the record moves only with it.
    assert all(r["counting"] and r["message"] is None for r in results[:4])
    assert not results[-1]["counting"] and "no longer count" in results[-1]["message"]
    assert results[-1]["tally"]["last"]["counting"] is False and results[-1]["points"] == 0
    assert services.player_weight(player_id=spammer.pk) == 0.0
    # Their label on an open claim does not count: four honest checkers are needed still.
    # (The settled claims are given their labels, so the least-checked claim is the open one.)
    for claim in settled:
        ClaimValidation.objects.update_or_create(claim=claim, defaults={"labels": 4})
    fake_clock.advance(46)  # the spammer's next check (dealt with their last answer) runs out unanswered
    claim = open_claim("Open", label="SUPPORTS")
    answer(spammer, "REFUTES")
    for _ in range(3):
        answer(UserFactory(), "SUPPORTS")
    assert ClaimValidation.objects.get(claim=claim).gold_label == "-"
    answer(UserFactory(), "SUPPORTS")
    assert ClaimValidation.objects.get(claim=claim).gold_label == "SUPPORTS"

def test_flawed_is_a_report_the_moderators_see(fake_clock, django_capture_on_commit_callbacks) -> None:
    claim = open_claim("Mira")
    checker = UserFactory()
    with django_capture_on_commit_callbacks(execute=True):  # the claim's flags follow the report's commit
        result = answer(checker, "FLAWED")
    assert result["points"] == 0
    report = Report.objects.get(claim=claim, reporter=checker)
    assert not report.counts_for_hiding
    assert ClaimValidation.objects.filter(claim=claim, labels__gt=0).count() == 0  # a report, not a label
    assert claim.pk in set(moderation_queue(reason="reports").values_list("pk", flat=True))


def test_a_moderator_who_decides_a_dispute_clears_it(fake_clock) -> None:
    from foolgame.moderation.actions import check_claim_action, do_claim_action

    claim = open_claim("Spica", label="SUPPORTS")
    for _ in range(4):
        answer(UserFactory(), "REFUTES")
    moderator = UserFactory()
    moderator_set(username=moderator.username)
    do_claim_action(check_claim_action(claim_id=claim.pk, action="keep", reason="The evidence supports it as written."), moderator=moderator)
    assert claim.pk not in set(moderation_queue().values_list("pk", flat=True))
    answer(UserFactory(), "REFUTES")  # the same verdict again: decided already
    assert claim.pk not in set(moderation_queue().values_list("pk", flat=True))


def test_the_periodic_refresh_recounts_labels_with_the_weights_as_they_stand_now(fake_clock, settings) -> None:
    """A checker labelled an open claim while their weight was 1; once a tally puts their
    record on settled claims under the bar, the hourly refresh takes their label out of its
    gold label."""
    from foolgame.checks.tasks import refresh_validation

    settings.FM2_CHECKS = {**settings.FM2_CHECKS, "TALLY_SIZE": 6}
    claim = open_claim("Early", label="SUPPORTS")
    spammer = UserFactory()
    answer(spammer, "REFUTES")
    for _ in range(3):
        answer(UserFactory(), "REFUTES")
    assert ClaimValidation.objects.get(claim=claim).gold_label == "REFUTES"  # 4 checks against the author's 1
    fake_clock.advance(46)
    for n in range(5):
        settled_claim(f"Settled {n}", label="SUPPORTS")
    for _ in range(5):
        answer(spammer, "REFUTES")  # wrong on every settled claim; the sixth answer closed the tally
    assert ClaimValidation.objects.get(claim=claim).gold_label == "REFUTES"  # not recomputed yet
    assert refresh_validation() >= 1
    assert ClaimValidation.objects.get(claim=claim).gold_label == "-"  # three counting checks now

@pytest.mark.parametrize(("weights", "expected"), [("bar", [1.0, 1.0, 0.0]), ("log_odds", "graded")])
def test_a_checkers_weight_follows_the_setting(settings, weights, expected) -> None:
    """"bar": 1 over the accuracy bar (or before MIN_GOLD settled claims), 0 under it;
    "log_odds": graded, a sharper checker weighing more than an average one."""
    settings.FM2_CHECKS = {**settings.FM2_CHECKS, "WEIGHTS": weights, "MIN_GOLD": 5, "MIN_ACCURACY": 0.6}
    got = [services.record_weight(2, 3), services.record_weight(20, 20), services.record_weight(1, 10)]
    if expected == "graded":
        assert got[0] == 1.0 and got[1] > 1.0 and got[2] == 0.0
    else:
        assert got == expected


def test_check_points_stop_at_the_daily_cap_and_the_labels_still_count(fake_clock, settings) -> None:
    settings.FM2_CHECKS = {**settings.FM2_CHECKS, "TALLY_SIZE": 10, "PAY_MIN_GOLD": 10, "POINTS_PER_DAY": 125}
    labels = {}
    for n in range(20):
        labels[settled_claim(f"Settled {n}", label="SUPPORTS" if n % 2 else "REFUTES").text] = "SUPPORTS" if n % 2 else "REFUTES"
    checker = UserFactory()
    results = []
    for _ in range(20):
        dealt = services.check_deal(player=checker)
        results.append(services.check_answer(check_id=dealt["id"], player=checker, label=labels[dealt["claim"]["text"]]))
    assert [r["points"] for r in results if r["points"]] == [100, 25]
    assert sum(LedgerEntry.objects.filter(player=checker, kind="check").values_list("amount", flat=True)) == 125
    assert Check.objects.filter(player=checker, answered_at__isnull=False).count() == 20


def test_the_streak_counts_answers_in_time_and_an_expired_check_breaks_it(fake_clock) -> None:
    """Whatever the labels: a settled claim answered wrong keeps the streak going, a check left
    to run out ends it."""
    settled_claim("Rigel", label="REFUTES")
    settled_claim("Spica", label="SUPPORTS")
    open_claim("Vega")
    open_claim("Deneb")
    checker = UserFactory()
    streaks = [answer(checker, "SUPPORTS")["streak"] for _ in range(3)]
    assert streaks == [1, 2, 3]
    services.check_deal(player=checker)  # the fourth runs out unanswered
    fake_clock.advance(46)
    assert services.current_streak(player=checker, now=fake_clock.current) == 0
    with pytest.raises(ServiceError) as error:
        answer(checker, "SUPPORTS")
    assert error.value.code == "nothing_to_check"


NEUTRAL = ("id", "expires_at")


def _world_claim(n: int, fact: str, *, open_label: str = "SUPPORTS"):
    """Claim ``n`` of a world, the same text in every world: open (its author's label
    ``open_label``), or settled with the label ``fact`` by ten release votes."""
    claim = make_claim(PageFactory(title=f"Star {n}"), label=open_label if fact == "open" else fact, author=UserFactory(), text=f"Star {n} has a claim to check.")
    if fact != "open":
        Claim.objects.filter(pk=claim.pk).update(release_total_votes=10, release_correct_votes=10)
    return claim


def _replayed(facts: list[str], script, *, open_label: str = "SUPPORTS") -> tuple[list[dict], list]:
    """Build a world of these claims, let one checker answer ``script`` (each label, or one
    label for every claim), and return what they saw and their ledger; then undo the world."""
    import random as random_module

    from django.db import transaction

    UserFactory.reset_sequence(1000)  # the authors' names are in the evidence: the same in every world
    with transaction.atomic():
        for n, fact in enumerate(facts):
            _world_claim(n, fact, open_label=open_label)
        checker = UserFactory(username="checker")
        random_module.seed(36)  # the same draws in every world: only the hidden facts differ
        labels = script if isinstance(script, (list, tuple)) else [script] * len(facts)
        answers = [_seen(answer(checker, label)) for label in labels]
        ledger = list(LedgerEntry.objects.filter(player=checker).values_list("amount", "kind"))
        transaction.set_rollback(True)
    return answers, ledger


def _seen(result: dict) -> dict:
    """An answer as the player reads it, ids and clocks aside (they differ between worlds)."""
    if isinstance(result, dict):
        return {key: _seen(value) for key, value in result.items() if key not in NEUTRAL}
    if isinstance(result, list):
        return [_seen(value) for value in result]
    return result


@pytest.mark.parametrize("script", [("SUPPORTS", "REFUTES", "NOT ENOUGH INFO", "FLAWED"), ("REFUTES",) * 4])
def test_no_answer_before_a_tally_depends_on_whether_its_claim_was_settled_or_its_label(fake_clock, settings, script) -> None:
    """Noninterference for one checker: five worlds differing only in hidden facts (each of
    the claims open, settled SUPPORTS or settled REFUTES) give the same answers, body for body."""
    settings.FM2_CHECKS = {**settings.FM2_CHECKS, "TALLY_SIZE": 20}
    worlds = {
        "all open": ["open"] * 4,
        "all settled SUPPORTS": ["SUPPORTS"] * 4,
        "all settled REFUTES": ["REFUTES"] * 4,
        "mixed": ["SUPPORTS", "open", "REFUTES", "open"],
        "mixed, flipped": ["REFUTES", "open", "SUPPORTS", "open"],
    }
    seen = {name: _replayed(facts, script) for name, facts in worlds.items()}
    first = next(iter(seen.values()))
    assert first[0][0]["next"] is not None and first[1] == []
    assert all(view == first for view in seen.values()), {name: view for name, view in seen.items() if view != first}


def test_a_tally_tells_how_many_matched_never_which(fake_clock, settings) -> None:
    """Two worlds in which the settled claims of one tally trade places (and labels): every
    answer, the tally and the ledger read the same, so no single item's status is recoverable
    from anything the checker sees while another item of the tally was answered alike."""
    settings.FM2_CHECKS = {**settings.FM2_CHECKS, "TALLY_SIZE": 14, "PAY_MIN_GOLD": 10}
    layouts = {
        "A": ["REFUTES"] * 11 + ["SUPPORTS", "open", "open"],
        "B": ["open", "SUPPORTS"] + ["REFUTES"] * 11 + ["open"],
    }
    seen = {name: _replayed(facts, "REFUTES", open_label="REFUTES") for name, facts in layouts.items()}
    assert seen["A"] == seen["B"]
    # REFUTES to everything: right on the eleven settled REFUTES, wrong on the one SUPPORTS, so
    # the record does not show reading on both labels and the tally pays nothing.
    assert seen["A"][0][-1]["tally"]["last"] == {"number": 1, "answered": 14, "gold": 12, "right": 11, "paid": False, "points": 0, "counting": True}
    assert seen["A"][1] == []


@pytest.mark.parametrize(("strategy", "supports_share"), [("constant", 2), ("random", 2), ("constant", 5)], ids=["constant", "random", "constant, settled claims leaning"])
def test_a_checker_who_does_not_read_earns_nothing(fake_clock, settings, strategy, supports_share) -> None:
    """Answering SUPPORTS to everything, or at random, over 60 settled claims of both labels
    (half and half, or four in five SUPPORTS, where a constant answer is right 80% of the time):
    three tallies, none pays (a record that never clears chance, or never reads REFUTES)."""
    import random as random_module

    settings.FM2_CHECKS = {**settings.FM2_CHECKS, "TALLY_SIZE": 20}
    for n in range(60):
        settled_claim(f"Star {n}", label="REFUTES" if n % supports_share == 0 else "SUPPORTS")
    bot = UserFactory()
    pick = random_module.Random(7)
    results = [answer(bot, "SUPPORTS" if strategy == "constant" else pick.choice(["SUPPORTS", "REFUTES"])) for _ in range(60)]
    tallies = [r["tally"]["last"] for r in results if r["tally"]["answered"] == 0]
    assert len(tallies) == 3 and not any(t["paid"] for t in tallies)
    assert not LedgerEntry.objects.filter(player=bot, kind="check").exists()
    if supports_share == 2:
        assert tallies[-1]["counting"] is False  # under the accuracy bar, too


def test_no_claim_in_anyones_open_round_is_dealt_as_a_check(fake_clock) -> None:
    """The check would show its gold evidence: a colluder could pass it to the round's player."""
    page = PageFactory(title="Altair")
    make_claim(page, label="SUPPORTS", author=UserFactory())
    make_claim(page, label="REFUTES", author=UserFactory())
    voter = UserFactory()
    round_ = rounds.round_create(player=voter)
    colluder = UserFactory()
    with pytest.raises(ServiceError) as error:
        services.check_deal(player=colluder)
    assert error.value.code == "nothing_to_check"
    rounds.round_start(round_id=round_.pk, player=voter)
    rounds.vote_cast(round_id=round_.pk, player=voter, false_claim=0)
    assert services.check_deal(player=colluder)["claim"]["id"] in {round_.left_claim_id, round_.right_claim_id}

def test_a_checks_evidence_reads_in_the_pages_order_not_the_authors(fake_clock) -> None:
    """As the page reads (its lead first, a section before its subsections), whatever order the
    author marked the gold sentences in (issue 39, item 6)."""
    from foolgame.claims.models import ClaimGold
    from foolgame.pages.models import Sentence

    page = PageFactory(title="Shaka")
    sub = Sentence.objects.create(page=page, position=0, section_header="Scholarship studies | The Mfecane", text="A subsection's sentence.")
    Sentence.objects.create(page=page, position=1, section_header="Scholarship studies", text="The section's own sentence.")
    lead = Sentence.objects.create(page=page, position=2, section_header="", text="The lead's sentence.")
    claim = Claim.objects.create(page=page, label="SUPPORTS", author=UserFactory(), text="Shaka led the Zulu.", clues=[])
    ClaimGold.objects.create(claim=claim, sentence=sub, position=0)
    ClaimGold.objects.create(claim=claim, sentence=lead, position=1)
    dealt = services.check_deal(player=UserFactory())
    assert [(e["text"], e["section_header"]) for e in dealt["evidence"]] == [
        ("The lead's sentence.", ""),
        ("A subsection's sentence.", "Scholarship studies | The Mfecane"),
    ]
