"""The fast ONNX path makes the same vectors as sentence-transformers, from local files only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from retrieval.encoder import Encoder

SENTENCES = [
    "Then prime minister Indira Gandhi declared a state of emergency in India.",
    "Stargell was born in Earlsboro, Oklahoma.",
    "A short one.",
    "Björk released Homogenic in 1997 — it was recorded in Spain.",
]


@pytest.mark.slow
def test_int8_onnx_vectors_agree_with_the_torch_path(tmp_path_factory: pytest.TempPathFactory, torch_encoder) -> None:
    cache = tmp_path_factory.mktemp("onnx")
    fast = Encoder(backend="onnx", onnx_cache_dir=cache)
    vectors = fast.encode(SENTENCES)
    reference = torch_encoder.encode(SENTENCES)
    assert vectors.shape == reference.shape == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert (vectors * reference).sum(axis=1).min() > 0.97
    # Exported once: the cache now holds the files, and a second encoder reuses them.
    assert sorted(p.name.split("-")[0] for p in Path(cache).glob("*.onnx")) == ["model"] * 3
    assert fast.model_name.endswith("+int8") and torch_encoder.model_name == "sentence-transformers/all-MiniLM-L6-v2"


def test_encoding_nothing_gives_an_empty_matrix(torch_encoder) -> None:
    assert torch_encoder.encode([]).shape == (0, 384)
