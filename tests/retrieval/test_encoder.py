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


_BUILD_WHEN_TOLD = """
import sys, time
from pathlib import Path
go = Path(sys.argv[2])
while not go.exists():  # every process is started and waits: then all build at once
    time.sleep(0.01)
from retrieval.encoder import Encoder
vectors = Encoder(backend="onnx", onnx_cache_dir=sys.argv[1]).encode(["Stargell was born in Earlsboro, Oklahoma."])
print(vectors.shape)
"""


@pytest.mark.slow
def test_processes_starting_together_on_an_empty_cache_all_get_the_model(tmp_path: Path) -> None:
    """The web role's workers start together on a fresh host: each exports the model to ONNX
    if it is missing. They once raced on the quantizer's shape-inferred copy (one died with
    FileNotFoundError); the cache's build lock makes one build while the others wait."""
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    cache, go = tmp_path / "onnx", tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(repo), "HF_HUB_OFFLINE": "1"}
    processes = [
        subprocess.Popen([sys.executable, "-c", _BUILD_WHEN_TOLD, str(cache), str(go)], cwd=repo, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    go.touch()
    results = [(p.wait(timeout=600), *p.communicate()) for p in processes]
    assert [(code, out.strip()) for code, out, _ in results] == [(0, "(1, 384)")] * 3, [err[-2000:] for _, _, err in results]
    # One raw export, one fused graph, one int8 file; no temporary or shape-inferred copy left.
    names = sorted(p.name for p in cache.iterdir() if not p.name.startswith("."))
    assert [name.rsplit("-", 1)[-1].split(".", 1)[-1] for name in names] == ["int8.onnx", "onnx", "raw.onnx"], names
