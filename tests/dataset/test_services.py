"""The export end to end on a small game: splits, fields, votes, CSV twins, privacy."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from foolgame.claims.models import Claim
from foolgame.dataset.exporter import ExportError, ExportOptions
from foolgame.dataset.services import dataset_export
from foolgame.dataset.writers import CLAIM_FIELDS, VOTE_FIELDS
from foolgame.voting.models import Round
from foolgame.voting.ratings import ratings_refit
from tests.factories import PageFactory
from tests.dataset.conftest import make_claim, play

pytestmark = pytest.mark.django_db
SALT = b"a fixed salt for the tests, 32 bytes"


def export(tmp_path: Path, name: str = "out", **options) -> Path:
    out = tmp_path / name
    salt = options.pop("salt", SALT)
    dataset_export(out_dir=out, options=ExportOptions(**options), salt=salt)
    return out


def claims(out: Path) -> dict[str, list[dict]]:
    return {
        split: [json.loads(line) for line in (out / f"{split}.jsonl").read_text().splitlines()]
        for split in ("train", "dev", "test")
    }


def votes(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "votes.jsonl").read_text().splitlines()]


def by_text(out: Path) -> dict[str, tuple[str, dict]]:
    return {r["text"]: (split, r) for split, rows in claims(out).items() for r in rows}


def test_no_page_is_in_two_splits(world, tmp_path: Path) -> None:
    for p in range(40):  # enough pages for every split to get some
        page = PageFactory(title=f"Extra {p}")
        make_claim(page, label="SUPPORTS", author=world.users[0], text=f"Extra page {p} has a first claim.")
        make_claim(page, label="REFUTES", author=world.users[1], text=f"Extra page {p} has a second claim.")
    out = export(tmp_path, splits=(0.6, 0.2, 0.2))
    pages = {split: {r["wikipedia_page"] for r in rows} for split, rows in claims(out).items()}
    assert all(pages.values())
    assert not pages["train"] & pages["dev"] and not pages["train"] & pages["test"] and not pages["dev"] & pages["test"]


def test_same_seed_same_files_other_seed_other_splits(world, tmp_path: Path) -> None:
    for p in range(30):
        make_claim(PageFactory(title=f"Seeded {p}"), label="SUPPORTS", author=world.users[0], text=f"Seeded page {p} claim.")
    first, again, other = export(tmp_path, "a", seed=7), export(tmp_path, "b", seed=7), export(tmp_path, "c", seed=8)
    for name in ("train.jsonl", "dev.jsonl", "test.jsonl", "votes.jsonl", "train.csv", "stats.json"):
        assert (first / name).read_bytes() == (again / name).read_bytes()
    assert claims(first) != claims(other)


def test_release_claims_keep_their_split_and_their_page_follows(world, tmp_path: Path) -> None:
    out = export(tmp_path, splits=(1, 0, 0))
    rows = by_text(out)
    split, released = rows["The released page supports this claim."]
    assert split == "dev" and released["id"] == "01RELEASEDxyz"
    assert rows["The released page refutes this other claim."][0] == "dev"
    assert {s for s, _ in rows.values()} == {"train", "dev"}


def test_removed_claims_are_left_out_unless_asked_for(world, tmp_path: Path) -> None:
    text = "A claim that moderators removed."
    assert text not in by_text(export(tmp_path, "a"))
    included = by_text(export(tmp_path, "b", include_removed=True))
    assert included[text][1]["flags"] == ["removed"]
    # The vote on a pair with the removed claim is left out with it, and back with it.
    assert len(votes(tmp_path / "a")) == 4 and len(votes(tmp_path / "b")) == 5


def test_claim_fields_and_types(world, tmp_path: Path) -> None:
    out = export(tmp_path)
    rows = [r for split in claims(out).values() for r in split]
    assert rows
    for row in rows:
        assert tuple(row) == CLAIM_FIELDS
        assert row["label"] in ("SUPPORTS", "REFUTES")
        assert isinstance(row["id"], str) and isinstance(row["text"], str)
        for key in ("gold_evidence", "retrieved_evidence"):
            assert row[key] and all(set(e) == {"text", "section_header"} for e in row[key])
        assert isinstance(row["wikipedia_page"], str) and isinstance(row["category"], str)
        for key in ("total_votes", "correct_votes", "total_likes"):
            assert isinstance(row[key], int) and row[key] >= 0
        assert 0 < row["smoothed_correctness"] < 1
        assert (row["difficulty"] is None) is (row["difficulty_deviation"] is None)
        assert isinstance(row["flags"], list)
        assert row["author"].startswith("p") and len(row["author"]) == 17
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["created"])  # the day only (issue 17)
        assert row["mean_clues_revealed"] is None or isinstance(row["mean_clues_revealed"], float)


def test_counts_add_the_game_to_the_release(world, tmp_path: Path) -> None:
    ratings_refit(method="glicko2")  # the world's votes are written directly, not by vote_cast
    rows = by_text(export(tmp_path))
    _, released = rows["The released page supports this claim."]
    # 3 votes, 2 correct, 1 like in the release; the game's round on it was reported (no vote).
    assert (released["total_votes"], released["correct_votes"], released["total_likes"]) == (3, 2, 1)
    assert released["retrieved_evidence"] == [{"text": "A release sentence.", "section_header": "Intro"}]
    assert released["mean_clues_revealed"] is None
    _, false0 = rows["Topic 0 was never founded by anyone."]
    assert (false0["total_votes"], false0["correct_votes"], false0["total_likes"]) == (2, 1, 1)
    assert false0["mean_clues_revealed"] == 2.0  # 1 clue and 3 clues over two votes
    assert false0["smoothed_correctness"] == round((1 + 4) / (2 + 5), 4)
    # Rated by its two game votes (one wrong, one right); the release claim has no game vote.
    claim = Claim.objects.get(text="Topic 0 was never founded by anyone.")
    assert (false0["difficulty"], false0["difficulty_deviation"]) == (round(claim.rating), round(claim.rating_deviation))
    assert false0["difficulty_deviation"] < 350
    assert (released["difficulty"], released["difficulty_deviation"]) == (None, None)
    assert rows["The released page refutes this other claim."][1]["flags"] == ["reported:wrong_label"]


def test_votes_file(world, tmp_path: Path) -> None:
    out = export(tmp_path)
    lines = votes(out)
    assert [tuple(line) for line in lines] == [VOTE_FIELDS] * 4
    ids = {r["text"]: r["id"] for rows in claims(out).values() for r in rows}
    first, wrong, timeout, reported = lines
    assert first["true_claim"] == ids["Topic 0 was founded in 1800."]
    assert first["false_claim"] == ids["Topic 0 was never founded by anyone."]
    # 90.5 s left: the 90-119 s bucket; no exact points or time (issue 17)
    assert (first["outcome"], first["correct"], first["remaining_bucket"]) == ("voted", True, 90)
    assert (first["clues_revealed_true"], first["clues_revealed_false"]) == (2, 1)
    assert first["voter"] == lines[2]["voter"] != wrong["voter"]  # one run of voter_0's rounds
    assert first["false_claim_side"] == "right" and re.fullmatch(r"\d{4}-\d{2}-\d{2}", first["day"])
    assert (timeout["outcome"], timeout["timed_out"], timeout["correct"], timeout["remaining_bucket"]) == ("timeout", True, None, None)
    assert (reported["reported"], reported["true_claim"], reported["true_claim_split"]) == (True, "01RELEASEDxyz", "dev")
    assert (reported["true_claim_public"], reported["false_claim_public"], first["true_claim_public"]) == (True, False, False)
    assert [line["voided_by"] for line in lines] == [None] * 4
    assert [line["voter_saw_answer"] for line in lines] == [False] * 4


def test_forfeits_are_exported_as_their_own_outcome_not_as_timeouts(world, tmp_path: Path) -> None:
    c, voter = world.claims, world.users[3]
    play(voter, c["t3"], c["f3"], state=Round.State.FORFEITED)  # given up 60 s into the round
    Round.objects.create(  # given up before its start: no clock at all
        player=voter, left_claim=c["t4"], right_claim=c["f4"], state=Round.State.FORFEITED, ended_at=timezone.now(), answer_at=timezone.now()
    )
    lines = votes(export(tmp_path))
    given_up = [line for line in lines if line["outcome"] == "forfeited"]
    assert len(given_up) == 2 and len(lines) == 6
    for line in given_up:
        assert (line["timed_out"], line["correct"], line["remaining_bucket"]) == (False, None, None)
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", line["day"])
    assert sum(line["timed_out"] for line in lines) == 1  # the world's one real timeout


def test_csv_twins_hold_the_same_records(world, tmp_path: Path) -> None:
    out = export(tmp_path)
    for name, fields in (("train", CLAIM_FIELDS), ("votes", VOTE_FIELDS)):
        with (out / f"{name}.csv").open(newline="") as handle:
            rows = list(csv.DictReader(handle))
        records = [json.loads(line) for line in (out / f"{name}.jsonl").read_text().splitlines()]
        assert len(rows) == len(records) > 0
        assert tuple(rows[0]) == fields
        for row, record in zip(rows, records):
            for key, value in record.items():
                if isinstance(value, (list, dict)):
                    assert json.loads(row[key]) == value
                elif isinstance(value, bool):
                    assert row[key] == ("true" if value else "false")
                elif value is None:
                    assert row[key] == ""
                else:
                    assert row[key] == str(value)


def test_formats_can_be_chosen(world, tmp_path: Path) -> None:
    out = export(tmp_path, formats=("csv",))
    assert not list(out.glob("*.jsonl*")) or [p.name for p in out.glob("*.jsonl")] == ["easy_hard.jsonl"]
    assert json.loads((out / "stats.json").read_text())["table1"]["total"]["claims"] == 14


def test_test_exclusive_authors_go_to_test_only(world, tmp_path: Path) -> None:
    exclusive = world.users[2].username  # wrote topics 2 and 5
    for p in range(30):
        make_claim(PageFactory(title=f"Spread {p}"), label="SUPPORTS", author=world.users[0], text=f"Spread page {p} claim.")
    make_claim(world.claims["released"].page, label="SUPPORTS", author=world.users[2], text="Exclusive author on the dev release page.")
    out = export(tmp_path, exclusive_test_authors=frozenset({exclusive}))
    rows = by_text(out)
    for p in (2, 5):
        assert rows[f"Topic {p} was founded in {1800 + p}."][0] == "test"
    assert "Exclusive author on the dev release page." not in rows
    stats = json.loads((out / "stats.json").read_text())
    assert stats["withheld_exclusive_claims"] == 1


def test_unknown_exclusive_author_is_an_error(world, tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="nobody_here"):
        export(tmp_path, exclusive_test_authors=frozenset({"nobody_here"}))


def test_no_personal_data_in_any_file(world, tmp_path: Path) -> None:
    out = export(tmp_path, salt=None)
    text = "\n".join(path.read_text(encoding="utf-8") for path in sorted(out.iterdir()))
    for user in get_user_model().objects.all():
        assert user.username not in text
        if user.email:
            assert user.email not in text
    for path in out.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            for key in ("author", "voter"):
                if key in record:
                    assert not record[key].isdigit()
            assert not {"user_id", "username", "email", "ip", "player_id", "author_id"} & set(record)
    assert SALT.decode() not in text


def test_pseudonyms_change_with_the_salt_and_an_authors_runs_are_not_tied_to_their_votes(world, tmp_path: Path) -> None:
    voter = world.users[3]
    make_claim(PageFactory(title="By a voter"), label="SUPPORTS", author=voter, text="A claim written by someone who votes.")
    first = export(tmp_path, "a")
    again = export(tmp_path, "b")
    fresh = export(tmp_path, "c", salt=None)
    authored = by_text(first)["A claim written by someone who votes."][1]["author"]
    assert authored not in {line["voter"] for line in votes(first)}  # issue 17: they linked to leaderboards
    assert by_text(again)["A claim written by someone who votes."][1]["author"] == authored
    assert by_text(fresh)["A claim written by someone who votes."][1]["author"] != authored


def test_the_card_and_reports_are_written(world, tmp_path: Path) -> None:
    out = export(tmp_path)
    card = (out / "README.md").read_text()
    for needle in ("CC BY-SA", "HMAC-SHA256", "`smoothed_correctness`", "`difficulty`, `difficulty_deviation`", "`mean_clues_revealed`", "No page is in two splits"):
        assert needle in card
    stats = json.loads((out / "stats.json").read_text())
    assert stats["table1"]["total"]["claims"] == 14 and stats["votes"] == 4
    assert "scoring.artifacts.tokenize" in (out / "stats.md").read_text()
    analysis = json.loads((out / "artifacts.json").read_text())
    assert set(analysis["splits"]) == {"train", "dev", "test"}


def test_moderation_quality_flags_are_exported(world, tmp_path: Path) -> None:
    from foolgame.moderation.models import ClaimQuality

    claim = world.claims["f3"]
    ClaimQuality.objects.update_or_create(
        claim=claim,
        defaults=dict(score=0.3, interval_low=0.1, interval_high=0.45, prior_a=4, prior_b=1, too_hard=True, kept=True),
    )
    rows = by_text(export(tmp_path))
    assert rows[claim.text][1]["flags"] == ["kept", "too_hard"]


@pytest.mark.parametrize(("leaders", "same"), [(5, [True, False, True, False]), (4, [False, False, False, False])])
def test_an_authors_claims_are_named_in_runs_of_two_each_below_the_fifth_best_players_points(world, tmp_path: Path, leaders, same) -> None:
    from foolgame.players.models import LedgerEntry
    from tests.factories import UserFactory

    for n in range(leaders):  # players well above anything one run shows, on every leaderboard
        LedgerEntry.objects.bulk_create(
            LedgerEntry(player=UserFactory(username=f"leader_{n}"), amount=10_000, kind=kind, cause="test") for kind in LedgerEntry.Kind.values
        )
    rows = by_text(export(tmp_path))
    # author_0 wrote the released claim (written first, release claims are) and topics 0 and 3.
    names = [rows[text][1]["author"] for text in ("The released page supports this claim.",
                                                 "Topic 0 was founded in 1800.", "Topic 0 was never founded by anyone.",
                                                 "Topic 3 was founded in 1803.", "Topic 3 was never founded by anyone.")]
    # With fewer than 5 players on a leaderboard, every claim that shows points is a run of its own.
    assert [a == b for a, b in zip(names, names[1:])] == same


def test_votes_mark_voided_rounds_public_claims_and_voters_who_saw_the_answer(world, tmp_path: Path) -> None:
    from datetime import timedelta

    from foolgame.moderation.models import Sighting
    from foolgame.voting.models import Round
    from tests.dataset.conftest import play

    c = world.claims
    moderator = world.users[4]  # voter_1
    voided = play(moderator, c["t4"], c["f4"], state=Round.State.VOIDED)
    Round.objects.filter(pk=voided.pk).update(void_action="relabel", false_claim_index=1)
    Claim.objects.filter(pk=c["f4"].pk).update(label="SUPPORTS")  # the relabel: both claims now SUPPORTS
    after = play(moderator, c["t5"], c["f5"], correct=True)
    before = play(moderator, c["t3"], c["f3"], correct=True)
    Sighting.objects.create(moderator=moderator, claim=c["f5"], first_seen=after.ended_at - timedelta(seconds=5))
    Sighting.objects.create(moderator=moderator, claim=c["t3"], first_seen=before.ended_at + timedelta(seconds=5))
    lines = {(line["true_claim"], line["false_claim"]): line for line in votes(export(tmp_path))}
    ids = {r["text"]: r["id"] for rows in claims(tmp_path / "out").values() for r in rows}

    def line(p: int) -> dict:
        return lines[(ids[f"Topic {p} was founded in {1800 + p}."], ids[f"Topic {p} was never founded by anyone."])]

    assert (line(4)["outcome"], line(4)["voided_by"], line(4)["correct"]) == ("voided", "relabel", None)
    assert line(5)["voter_saw_answer"] is True  # seen in the queue before the vote
    assert line(3)["voter_saw_answer"] is False  # seen only after voting
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert stats["voided_rounds"] == 1
