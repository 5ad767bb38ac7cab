"""The bounded-memory LMI gives exactly the reference's list (scoring.artifacts)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from foolgame.dataset.lmi import top_bigrams_by_lmi_lean
from scoring.artifacts import top_bigrams_by_lmi

LABELS = ("SUPPORTS", "REFUTES")


def same(examples: list[tuple[str, str]], n: int = 10) -> None:
    lean = top_bigrams_by_lmi_lean(examples, LABELS, n)
    for label in LABELS:
        assert lean[label] == top_bigrams_by_lmi(examples, label, n), label


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
def test_lean_lmi_matches_the_reference_on_tables(examples: list[tuple[str, str]]) -> None:
    same(examples)


@pytest.mark.parametrize("seed", range(5))
def test_lean_lmi_matches_the_reference_on_random_claims(seed: int) -> None:
    rng = random.Random(seed)
    words = ["the", "a", "of", "king", "queen", "never", "only", ",", ".", "first", "war", "city"]
    examples = [
        (" ".join(rng.choice(words) for _ in range(rng.randint(0, 12))), rng.choice(LABELS)) for _ in range(300)
    ]
    same(examples, n=25)


@pytest.mark.slow
def test_lean_lmi_matches_the_reference_on_fm2_dev(fm2_dev: Path) -> None:
    examples = [(r["text"], r["label"]) for r in map(json.loads, fm2_dev.read_text().splitlines())]
    same(examples, n=30)
