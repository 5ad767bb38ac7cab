"""Dataset artifact analysis (scoring/artifacts.py), down to the FM2 paper's own numbers."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from scoring.artifacts import (
    bigrams,
    claim_length_by_label,
    claim_only_baseline,
    cross_validated_accuracy,
    examples_from_records,
    table1_stats,
    tokenize,
    top_bigrams_by_lmi,
    top_words_by_pmi,
)

DEV = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "fm2" / "dev.jsonl"

PAPER_DEV_REFUTES_BIGRAMS = [
    "by a",
    "mad ,",
    ", mad",
    "on the",
    "innocent iii",
    "statue of",
    "for his",
    "pope innocent",
    "mary ,",
    "queen of",
]


@pytest.fixture(scope="module")
def dev_records() -> list[dict[str, Any]]:
    if not DEV.exists():
        pytest.skip(f"FM2 dev data not found at {DEV}")
    with DEV.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


# --- tokens ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("It's a Mad, Mad World.", ["it", "'", "s", "a", "mad", ",", "mad", "world", "."]),
        ("Pope Innocent III", ["pope", "innocent", "iii"]),
        ("E=mc^2", ["e", "=", "mc", "^", "2"]),
        ("1,000 (approx.)", ["1", ",", "000", "(", "approx", ".", ")"]),
        ("don’t", ["don", "’", "t"]),
        ("Café  Zürich", ["café", "zürich"]),
        ("", []),
        ("   ", []),
    ],
)
def test_tokenize_lowercases_and_splits_off_each_punctuation_mark(
    text: str, tokens: list[str]
) -> None:
    assert tokenize(text) == tokens


def test_bigrams_pair_neighbours() -> None:
    assert bigrams(["a", "b", "c"]) == ["a b", "b c"]
    assert bigrams(["a"]) == []


# --- LMI -------------------------------------------------------------------------------

# Bigrams: R has "a b", "b c", "b c"; S has "a b". N = 4, p(R) = 3/4, p(S) = 1/4.
TINY = [("A b c", "R"), ("a b", "S"), ("b c", "R")]


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        # "b c": p(w,R) = 2/4, p(R|w) = 1        -> 0.5 * log(1 / 0.75)
        # "a b": p(w,R) = 1/4, p(R|w) = 1/2      -> 0.25 * log(0.5 / 0.75) < 0
        ("R", [("b c", 0.5 * math.log(4 / 3), 2, 2), ("a b", 0.25 * math.log(2 / 3), 1, 2)]),
        # "a b": p(w,S) = 1/4, p(S|w) = 1/2      -> 0.25 * log(0.5 / 0.25)
        ("S", [("a b", 0.25 * math.log(2), 1, 2)]),
        ("X", []),
    ],
)
def test_lmi_by_hand(label: str, expected: list[tuple[str, float, int, int]]) -> None:
    ranked = top_bigrams_by_lmi(TINY, label)
    assert [(t.term, t.count_with_label, t.count) for t in ranked] == [
        (term, with_label, count) for term, _, with_label, count in expected
    ]
    assert [t.score for t in ranked] == pytest.approx([score for _, score, _, _ in expected])


def test_lmi_ties_keep_first_occurrence_order() -> None:
    examples = [("x y z", "R"), ("p q", "R"), ("m n", "S")]
    assert [t.term for t in top_bigrams_by_lmi(examples, "R")] == ["x y", "y z", "p q"]
    reordered = [("p q", "R"), ("x y z", "R"), ("m n", "S")]
    assert [t.term for t in top_bigrams_by_lmi(reordered, "R")] == ["p q", "x y", "y z"]


def test_lmi_counts_occurrences_and_shares_claims() -> None:
    ranked = top_bigrams_by_lmi([("go go go", "R"), ("stop", "R"), ("go on", "S")], "R", n=1)
    assert ranked[0].term == "go go"
    assert ranked[0].count_with_label == 2
    assert ranked[0].label_example_share == 0.5


def test_lmi_of_nothing_is_empty() -> None:
    assert top_bigrams_by_lmi([], "R") == []
    assert top_bigrams_by_lmi([("one", "R")], "R") == []


@pytest.mark.slow
def test_fm2_dev_refutes_bigrams_match_the_paper_appendix(
    dev_records: list[dict[str, Any]],
) -> None:
    ranked = top_bigrams_by_lmi(examples_from_records(dev_records), "REFUTES", n=10)
    assert [t.term for t in ranked] == PAPER_DEV_REFUTES_BIGRAMS
    scores = [t.score for t in ranked]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.slow
def test_fm2_dev_supports_bigrams(dev_records: list[dict[str, Any]]) -> None:
    ranked = top_bigrams_by_lmi(examples_from_records(dev_records), "SUPPORTS", n=10)
    assert [t.term for t in ranked] == [
        "in the",
        "in which",
        "of a",
        "book of",
        "' s",
        ". c",
        "the scarlet",
        "scarlet letter",
        "the white",
        "and his",
    ]


# --- PMI -------------------------------------------------------------------------------

# Words: (x,R)=1, (y,R)=1, (x,S)=1, (y,S)=0; |V| = 2, |L| = 2.
PMI_TINY = [("x y", "R"), ("x", "S")]


@pytest.mark.parametrize(
    ("smoothing", "expected"),
    [
        # add-1: total 3 + 1*2*2 = 7; p(y,R) = 2/7, p(y) = 3/7, p(R) = 4/7; p(x,R) = 2/7, p(x) = 4/7
        (1.0, [("y", math.log(7 / 6)), ("x", math.log(7 / 8))]),
        # raw: p(y,R) = 1/3, p(y) = 1/3, p(R) = 2/3; p(x,R) = 1/3, p(x) = 2/3
        (0.0, [("y", math.log(3 / 2)), ("x", math.log(3 / 4))]),
    ],
)
def test_pmi_by_hand(smoothing: float, expected: list[tuple[str, float]]) -> None:
    ranked = top_words_by_pmi(PMI_TINY, "R", smoothing=smoothing)
    assert [t.term for t in ranked] == [term for term, _ in expected]
    assert [t.score for t in ranked] == pytest.approx([score for _, score in expected])


def test_pmi_smoothing_favours_frequent_words_over_rare_ones() -> None:
    examples = [("rare", "R")] + [("common filler", "R")] * 50 + [("filler", "S")] * 50
    assert top_words_by_pmi(examples, "R", n=1, smoothing=0)[0].term == "rare"
    assert top_words_by_pmi(examples, "R", n=1, smoothing=100)[0].term == "common"


def test_pmi_ranks_words_not_punctuation() -> None:
    ranked = top_words_by_pmi([("no !", "R"), ("yes", "S")], "R", n=5, smoothing=0)
    assert [t.term for t in ranked][:1] == ["no"]
    assert "!" not in {t.term for t in ranked}


# --- claim-only baseline ---------------------------------------------------------------


def give_away_claims(count: int, offset: int = 0) -> list[tuple[str, str]]:
    """Claims whose label a single word gives away (an artifact), topics varied."""
    topics = ["river", "castle", "singer", "planet", "novel", "bridge", "league", "poet"]
    examples = []
    for i in range(offset, offset + count):
        topic = topics[i % len(topics)]
        if i % 2:
            examples.append((f"The {topic} number {i} was never built in spring", "REFUTES"))
        else:
            examples.append((f"The {topic} number {i} was first built in spring", "SUPPORTS"))
    return examples


def test_baseline_finds_a_give_away_word_on_held_out_claims() -> None:
    result = claim_only_baseline(
        give_away_claims(80), {"dev": give_away_claims(40, offset=80), "empty": []}
    )
    assert result.accuracy["dev"] == 1.0
    assert result.correct["dev"] == [True] * 40
    assert result.predictions["dev"][:2] == ["SUPPORTS", "REFUTES"]
    assert result.correct["empty"] == []
    assert math.isnan(result.accuracy["empty"])


def test_baseline_cross_validates_each_split_when_there_is_no_train() -> None:
    dev = give_away_claims(60)
    result = claim_only_baseline([], {"dev": dev}, folds=3, seed=1)
    assert len(result.correct["dev"]) == len(dev)
    assert result.accuracy["dev"] == pytest.approx(sum(result.correct["dev"]) / len(dev))
    assert result.accuracy["dev"] > 0.9
    assert cross_validated_accuracy(dev, folds=3, seed=1) == result.accuracy["dev"]


def test_cross_validation_is_deterministic_for_a_seed() -> None:
    noise = [("Unrelated noise claim", label) for label in ["SUPPORTS", "REFUTES"] * 10]
    dev = give_away_claims(30) + noise
    assert cross_validated_accuracy(dev, seed=3) == cross_validated_accuracy(dev, seed=3)


def test_grouped_cross_validation_needs_one_group_per_claim() -> None:
    with pytest.raises(ValueError):
        cross_validated_accuracy(give_away_claims(20), groups=["page"] * 3)


def test_cross_validation_needs_two_labels() -> None:
    with pytest.raises(ValueError):
        cross_validated_accuracy([("a claim", "SUPPORTS")] * 10)


@pytest.mark.slow
def test_fm2_dev_claims_give_their_labels_away_only_through_pages(
    dev_records: list[dict[str, Any]],
) -> None:
    examples = examples_from_records(dev_records)
    pages = [record["wikipedia_page"] for record in dev_records]
    mixed = cross_validated_accuracy(examples, seed=0)
    by_page = cross_validated_accuracy(examples, seed=0, groups=pages)
    # Folds that mix pages learn topics: near the paper's claim-only BERT (61.9 on dev).
    assert 0.58 <= mixed <= 0.66
    # Page-disjoint folds leave the claims little to give away: near chance (51.0%).
    assert 0.47 <= by_page <= 0.56
    assert by_page < mixed


# --- Table 1 and lengths ---------------------------------------------------------------


def test_table1_by_hand() -> None:
    records = [
        {
            "text": "A b.",
            "label": "SUPPORTS",
            "wikipedia_page": "P",
            "gold_evidence": [{"text": "x y z"}],
        },
        {
            "text": "C",
            "label": "REFUTES",
            "wikipedia_page": "P",
            "gold_evidence": [{"text": "u"}, {"text": "v w"}],
        },
        {"text": "D e f", "label": "SUPPORTS", "wikipedia_page": "Q", "gold_evidence": []},
    ]
    stats = table1_stats(records)
    assert stats.claims == 3
    assert stats.supports_percent == 66.7
    assert stats.pages == 2
    assert stats.claim_tokens == pytest.approx((3 + 1 + 3) / 3)
    assert stats.evidence_tokens == pytest.approx((3 + 1 + 2) / 3)
    assert table1_stats(records, tokenizer=str.split).claim_tokens == pytest.approx(6 / 3)


def test_table1_of_nothing() -> None:
    stats = table1_stats([])
    assert (stats.claims, stats.pages, stats.supports_percent) == (0, 0, 0.0)


@pytest.mark.slow
def test_fm2_dev_table1_matches_the_paper(dev_records: list[dict[str, Any]]) -> None:
    stats = table1_stats(dev_records)
    assert (stats.claims, stats.supports_percent, stats.pages) == (1169, 51.0, 209)
    # The paper prints 15 and 31 tokens; it seems to truncate.
    assert int(stats.claim_tokens) == 15
    assert int(stats.evidence_tokens) == 31


def test_claim_length_by_label() -> None:
    lengths = claim_length_by_label([("a b c", "S"), ("a", "S"), ("a b, c d", "R")])
    assert list(lengths) == ["R", "S"]
    assert lengths["S"].claims == 2
    assert lengths["S"].mean == 2.0
    assert lengths["S"].median == 2.0
    assert (lengths["S"].minimum, lengths["S"].maximum) == (1, 3)
    assert lengths["S"].histogram == {1: 1, 3: 1}
    assert lengths["R"].mean == 5.0  # the comma is a token
    assert lengths["R"].stdev == 0.0
