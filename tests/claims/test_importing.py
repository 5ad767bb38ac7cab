"""import_fm2: counts, idempotence, and bad files that change nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from foolgame.claims.importing import split_from_filename
from foolgame.claims.models import Claim
from foolgame.pages.models import Page, Sentence
from tests.conftest import FM2_SAMPLE, REPO

pytestmark = pytest.mark.django_db


def run_import(*paths: Path, **options: object) -> str:
    out = StringIO()
    call_command("import_fm2", *map(str, paths), no_progress=True, stdout=out, stderr=StringIO(), **options)
    return out.getvalue().strip()


def totals() -> tuple[int, int, int]:
    return Page.objects.count(), Claim.objects.count(), Sentence.objects.count()


def sample_rows() -> list[dict]:
    return [json.loads(line) for line in FM2_SAMPLE.read_text().splitlines()]


def write_rows(path: Path, rows: list[dict], *, extra_lines: list[str] = ()) -> Path:
    path.write_text("\n".join([json.dumps(r) for r in rows] + list(extra_lines)) + "\n")
    return path


def test_full_dev_split_imports_with_the_release_counts(fm2_dev: Path) -> None:
    line = run_import(fm2_dev)
    assert line.startswith("pages=209 claims=1169 supports=596 refutes=573 sentences=")
    assert run_import(fm2_dev) == line, "a second import must change nothing"
    assert Claim.objects.filter(release_split="dev").count() == 1169


def test_sample_import_prints_one_summary_line_of_database_totals() -> None:
    line = run_import(FM2_SAMPLE)
    rows = sample_rows()
    supports = sum(r["label"] == "SUPPORTS" for r in rows)
    assert line.splitlines() == [line]
    assert line.startswith(
        f"pages=20 claims={len(rows)} supports={supports} refutes={len(rows) - supports} sentences="
    )
    assert int(line.rsplit("=", 1)[1]) == Sentence.objects.count()


def test_reimport_changes_nothing() -> None:
    run_import(FM2_SAMPLE)
    before = (totals(), list(Claim.objects.values_list("id", "clues").order_by("id")))
    run_import(FM2_SAMPLE)
    assert (totals(), list(Claim.objects.values_list("id", "clues").order_by("id"))) == before


def test_page_sentences_are_the_union_of_its_claims_evidence_in_first_seen_order() -> None:
    run_import(FM2_SAMPLE)
    rows = [r for r in sample_rows() if r["wikipedia_page"] == "Hamlet"]
    expected: list[str] = []
    for row in rows:
        for item in row["gold_evidence"] + row["retrieved_evidence"]:
            if item["text"] not in expected:
                expected.append(item["text"])
    page = Page.objects.get(title="Hamlet")
    assert list(page.sentences.order_by("position").values_list("text", flat=True)) == expected
    assert page.category.name == "Literature"


def test_claim_keeps_label_gold_counts_split_and_clues_with_gold_last() -> None:
    run_import(FM2_SAMPLE)
    row = sample_rows()[0]
    claim = Claim.objects.get(external_id=row["id"])
    assert (claim.text, claim.label, claim.release_split) == (row["text"], row["label"], "dev")
    assert (claim.release_total_votes, claim.release_correct_votes, claim.release_total_likes) == (
        row["total_votes"], row["correct_votes"], row["total_likes"],
    )
    gold = [s.text for s in claim.gold_sentences.order_by("gold_links__position")]
    assert gold == [g["text"] for g in row["gold_evidence"]]
    clue_texts = [c["text"] for c in claim.clues]
    assert clue_texts[-len(gold):] == gold
    assert sorted(clue_texts) == sorted({r["text"] for r in row["retrieved_evidence"]} | set(gold))
    assert [c["text"] for c in claim.release_retrieved] == [r["text"] for r in row["retrieved_evidence"]]
    assert claim.author.username == "fm2-release" and not claim.author.has_usable_password()


@pytest.mark.parametrize(
    "bad_line, message",
    [
        ("{not json", "not valid JSON"),
        ('{"id": "x1", "text": "A claim.", "wikipedia_page": "P", "gold_evidence": [{"text": "g"}]}', "missing 'label'"),
        ('{"id": "x1", "text": "A claim.", "label": "MAYBE", "wikipedia_page": "P", "gold_evidence": [{"text": "g"}]}', "label must be SUPPORTS or REFUTES"),
        ('{"id": "x1", "text": "A claim.", "label": "SUPPORTS", "wikipedia_page": "P", "gold_evidence": []}', "1 or 2 sentences"),
        ('{"id": "x1", "text": "A claim.", "label": "SUPPORTS", "wikipedia_page": "P", "gold_evidence": [{"text": "g"}], "total_votes": 1, "correct_votes": 2}', "correct_votes"),
        ('[1, 2]', "JSON object"),
    ],
)
def test_bad_line_names_file_and_line_and_leaves_database_unchanged(tmp_path: Path, bad_line: str, message: str) -> None:
    run_import(FM2_SAMPLE)
    before = totals()
    rows = sample_rows()[:5]
    for row in rows:
        row["id"] = "new-" + row["id"]  # rows that would be new claims if the file were good
    bad = write_rows(tmp_path / "train.jsonl", rows, extra_lines=[bad_line])
    with pytest.raises(CommandError) as error:
        run_import(bad)
    assert f"{bad}:6:" in str(error.value)
    assert message in str(error.value)
    assert totals() == before
    assert not Claim.objects.filter(external_id__startswith="new-").exists()


def test_duplicate_claim_id_in_one_file_is_refused(tmp_path: Path) -> None:
    rows = sample_rows()[:2]
    bad = write_rows(tmp_path / "dup.jsonl", [rows[0], rows[1], rows[0]])
    with pytest.raises(CommandError, match=r"dup\.jsonl:3: claim id"):
        run_import(bad)
    assert totals() == (0, 0, 0)


def test_bad_file_exits_non_zero_from_the_command_line(tmp_path: Path) -> None:
    bad = tmp_path / "dev.jsonl"
    bad.write_text('{"id": "a"}\n')
    result = subprocess.run(
        [sys.executable, "manage.py", "import_fm2", str(bad), "--no-progress"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "FM2_DATA_DIR": str(tmp_path)},
    )
    assert result.returncode != 0
    assert f"{bad}:1: missing 'text'" in result.stderr


@pytest.mark.parametrize(
    "name, split",
    [("train.jsonl", "train"), ("fm2-dev.jsonl", "dev"), ("test.jsonl", "test"), ("claims.jsonl", ""), ("devices.jsonl", "")],
)
def test_split_comes_from_the_file_name(name: str, split: str) -> None:
    assert split_from_filename(Path(name)) == split


def test_split_option_overrides_the_file_name(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "claims.jsonl", sample_rows()[:3])
    run_import(path, split="train")
    assert set(Claim.objects.values_list("release_split", flat=True)) == {"train"}


def test_the_queue_lists_the_release_too_hard_claims_right_after_import(tmp_path: Path) -> None:
    """No refresh_quality run needed: the import computes its new claims' flags."""
    from foolgame.moderation.models import ClaimQuality
    from foolgame.moderation.selectors import moderation_queue

    rows = sample_rows()[:3]
    rows[0].update(correct_votes=2, total_votes=8)  # score 0.46 under the 4/1 prior: too hard
    rows[1].update(correct_votes=8, total_votes=8)
    run_import(write_rows(tmp_path / "dev.jsonl", rows))
    assert list(moderation_queue().values_list("external_id", flat=True)) == [rows[0]["id"]]
    quality = ClaimQuality.objects.get(claim__external_id=rows[0]["id"])
    assert quality.too_hard and quality.out_of_play and quality.total_votes == 8
    assert ClaimQuality.objects.count() == 3


def test_a_reimport_refreshes_only_the_claims_it_added(tmp_path: Path) -> None:
    from foolgame.moderation.models import ClaimQuality

    rows = sample_rows()[:2]
    run_import(write_rows(tmp_path / "dev.jsonl", rows[:1]))
    first = ClaimQuality.objects.get()
    ClaimQuality.objects.filter(pk=first.pk).update(score=0.123)  # a change only a refresh would undo
    run_import(write_rows(tmp_path / "dev.jsonl", rows))
    assert ClaimQuality.objects.count() == 2
    assert ClaimQuality.objects.get(pk=first.pk).score == 0.123
