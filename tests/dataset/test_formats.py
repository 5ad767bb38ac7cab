"""The export opens in researchers' own tools: Hugging Face ``datasets`` in one call from the
card's header, Croissant read record by record with ``mlcroissant``, ``sha256sum -c``, and one
licence stated the same everywhere. Every test loads a real export, offline."""

from __future__ import annotations

import csv
import json
import logging
import shutil
import subprocess
from pathlib import Path

import pytest
from django.conf import settings

from foolgame.dataset import hub
from foolgame.dataset.exporter import ExportOptions
from foolgame.dataset.services import dataset_export
from foolgame.dataset.writers import CLAIM_FIELDS, LABEL_FIELDS, VOTE_FIELDS
from tests.dataset.test_certify import check_claims

pytestmark = pytest.mark.django_db

HF_SPLIT = {"train": "train", "dev": "validation", "test": "test"}


@pytest.fixture
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))


def export(out: Path, **options) -> Path:
    dataset_export(out_dir=out, options=ExportOptions(**options), salt=b"0" * 32)
    return out


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def null_typed(feature) -> list[str]:
    """The paths of features typed ``null`` anywhere in ``feature``."""
    from datasets import Features, List, Value

    if isinstance(feature, Value):
        return ["."] if feature.dtype == "null" else []
    if isinstance(feature, List):
        return null_typed(feature.feature)
    if isinstance(feature, (dict, Features)):
        return [f"{key}{path}" for key, value in feature.items() for path in null_typed(value)]
    return []


EXPORTS = {
    # every split, some claims checked, a certified export
    "all splits, certified": dict(splits=(0.4, 0.3, 0.3), certify=True),
    # train empty: the release page keeps dev, the game's own pages go to dev and test only
    "an empty split": dict(splits=(0.0, 0.5, 0.5)),
    "csv only": dict(splits=(0.4, 0.3, 0.3), formats=("csv",)),
}


@pytest.mark.parametrize("options", EXPORTS.values(), ids=EXPORTS.keys())
def test_every_export_loads_with_datasets_in_one_call_typed_and_with_its_non_empty_splits_only(world, offline, tmp_path, options) -> None:
    datasets = pytest.importorskip("datasets", reason="datasets is in the test extras")
    check_claims([world.claims["t0"], world.claims["f0"]], labels=2)
    out = export(tmp_path / "out", **options)
    claims = datasets.load_dataset(str(out))
    suffix = ".csv" if options.get("formats") == ("csv",) else ".jsonl"
    counts = {split: len(list(csv.DictReader((out / f"{split}{suffix}").open()))) if suffix == ".csv" else len(lines(out / f"{split}.jsonl"))
              for split in HF_SPLIT}
    assert {name: claims[name].num_rows for name in claims} == {HF_SPLIT[split]: n for split, n in counts.items() if n}
    for name in claims:
        assert list(claims[name].features) == list(CLAIM_FIELDS)
        assert null_typed(claims[name].features) == []
    votes = datasets.load_dataset(str(out), "votes", split="train")
    assert list(votes.features) == list(VOTE_FIELDS) and votes.num_rows == 4 and null_typed(votes.features) == []
    labels = datasets.load_dataset(str(out), "validation_labels", split="train")
    assert list(labels.features) == list(LABEL_FIELDS) and labels.num_rows == 4 and null_typed(labels.features) == []
    if suffix == ".jsonl":
        first = claims[HF_SPLIT[next(split for split, n in counts.items() if n)]][0]
        assert first["gold_evidence"] and set(first["gold_evidence"][0]) == {"text", "section_header"}


def test_a_release_only_export_offers_its_one_split_and_types_the_columns_it_never_fills(demo, offline, tmp_path) -> None:
    datasets = pytest.importorskip("datasets", reason="datasets is in the test extras")
    out = export(tmp_path / "out")
    assert (out / "train.jsonl").stat().st_size == 0 and (out / "votes.jsonl").stat().st_size == 0
    claims = datasets.load_dataset(str(out))
    assert list(claims) == ["validation"] and claims["validation"].num_rows == 216
    assert claims["validation"].features["difficulty"] == datasets.Value("int64")
    assert claims["validation"].features["flags"] == datasets.List(datasets.Value("string"))
    assert null_typed(claims["validation"].features) == []
    with pytest.raises(ValueError, match="votes"):  # no votes: no configuration that cannot load
        datasets.load_dataset(str(out), "votes")


def test_the_card_starts_with_the_hubs_header_and_has_a_citation_an_example_and_limitations(world, tmp_path) -> None:
    from huggingface_hub import DatasetCard

    out = export(tmp_path / "out", splits=(0.4, 0.3, 0.3))
    card = DatasetCard.load(out / "README.md")
    data = card.data.to_dict()
    assert data["license"] == "cc-by-sa-4.0" and data["language"] == ["en"]
    assert data["task_categories"] == ["text-classification"] and data["size_categories"] == ["n<1K"]
    assert [c["config_name"] for c in data["configs"]] == ["claims", "votes"]  # nobody checked a claim
    assert {c["config_name"] for c in data["dataset_info"]} == {"claims", "votes"}
    text = card.text
    assert "@inproceedings{eisenschlos-etal-2021-fool" in text and "## Limitations" in text
    name = json.loads((out / "croissant.json").read_text())["url"].removeprefix("urn:fm2-export:")
    assert f"@misc{{fm2-export-{name}," in text  # the card cites the export by the id Croissant gives it
    example = json.loads(text.split("### Example", 1)[1].split("```json\n", 1)[1].split("```", 1)[0])
    assert example["id"] == lines(out / "train.jsonl")[0]["id"]


def test_the_cards_types_cover_every_field() -> None:
    assert list(hub.CLAIM_TYPES) == list(CLAIM_FIELDS)
    assert list(hub.VOTE_TYPES) == list(VOTE_FIELDS)
    assert list(hub.LABEL_TYPES) == list(LABEL_FIELDS)


def croissant_records(out: Path) -> tuple[object, dict[str, list[dict]]]:
    mlc = pytest.importorskip("mlcroissant", reason="mlcroissant is in the test extras")
    dataset = mlc.Dataset(str(out / "croissant.json"))
    return dataset, {rs.name: list(dataset.records(rs.name)) for rs in dataset.metadata.record_sets}


def text(value):
    return value.decode() if isinstance(value, bytes) else value


def test_croissant_validates_without_warnings_and_every_record_set_reads_the_files_row_for_row(world, tmp_path, caplog) -> None:
    check_claims([world.claims["t0"], world.claims["f0"]], labels=2)
    out = export(tmp_path / "out", splits=(0.4, 0.3, 0.3))
    with caplog.at_level(logging.WARNING):
        dataset, records = croissant_records(out)
    assert dataset.metadata.issues.warnings == set() and dataset.metadata.issues.errors == set()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], [r.getMessage() for r in caplog.records]
    croissant = json.loads((out / "croissant.json").read_text())
    assert croissant["version"] and croissant["datePublished"] and croissant["url"].startswith("urn:fm2-export:")
    assert croissant["isBasedOn"] == hub.SOURCE_URL and hub.SOURCE_URL in croissant["citeAs"]
    assert croissant["url"].removeprefix("urn:fm2-export:") in croissant["citeAs"]
    assert set(records) == {"claims", "votes", "validation_labels"}

    # mlcroissant reads a file set's files in the order of their names, each in its own order.
    written = [record for split in sorted(("train", "dev", "test")) for record in lines(out / f"{split}.jsonl")]
    assert len(records["claims"]) == len(written) == 14
    nested = {"gold_evidence": ("text", "section_header"), "retrieved_evidence": ("text", "section_header"),
              "validation_labels": ("label", "checker", "study", "arm")}
    for got, want in zip(records["claims"], written):
        for name, value in want.items():
            if name == "model_verdicts":  # no version judged a claim here: no sub-field to read
                continue
            read = got[f"claims/{name}"]
            if name in nested:
                read = [{key: text(item[f"claims/{name}/{key}"]) for key in nested[name]} for item in read or []]
            elif name == "flags":
                read = [text(flag) for flag in read or []]
            assert (text(read) if not isinstance(read, list) else read) == value, (want["id"], name)
    votes = lines(out / "votes.jsonl")
    assert len(records["votes"]) == len(votes) == 4
    for got, want in zip(records["votes"], votes):
        assert {key: text(got[f"votes/{key}"]) for key in VOTE_FIELDS} == want
    labels = lines(out / "validation_labels.jsonl")
    assert len(records["validation_labels"]) == len(labels) == 4
    for got, want in zip(records["validation_labels"], labels):
        assert {key: text(got[f"validation_labels/{key}"]) for key in LABEL_FIELDS} == want


def test_croissant_reads_a_release_only_export_and_leaves_the_empty_files_unread(demo, tmp_path) -> None:
    out = export(tmp_path / "out")
    dataset, records = croissant_records(out)
    assert dataset.metadata.issues.warnings == set()
    assert list(records) == ["claims"] and len(records["claims"]) == 216


def test_sha256sums_checks_with_sha256sum_in_the_export_folder(world, tmp_path) -> None:
    out = export(tmp_path / "out", certify=True)
    listed = [line.split("  ", 1)[1] for line in (out / "SHA256SUMS").read_text().splitlines()]
    assert sorted(listed) == sorted(p.name for p in out.iterdir() if p.name != "SHA256SUMS")
    if shutil.which("sha256sum") is None:
        pytest.skip("sha256sum (coreutils) is not on the PATH")
    assert subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=out).returncode == 0
    (out / "dev.jsonl").write_text("tampered\n")
    checked = subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=out, capture_output=True, text=True)
    assert checked.returncode != 0 and "dev.jsonl: FAILED" in checked.stdout


def test_one_licence_is_stated_the_same_everywhere_with_its_sources(world, tmp_path) -> None:
    from huggingface_hub import DatasetCard

    out = export(tmp_path / "out")
    card = DatasetCard.load(out / "README.md")
    croissant = json.loads((out / "croissant.json").read_text())
    docs = (Path(settings.BASE_DIR) / "docs" / "dataset.md").read_text()
    fixtures = (Path(settings.BASE_DIR) / "fixtures" / "README.md").read_text()
    assert card.data.license == hub.LICENSE_ID and croissant["license"] == hub.LICENSE_URL
    for text_ in (card.text, docs, fixtures):
        assert hub.LICENSE_NAME in text_ and hub.LICENSE_URL in text_
        assert "licenses/by-sa/3.0" not in text_
        for _, source in hub.LICENSE_SOURCES:
            assert source in text_
