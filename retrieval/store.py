"""Where sentence embeddings are kept between runs, so a sentence is encoded once per model.

Vectors are keyed by model name and a hash of the exact text that was encoded: an edited
sentence gets a new key (and is re-encoded), an unchanged one is found again even if its
database id changed. Django implements ``EmbeddingStore`` over its own table; this module
ships an in-memory store for tests and a SQLite file store for the evaluation CLI,
benchmarks and a laptop.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from retrieval.encoder import Matrix, TextEncoder


def text_key(text: str) -> str:
    """Content key of an encoded text: the SHA-256 of its UTF-8 bytes, in hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingStore(Protocol):
    """Persistent vectors per (model name, text key)."""

    def get_many(self, model_name: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors among ``keys``; missing keys are simply absent."""
        ...

    def put_many(self, model_name: str, vectors: Mapping[str, np.ndarray]) -> None:
        """Store (or overwrite) vectors."""
        ...


class MemoryEmbeddingStore:
    """A dict, for tests and one-off runs."""

    def __init__(self) -> None:
        self._vectors: dict[tuple[str, str], np.ndarray] = {}

    def get_many(self, model_name: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for key in keys:
            vector = self._vectors.get((model_name, key))
            if vector is not None:
                found[key] = vector
        return found

    def put_many(self, model_name: str, vectors: Mapping[str, np.ndarray]) -> None:
        for key, vector in vectors.items():
            self._vectors[(model_name, key)] = np.asarray(vector, dtype=np.float32)

    def __len__(self) -> int:
        return len(self._vectors)


class FileEmbeddingStore:
    """Vectors in one SQLite file (float32 blobs), safe to share between processes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._connection() as connection:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS embedding ("
                " model TEXT NOT NULL, key TEXT NOT NULL, vector BLOB NOT NULL,"
                " PRIMARY KEY (model, key))"
            )

    def _connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self.path, timeout=30)
            self._local.connection = connection
        return connection

    def get_many(self, model_name: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        connection = self._connection()
        # SQLite limits the number of parameters per statement.
        for start in range(0, len(keys), 500):
            chunk = list(keys[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = connection.execute(
                f"SELECT key, vector FROM embedding WHERE model = ? AND key IN ({marks})",
                [model_name, *chunk],
            )
            for key, blob in rows:
                found[key] = np.frombuffer(blob, dtype=np.float32).copy()
        return found

    def put_many(self, model_name: str, vectors: Mapping[str, np.ndarray]) -> None:
        with self._connection() as connection:
            connection.executemany(
                "INSERT OR REPLACE INTO embedding (model, key, vector) VALUES (?, ?, ?)",
                [
                    (model_name, key, np.asarray(vector, dtype=np.float32).tobytes())
                    for key, vector in vectors.items()
                ],
            )

    def __len__(self) -> int:
        (count,) = self._connection().execute("SELECT COUNT(*) FROM embedding").fetchone()
        return int(count)


def encode_with_store(
    encoder: TextEncoder,
    texts: Sequence[str],
    store: EmbeddingStore | None = None,
    *,
    show_progress: bool = False,
) -> Matrix:
    """Embeddings of ``texts``, encoding only those the store does not already hold.

    Duplicated texts are encoded once. New vectors are written back to the store.
    """
    if store is None:
        return encoder.encode(texts, show_progress=show_progress)
    keys = [text_key(text) for text in texts]
    known = store.get_many(encoder.model_name, list(dict.fromkeys(keys)))
    missing: dict[str, str] = {}
    for key, text in zip(keys, texts):
        if key not in known and key not in missing:
            missing[key] = text
    if missing:
        fresh = encoder.encode(list(missing.values()), show_progress=show_progress)
        new_vectors = dict(zip(missing.keys(), fresh))
        store.put_many(encoder.model_name, new_vectors)
        known.update(new_vectors)
    matrix = np.zeros((len(texts), encoder.dimension), dtype=np.float32)
    for row, key in enumerate(keys):
        matrix[row] = known[key]
    return matrix
