"""Liveness and readiness for a load balancer or an orchestrator (docs/operations.md, Health).

``GET /health/live`` says the process answers (it touches no backing service), and
``GET /health/ready`` whether it should be sent traffic: the database answers, Redis and the
Celery broker answer (when configured), every migration is applied, and this process's models
have finished warming. Both answer JSON, ``{"status": "ok" | "unavailable", "checks": {...}}``,
with 200 or 503, and name no host, user or password: a failed check says only what failed.

The probes are django-health-check's (``Database``, ``Redis``) and two of ours built on its
``HealthCheck`` base (the broker, the migrations, the models). Each run costs a ``SELECT 1``, a
Redis ``PING`` and a broker connection check; the migrations are read from disk only until
they are found applied once (a running process's code cannot gain a migration), so the probe
is cheap enough for a balancer asking every 2 s.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
from typing import Any

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.utils.cache import add_never_cache_headers
from django.views import View
from health_check.base import HealthCheck, HealthCheckResult
from health_check.checks import Database
from health_check.exceptions import ServiceUnavailable

_SHORT = datetime.timedelta(seconds=3)


@dataclasses.dataclass
class CeleryBroker(HealthCheck):
    """The Celery broker accepts a connection (not that a worker runs: a web host serves
    players while the worker hosts restart, and the periodic sweeps catch up)."""

    timeout: datetime.timedelta = dataclasses.field(default=_SHORT, repr=False)

    def run(self) -> None:
        from foolgame.celery import app

        try:
            with app.connection_for_write() as connection:
                connection.ensure_connection(max_retries=0, timeout=self.timeout.total_seconds())
        except Exception as error:  # kombu raises the transport's own errors (redis, OSError...)
            raise ServiceUnavailable("the broker does not answer") from error


@dataclasses.dataclass
class Migrations(HealthCheck):
    """Every migration of the code this process runs is applied to its database."""

    def run(self) -> None:
        global _migrations_applied
        if _migrations_applied:
            return
        from django.db import DatabaseError, connection
        from django.db.migrations.executor import MigrationExecutor

        try:
            executor = MigrationExecutor(connection)
            pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
        except DatabaseError as error:
            raise ServiceUnavailable("the migrations could not be read") from error
        finally:
            connection.close()
        if pending:
            raise ServiceUnavailable(f"{len(pending)} migrations not applied")
        _migrations_applied = True


_migrations_applied = False


@dataclasses.dataclass
class DatabasePing(Database):
    """django-health-check's ``SELECT 1``, its failure said without the driver's words (which
    may name the host)."""

    timeout: datetime.timedelta = dataclasses.field(default=_SHORT, repr=False)

    def run(self) -> None:
        from django.db import connections

        connection = connections[self.alias]
        try:
            if connection.settings_dict.get("OPTIONS", {}).get("pool"):
                # With the pool, a connection is waited for up to DB_POOL_TIMEOUT (10 s) before
                # a request gives up: with PostgreSQL down, every probe (one each 2 s) held a
                # thread that long and answered after the balancer's check had timed out. The
                # probe waits its own few seconds.
                pool = connection.pool
                pool.open()  # as Django does before each connection it takes (a no-op once open)
                with pool.connection(timeout=self.timeout.total_seconds()) as raw:
                    raw.execute("SELECT 1")
                return
            super().run()
        except Exception as error:  # the driver's and the pool's own errors (PoolTimeout, OperationalError)
            raise ServiceUnavailable("the database does not answer") from error


@dataclasses.dataclass
class ModelsWarm(HealthCheck):
    """This process has finished loading its models (the encoder and the active verifier) when
    it started (FM2_WARM_MODELS): a web process just started answers at once, but the first
    claim saved waited seconds for the load."""

    async def run(self) -> None:
        from foolgame.serving import models_warm_state

        if models_warm_state() == "warming":
            raise ServiceUnavailable("the models are still loading")


@dataclasses.dataclass
class RedisPing(HealthCheck):
    """Redis answers a PING (the channel layer, the cache and the broker's server)."""

    timeout: datetime.timedelta = dataclasses.field(default=_SHORT, repr=False)

    async def run(self) -> None:
        from health_check.contrib.redis import Redis
        from redis.asyncio import Redis as Client

        seconds = self.timeout.total_seconds()
        probe = Redis(client_factory=lambda: Client.from_url(settings.REDIS_URL, socket_timeout=seconds, socket_connect_timeout=seconds))
        try:
            await probe.run()
        except Exception as error:
            raise ServiceUnavailable("Redis does not answer") from error


def readiness_checks() -> dict[str, HealthCheck]:
    """The checks of /health/ready, by the name the JSON gives them."""
    checks: dict[str, HealthCheck] = {"database": DatabasePing(), "migrations": Migrations()}
    if settings.REDIS_URL:
        checks["redis"] = RedisPing()
        checks["broker"] = CeleryBroker()
    checks["models"] = ModelsWarm()
    return checks


async def _run(checks: dict[str, HealthCheck]) -> dict[str, HealthCheckResult]:
    results = await asyncio.gather(*(check.get_result() for check in checks.values()))
    return dict(zip(checks, results))


def _answer(results: dict[str, HealthCheckResult]) -> JsonResponse:
    ok = not any(result.error for result in results.values())
    body: dict[str, Any] = {
        "status": "ok" if ok else "unavailable",
        # A failed check's message is ours or django-health-check's short one (never the
        # driver's, which names the host and user).
        "checks": {name: "ok" if result.error is None else result.error.message for name, result in results.items()},
    }
    response = JsonResponse(body, status=200 if ok else 503)
    add_never_cache_headers(response)
    # A 503 here is an answer, not a server error: Django's request log would write one error
    # line per probe (every 2 s per balancer) for as long as a host is not ready.
    response._has_been_logged = True  # type: ignore[attr-defined]
    return response


class LiveView(View):
    """The process answers: nothing is checked past the event loop running this view."""

    async def get(self, request: HttpRequest) -> JsonResponse:
        return _answer({})


async def _ready() -> dict[str, HealthCheckResult]:
    """Every readiness check at once, but the migrations once the database answered: they
    cannot be read without it, and asking would wait for a connection as long as a request
    does (DB_POOL_TIMEOUT)."""
    checks = readiness_checks()
    migrations = checks.pop("migrations")
    results = await _run(checks)
    if results["database"].error is None:
        results["migrations"] = await migrations.get_result()
    else:
        results["migrations"] = HealthCheckResult(check=migrations, error=ServiceUnavailable("the migrations could not be read"), time_taken=0.0)
    return {name: results[name] for name in ("database", "migrations", *checks) if name in results}


class ReadyView(View):
    """Every readiness check passes: 200, else 503 naming the checks that failed."""

    async def get(self, request: HttpRequest) -> JsonResponse:
        return _answer(await _ready())
