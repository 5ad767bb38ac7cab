"""Stored vectors are reused: an unchanged sentence is never encoded twice."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from retrieval.store import FileEmbeddingStore, MemoryEmbeddingStore, encode_with_store, text_key


class CountingEncoder:
    """A deterministic fake that records what it was asked to encode."""

    model_name = "counting"
    dimension = 4

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts: Sequence[str], *, show_progress: bool = False) -> np.ndarray:
        self.seen.extend(texts)
        return np.array([[len(t), t.count("a"), 1.0, 0.0] for t in texts], dtype=np.float32)


@pytest.fixture(params=["memory", "file"])
def store(request: pytest.FixtureRequest, tmp_path: Path):
    if request.param == "memory":
        return MemoryEmbeddingStore()
    return FileEmbeddingStore(tmp_path / "vectors.sqlite3")


def test_second_encoding_of_the_same_texts_encodes_nothing(store) -> None:
    encoder = CountingEncoder()
    first = encode_with_store(encoder, ["alpha", "beta"], store)
    encoder.seen.clear()
    second = encode_with_store(encoder, ["beta", "alpha"], store)
    assert encoder.seen == []
    np.testing.assert_array_equal(second, first[::-1])


def test_only_new_or_edited_sentences_are_encoded(store) -> None:
    encoder = CountingEncoder()
    encode_with_store(encoder, ["alpha", "beta"], store)
    encoder.seen.clear()
    encode_with_store(encoder, ["alpha", "beta, edited", "gamma", "gamma"], store)
    assert encoder.seen == ["beta, edited", "gamma"]


def test_vectors_are_kept_per_model_name(store) -> None:
    store.put_many("model-a", {text_key("x"): np.ones(4, dtype=np.float32)})
    assert store.get_many("model-b", [text_key("x")]) == {}
    assert list(store.get_many("model-a", [text_key("x"), text_key("y")])) == [text_key("x")]


def test_file_store_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite3"
    encode_with_store(CountingEncoder(), ["alpha"], FileEmbeddingStore(path))
    encoder = CountingEncoder()
    encode_with_store(encoder, ["alpha"], FileEmbeddingStore(path))
    assert encoder.seen == []
