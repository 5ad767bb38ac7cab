"""Helpers for tests of concurrent writers on the real database (PostgreSQL in CI's second
pass; such tests use the ``postgresql_only`` fixture of tests/conftest.py)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

from django.db import close_old_connections, connection

from foolgame.core.errors import ServiceError


def race_results(n: int, action: Callable[[], object]) -> list[object]:
    """Run ``action`` in n threads released at once; each thread's result, or the
    ServiceError it raised (any other exception fails the test)."""
    barrier = threading.Barrier(n)
    results: list[object] = []
    failures: list[BaseException] = []
    lock = threading.Lock()

    def run() -> None:
        outcome: object
        try:
            barrier.wait()
            outcome = action()
        except ServiceError as error:
            outcome = error
        except BaseException as error:  # noqa: BLE001 - reported in the test thread below
            with lock:
                failures.append(error)
            return
        finally:
            close_old_connections()
            connection.close()
        with lock:
            results.append(outcome)

    threads = [threading.Thread(target=run) for _ in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    if failures:
        raise failures[0]
    return results


def race(n: int, action: Callable[[], object]) -> Counter:
    """``race_results`` counted: "ok" for a result, "none" for None, else the error code."""
    return Counter(
        result.code if isinstance(result, ServiceError) else ("ok" if result is not None else "none")
        for result in race_results(n, action)
    )
