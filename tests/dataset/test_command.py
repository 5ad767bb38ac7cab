"""python manage.py export_dataset: options, errors, the FM2 dev file, and loading with datasets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from foolgame.claims.importing import import_fm2_rows, parse_fm2_file
from foolgame.dataset.writers import CLAIM_FIELDS, VOTE_FIELDS

pytestmark = pytest.mark.django_db


def test_command_writes_every_file_and_prints_the_counts(world, tmp_path: Path, capsys) -> None:
    call_command("export_dataset", str(tmp_path / "out"), "--seed", "3", "--splits", "0.5,0.25,0.25", "-v", "0")
    names = {p.name for p in (tmp_path / "out").iterdir()}
    for split in ("train", "dev", "test", "votes"):
        assert {f"{split}.jsonl", f"{split}.csv"} <= names
    assert {"stats.json", "stats.md", "artifacts.json", "artifacts.md", "easy_hard.jsonl", "README.md"} <= names
    assert "votes=4" in capsys.readouterr().out


def test_demo_export_keeps_release_splits_and_says_which_option_fills_train_and_test(demo, tmp_path: Path, capsys) -> None:
    call_command("export_dataset", str(tmp_path / "out"), "-v", "0")
    out = capsys.readouterr().out
    assert "train=0 dev=216 test=0" in out
    assert "How the pages were split:\n  release page, kept its release split: dev 20 pages (216 claims)\n" in out
    assert "train and test are empty: 20 release page(s) kept their release split (20 in dev). Add --resplit-release" in out
    summary = json.loads((tmp_path / "out" / "stats.json").read_text())["split_summary"]
    assert [(row["rule"], row["pages"], row["claims"]) for row in summary["rules"]] == [
        ("release", {"train": 0, "dev": 20, "test": 0}, {"train": 0, "dev": 216, "test": 0})
    ]
    assert {(e["split"], e["option"]) for e in summary["empty_splits"]} == {("train", "resplit_release"), ("test", "resplit_release")}


def split_pages(out: Path) -> dict[str, set[str]]:
    return {split: {json.loads(line)["wikipedia_page"] for line in (out / f"{split}.jsonl").read_text().splitlines()} for split in ("train", "dev", "test")}


def test_demo_export_with_resplit_release_fills_every_split_page_disjoint_and_repeatably(demo, tmp_path: Path, capsys) -> None:
    for name in ("a", "b"):
        call_command("export_dataset", str(tmp_path / name), "--resplit-release", "--seed", "5", "--formats", "jsonl",
                     "--salt-file", str(tmp_path / "salt"), "-v", "0")  # the same salt: the same pseudonyms
    out = capsys.readouterr().out
    pages = split_pages(tmp_path / "a")
    assert all(pages.values())
    assert not (pages["train"] & pages["dev"] or pages["train"] & pages["test"] or pages["dev"] & pages["test"])
    assert sum(len(p) for p in pages.values()) == 20
    for split in ("train", "dev", "test", "votes"):
        assert (tmp_path / "a" / f"{split}.jsonl").read_text() == (tmp_path / "b" / f"{split}.jsonl").read_text()
    stats = json.loads((tmp_path / "a" / "stats.json").read_text())
    summary = stats["split_summary"]
    assert summary["resplit_release"] is True and summary["empty_splits"] == []
    assert [row["rule"] for row in summary["rules"]] == ["resplit"]
    assert summary["rules"][0]["claims"] == {split: stats["table1"][split]["claims"] for split in ("train", "dev", "test")}
    assert "release page, re-split by the requested proportions" in out and "empty" not in out
    assert "re-split" in (tmp_path / "a" / "README.md").read_text()


def test_exclusive_authors_file_and_salt_file(world, tmp_path: Path) -> None:
    authors = tmp_path / "exclusive.txt"
    authors.write_text("# kept for test\nauthor_2\n")
    salt = tmp_path / "secret" / "salt"
    for name in ("a", "b"):
        call_command("export_dataset", str(tmp_path / name), "--exclusive-test-authors", str(authors), "--salt-file", str(salt), "-v", "0")
    assert (tmp_path / "a" / "test.jsonl").read_text() == (tmp_path / "b" / "test.jsonl").read_text()
    assert "Topic 2 was founded" in (tmp_path / "a" / "test.jsonl").read_text()
    assert salt.read_text().strip() not in "".join(p.read_text() for p in (tmp_path / "a").iterdir())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--splits", "1,2"], "three numbers"),
        (["--formats", "parquet"], "--formats"),
        (["--exclusive-test-authors", "/nonexistent/file"], "nonexistent"),
    ],
)
def test_bad_options_are_refused(world, tmp_path: Path, args: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        call_command("export_dataset", str(tmp_path / "out"), *args, "-v", "0")


def test_salt_file_inside_out_dir_is_refused(world, tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="salt"):
        call_command("export_dataset", str(tmp_path / "out"), "--salt-file", str(tmp_path / "out" / "salt"), "-v", "0")


def test_the_whole_export_loads_with_datasets_as_the_card_says(world, tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("datasets", reason="datasets is in the test extras; install them to load the export")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    out = tmp_path / "out"
    call_command("export_dataset", str(out), "--splits", "0.4,0.3,0.3", "-v", "0")
    card = (out / "README.md").read_text()
    code = card.split("```python\n", 1)[1].split("```", 1)[0]
    code = "\n".join(line for line in code.splitlines() if "validation_labels" not in line)  # nobody checked a claim
    code = code.replace("path/to/this/folder", str(out))
    namespace: dict = {}
    exec(code, namespace)  # the card's own loading code
    claims, votes = namespace["claims"], namespace["votes"]
    assert sum(len(claims[split]) for split in ("train", "validation", "test")) == 14
    assert len(votes) == 4 and set(votes.column_names) == set(VOTE_FIELDS)
    assert set(claims["train"].column_names) == set(CLAIM_FIELDS)


@pytest.mark.slow
def test_fm2_dev_export_reproduces_the_paper(fm2_dev: Path, tmp_path: Path) -> None:
    import_fm2_rows(parse_fm2_file(fm2_dev), split="dev")
    out = tmp_path / "out"
    call_command("export_dataset", str(out), "-v", "0")
    assert len((out / "dev.jsonl").read_text().splitlines()) == 1169
    assert "| dev | 1,169 | 51.0% | 209 |" in (out / "stats.md").read_text()
    analysis = json.loads((out / "artifacts.json").read_text())
    refutes = [t["term"] for t in analysis["splits"]["dev"]["lmi_bigrams"]["REFUTES"]]
    assert refutes == ["by a", "mad ,", ", mad", "on the", "innocent iii", "statue of", "for his", "pope innocent", "mary ,", "queen of"]
    markdown = (out / "artifacts.md").read_text()
    assert all(f"`{bigram}`" in markdown for bigram in refutes)
    # Release fields as in the file, in the file's order.
    first = json.loads((out / "dev.jsonl").read_text().splitlines()[0])
    original = json.loads(fm2_dev.read_text().splitlines()[0])
    for key in ("id", "label", "wikipedia_page", "category", "total_votes", "correct_votes", "total_likes", "gold_evidence"):
        assert first[key] == original[key]
