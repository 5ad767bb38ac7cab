"""Fixed windows of cache counters (Redis when set): how many times ``kind`` happened for
``parts`` (a user name and an IP, a player id...) in the current window of ``window``
seconds. Used by the login and signup throttles and by the draft checks' cap.

Keys hold a digest of ``parts`` under ``settings.FM2_SIGNUP["THROTTLE_KEY_PREFIX"]``.
"""

from __future__ import annotations

import hashlib
import time

from django.conf import settings
from django.core.cache import cache


def _counter_key(kind: str, parts: tuple[str, ...], window: int) -> tuple[str, int]:
    now = time.time()
    index = int(now // window)
    digest = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]
    retry_after = max(1, int((index + 1) * window - now))
    return f"{settings.FM2_SIGNUP['THROTTLE_KEY_PREFIX']}:{kind}:{digest}:{index}", retry_after


def throttle_count(kind: str, parts: tuple[str, ...], window: int) -> tuple[int, int]:
    """The count so far in this window, and the seconds until the window ends."""
    key, retry_after = _counter_key(kind, parts, window)
    return int(cache.get(key) or 0), retry_after


def throttle_bump(kind: str, parts: tuple[str, ...], window: int) -> tuple[int, int]:
    """Count one more; the new count and the seconds until the window ends."""
    key, retry_after = _counter_key(kind, parts, window)
    cache.add(key, 0, timeout=window + 5)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=window + 5)
        count = 1
    return int(count), retry_after


def throttle_reset(kind: str, parts: tuple[str, ...], window: int) -> None:
    key, _ = _counter_key(kind, parts, window)
    cache.delete(key)
