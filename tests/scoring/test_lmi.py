"""scoring.artifacts' LMI gives exactly the lists of the formula counted in plain dicts.

``reference`` is the formula as first written (bigrams counted as strings in dicts; it
needed about 270 MB for 76,000 claims of a wide vocabulary, so the export could not use
it): the bounded-memory function must give its terms, scores, counts and tie order.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from pathlib import Path

import pytest

from scoring.artifacts import ScoredTerm, bigrams, tokenize, top_bigrams_by_lmi, top_bigrams_by_lmi_per_label

LABELS = ("SUPPORTS", "REFUTES")


def reference(examples: list[tuple[str, str]], label: str, n: int) -> list[ScoredTerm]:
    joint: Counter[tuple[str, str]] = Counter()
    totals: Counter[str] = Counter()
    per_label: Counter[str] = Counter()
    examples_with_term: Counter[str] = Counter()
    label_examples = 0
    for text, example_label in examples:
        grams = bigrams(tokenize(text))
        for gram in grams:
            joint[(gram, example_label)] += 1
            totals[gram] += 1
        per_label[example_label] += len(grams)
        if example_label == label:
            label_examples += 1
            examples_with_term.update(set(grams))
    total = sum(per_label.values())
    if total == 0 or per_label[label] == 0:
        return []
    p_label = per_label[label] / total
    scores = [
        (gram, count / total * math.log(count / totals[gram] / p_label))
        for (gram, gram_label), count in joint.items()
        if gram_label == label
    ]
    ranked = sorted(scores, key=lambda item: -item[1])[:n]  # stable: ties keep first occurrence
    return [
        ScoredTerm(
            term=term,
            score=score,
            count_with_label=joint[(term, label)],
            count=totals[term],
            label_example_share=examples_with_term[term] / label_examples if label_examples else 0.0,
        )
        for term, score in ranked
    ]


def same(examples: list[tuple[str, str]], n: int = 10) -> None:
    per_label = top_bigrams_by_lmi_per_label(examples, LABELS, n)
    for label in LABELS:
        expected = reference(examples, label, n)
        assert per_label[label] == expected, label
        assert top_bigrams_by_lmi(examples, label, n) == expected, label


@pytest.mark.parametrize(
    "examples",
    [
        [],
        [("a b", "SUPPORTS")],
        [("a b", "SUPPORTS"), ("a b", "SUPPORTS"), ("c d", "REFUTES"), ("a b", "REFUTES")],
        [("Mad, mad, mad world", "REFUTES"), ("It's a mad world", "SUPPORTS"), ("One", "REFUTES")],
        [("x y z", "SUPPORTS"), ("z y x", "REFUTES"), ("y z x", "SUPPORTS"), ("x", "SUPPORTS")],
    ],
)
def test_lmi_matches_the_plain_formula_on_tables(examples: list[tuple[str, str]]) -> None:
    same(examples)


@pytest.mark.parametrize("seed", range(5))
def test_lmi_matches_the_plain_formula_on_random_claims(seed: int) -> None:
    rng = random.Random(seed)
    words = ["the", "a", "of", "king", "queen", "never", "only", ",", ".", "first", "war", "city"]
    examples = [
        (" ".join(rng.choice(words) for _ in range(rng.randint(0, 12))), rng.choice(LABELS)) for _ in range(300)
    ]
    same(examples, n=25)


@pytest.mark.slow
def test_lmi_matches_the_plain_formula_on_fm2_dev(fm2_dev: Path) -> None:
    examples = [(r["text"], r["label"]) for r in map(json.loads, fm2_dev.read_text().splitlines())]
    same(examples, n=30)
