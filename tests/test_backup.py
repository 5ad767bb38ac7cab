"""Backups that restore (docs/operations.md, Backups): a pg_dump of a game in play, restored
into a new database, serves a web host with every point, player, open round and the active
verifier version as they were."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
from django.core.management import call_command
from django.utils import timezone

from tests.factories import UserFactory
from tests.procfile_server import ProcfileServer, base_env, database_url_for

pytestmark = [pytest.mark.services, pytest.mark.slow, pytest.mark.usefixtures("postgresql_only")]

TOKEN = "backup-metrics-token"


def _game_in_play() -> dict:
    """Rounds voted and paid, one round and one room question playing, an active verifier."""
    from foolgame.rooms import services as rooms
    from foolgame.rooms.models import RoomQuestion
    from foolgame.verifier.models import VerifierVersion
    from foolgame.voting import services as voting
    from foolgame.voting.models import Round

    call_command("load_demo", stdout=open(os.devnull, "w"))
    players = [UserFactory(username=f"saved{n}") for n in range(4)]
    for player in players[:3]:
        for _ in range(2):
            round_ = voting.round_create(player=player)
            voting.round_start(round_id=round_.pk, player=player)
            voting.vote_cast(round_id=round_.pk, player=player, false_claim=0)
    open_round = voting.round_create(player=players[3])
    voting.round_start(round_id=open_round.pk, player=players[3])
    room = rooms.room_create(host=players[0], host_plays=True)  # the host plays too: one more round in play
    rooms.room_join(code=room.code, player=players[1])
    rooms.room_next_question(code=room.code, player=players[0])
    # Far enough ahead that the restored host still finds them playing on a slow machine.
    later = timezone.now() + timedelta(hours=1)
    Round.objects.filter(state=Round.State.PLAYING).update(deadline=later)
    RoomQuestion.objects.filter(state=RoomQuestion.State.PLAYING).update(deadline=later)
    VerifierVersion.objects.create(number=3, kind=VerifierVersion.Kind.HEAD, name="restored head", status=VerifierVersion.Status.ACTIVE)


_FACTS = {
    "ledger": "SELECT cause, kind, player_id, sum(amount) FROM players_ledgerentry GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
    "round_sums": "SELECT cause, sum(amount) FROM players_ledgerentry WHERE cause LIKE 'round:%%' GROUP BY 1 ORDER BY 1",
    "players": "SELECT id, username, password FROM auth_user ORDER BY id",
    "open_rounds": "SELECT id, player_id, state, started_at, deadline FROM voting_round WHERE state = 'playing' ORDER BY id",
    "room_questions": "SELECT id, room_id, state, deadline FROM rooms_roomquestion WHERE state = 'playing' ORDER BY id",
    "verifier": "SELECT number, name, status FROM verifier_verifierversion WHERE status = 'active'",
}


def _facts(url: str) -> dict[str, list[tuple]]:
    with psycopg.connect(url) as conn:
        return {name: conn.execute(sql).fetchall() for name, sql in _FACTS.items()}


def test_a_pg_dump_of_a_game_in_play_restores_into_a_new_database_that_serves_it(tmp_path: Path) -> None:
    from django.db import connection

    _game_in_play()
    db = connection.settings_dict
    source = f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    before = _facts(source)
    # A right vote pays the round's 120 points (to the voter and the authors), a wrong one none.
    assert before["round_sums"] and {total for _, total in before["round_sums"]} <= {0, 120}
    # The solo round, and the room question's two members' rounds.
    assert len(before["open_rounds"]) == 3 and len(before["room_questions"]) == 1 and before["verifier"][0][0] == 3

    dump = tmp_path / "fm2.dump"
    pg_env = {**os.environ, "PGPASSWORD": db["PASSWORD"] or ""}
    subprocess.run(["pg_dump", "--format=custom", "--no-owner", "-f", str(dump), source.replace(f":{db['PASSWORD']}@", "@")],
                   check=True, env=pg_env, capture_output=True, timeout=300)
    restored_name = f"{db['NAME']}_restored"
    admin = database_url_for(source, "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{restored_name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{restored_name}"')
    restored = database_url_for(source, restored_name)
    try:
        subprocess.run(["pg_restore", "--no-owner", "--exit-on-error", "-d", restored.replace(f":{db['PASSWORD']}@", "@"), str(dump)],
                       check=True, env=pg_env, capture_output=True, timeout=300)
        assert _facts(restored) == before

        env = base_env(FM2_DATA_DIR=str(tmp_path / "host"), DATABASE_URL=restored, WEB_CONCURRENCY="1", FM2_WARM_MODELS="false",
                       FM2_METRICS_TOKEN=TOKEN, REDIS_URL=os.environ.get("REDIS_URL", ""), CHANNEL_PREFIX=f"fm2backup{os.getpid()}")
        server = ProcfileServer(env, log=tmp_path / "server.log")
        server.start()
        try:
            with urllib.request.urlopen(f"{server.base}/health/ready", timeout=30) as response:
                assert json.loads(response.read())["status"] == "ok"
            request = urllib.request.Request(f"{server.base}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
            with urllib.request.urlopen(request, timeout=30) as response:
                text = response.read().decode()
            assert "fm2_rounds_in_play 3.0" in text
            assert "fm2_room_questions_in_play 1.0" in text
            assert "fm2_verifier_active_version 3.0" in text
        finally:
            server.stop()
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{restored_name}" WITH (FORCE)')
    assert urlsplit(restored).path.endswith("_restored")
