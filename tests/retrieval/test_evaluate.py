"""The evaluation CLI and the FM2 reader, on a tiny file written by the test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from retrieval import evaluate
from retrieval.fm2 import load_fm2


def evidence(text: str, header: str = "Plot") -> dict[str, str]:
    return {"text": text, "section_header": header}


ROWS = [
    {
        "id": "c1",
        "text": "Gandhi was released in India in November 1982.",
        "label": "SUPPORTS",
        "wikipedia_page": "Gandhi (film)",
        "gold_evidence": [evidence("Gandhi premiered in New Delhi, India on 30 November 1982.")],
        "retrieved_evidence": [
            evidence("Due to the running time, it could only be shown three times a day."),
            evidence("Gandhi premiered in New Delhi, India on 30 November 1982."),
        ],
    },
    {
        "id": "c2",
        "text": "The film could only be screened three times daily because it was so long.",
        "label": "SUPPORTS",
        "wikipedia_page": "Gandhi (film)",
        "gold_evidence": [evidence("Due to the running time, it could only be shown three times a day.")],
        "retrieved_evidence": [evidence("Richard Attenborough directed the film.")],
    },
    {
        "id": "c3",
        "text": "Willie Stargell was born in Oklahoma.",
        "label": "SUPPORTS",
        "wikipedia_page": "Willie Stargell",
        "gold_evidence": [evidence("Stargell was born in Earlsboro, Oklahoma.", "Early life")],
        "retrieved_evidence": [evidence("He played for the Pirates.", "Career")],
    },
]


@pytest.fixture
def fm2_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in ROWS) + "\n", encoding="utf-8")
    return path


def test_pools_are_the_union_of_evidence_deduplicated_in_first_seen_order(fm2_file: Path) -> None:
    dataset = load_fm2(fm2_file)
    film = [doc.text for doc in dataset.pools["Gandhi (film)"]]
    assert film == [
        "Gandhi premiered in New Delhi, India on 30 November 1982.",
        "Due to the running time, it could only be shown three times a day.",
        "Richard Attenborough directed the film.",
    ]
    assert all(doc.page_title == "Gandhi (film)" for doc in dataset.pools["Gandhi (film)"])
    assert len(dataset.corpus()) == 5
    assert len({doc.id for doc in dataset.corpus()}) == 5


@pytest.mark.parametrize("scope", ["page", "corpus"])
def test_cli_prints_a_table_then_one_json_line(
    fm2_file: Path, scope: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert evaluate.main(["--fm2", str(fm2_file), "--retriever", "lexical", "--scope", scope, "--k", "1,5,10"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    result = json.loads(out[-1])
    assert set(result) == {
        "retriever", "scope", "queries", "recall@1", "recall@5", "recall@10",
        "r_precision", "mrr", "latency_ms_p50", "latency_ms_p95", "encode_sentences_per_s",
    }
    assert result["queries"] == 3 and result["scope"] == scope
    # Every pool here holds at most 3 sentences, so every gold is in the top 5.
    assert result["recall@5"] == 100.0
    assert any("recall@1" in line for line in out[:-1])


def test_cli_runs_the_dense_and_hybrid_retrievers(fm2_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for retriever in ("dense", "hybrid"):
        assert evaluate.main(["--fm2", str(fm2_file), "--retriever", retriever, "--backend", "torch", "--k", "1"]) == 0
        result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        # The paraphrased claim c2 shares few words with its gold; meaning finds it.
        assert result["recall@1"] == 100.0
        assert result["encode_sentences_per_s"] > 0


def test_cli_refuses_a_missing_file(tmp_path: Path) -> None:
    assert evaluate.main(["--fm2", str(tmp_path / "none.jsonl")]) == 2


def test_lexical_recall_on_the_fm2_dev_file(fm2_dev_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The authoring retriever stays at least as good as the paper-style baseline (57.9)."""
    assert evaluate.main(["--fm2", str(fm2_dev_path), "--retriever", "lexical", "--k", "5,10"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["queries"] == 1169
    assert result["recall@5"] >= 57.0
