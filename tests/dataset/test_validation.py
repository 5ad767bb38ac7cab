"""Checks in the export: each claim's validation labels and gold label, and the agreement
statistics (MultiNLI's validation table, Fleiss' kappa) in stats and the card."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from foolgame.checks.models import Check, ClaimValidation
from foolgame.claims.models import Claim
from foolgame.dataset.exporter import ExportOptions
from foolgame.dataset.privacy import Pseudonyms
from foolgame.dataset.services import dataset_export
from foolgame.dataset.validation import validation_statistics
from scoring.validation import fleiss_kappa, fleiss_kappa_unequal
from tests.dataset.conftest import make_claim
from tests.factories import CategoryFactory, PageFactory, UserFactory

pytestmark = pytest.mark.django_db
SALT = b"a fixed salt for the tests, 32 bytes"
S, R, N = "SUPPORTS", "REFUTES", "NOT ENOUGH INFO"


@dataclass
class Checked:
    claims: dict[str, Claim]
    checkers: dict[str, object]


def answer(claim: Claim, player, label: str, *, minute: int, settled: str = "", points: int = 0) -> Check:
    dealt = timezone.now() - timedelta(hours=1) + timedelta(minutes=minute)
    return Check.objects.create(
        player=player, claim=claim, dealt_at=dealt, expires_at=dealt + timedelta(seconds=45), answered_at=dealt + timedelta(seconds=10),
        label=label, settled_label=settled, correct=(label == settled) if settled else None, points=points,
    )


@pytest.fixture
def checked(db, settings) -> Checked:
    """Six claims: four with 4 counting labels (two with a gold label that is the author's, one
    against it, one without), one with 2, one with none; a FLAWED report and the labels of a
    checker under the accuracy bar, which count for nothing."""
    settings.FM2_CHECKS = {**settings.FM2_CHECKS, "MIN_GOLD": 2}
    history, science = CategoryFactory(name="History"), CategoryFactory(name="Science")
    author = UserFactory(username="the_author")
    k = {f"k{i}": UserFactory(username=f"checker_{i}") for i in range(1, 7)}
    c: dict[str, Claim] = {}
    for name, label in (("c1", S), ("c2", R), ("c3", S), ("c5", S), ("c6", R)):
        c[name] = make_claim(PageFactory(title=f"Page {name}", category=history), label=label, author=author, text=f"Claim {name} says something.")
    # c4: a release claim of dev (its page follows), written by a checker of other claims.
    c4 = make_claim(PageFactory(title="Page c4", category=science), label=R, author=k["k1"], text="Claim c4 says something.")
    Claim.objects.filter(pk=c4.pk).update(external_id="01RELEASEDc4", release_split="dev")
    c["c4"] = Claim.objects.get(pk=c4.pk)
    # c1: answered k4, k3, k2, k1 (the reverse of the rows' order), then a report and a
    # label of k6, who is under the bar.
    answer(c["c1"], k["k1"], S, minute=40, settled=S, points=10)
    answer(c["c1"], k["k2"], S, minute=30)
    answer(c["c1"], k["k3"], S, minute=20)
    answer(c["c1"], k["k4"], R, minute=10)
    answer(c["c1"], k["k5"], "FLAWED", minute=50)
    answer(c["c1"], k["k6"], N, minute=51)
    for minute, (player, label) in enumerate(((k["k1"], R), (k["k2"], R), (k["k3"], R), (k["k4"], R))):
        answer(c["c2"], player, label, minute=60 + minute, settled=R if player is k["k1"] else "", points=10 if player is k["k1"] else 0)
    for minute, (player, label) in enumerate(((k["k1"], R), (k["k2"], R), (k["k3"], N), (k["k4"], N))):
        answer(c["c3"], player, label, minute=70 + minute)
    for minute, player in enumerate((k["k2"], k["k3"], k["k4"], k["k5"])):
        answer(c["c4"], player, S, minute=80 + minute)
    answer(c["c5"], k["k2"], S, minute=90)
    answer(c["c5"], k["k3"], S, minute=91)
    # k6 got both their settled claims wrong: 2 gold items, smoothed accuracy 4/7 < 0.6.
    answer(c["c5"], k["k6"], R, minute=92, settled=S)
    answer(c["c6"], k["k6"], S, minute=93, settled=R)
    for name, gold, labels in (("c1", S, 4), ("c2", R, 4), ("c3", "-", 4), ("c4", S, 4), ("c5", "-", 2)):
        ClaimValidation.objects.create(claim=c[name], gold_label=gold, labels=labels)
    tally_all(k.values())
    return Checked(claims=c, checkers=k)


def tally_all(checkers) -> None:
    """Each checker's answers counted in one tally, as the checks' tallies would have: a
    record moves only with its tally (docs/checks.md)."""
    from foolgame.checks.models import CheckTally

    for checker in checkers:
        answered = Check.objects.filter(player=checker, answered_at__isnull=False, tally__isnull=True)
        if not answered.exists():
            continue
        gold, right = answered.exclude(settled_label="").count(), answered.filter(correct=True).count()
        tally = CheckTally.objects.create(
            player=checker, number=1, closed_at=timezone.now(), answered=answered.count(), gold=gold, right=right,
            record_right=right, record_seen=gold, paid=False, counting=True,
        )
        answered.update(tally=tally)


def export(tmp_path: Path, name: str = "out", **options) -> Path:
    out = tmp_path / name
    dataset_export(out_dir=out, options=ExportOptions(splits=(1, 0, 0), **options), salt=SALT)
    return out


def records(out: Path) -> dict[str, dict]:
    rows = {}
    for split in ("train", "dev", "test"):
        for line in (out / f"{split}.jsonl").read_text().splitlines():
            record = json.loads(line)
            rows[record["text"].split()[1]] = {**record, "split": split}
    return rows


def named(checker, run: int = 0) -> str:
    return Pseudonyms(SALT).named(f"checker:{checker.pk}:{run}")


def test_each_claim_carries_its_counting_labels_in_answer_order_and_its_gold_label(checked, tmp_path: Path) -> None:
    rows = records(export(tmp_path))
    k = checked.checkers
    # Answer order, not the rows' order; FLAWED (a report) and k6 (under the bar) left out.
    assert [v["label"] for v in rows["c1"]["validation_labels"]] == [R, S, S, S]
    assert [v["checker"] for v in rows["c1"]["validation_labels"]][:3] == [named(k["k4"]), named(k["k3"]), named(k["k2"])]
    assert rows["c1"]["gold_label"] == S
    assert [v["label"] for v in rows["c2"]["validation_labels"]] == [R, R, R, R] and rows["c2"]["gold_label"] == R
    assert rows["c3"]["gold_label"] == "-"
    assert rows["c4"]["split"] == "dev" and rows["c4"]["gold_label"] == S
    assert [v["label"] for v in rows["c5"]["validation_labels"]] == [S, S] and rows["c5"]["gold_label"] == "-"
    assert rows["c6"]["validation_labels"] == [] and rows["c6"]["gold_label"] == "-"  # k6's label does not count
    for row in rows.values():
        assert list(row)[-5:] == ["validation_labels", "gold_label", "study", "arm", "split"]
        assert all(set(v) == {"label", "checker", "study", "arm"} for v in row["validation_labels"])


def test_checkers_are_named_by_runs_cut_before_their_check_points_pass_the_cap_and_never_as_authors(checked, tmp_path: Path) -> None:
    rows = records(export(tmp_path))
    k = checked.checkers

    def checker(claim: str, label_index: int) -> str:
        return rows[claim]["validation_labels"][label_index]["checker"]

    # No one has check points on 5 leaderboards' worth of players here, so the cap is 0: k1's
    # first earning label (c1) is a run of its own, the next (c2) starts another, which the
    # label without points (c3) joins. k2 earned nothing: one run over c1..c5.
    assert checker("c1", 3) == named(k["k1"], 0)
    assert checker("c2", 0) == checker("c3", 0) == named(k["k1"], 1)
    assert {checker("c1", 2), checker("c2", 1), checker("c3", 1), checker("c4", 0), checker("c5", 0)} == {named(k["k2"])}
    # k1 also wrote c4: the author run and the checking runs share no pseudonym.
    assert rows["c4"]["author"] == Pseudonyms(SALT).named(f"author:{k['k1'].pk}:0")
    checkers = {v["checker"] for row in rows.values() for v in row["validation_labels"]}
    assert rows["c4"]["author"] not in checkers and rows["c1"]["author"] not in checkers


def test_a_checkers_labels_are_cut_into_runs_of_at_most_ten(db, tmp_path: Path) -> None:
    checker, author = UserFactory(username="busy_checker"), UserFactory(username="busy_author")
    page = PageFactory(title="Busy page")
    for n in range(12):
        answer(make_claim(page, label=S, author=author, text=f"Busy claim {n} here."), checker, S, minute=n)
    out = export(tmp_path)
    rows = sorted((json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()), key=lambda r: int(r["id"].split("-")[1]))
    assert [r["validation_labels"][0]["checker"] for r in rows] == [named(checker, 0)] * 10 + [named(checker, 1)] * 2


def test_stats_hold_multinlis_validation_table_and_kappa_computed_by_hand(checked, tmp_path: Path) -> None:
    out = export(tmp_path)
    validation = json.loads((out / "stats.json").read_text())["validation"]
    assert validation["labels_needed"] == 4
    overall = validation["overall"]
    # Validated: c1 (S: S S S R, gold S), c2 (R: R R R R, gold R), c3 (S: R R N N, no gold),
    # c4 (R: S S S S, gold S). c5 (2 labels) and c6 (none) are not yet validated.
    assert overall["counts"] == {
        "claims": 4, "not_yet_validated": 2, "labels": 16, "unanimous": 1,
        "individual_matches_gold": 11, "individual_matches_author": 7,
        "author_matches_gold": 2, "author_differs_from_gold": 1, "no_gold": 1,
    }
    assert overall["shares"] == {
        "labels_per_claim": 5.0, "unanimous": 0.25, "individual_matches_gold": round(11 / 12, 4),
        "individual_matches_author": round(7 / 16, 4), "author_matches_gold": 0.5, "author_differs_from_gold": 0.25, "no_gold": 0.25,
    }
    # Raters (S, R, N), the author included: every claim has 5, so Fleiss' own kappa.
    table = [[4, 1, 0], [0, 5, 0], [1, 2, 2], [4, 1, 0]]
    # By hand: agreement (0.6 + 1 + 0.2 + 0.6) / 4 = 0.6; chance 0.45² + 0.45² + 0.1² = 0.415.
    assert overall["kappa"] == round((0.6 - 0.415) / (1 - 0.415), 4) == round(fleiss_kappa(table), 4) == 0.3162
    assert overall["kappa_method"] == "fleiss_kappa" and overall["raters_per_claim"] == [5]
    # Four claims say little: the bootstrap interval is wide, and holds the kappa.
    low, high = overall["kappa_ci95"]
    assert -1 <= low < overall["kappa"] < high <= 1 and high - low > 0.3
    dev = validation["splits"]["dev"]  # c4 alone: agreement 0.6, chance 0.8² + 0.2² = 0.68
    assert dev["counts"]["claims"] == 1 and dev["kappa"] == round(fleiss_kappa([[4, 1, 0]]), 4) == -0.25
    assert dev["kappa_ci95"] is None  # one claim: nothing to resample
    assert validation["splits"]["train"]["counts"]["not_yet_validated"] == 2
    assert validation["splits"]["test"]["counts"]["claims"] == 0 and validation["splits"]["test"]["kappa"] is None
    assert validation["categories"]["Science"] == dev
    assert validation["categories"]["History"] == validation["splits"]["train"]


def test_the_figures_appear_in_stats_md_and_the_card(checked, tmp_path: Path) -> None:
    out = export(tmp_path)
    row = "| overall | 4 | 2 | 5.00 | 25.0% (1) | 91.7% (11) | 43.8% (7) | 50.0% (2) | 25.0% (1) | 25.0% (1) | 0.316 |"
    assert row in (out / "stats.md").read_text()
    card = (out / "README.md").read_text()
    assert "## Validation" in card and row in card
    assert "| split dev | 1 | 0 | 5.00 |" in card and "| category History |" in card
    assert "`validation_labels`" in card and "`gold_label`" in card


def test_the_export_with_checks_is_byte_identical_for_the_same_seed(checked, tmp_path: Path) -> None:
    first, again = export(tmp_path, "a", seed=3), export(tmp_path, "b", seed=3)
    for name in ("train.jsonl", "dev.jsonl", "train.csv", "dev.csv", "stats.json", "stats.md", "README.md"):
        assert (first / name).read_bytes() == (again / name).read_bytes()


def test_csv_only_exports_give_the_same_validation_statistics(checked, tmp_path: Path) -> None:
    both = json.loads((export(tmp_path, "both") / "stats.json").read_text())["validation"]
    csv_only = json.loads((export(tmp_path, "csv", formats=("csv",)) / "stats.json").read_text())["validation"]
    assert csv_only == both


def claim(label: str, labels: list[str], gold: str, *, category: str = "C") -> tuple[str, dict]:
    return "train", {"label": label, "validation_labels": [{"label": v, "checker": "p"} for v in labels], "gold_label": gold, "category": category}


def test_unequal_numbers_of_raters_use_the_generalised_kappa_and_say_so() -> None:
    stats = validation_statistics([claim(S, [S, S, S, S], S), claim(R, [R, R, S, S, N], "-"), claim(S, [S], "-")], min_labels=4)
    overall = stats["overall"]
    assert overall["kappa_method"] == "fleiss_kappa_unequal" and overall["raters_per_claim"] == [5, 6]
    assert overall["kappa"] == round(fleiss_kappa_unequal([[5, 0, 0], [2, 3, 1]]), 4)
    assert overall["counts"]["not_yet_validated"] == 1


def test_no_validated_claim_gives_no_figures_not_nan() -> None:
    stats = validation_statistics([claim(S, [], "-"), claim(R, [R, R], "-")], min_labels=4)
    overall = stats["overall"]
    assert overall["counts"]["claims"] == 0 and overall["counts"]["not_yet_validated"] == 2
    assert set(overall["shares"].values()) == {None} and overall["kappa"] is None and overall["kappa_method"] is None


def test_checkers_records_read_in_small_batches_give_the_same_files(checked, tmp_path: Path, monkeypatch) -> None:
    whole = export(tmp_path, "whole")
    monkeypatch.setattr("foolgame.dataset.validation.WEIGHT_BATCH", 2)
    batched = export(tmp_path, "batched")
    for name in ("train.jsonl", "dev.jsonl", "stats.json"):
        assert (whole / name).read_bytes() == (batched / name).read_bytes()
