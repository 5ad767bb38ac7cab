"""Shared fixtures: paths, factories, and the browser for Playwright tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
FM2_DEV = SHARED / "data" / "fm2" / "dev.jsonl"
FM2_SAMPLE = REPO / "fixtures" / "fm2-dev-sample.jsonl"

# Playwright's sync API runs an event loop in the test thread; the ORM calls that tests make
# around it are still synchronous, so Django's async-safety guard is relaxed for tests only.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
# The servers tests start need not load the sentence model at start (FM2_WARM_MODELS): the
# tests that use it load it themselves, and 2 cores are shared by the whole suite.
os.environ.setdefault("FM2_WARM_MODELS", "false")
# Nor may a worker or beat a test starts train the fluency check by itself (minutes of both
# cores once a test's instance has 20 pages): tests/authoring/test_fluency_check.py turns it on.
os.environ.setdefault("FM2_FLUENCY_AUTO_TRAIN", "false")


@pytest.fixture(scope="session", autouse=True)
def celery_runs_in_process() -> None:
    """Tests run Celery tasks in-process on both CI passes: with REDIS_URL set there is a
    broker but no worker, and a task sent there would never run (or a result never come)."""
    from foolgame.celery import app

    app.conf.task_always_eager = True
    app.conf.task_eager_propagates = True


@pytest.fixture(autouse=True)
def background_tasks_inline(settings) -> None:
    """Long eager tasks (training a model) run on a background thread in the embedded default;
    tests see them done when the call that queued them returns."""
    settings.FM2_JOBS = {**settings.FM2_JOBS, "BACKGROUND_THREAD": False}


@pytest.fixture(autouse=True)
def no_trained_fluency_model(settings, tmp_path_factory) -> None:
    """A fluency model a developer trained into the data folder must not judge the tests' claims:
    each test starts with none (tests/authoring/test_fluency_check.py trains its own)."""
    settings.FM2_FLUENCY = {
        **settings.FM2_FLUENCY, "MODEL_DIR": str(tmp_path_factory.getbasetemp() / "no-fluency-model"), "AUTO_TRAIN": False
    }


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    """PBKDF2's deliberate slowness protects real accounts, not test fixtures."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def fresh_login_throttles(settings) -> None:
    """Login and signup counters live in the cache (Redis on the services pass, where they
    would outlast the test): every test counts under its own key prefix."""
    import uuid

    settings.FM2_SIGNUP = {**settings.FM2_SIGNUP, "THROTTLE_KEY_PREFIX": f"fm2:test-throttle:{uuid.uuid4().hex}"}


@pytest.fixture
def postgresql_only(transactional_db) -> None:
    """For tests of concurrent writers (``pytest.mark.usefixtures("postgresql_only")``):
    SQLite serialises writers, so they skip there, and fail when the run was asked to use
    the services (FM2_REQUIRE_SERVICES) but got SQLite."""
    from django.db import connection

    if connection.vendor != "postgresql":
        if os.environ.get("FM2_REQUIRE_SERVICES"):
            pytest.fail("FM2_REQUIRE_SERVICES is set but the database is not PostgreSQL")
        pytest.skip("concurrent writers are tested on PostgreSQL (set DATABASE_URL)")


@pytest.fixture
def fm2_dev() -> Path:
    if not FM2_DEV.is_file():
        pytest.skip("../shared/data/fm2/dev.jsonl is not beside this clone")
    return FM2_DEV


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    """Debian's Chromium, headless, with the background networking this machine refuses turned off."""
    return {
        **browser_type_launch_args,
        "executable_path": os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"),
        "headless": True,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ],
    }


@pytest.fixture
def asgi_live_server(transactional_db):
    """The real ASGI application (HTTP and WebSockets) under uvicorn, in a thread of the
    test process so it shares the test database, with the Procfile's flags. Yields its base URL."""
    import socket
    import threading

    import uvicorn

    from foolgame.asgi import application
    from foolgame.serving import uvicorn_config

    from channels.layers import channel_layers
    from tests.waiting import wait_for

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # A Redis channel layer belongs to one event loop: the server's thread gets its own.
    channel_layers.backends.clear()
    server = uvicorn.Server(uvicorn.Config(application, host="127.0.0.1", port=port, log_level="warning", **uvicorn_config()))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_for(lambda: server.started, what="uvicorn to start", seconds=20)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
    channel_layers.backends.clear()


BROWSER_ON_SERVICES = {
    "tests/voting/test_play_browser.py",  # a solo round's socket, its clock and reconnects
    "tests/rooms/test_room_browser.py",  # a room's sockets and group sends
    "tests/rooms/test_classroom_browser.py",  # answers-in counts, the end, play again
}
"""Browser test files the services pass runs too (see pytest_collection_modifyitems)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Playwright's sync API keeps an event loop running in the main thread once a browser
    # has started, and asyncio tests cannot start their own after that: browsers go last.
    items.sort(key=lambda item: "browser" in item.keywords)
    if os.environ.get("FM2_REQUIRE_SERVICES"):
        # The services pass (PostgreSQL and Redis) exists for concurrency and the channel layer:
        # of the browser tests it runs those whose page plays over sockets through the Redis
        # layer; every page is tested in the browser on the embedded default's pass.
        on_sockets = pytest.mark.skip(reason="pages are tested in a browser on the embedded default's pass")
        for item in items:
            if "browser" in item.keywords and item.path.relative_to(REPO).as_posix() not in BROWSER_ON_SERVICES:
                item.add_marker(on_sockets)
    if not Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")).exists():
        skip = pytest.mark.skip(reason="no Chromium at /usr/bin/chromium (apt-get install chromium)")
        for item in items:
            if "browser" in item.keywords:
                item.add_marker(skip)
