"""The database embedding store passes the same contract as the package's own stores."""

from __future__ import annotations

import numpy as np
import pytest

from foolgame.evidence.models import SentenceEmbedding
from foolgame.evidence.services import DatabaseEmbeddingStore
from retrieval.store import text_key
from tests.retrieval.test_store import (  # noqa: F401  (collected here against the database store)
    test_only_new_or_edited_sentences_are_encoded,
    test_second_encoding_of_the_same_texts_encodes_nothing,
    test_vectors_are_kept_per_model_name,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def store() -> DatabaseEmbeddingStore:
    return DatabaseEmbeddingStore()


def test_vectors_round_trip_exactly_and_record_their_dimension(store: DatabaseEmbeddingStore) -> None:
    vector = np.random.default_rng(0).standard_normal(384).astype(np.float32)
    store.put_many("m", {text_key("a"): vector})
    np.testing.assert_array_equal(store.get_many("m", [text_key("a")])[text_key("a")], vector)
    assert SentenceEmbedding.objects.get().dim == 384


def test_storing_a_key_again_overwrites_it_in_place(store: DatabaseEmbeddingStore) -> None:
    store.put_many("m", {text_key("a"): np.zeros(4, dtype=np.float32)})
    store.put_many("m", {text_key("a"): np.ones(4, dtype=np.float32), text_key("b"): np.ones(4, dtype=np.float32)})
    assert SentenceEmbedding.objects.count() == 2
    np.testing.assert_array_equal(store.get_many("m", [text_key("a")])[text_key("a")], np.ones(4))


def test_many_keys_are_read_in_chunks(store: DatabaseEmbeddingStore) -> None:
    vectors = {text_key(str(n)): np.full(2, n, dtype=np.float32) for n in range(1200)}
    store.put_many("m", vectors)
    found = store.get_many("m", list(vectors))
    assert len(found) == 1200
    assert found[text_key("1199")][0] == 1199
