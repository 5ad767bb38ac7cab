"""Bench (issue 17): how many players the public leaderboards name in an export, before and after.

Simulates a game of --players players (``tests/dataset/linkage.py``: heavy-tailed activity,
claims, rounds, votes, clues, likes and the ledger rows the services would write) in a fresh
SQLite database, then runs ``export_dataset`` twice on it with one salt file: with this
tree's code ("after") and with the code of --base ("before": by default the merge base
with main, unpacked with ``git archive`` into a temporary folder, so no worktree
is touched). The same join (``reidentify``) reads both against every leaderboard and the
salt tells which of its pairs are right.

    python bench/bench_reidentify.py                    # 240 players, seed 0
    python bench/bench_reidentify.py --players 500 --seed 3 --rooms 80
    python bench/bench_reidentify.py --database-url postgres://fm2:fm2@127.0.0.1:5432/fm2

The game runs on SQLite in a temporary folder, or with --database-url on a throwaway
PostgreSQL database beside the one named (dropped after without superuser rights). It uses
no Redis (tasks run in-process): it takes no --redis-url. With --record (or FM2_BENCH_RECORD)
the "after" figures go to the record, target 0 named.

Figures (players named by the join, of those on the leaderboards; no wrong pairs in any run;
about 10 s a run; before = 3662535, the branch point; main at 1ef4699, with the skill table's
vote counts in the join, gives 238 / 0 for seed 0 and 489 / 1 for 500 players, seed 3):

    players  seed   before (3662535)   after   pseudonyms before / after
    240      0      238 of 238         0       239 / 1230
    240      1-4    236, 236, 238, 233 0       about 238 / 1150-1390
    500      0-3    489, 487, 486, 489 0, 0, 0, 1   about 498 / 2500-2640

The one named after (500 players, seed 3) wrote one claim and never voted: that claim's likes
and the time buckets of the votes it fooled fit no other player's leaderboard points.

Rooms (issue 24): the game also plays --rooms live rooms among its players, and a second join
(``room_reidentify``) reads what their members saw (who found each question with the points,
who voted) against votes.jsonl. Players named by it, of the room players, before (b26ca5b, the
branch point: room votes in voters' runs) and after (room votes exported with no voter):

    players  seed  rooms (questions)  before       after
    240      0     40 (159)           118 of 118   0
    240      1     40 (157)           109 of 109   0
    500      3     80 (314)           256 of 256   0   (the leaderboards join: 0 before, 1 after, as above)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

SIMULATE = r"""
import json, sys
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from tests.dataset.linkage import public_leaderboards, room_results, simulate_game, simulate_rooms
game = simulate_game(players=int(sys.argv[1]), seed=int(sys.argv[2]))
questions = simulate_rooms(game, rooms=int(sys.argv[4]), seed=int(sys.argv[2]))
json.dump({"usernames": game.usernames, "boards": public_leaderboards(), "rounds": game.rounds, "claims": game.claims,
           "rooms": room_results(), "questions": questions}, open(sys.argv[3], "w"))
"""


def run(code_dir: Path, args: list[str], env: dict[str, str]) -> None:
    subprocess.run([sys.executable, *args], cwd=code_dir, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=240)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rooms", type=int, default=40, help="live rooms played among the players (2-6 members, 3-5 questions)")
    parser.add_argument("--base", default=None, help="the commit whose export is 'before' (default: git merge-base HEAD main)")
    harness.add_service_args(parser, redis=False)
    options = parser.parse_args()
    record = harness.Record("bench_reidentify", options.record)
    base = options.base or subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=REPO, check=True, capture_output=True, text=True).stdout.strip()
    sys.path.insert(0, str(REPO))
    with harness.services(options, "reidentify", redis=False) as svc:
        work = svc.data_dir
        database_url = svc.database_url or f"sqlite:///{work / 'game.sqlite3'}"
        env = {**svc.env(), "DJANGO_SETTINGS_MODULE": "foolgame.settings", "DATABASE_URL": database_url, "REDIS_URL": ""}
        run(REPO, ["-c", SIMULATE, str(options.players), str(options.seed), str(work / "game.json"), str(options.rooms)], env)
        old = work / "base"
        old.mkdir()
        archive = subprocess.run(["git", "archive", base], cwd=REPO, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        salt = work / "salt"
        exports = {"before": (old, work / "before"), "after": (REPO, work / "after")}
        for code_dir, out in exports.values():
            run(code_dir, ["manage.py", "export_dataset", str(out), "--salt-file", str(salt)], {**env, "PYTHONPATH": str(code_dir)})

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foolgame.settings")
        import django

        django.setup()
        from foolgame.dataset.privacy import Pseudonyms, salt_from_file
        from tests.dataset.linkage import identified, reidentify, room_identified, room_reidentify

        game = json.loads((work / "game.json").read_text())
        pseudonyms = Pseudonyms(salt_from_file(salt))
        mine = {
            name: {pseudonyms.named(f"user:{pk}")} | {pseudonyms.named(f"{role}:{pk}:{run}") for role in ("author", "voter") for run in range(400)}
            for pk, name in game["usernames"].items()
        }
        print(f"players {len(mine)} ({len({r['username'] for r in game['boards']['total']})} on the leaderboards), "
              f"seed {options.seed}, rounds {game['rounds']}, claims {game['claims']}, rooms {options.rooms} ({game['questions']} questions)")
        owns = lambda name, pseudonym: pseudonym in mine[name]  # noqa: E731
        for label, (_, out) in exports.items():
            linkage = reidentify(game["boards"], out)
            right = identified(linkage, owns)
            tag = f"{label} ({base[:7]})" if label == "before" else label
            print(f"{tag + ':':18} {len(right)} named, {len(linkage.matches) - len(right)} wrong; pseudonyms {linkage.pseudonyms}")
            rooms = room_reidentify(game["rooms"], out)
            named, wrong = room_identified(rooms, owns)
            print(f"{'  rooms join:':18} {len(named)} named of {rooms.players} room players, {wrong} wrong pins")
            both = set(named) | set(right)
            print(f"{'  either join:':18} {len(both)} named")
            if label == "after":
                case = f"{len(mine)} players, seed {options.seed}, {options.rooms} rooms, {svc.database}"
                record.add(case, "players named by the leaderboards join", len(right), f"of {len(mine)}", target="0", ok=not right)
                record.add(case, "wrong pairs of the leaderboards join", len(linkage.matches) - len(right), "pairs")
                record.add(case, "room players named by the rooms join", len(named), f"of {rooms.players}", target="0", ok=not named)


if __name__ == "__main__":
    main()
