"""Shared fixtures: the real MiniLM model, loaded once per test session.

The dense tests use the packaged model rather than a fake, because what they protect is
the behaviour of real embeddings; it is small and local, and loading it once keeps the
folder fast.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO_ROOT = Path(__file__).resolve().parents[2]
FM2_DEV = REPO_ROOT / ".." / "shared" / "data" / "fm2" / "dev.jsonl"


@pytest.fixture(scope="session")
def torch_encoder():
    from retrieval.encoder import Encoder

    return Encoder(backend="torch")


@pytest.fixture(scope="session")
def fm2_dev_path() -> Path:
    if not FM2_DEV.exists():
        pytest.skip(f"FM2 dev file not found at {FM2_DEV}")
    return FM2_DEV
