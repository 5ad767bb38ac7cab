"""How the web server is run: the uvicorn flags the Procfile uses, in one place that the
tests' and benchmarks' servers read too, so they run what production runs."""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings


def max_frame_bytes() -> int:
    """FM2_WS["MAX_FRAME_BYTES"]; benchmarks that never load Django read the same variable."""
    if settings.configured:
        return int(settings.FM2_WS["MAX_FRAME_BYTES"])
    return int(os.environ.get("FM2_WS_MAX_FRAME_BYTES", "4096"))


def forwarded_allow_ips() -> str:
    """The addresses whose ``X-Forwarded-For`` and ``X-Forwarded-Proto`` uvicorn believes:
    ``FORWARDED_ALLOW_IPS``, and none unless it is set. uvicorn's own default trusts
    127.0.0.1, so any client on the server's host could forge its address past every
    per-address throttle (issue 36: 22 signups of 22 from forged addresses)."""
    return os.environ.get("FORWARDED_ALLOW_IPS", "")


def uvicorn_flags() -> list[str]:
    """The command-line flags after ``uvicorn foolgame.asgi:application`` (host, port,
    workers and ``--proxy-headers`` aside). The Procfile's web line carries the same flags."""
    return [
        "--forwarded-allow-ips", forwarded_allow_ips(),
        "--lifespan", "off",
        "--ws", "websockets-sansio",
        "--ws-per-message-deflate", "false",
        "--ws-max-size", str(max_frame_bytes()),
    ]


def uvicorn_config() -> dict[str, Any]:
    """The same flags as ``uvicorn.Config`` keyword arguments (for in-process servers)."""
    return {
        "forwarded_allow_ips": forwarded_allow_ips(),
        "lifespan": "off",
        "ws": "websockets-sansio",
        "ws_per_message_deflate": False,
        "ws_max_size": max_frame_bytes(),
    }


# How this process's warm-up stands (readiness reads it, foolgame.health): None when none was
# started (FM2_WARM_MODELS off, or a process that is not a web server), then "warming", then
# "warm" or "failed" (logged; the request path loads the models itself then).
_warm_state: str | None = None


def models_warm_state() -> str | None:
    return _warm_state


def warm_models_in_background() -> None:
    """Load the sentence encoder and the active verifier version on a daemon thread, so the
    first request that needs them does not wait for the load (the server answers meanwhile,
    and reports itself not ready at /health/ready until the load ends; a request that comes
    first loads or waits as before)."""
    import logging
    import threading

    global _warm_state
    _warm_state = "warming"

    def warm() -> None:
        global _warm_state
        from django.db import connections

        try:
            from foolgame.evidence.services import encoder_get
            from foolgame.verifier import runtime, services

            encoder_get().encode(["warm up"])
            version = services.active_version()
            if version is not None:
                runtime.loaded(version, wait=True)
            _warm_state = "warm"
        except Exception:  # a missing table before migrate, a model that does not load: the request path says so
            logging.getLogger(__name__).warning("could not warm the models", exc_info=True)
            _warm_state = "failed"
        finally:
            connections.close_all()

    threading.Thread(target=warm, name="fm2-warm-models", daemon=True).start()
