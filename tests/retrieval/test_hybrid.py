"""Score fusion: standardising each retriever's scores before mixing them."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.hybrid import standardise


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        # Real differences become z-scores.
        ([1.0, 2.0, 3.0], [-1.224744871, 0.0, 1.224744871]),
        ([10.0, 10.0, 40.0], [-0.707106781, -0.707106781, 1.414213562]),
        # No difference at all: nothing to add to the fused score.
        ([0.5, 0.5, 0.5], [0.0, 0.0, 0.0]),
        ([], []),
        # float32 dot products of one vector with three identical rows (seen on a real CPU):
        # rounding noise must not turn into a full unit of score and reorder ties.
        ([0.83626878, 0.83626878, 0.8362689], [0.0, 0.0, 0.0]),
        ([12.5, 12.5 + 4e-6, 12.5], [0.0, 0.0, 0.0]),
        # A small but real difference in small scores still counts.
        ([0.001, 0.002], [-1.0, 1.0]),
    ],
)
def test_standardise(scores: list[float], expected: list[float]) -> None:
    np.testing.assert_allclose(standardise(np.array(scores, dtype=np.float64)), expected, atol=1e-6)
