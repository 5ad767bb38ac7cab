"""Start the web process exactly as the Procfile's ``web`` line does, on a database and Redis
of the test's own, for tests that watch what the real server does (connections, shutdown)."""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

from tests.waiting import port_open, wait_for

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def procfile_command(role: str = "web") -> str:
    for line in (REPO / "Procfile").read_text().splitlines():
        if line.startswith(f"{role}:"):
            return line.split(":", 1)[1].strip()
    raise LookupError(role)


def current_database_url(query: str = "") -> str:
    """The URL of the database this test process is using (PostgreSQL), for the servers and
    workers it starts; ``query``: connection options such as ``application_name=...``."""
    from django.db import connection

    db = connection.settings_dict
    url = f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    return f"{url}?{query}" if query else url


def database_url_for(base_url: str, name: str) -> str:
    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(path=f"/{name}"))


class LiveDatabase:
    """A fresh, migrated PostgreSQL database beside DATABASE_URL's (dropped afterwards)."""

    def __init__(self, base_url: str, suffix: str):
        self.base_url = base_url
        self.name = f"{urlsplit(base_url).path.lstrip('/')}_{suffix}"
        self.url = database_url_for(base_url, self.name)

    def admin(self) -> psycopg.Connection:
        return psycopg.connect(database_url_for(self.base_url, "postgres"), autocommit=True)

    def create(self, env: dict[str, str]) -> None:
        self.drop()
        with self.admin() as conn:
            conn.execute(f'CREATE DATABASE "{self.name}"')
        subprocess.run([sys.executable, "manage.py", "migrate", "--no-input"], cwd=REPO, env={**env, "DATABASE_URL": self.url},
                       check=True, capture_output=True, timeout=600)

    def drop(self) -> None:
        with self.admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')

    def backends(self, conn: psycopg.Connection) -> int:
        """Connections clients hold to this database (the caller's own excluded).

        Only client backends count: an autovacuum worker on the fresh database also shows in
        pg_stat_activity under its name, and once made a pool test see five connections from a
        pool of four (CI, stop 22)."""
        return len(self.backend_rows(conn))

    def backend_rows(self, conn: psycopg.Connection) -> list[tuple]:
        """(pid, application_name, state, query) of each client backend on this database."""
        return conn.execute("SELECT pid, application_name, state, left(query, 80) FROM pg_stat_activity"
                            " WHERE datname = %s AND pid <> pg_backend_pid() AND backend_type = 'client backend'", [self.name]).fetchall()


def base_env(**extra: str) -> dict[str, str]:
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "DJANGO_SETTINGS_MODULE": "foolgame.settings",
    }
    for name in ("FM2_DATA_DIR", "HOME"):
        if name in os.environ:
            env[name] = os.environ[name]
    env.update(extra)
    return env


class ProcfileServer:
    """The Procfile's web line in a shell (``exec``, so signals reach uvicorn), on 127.0.0.1."""

    def __init__(self, env: dict[str, str], port: int | None = None, log: Path | None = None):
        self.port = port or free_port()
        self.env = {**env, "PORT": str(self.port)}
        self.log = log
        self.process: subprocess.Popen | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        command = procfile_command("web").replace("--host 0.0.0.0", "--host 127.0.0.1")
        # The Procfile's ``uvicorn`` is the venv's: run it with this interpreter.
        command = command.replace("uvicorn ", f"{shlex.quote(sys.executable)} -m uvicorn ", 1)
        out = open(self.log, "wb") if self.log else subprocess.DEVNULL
        self.process = subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=REPO, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        wait_for(self._serving, what="the server to start", seconds=90, every=0.2)

    def _serving(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise RuntimeError(f"server exited with {self.process.returncode}")
        return port_open(self.port)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait(timeout=10)
