"""A study in the export: its participants' claims, votes and check labels carry ``study`` and
``arm`` (null for everyone else), participants are named by the same pseudonyms as every
player and no platform id is anywhere in the files, and ``stats.json``'s ``studies`` holds the
figures per arm and each arm's difference from the first with a bootstrap interval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.utils import timezone

from foolgame.checks.models import CheckTally
from foolgame.dataset.privacy import Pseudonyms
from foolgame.dataset.records import ExportOptions
from foolgame.dataset.release import dataset_export
from foolgame.dataset.study_fields import _difference, _Person
from tests.studies.test_research_world import PLATFORM_IDS, study_world  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db
SALT = b"a fixed salt for the study tests!"


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


@pytest.fixture
def exported(study_world, tmp_path) -> tuple:
    # Participant 0's labels count (a tallied record as a checker's), so they are written.
    now = timezone.now()
    CheckTally.objects.create(
        player=study_world.participants[PLATFORM_IDS[0]].user, number=1, closed_at=now, answered=20, gold=10, right=9,
        record_right=9, record_seen=10, paid=True, points=0, counting=True,
    )
    out = tmp_path / "out"
    dataset_export(out_dir=out, options=ExportOptions(splits=(1, 0, 0)), salt=SALT)
    return study_world, out


def test_participants_records_carry_study_and_arm_and_everyone_elses_null(exported) -> None:
    world, out = exported
    claims = lines(out / "train.jsonl")
    texts = {c["text"]: c for c in claims}
    assert (texts["P0 first fooling claim."]["study"], texts["P0 first fooling claim."]["arm"]) == ("clue-cost", "clue10")
    assert (texts["P3 fooling claim."]["study"], texts["P3 fooling claim."]["arm"]) == ("clue-cost", "clue20")
    assert (texts["A volunteer's fooling claim."]["study"], texts["A volunteer's fooling claim."]["arm"]) == (None, None)
    assert sum(1 for c in claims if c["study"] == "clue-cost") == 7
    votes = lines(out / "votes.jsonl")
    marked = [(v["arm"], v["correct"]) for v in votes if v["study"] == "clue-cost"]
    assert sorted(marked, key=str) == sorted([("clue10", True)] * 3 + [("clue10", False)] * 3 + [("clue10", None)] + [("clue20", True)] * 4, key=str)
    assert all(v["arm"] is None for v in votes if v["study"] is None)
    labels = lines(out / "validation_labels.jsonl")
    mine = [row for row in labels if row["study"] == "clue-cost"]
    assert {row["arm"] for row in mine} == {"clue10", "clue20"}  # participants 0 and 1 checked
    nested = [v for c in claims for v in c["validation_labels"] if v["study"] == "clue-cost"]
    assert len(nested) == len(mine)
    assert all(row["study"] is None and row["arm"] is None for row in labels if row not in mine)


def test_participants_are_named_by_the_players_pseudonyms_and_no_platform_id_is_written(exported) -> None:
    world, out = exported
    user = world.participants[PLATFORM_IDS[0]].user
    claims = lines(out / "train.jsonl")
    authors = {c["author"] for c in claims if c["arm"] == "clue10"}
    names = Pseudonyms(SALT)
    assert authors <= {names.named(f"author:{user.pk}:{run}") for run in range(10)}  # runs of at most 2 claims, cut sooner by the caps
    planted = [*PLATFORM_IDS, "ASSIGN3", "se0", "se1", user.username]
    for path in out.rglob("*"):
        if path.is_file():
            content = path.read_bytes()
            found = [pid for pid in planted if pid.encode() in content]
            assert found == [], (path.name, found)


def test_stats_hold_the_figures_per_arm_and_the_difference_with_its_interval(exported) -> None:
    _, out = exported
    stats = json.loads((out / "stats.json").read_text())
    (study,) = stats["studies"]
    assert study["study"] == "clue-cost"
    first, second = study["arms"]
    assert (first["arm"], first["participants"], first["claims"], first["votes"]) == ("clue10", 2, 4, 6)
    assert (first["vote_accuracy"], first["model_error_rate"], first["verified_model_error_rate"], first["claims_per_participant"]) == (0.5, 0.75, 0.5, 2.0)
    assert first["accuracy_by_clues"] == [{"clues": 0, "votes": 3, "correct": 0, "accuracy": 0.0}, {"clues": 1, "votes": 3, "correct": 3, "accuracy": 1.0}]
    assert (second["arm"], second["vote_accuracy"], second["model_error_rate"], second["verified_model_error_rate"], second["claims_per_participant"]) == (
        "clue20", 1.0, 0.6667, 0.3333, 1.5
    )
    (difference,) = study["differences"]
    assert (difference["arm"], difference["against"]) == ("clue20", "clue10")
    assert difference["vote_accuracy"]["difference"] == 0.5
    low, high = difference["vote_accuracy"]["ci95"]
    assert low <= 0.5 <= high
    assert difference["claims_per_participant"]["difference"] == -0.5
    # No clue count is shared by both arms' votes: the difference is undefined, never NaN.
    assert all(item["difference"] is None and item["ci95"] is None for item in difference["accuracy_by_clues"])
    markdown = (out / "stats.md").read_text()
    assert "### clue-cost" in markdown and "| clue10 | 2 | 4 | 6 | 50.0% | 75.0% | 50.0% | 2.00 |" in markdown
    assert "clue20 minus clue10: vote accuracy +50.0 pt [" in markdown


def test_an_export_without_studies_has_an_empty_block(db, tmp_path) -> None:
    out = tmp_path / "out"
    dataset_export(out_dir=out, options=ExportOptions(), salt=SALT)
    assert json.loads((out / "stats.json").read_text())["studies"] == []


def _people(arm: str, n: int, right_of_ten: int) -> list[_Person]:
    return [_Person(study="s", arm=arm, votes=10, correct=right_of_ten, by_clues={0: 10}, right_by_clues={0: right_of_ten}) for _ in range(n)]


def test_the_bootstrap_recovers_a_planted_difference_and_its_interval_excludes_zero() -> None:
    # Arm B's people are right 5 times in 10, arm A's 8 in 10, with a spread among people.
    a = _people("A", 30, 8) + _people("A", 10, 6)
    b = _people("B", 30, 5) + _people("B", 10, 3)
    result = _difference("B", "A", b, a, [0])
    planted = (30 * 5 + 10 * 3) / 400 - (30 * 8 + 10 * 6) / 400
    assert result["vote_accuracy"]["difference"] == pytest.approx(planted, abs=1e-4)
    low, high = result["vote_accuracy"]["ci95"]
    assert low < planted < high < 0
    assert result == _difference("B", "A", b, a, [0])  # seeded: the same interval every time
    assert result["model_error_rate"] == {"difference": None, "ci95": None}
