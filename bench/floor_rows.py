"""The rows the benchmarks' committing floors write: a table of their own, made by the floor
(not a migration of the game), in the project's database through its ``DATABASES`` settings
(on PostgreSQL, the process's pool).

- ``bench_floor_vote``: the socket floor (``bench/floor.py``) commits one row per vote
  (``kind`` ``vote``) before it answers, and for a room's last vote one more (``end``) before
  it broadcasts the answer.
- ``bench_floor_request``: the REST floor (``bench/rest_floor.py``) commits one row per
  request (``kind`` the request's method) after reading one.

A bench makes the table before it starts a floor and counts the rows after the run, by kind
(``python -m bench.floor_rows create|count TABLE``, in the floor's environment, prints JSON);
``check`` stops the bench when a row is missing or extra.

Nothing here sets Django up at import: the floors import it after their own settings.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping

TABLES = ("bench_floor_vote", "bench_floor_request")


def _table(name: str) -> str:
    if name not in TABLES:
        raise ValueError(f"not a floor table: {name!r}")
    return name


def create(table: str) -> None:
    """Make the table if it is not there (PostgreSQL or SQLite, as the settings say)."""
    from django.db import connection

    key = "bigserial PRIMARY KEY" if connection.vendor == "postgresql" else "integer PRIMARY KEY AUTOINCREMENT"
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE IF NOT EXISTS {_table(table)} (id {key}, kind varchar(16) NOT NULL, "
                       "target varchar(200) NOT NULL, number integer NOT NULL, at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP)")


def drop(table: str) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {_table(table)}")


def commit(table: str, kind: str, target: str, number: int = 0) -> None:
    """Insert one row in a transaction of its own and commit it: when this returns, the row
    is on disk as a vote is before the game answers it."""
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {_table(table)} (kind, target, number) VALUES (%s, %s, %s)", [kind, target[:200], number])


def read_latest(table: str) -> tuple | None:
    """Read one row: the latest, by its key."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id, kind, target, number, at FROM {_table(table)} ORDER BY id DESC LIMIT 1")
        return cursor.fetchone()


def count(table: str) -> dict[str, int]:
    """The table's rows by kind."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT kind, count(*) FROM {_table(table)} GROUP BY kind")
        return {kind: int(n) for kind, n in cursor.fetchall()}


def check(what: str, counted: Mapping[str, int], expected: Mapping[str, int]) -> str:
    """The line a bench prints for the rows a floor committed; exits the bench (non-zero, with
    the counts) when they are not exactly the rows its answers stand for."""
    counted = {kind: n for kind, n in counted.items() if n}
    expected = {kind: n for kind, n in expected.items() if n}
    listed = ", ".join(f"{n} {kind}" for kind, n in sorted(expected.items())) or "none"
    if counted != expected:
        got = ", ".join(f"{n} {kind}" for kind, n in sorted(counted.items())) or "none"
        sys.exit(f"refused: {what} committed {got} rows, but its answers stand for {listed}: no figure is printed from a floor "
                 "that did not commit what it answered")
    return f"{what}: {listed} rows committed and counted in the database after the run, one per answer"


def main(argv: list[str]) -> int:
    """``create|count TABLE``: make the table, or print its rows by kind as JSON."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foolgame.settings")
    import django

    django.setup()
    action, table = argv
    if action == "create":
        create(table)
    print(json.dumps(count(table)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
