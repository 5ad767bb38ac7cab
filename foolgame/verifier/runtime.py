"""The verifier versions loaded in this process.

Loading the default verifier means loading the MiniLM encoder (about 2 s, or 15 s on a
machine that never exported it to ONNX); a folder model is exported to ONNX once. A request
never waits for that: the first one that needs a version starts loading it on a thread of
its own and is told the verdict is pending (``FM2_VERIFIER["BLOCKING_LOAD"]`` loads it in
the caller instead: the worker, commands and tests).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

from django.conf import settings

from foolgame.evidence.services import encoder_get
from foolgame.verifier.models import VerifierVersion

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_loaded: dict[tuple[int, str], Any] = {}  # (version id, fingerprint of its weights) -> verifier
_loading: set[tuple[int, str]] = set()
_failed: dict[tuple[int, str], float] = {}  # a version that failed to load is tried again after RETRY_SECONDS
RETRY_SECONDS = 60.0
KEEP = 4
"""Versions kept loaded per process at most (the active one, the one it replaced, evaluations)."""


def _key(version: VerifierVersion) -> tuple[int, str]:
    return (version.pk, version.fingerprint)


def _weights(version: VerifierVersion) -> bytes | None:
    """The head's stored weights (read in the caller's thread: the loader touches no database)."""
    if version.kind != VerifierVersion.Kind.HEAD:
        return None
    if "blob" not in version.get_deferred_fields() and version.blob is not None:
        return bytes(version.blob)
    return bytes(VerifierVersion.objects.values_list("blob", flat=True).get(pk=version.pk))


def build(version: VerifierVersion, blob: bytes | None = None) -> Any:
    """A ready verifier for ``version`` (no cache)."""
    from retrieval.verifier import HeadVerifier, NliFolderVerifier

    config = settings.FM2_VERIFIER
    if version.kind == VerifierVersion.Kind.HEAD:
        return HeadVerifier.loads(blob if blob is not None else _weights(version) or b"", encoder_get())
    return NliFolderVerifier(
        version.model_path,
        label_map=config.get("LABEL_MAP") or None,
        neutral=config.get("NEUTRAL", "drop"),
        onnx_cache_dir=Path(settings.FM2_RETRIEVAL["ONNX_CACHE_DIR"]),
    )


def loaded(version: VerifierVersion, *, wait: bool | None = None) -> Any | None:
    """The loaded verifier of ``version``; None while it loads in the background (``wait``
    False, the default in the web process), started by this call if nobody started it."""
    key = _key(version)
    with _lock:
        if key in _loaded:
            return _loaded[key]
    if wait is None:
        wait = bool(settings.FM2_VERIFIER.get("BLOCKING_LOAD"))
    if wait:
        verifier = build(version)
        _remember(key, verifier)
        return verifier
    with _lock:
        if key in _loading or time.monotonic() - _failed.get(key, -RETRY_SECONDS) < RETRY_SECONDS:
            return None
        _loading.add(key)
    try:
        blob = _weights(version)
    except Exception:
        with _lock:
            _loading.discard(key)
        raise
    threading.Thread(target=_load_in_background, args=(version, key, blob), name=f"fm2-verifier-v{version.number}", daemon=True).start()
    return None


def _load_in_background(version: VerifierVersion, key: tuple[int, str], blob: bytes | None) -> None:
    try:
        verifier = build(version, blob)
        _remember(key, verifier)
        verifier.verdicts([("warm up", ["warm up"])])  # the first call builds ONNX Runtime's plans
    except Exception:
        logger.exception("could not load verifier version %s", version.number)
        with _lock:
            _failed[key] = time.monotonic()
    finally:
        with _lock:
            _loading.discard(key)


def failed(version: VerifierVersion) -> bool:
    """Did loading ``version`` fail in the last RETRY_SECONDS (e.g. a head stored by an older
    feature list: retrain it)?"""
    with _lock:
        return time.monotonic() - _failed.get(_key(version), -RETRY_SECONDS) < RETRY_SECONDS


def remember(version: VerifierVersion, verifier: Any) -> None:
    """Keep a verifier this process just built (a trainer) for ``version``."""
    _remember(_key(version), verifier)


def _remember(key: tuple[int, str], verifier: Any) -> None:
    with _lock:
        _loaded[key] = verifier
        while len(_loaded) > KEEP:
            _loaded.pop(next(iter(_loaded)))


def forget() -> None:
    """Drop every loaded version (tests)."""
    with _lock:
        _loaded.clear()
