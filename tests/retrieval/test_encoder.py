"""The fast ONNX path makes the same vectors as sentence-transformers, from local files only."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from retrieval.encoder import Encoder, onnxruntime_quiet

SENTENCES = [
    "Then prime minister Indira Gandhi declared a state of emergency in India.",
    "Stargell was born in Earlsboro, Oklahoma.",
    "A short one.",
    "Björk released Homogenic in 1997 — it was recorded in Spain.",
]


@pytest.mark.slow
def test_int8_onnx_vectors_agree_with_the_torch_path(
    tmp_path_factory: pytest.TempPathFactory, torch_encoder, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture
) -> None:
    cache = tmp_path_factory.mktemp("onnx")
    fast = Encoder(backend="onnx", onnx_cache_dir=cache)
    with caplog.at_level(logging.INFO):
        vectors = fast.encode(SENTENCES)
    # The one-off export says nothing (make run printed hundreds of quantizer lines).
    assert [r.getMessage() for r in caplog.records if "onnxruntime" in r.pathname or r.name in ("fusion_base", "onnx_model")] == []
    assert "Loading weights" not in capfd.readouterr().err
    reference = torch_encoder.encode(SENTENCES)
    assert vectors.shape == reference.shape == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert (vectors * reference).sum(axis=1).min() > 0.97
    # Exported once: the cache now holds the files, and a second encoder reuses them.
    assert sorted(p.name.split("-")[0] for p in Path(cache).glob("*.onnx")) == ["model"] * 3
    assert fast.model_name.endswith("+int8") and torch_encoder.model_name == "sentence-transformers/all-MiniLM-L6-v2"


def test_encoding_nothing_gives_an_empty_matrix(torch_encoder) -> None:
    assert torch_encoder.encode([]).shape == (0, 384)


def test_onnxruntime_quiet_drops_only_the_library_chatter(caplog: pytest.LogCaptureFixture) -> None:
    import importlib

    quantizer = importlib.import_module("onnxruntime.quantization.quantize")  # the package re-exports a function by that name

    def chatter(level: int, logger: str = "") -> None:
        """A record from the library's own files: on the root logger, as the quantizer logs,
        or on a module-named logger such as the optimiser's ``fusion_base``."""
        record = logging.makeLogRecord({"name": logger or "root", "msg": "chatter", "levelno": level, "pathname": quantizer.__file__})
        logging.getLogger(logger).handle(record)

    with caplog.at_level(logging.INFO):
        with onnxruntime_quiet():
            chatter(logging.WARNING)
            chatter(logging.INFO, "fusion_base")
            chatter(logging.ERROR)
            logging.getLogger("fm2").info("ours")
        chatter(logging.WARNING)
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.ERROR, "chatter"), (logging.INFO, "ours"), (logging.WARNING, "chatter"),
    ]
