"""Statistics and artifact reports read back from written files, on examples small enough to check by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from foolgame.dataset import reports


def write_split(out: Path, split: str, rows: list[tuple[str, str, str, list[str]]]) -> None:
    out.mkdir(exist_ok=True)
    with (out / f"{split}.jsonl").open("w") as handle:
        for n, (text, label, page, gold) in enumerate(rows):
            record = {"id": f"{split}-{n}", "text": text, "label": label, "wikipedia_page": page,
                      "gold_evidence": [{"text": g, "section_header": ""} for g in gold],
                      "category": "NOCAT", "validation_labels": [], "gold_label": "-"}
            handle.write(json.dumps(record) + "\n")


@pytest.fixture
def out(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    write_split(out, "train", [])
    write_split(out, "dev", [
        ("A b.", "SUPPORTS", "P1", ["One two three."]),
        ("a b", "SUPPORTS", "P1", ["One two.", "Three."]),
        ("c d", "REFUTES", "P2", ["Four five six seven."]),
        ("a b", "REFUTES", "P3", ["x"]),
    ])
    write_split(out, "test", [("Mad, mad world", "REFUTES", "P9", ["Mad."])])
    return out


@pytest.mark.parametrize(
    ("split", "expected"),
    [
        ("dev", {"claims": 4, "supports_percent": 50.0, "pages": 3, "claim_tokens": 2.25, "evidence_tokens": 3.0}),
        ("test", {"claims": 1, "supports_percent": 0.0, "pages": 1, "claim_tokens": 4.0, "evidence_tokens": 2.0}),
        ("train", {"claims": 0, "supports_percent": 0.0, "pages": 0, "claim_tokens": 0.0, "evidence_tokens": 0.0}),
        ("total", {"claims": 5, "supports_percent": 40.0, "pages": 4, "claim_tokens": 2.6, "evidence_tokens": 2.83}),
    ],
)
def test_table1_per_split_and_total(out: Path, split: str, expected: dict) -> None:
    # "A b." is a b . (3 tokens); evidence averages over sentences: (4 + 3 + 2 + 5 + 1) / 5 = 3 in dev.
    assert reports.statistics(out, extra={})["table1"][split] == expected


def test_lmi_bigrams_on_a_hand_computed_example(out: Path) -> None:
    # dev bigrams: "a b" x3 (2 SUPPORTS, 1 REFUTES), "b ." x1 S, "c d" x1 R; N = 5, p(R) = 2/5.
    analysis = reports.artifacts(out, seed=0, tag=lambda *args: None)
    refutes = analysis["splits"]["dev"]["lmi_bigrams"]["REFUTES"]
    assert [t["term"] for t in refutes] == ["c d", "a b"]
    assert refutes[0]["score"] == pytest.approx(round(1 / 5 * math.log(1 / (2 / 5)), 6))
    assert refutes[1]["score"] == pytest.approx(round(1 / 5 * math.log((1 / 3) / (2 / 5)), 6))
    assert [t["term"] for t in analysis["splits"]["test"]["lmi_bigrams"]["REFUTES"]] == ["mad ,", ", mad", "mad world"]


def test_too_small_splits_are_skipped_not_crashed(out: Path) -> None:
    partition: list = []
    analysis = reports.artifacts(out, seed=0, tag=lambda *args: partition.append(args))
    assert analysis["claim_only_baseline"]["splits"]["dev"]["accuracy"] is None
    assert "skipped" in analysis["claim_only_baseline"]["splits"]["dev"]
    assert "skipped" in analysis["claim_only_baseline"]["splits"]["test"]
    assert partition == []
    assert "n/a" in reports.artifacts_markdown(analysis)


def test_baseline_trained_on_train_tags_each_evaluated_claim(tmp_path: Path) -> None:
    out = tmp_path / "out"
    true = ["The city is famous for its old bridge.", "The river runs through the capital.", "A museum opened in the old town."]
    false = ["The city never had any bridge at all.", "No river has ever run through the capital.", "Nobody ever opened a museum there."]
    train = [(t, "SUPPORTS", f"T{i}", ["e"]) for i, t in enumerate(true * 5)] + [(f, "REFUTES", f"F{i}", ["e"]) for i, f in enumerate(false * 5)]
    write_split(out, "train", train)
    write_split(out, "dev", [("The bridge is old.", "SUPPORTS", "D1", ["e"]), ("There was never any bridge.", "REFUTES", "D2", ["e"])])
    write_split(out, "test", [])
    partition: list = []
    analysis = reports.artifacts(out, seed=0, tag=lambda *args: partition.append(args), max_claims=12)
    baseline = analysis["claim_only_baseline"]
    assert baseline["method"].startswith("trained on train")
    dev = baseline["splits"]["dev"]
    assert dev["easy"] + dev["hard"] == 2 and 0 <= dev["accuracy"] <= 1
    assert [(claim_id, split) for claim_id, split, _ in partition] == [("dev-0", "dev"), ("dev-1", "dev")]
    assert (baseline["train_claims_used"], baseline["train_claims"]) == (12, 30)
    assert "trained on 12 of the 30 train claims" in reports.artifacts_markdown(analysis)
    assert baseline["splits"]["test"]["accuracy"] is None
