"""Issue 17: an export cannot be joined to the public leaderboards to name players."""

from __future__ import annotations

from pathlib import Path

import pytest

from foolgame.dataset.exporter import ExportOptions
from foolgame.dataset.privacy import Fragments, Pseudonyms
from foolgame.dataset.services import dataset_export
from tests.dataset.linkage import (
    identified,
    public_leaderboards,
    reidentify,
    room_identified,
    room_reidentify,
    room_results,
    simulate_game,
    simulate_rooms,
    write_exact_export,
)

SALT = b"a fixed salt for the tests, 32 bytes"


def owns(game, pseudonyms: Pseudonyms, *, runs: int = 400):
    """The truth, from the salt: every pseudonym a player can have (whole, or any run)."""
    mine = {
        name: {pseudonyms.named(f"user:{pk}")} | {pseudonyms.named(f"{role}:{pk}:{run}") for role in ("author", "voter") for run in range(runs)}
        for pk, name in game.usernames.items()
    }
    return lambda name, pseudonym: pseudonym in mine[name]


@pytest.mark.django_db
def test_the_leaderboard_join_names_nobody_in_an_export_of_a_240_player_game(tmp_path: Path) -> None:
    game = simulate_game(players=240, seed=0)
    assert len(game.usernames) >= 200 and game.rounds > 2000
    boards = public_leaderboards()
    assert len(boards["skill"]) > 50  # the skill table's vote counts join too
    truth = owns(game, Pseudonyms(SALT))
    # The control: with the exact points and one pseudonym per person (main's export), the
    # same join names almost everyone on the leaderboards.
    write_exact_export(tmp_path / "exact", lambda pk: Pseudonyms(SALT).named(f"user:{pk}"))  # main's pseudonyms
    exact = reidentify(boards, tmp_path / "exact")
    assert len(identified(exact, truth)) >= 0.9 * exact.players
    dataset_export(out_dir=tmp_path / "out", options=ExportOptions(), salt=SALT)
    linkage = reidentify(boards, tmp_path / "out")
    assert linkage.players >= 200 and linkage.pseudonyms > linkage.players
    assert identified(linkage, truth) == []
    assert linkage.matches == {}  # not even a wrong guess is unambiguous


@pytest.mark.django_db
def test_the_rooms_results_join_names_nobody(tmp_path: Path) -> None:
    # Issue 24: who found each question (with points) and who voted are public to a room's
    # members, who know the pair; joined with votes.jsonl they named runs of their fellows.
    game = simulate_game(players=80, seed=5)
    assert simulate_rooms(game, rooms=25, seed=5) >= 75
    results = room_results()
    truth = owns(game, Pseudonyms(SALT))
    write_exact_export(tmp_path / "exact", lambda pk: Pseudonyms(SALT).named(f"user:{pk}"))  # the control: one pseudonym a person
    control = room_reidentify(results, tmp_path / "exact")
    assert len(room_identified(control, truth)[0]) >= 0.5 * control.players
    dataset_export(out_dir=tmp_path / "out", options=ExportOptions(), salt=SALT)
    linkage = room_reidentify(results, tmp_path / "out")
    assert linkage.players >= 40
    # What it may still pin is a solo round of someone else dealt the same pair: a wrong guess.
    assert room_identified(linkage, truth)[0] == []
    # The leaderboards join still names nobody with the rooms' points on the boards.
    boards = public_leaderboards()
    assert identified(reidentify(boards, tmp_path / "out"), truth) == []


@pytest.mark.parametrize(
    ("max_records", "shown", "runs"),
    [
        # at most max_records records a run
        (2, [{"write": 100}] * 5, [0, 0, 1, 1, 2]),
        # a run ends before it would pass a cap (write 250): the third claim starts a new one
        (9, [{"write": 100}, {"write": 100, "like": 0}, {"write": 100}, {"write": 100}], [0, 0, 1, 1]),
        # one record past the cap alone still makes a run, and the next starts another
        (9, [{"like": 500}, {"like": 10}, {"like": 10}], [0, 1, 1]),
        # records that show nothing only count towards the run's length
        (2, [{}, {}, {}], [0, 0, 1]),
    ],
)
def test_a_run_ends_at_its_length_or_before_it_passes_a_cap(max_records, shown, runs) -> None:
    pseudonyms = Pseudonyms(SALT)
    fragments = Fragments(pseudonyms, role="author", caps={"write": 250, "like": 100}, max_records=max_records)
    got = [fragments(7, record) for record in shown]
    assert got == [pseudonyms.named(f"author:7:{run}") for run in runs]
    assert Fragments(pseudonyms, role="voter", caps={}, max_records=2)(7, {}) != got[0]  # roles never share a pseudonym
