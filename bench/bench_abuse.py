"""The abuses of issue 12, replayed over the public interface against a server run as the
Procfile runs it; each prints what it achieved.

Run it before and after a change to see which attacks still work. It is a replay, not a
load test: every loop is bounded, every request goes to the loopback server it starts, and
the figures are outcomes (what got hidden, paid, leaked, accepted), not timings, except
where the issue named one (memory under the frame flood).

The server has its own Redis (a redis-server on a free loopback port, stopped at the end
by the last attack, "redis_down") and a throwaway PostgreSQL database beside
--database-url (or SQLite in a work folder). Celery tasks run in the server's process
(``CELERY_TASK_ALWAYS_EAGER``), so a report's quality refresh lands before the next request.
The demo data is loaded; the operator's look-ups (gold sentences, hidden claims) use the ORM
through ``manage.py shell``, never the players' interface.

    python bench/bench_abuse.py --database-url postgres://fm2:fm2@127.0.0.1:5432/fm2
    python bench/bench_abuse.py --only reports,hints
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any, Callable

from bench_rounds_ws import free_port, fresh_database, rss_kib, wait_port

REPO = Path(__file__).resolve().parents[1]
PASSWORD = "correct horse battery staple 42"


# --- the server, started as the Procfile starts it ---------------------------------------------


def procfile_web_args(port: int) -> list[str]:
    """The Procfile's web command with this port and one worker (the flags are the Procfile's own)."""
    line = next(row for row in (REPO / "Procfile").read_text().splitlines() if row.startswith("web:"))
    command = line.split(":", 1)[1].strip()
    command = re.sub(r"\$\{PORT:-\d+\}", str(port), command)
    command = re.sub(r"\$\{WEB_CONCURRENCY:-\d+\}", "1", command)
    command = re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: os.environ.get(m.group(1), m.group(2)), command)
    args = command.split()
    assert args[0] == "uvicorn", args
    args = [sys.executable, "-m", "uvicorn", *args[1:]]
    return [a if a != "0.0.0.0" else "127.0.0.1" for a in args] + ["--log-level", "warning"]


class Server:
    def __init__(self, database_url: str | None) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="fm2-bench-abuse-"))
        self.redis_port, self.port = free_port(), free_port()
        self.redis = subprocess.Popen(["redis-server", "--port", str(self.redis_port), "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
        self.database_url, self.drop_database = fresh_database(database_url, f"fm2_bench_abuse_{os.getpid()}")
        self.env = {**os.environ, "FM2_DATA_DIR": str(self.workdir), "REDIS_URL": f"redis://127.0.0.1:{self.redis_port}/0",
                    "CELERY_TASK_ALWAYS_EAGER": "1", "HF_HUB_OFFLINE": "1", "FM2_BUILD_INDEXES_ON_IMPORT": "0",
                    "LOG_LEVEL": "ERROR", "DEBUG": "0", "PYTHONWARNINGS": "ignore",
                    # Every attacker here signs up from 127.0.0.1; a real one has many addresses.
                    "FM2_SIGNUPS_PER_IP": "1000"}
        self.env.pop("DATABASE_URL", None)
        if self.database_url:
            self.env["DATABASE_URL"] = self.database_url
        self.process: subprocess.Popen | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def manage(self, *args: str, check: bool = True, input_text: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=self.env, check=check, capture_output=True, text=True, input=input_text)

    def orm(self, code: str) -> Any:
        """Run ``code`` in ``manage.py shell``; it must print one JSON line last."""
        out = self.manage("shell", "-c", code).stdout.strip().splitlines()
        return json.loads(out[-1])

    def start(self) -> None:
        wait_port(self.redis_port)
        self.manage("migrate", "--no-input", "-v0")
        self.manage("load_demo")
        self.process = subprocess.Popen(procfile_web_args(self.port), cwd=REPO, env=self.env)
        wait_port(self.port)

    def stop(self) -> None:
        for process in (self.process, self.redis):
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.drop_database()
        shutil.rmtree(self.workdir, ignore_errors=True)


# --- a player over HTTP (urllib: nothing to install) ----------------------------------------------


class Player:
    def __init__(self, server: Server, name: str) -> None:
        self.server, self.name = server, name
        self.jar = CookieJar()
        self.http = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def cookie(self, name: str) -> str | None:
        return next((c.value for c in self.jar if c.name == name), None)

    def call(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None, timeout: float = 30) -> tuple[int, Any, dict]:
        if self.cookie("csrftoken") is None and method != "GET":
            self.call("GET", "/api/auth/csrf")
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(self.server.base + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if method != "GET":
            request.add_header("X-CSRFToken", self.cookie("csrftoken") or "")
        try:
            with self.http.open(request, timeout=timeout) as response:
                status, text, headers = response.status, response.read(), {k.lower(): v for k, v in response.headers.items()}
        except urllib.error.HTTPError as error:
            status, text, headers = error.code, error.read(), {k.lower(): v for k, v in error.headers.items()}
        try:
            payload = json.loads(text) if text else None
        except ValueError:
            payload = {"not_json": text[:80].decode(errors="replace")}
        return status, payload, headers

    def signup(self) -> int:
        status, _, _ = self.call("POST", "/api/auth/signup", {"username": self.name, "password": PASSWORD})
        return status

    def points(self) -> dict:
        return self.call("GET", "/api/me")[1]["points"]


def code_of(status: int, payload: Any) -> str:
    if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
        return f"{status} {payload['error'].get('code')}"
    return str(status)


def deal_and_start(player: Player) -> tuple[int | None, Any, str]:
    """A round dealt and started over REST: (round id, its state, how the deal went)."""
    status, payload, _ = player.call("POST", "/api/rounds", {})
    if status != 201:
        return None, None, code_of(status, payload)
    round_id = payload["id"]
    status, state, _ = player.call("POST", f"/api/rounds/{round_id}/start")
    return round_id, state, code_of(status, state)


# --- the attacks ---------------------------------------------------------------------------------


def attack_reports(server: Server, limit: int) -> dict:
    """Three fresh accounts deal rounds and report every claim they are shown (during the round,
    then again after it ended). How many claims leave play?"""
    active = server.orm("from foolgame.claims.models import Claim; print(Claim.objects.filter(status='active').count())")
    outcomes: Counter = Counter()
    sent = 0
    for index in range(3):
        player = Player(server, f"reporter{index}")
        player.signup()
        for _ in range(limit):
            round_id, state, how = deal_and_start(player)
            if round_id is None:
                outcomes[f"deal {how}"] += 1
                break
            for claim in (0, 1):  # the first report ends the round; the second comes after it
                status, payload, _ = player.call("POST", f"/api/rounds/{round_id}/report", {"claim": claim, "reason": "wrong_label"})
                sent += 1
                outcomes[code_of(status, payload)] += 1
    hidden = server.orm(
        "from foolgame.moderation.models import ClaimQuality as Q; import json;"
        "print(json.dumps([Q.objects.filter(hidden_until_review=True).count(), Q.objects.filter(report_count__gt=0).count()]))"
    )
    return {"reports_sent": sent, "answers": dict(outcomes), "claims_hidden": hidden[0], "claims_in_queue_by_reports": hidden[1],
            "active_claims": active}


def _write_task(player: Player) -> tuple[int, Any]:
    status, task, _ = player.call("POST", "/api/write-tasks", {})
    return status, task


def _some_gold(player: Player, page_id: int, text: str) -> list[int]:
    """A sentence of the page that is not the lexical top hit for ``text`` (so gold_too_easy
    does not hide what the attack is about)."""
    sentences = player.call("GET", f"/api/pages/{page_id}")[1]["sentences"]
    status, hints, _ = player.call("GET", f"/api/pages/{page_id}/hints?q=" + urllib.request.quote(text))
    top = hints[0]["sentence_id"] if status == 200 and hints else None
    return [next(s["id"] for s in sentences if s["id"] != top)]


def attack_junk_claims(server: Server) -> dict:
    """Claims with no words and an existing claim again, each from a fresh free account (the
    open-task cap would stop one account after three), then a pile of write tasks."""
    answers = {}
    earned = 0

    def fresh_writer(n: int) -> tuple[Player, int]:
        writer = Player(server, f"junkwriter{n}")
        writer.signup()
        return writer, writer.points()["write"]

    for n, text in enumerate(("- - - - - -", "\U0001F600 \U0001F600 \U0001F600 \U0001F600", "asdf qwer zxcv uiop hjkl", "the the the the the")):
        player, before = fresh_writer(n)
        status, task = _write_task(player)
        if status != 201:
            answers[text] = f"task {code_of(status, task)}"
            continue
        status, payload, _ = player.call("POST", "/api/claims", {"task": task["id"], "text": text, "gold_sentence_ids": _some_gold(player, task["page"], text)})
        answers[text] = code_of(status, payload)
        earned += player.points()["write"] - before
    # An existing claim of the task's page, word for word, then with its case changed.
    duplicates = {}
    for n, change in ((10, str), (11, str.upper)):
        player, before = fresh_writer(n)
        status, task = _write_task(player)
        outcome = "no task: " + code_of(status, task)
        if status == 201:
            page_id = task["page"]
            existing = server.orm(f"from foolgame.claims.models import Claim; import json; print(json.dumps(Claim.objects.filter(page_id={page_id}, status='active').values_list('text', flat=True).first()))")
            if existing:
                status, payload, _ = player.call("POST", "/api/claims", {"task": task["id"], "text": change(existing), "gold_sentence_ids": _some_gold(player, page_id, existing)})
                outcome = code_of(status, payload) + (f" warnings={[w['code'] for w in payload.get('warnings', [])]}" if status == 201 else "")
        duplicates["as_is" if change is str else "upper_case"] = outcome
        earned += player.points()["write"] - before
    player, _ = fresh_writer(20)
    tasks = Counter(code_of(*_write_task(player)) for _ in range(20))
    return {"junk_claims": answers, "duplicate_of_existing_claim": duplicates, "write_points_earned": earned,
            "20_write_tasks_of_one_player": dict(tasks)}


def attack_hints_and_clue_counts(server: Server, rounds: int) -> dict:
    """A voter asks the authors' hints for each claim's text in the middle of a round, and
    reads the clue counts the start sends; the answer comes after the vote."""
    player = Player(server, "hintvoter")
    player.signup()
    leaked = asked = refused = 0
    hint_answers: Counter = Counter()
    unequal = fewer_is_false = 0
    played = 0
    for _ in range(rounds):
        round_id, state, how = deal_and_start(player)
        if round_id is None:
            break
        played += 1
        hint_texts: list[set[str]] = []
        for claim in state["claims"]:
            status, hints, _ = player.call("GET", f"/api/pages/{claim['page']['id']}/hints?q=" + urllib.request.quote(claim["text"]))
            hint_answers[code_of(status, hints)] += 1
            asked += 1
            if status != 200:
                refused += 1
            hint_texts.append({h["text"] for h in hints} if status == 200 else set())
        counts = state.get("clues_left")
        status, result, _ = player.call("POST", f"/api/rounds/{round_id}/vote", {"false_claim": 0})
        if status != 200:
            continue
        for index in (0, 1):
            if any(g["text"] in hint_texts[index] for g in result["gold"][index]):
                leaked += 1
        if counts and counts[0] != counts[1]:
            unequal += 1
            fewer_is_false += int((0 if counts[0] < counts[1] else 1) == result["false_claim"])
    return {"rounds": played, "hint_answers": dict(hint_answers), "claims_with_gold_in_free_hints": f"{leaked}/{asked}",
            "rounds_with_unequal_clue_counts": f"{unequal}/{played}",
            "fewer_clues_is_the_false_claim": f"{fewer_is_false}/{unequal}" if unequal else "n/a"}


def attack_relabel(server: Server) -> dict:
    """A moderator relabels a claim of a round being played; then a claim of a finished round."""
    moderator, player = Player(server, "mod1"), Player(server, "relabelvoter")
    moderator.signup()
    player.signup()
    server.manage("createmoderator", "mod1")
    round_id, state, how = deal_and_start(player)
    if round_id is None:
        return {"error": how}
    claim_ids = server.orm(f"from foolgame.voting.models import Round; import json; r = Round.objects.get(pk={round_id}); print(json.dumps([r.left_claim_id, r.right_claim_id, r.false_index]))")
    true_claim = claim_ids[1 - claim_ids[2]]
    status, payload, _ = moderator.call("POST", f"/api/moderation/claims/{true_claim}/actions", {"action": "relabel", "reason": "bench", "label": "REFUTES"})
    relabel = code_of(status, payload)
    before = player.points()["verify"]
    status, result, _ = player.call("POST", f"/api/rounds/{round_id}/vote", {"false_claim": claim_ids[2]})
    open_round = {"relabel": relabel, "vote_after_relabel": code_of(status, result), "voter_points": player.points()["verify"] - before,
                  "round_status": player.call("GET", f"/api/rounds/{round_id}")[1].get("status")}
    # A finished round: vote, then relabel its false claim; does its stored answer move?
    round_id, state, how = deal_and_start(player)
    if round_id is None:
        return {"open_round": open_round, "finished_round": how}
    status, result, _ = player.call("POST", f"/api/rounds/{round_id}/vote", {"false_claim": 0})
    answer_before = (result["false_claim"], result["correct"])
    false_claim = server.orm(f"from foolgame.voting.models import Round; import json; r = Round.objects.get(pk={round_id}); print(json.dumps(r.claims[r.false_index].pk))")
    moderator.call("POST", f"/api/moderation/claims/{false_claim}/actions", {"action": "relabel", "reason": "bench", "label": "SUPPORTS"})
    after = player.call("GET", f"/api/rounds/{round_id}")[1].get("result", {})
    return {"open_round": open_round, "finished_round_answer_before_after": [answer_before, (after.get("false_claim"), after.get("correct"))]}


def attack_accounts(server: Server) -> dict:
    """Case-variant twins raced at once, look-alikes of the system player, and a password guesser."""
    names = ["Mallory", "mallory", "MALLORY", "mAllory", "MaLLory", "malloRY"]
    statuses: list[str] = []

    def sign(name: str) -> None:
        player = Player(server, name)
        player.call("GET", "/api/auth/csrf")
        statuses.append(code_of(*player.call("POST", "/api/auth/signup", {"username": name, "password": PASSWORD})[:2]))

    threads = [threading.Thread(target=sign, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    twins = server.orm("from django.contrib.auth import get_user_model; print(get_user_model().objects.filter(username__iexact='mallory').count())")
    lookalikes = {name: code_of(*Player(server, name).call("POST", "/api/auth/signup", {"username": name, "password": PASSWORD})[:2])
                  for name in ("FM2-release", "fm2-reIease", "fm2_release", "fm2-re\u200blease", "fm2-r\u0435lease")}
    victim = Player(server, "victim")
    victim.signup()
    guesser = Player(server, "guesser")
    guesses = Counter(code_of(*guesser.call("POST", "/api/auth/login", {"username": "victim", "password": f"guess{i}"})[:2]) for i in range(30))
    right = code_of(*guesser.call("POST", "/api/auth/login", {"username": "victim", "password": PASSWORD})[:2])
    return {"case_variant_signups_at_once": Counter(statuses), "accounts_made": twins, "look_alikes_of_fm2_release": lookalikes,
            "30_wrong_passwords": dict(guesses), "then_the_right_one": right}


def _whole_answer(answer: bytes) -> bool:
    if b"\r\n\r\n" not in answer:
        return False
    head, body = answer.split(b"\r\n\r\n", 1)
    length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    return length is not None and len(body) >= int(length.group(1))


def _send_big_body(server: Server, player: Player, size: int) -> tuple[str, int]:
    """POST a body of ``size`` bytes on a raw socket, reading the answer as soon as one comes
    (urllib would only report the broken pipe of a server that answered early and closed)."""
    import select
    import socket

    cookies = "; ".join(f"{c.name}={c.value}" for c in player.jar)
    head = (f"POST /api/claims HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {size}\r\nCookie: {cookies}\r\nX-CSRFToken: {player.cookie('csrftoken') or ''}\r\n"
            f"Origin: {server.base}\r\nReferer: {server.base}/\r\n\r\n").encode()
    chunk = b" " * (1 << 20)
    sent = 0
    answer = b""
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as conn:
        conn.sendall(head)
        while sent < size:
            if select.select([conn], [], [], 0)[0]:
                break  # the server answered before the body was all sent
            try:
                conn.sendall(chunk[: size - sent])
            except OSError:
                break
            sent += min(len(chunk), size - sent)
        try:
            while not _whole_answer(answer):
                part = conn.recv(65536)
                if not part:
                    break
                answer += part
        except OSError:
            pass
    if not answer:
        return "no answer", sent
    status = int(answer.split(b" ", 2)[1])
    body = answer.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in answer else b""
    try:
        return code_of(status, json.loads(body)), sent
    except ValueError:
        return str(status), sent


def attack_http_edges(server: Server, megabytes: int) -> dict:
    player = Player(server, "edgeplayer")
    player.signup()
    player.call("GET", "/api/auth/csrf")
    started = time.monotonic()
    big, sent = _send_big_body(server, player, megabytes << 20)
    seconds = round(time.monotonic() - started, 2)
    missing = player.call("GET", "/api/no-such-endpoint")
    wrong_method = player.call("DELETE", "/api/leaderboard")
    return {f"{megabytes}_MB_body": big, "body_mib_sent_before_the_answer": round(sent / (1 << 20), 1), "body_seconds": seconds,
            "unknown_api_url": [missing[0], missing[2].get("content-type")], "wrong_method": [wrong_method[0], wrong_method[2].get("content-type")]}


async def _socket_attacks(server: Server, cookie: str, round_id: int, flood: int) -> dict:
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed, InvalidStatus

    url = f"ws://127.0.0.1:{server.port}/ws/rounds/{round_id}/"
    own_origin = {"Origin": server.base}
    out: dict = {}

    async def outcome(headers: dict, frames: list[str], wait: float = 1.5) -> str:
        """What the server answers to ``frames`` (ticks left out), and whether the socket then
        still answers a ``state`` frame."""
        try:
            async with connect(url, additional_headers=headers, open_timeout=10, max_size=None) as ws:
                for frame in frames:
                    await ws.send(frame)
                got = []
                until = time.monotonic() + wait
                while time.monotonic() < until:
                    try:
                        reply = json.loads(await asyncio.wait_for(ws.recv(), timeout=until - time.monotonic()))
                    except asyncio.TimeoutError:
                        break
                    if reply["type"] != "tick":
                        got.append(reply.get("code") or reply["type"])
                await ws.send(json.dumps({"type": "state"}))
                while (reply := json.loads(await asyncio.wait_for(ws.recv(), timeout=5)))["type"] == "tick":
                    pass
                return f"answers {got}, then still serves ({reply['type']})"
        except InvalidStatus as error:
            return f"handshake refused {error.response.status_code}"
        except ConnectionClosed as error:
            return f"closed {error.rcvd.code if error.rcvd else None}"

    authed = {**own_origin, "Cookie": f"sessionid={cookie}"}
    out["no_session"] = await outcome(own_origin, [])
    out["origin_other_port"] = await outcome({**authed, "Origin": "http://127.0.0.1:1"}, [])
    out["type_is_a_list"] = await outcome(authed, [json.dumps({"type": ["start"]})])
    out["nested_100k_deep"] = await outcome(authed, ["[" * 100_000 + "]" * 100_000])
    # Many sockets for one player.
    opened = []
    accepted = 0
    for _ in range(20):
        try:
            ws = await connect(url, additional_headers=authed, open_timeout=10)
            opened.append(ws)
        except Exception:
            continue
    await asyncio.sleep(1.5)
    for ws in opened:
        try:
            await ws.send(json.dumps({"type": "state"}))
            while json.loads(await asyncio.wait_for(ws.recv(), timeout=3))["type"] == "tick":
                pass
            accepted += 1
        except Exception:
            pass
    for ws in opened:
        await ws.close()
    out["sockets_of_one_player_still_open_of_20"] = accepted
    # 16 MiB frames: the server's peak memory.
    assert server.process is not None
    before = rss_kib(server.process.pid)
    # Just under uvicorn's default limit (16 MiB), as an attacker who knows it would send.
    big = json.dumps({"type": "vote", "pad": "x" * ((16 << 20) - 100)})
    closes: Counter = Counter()
    peak = before

    async def flood_one() -> None:
        try:
            async with connect(url, additional_headers=authed, open_timeout=20, max_size=None) as ws:
                await ws.send(big)
                await asyncio.wait_for(ws.recv(), timeout=20)
                closes["answered"] += 1
        except ConnectionClosed as error:
            closes[f"closed {error.rcvd.code if error.rcvd else None}"] += 1
        except Exception as error:  # noqa: BLE001 - report whatever the server did
            closes[type(error).__name__] += 1

    tasks = [asyncio.create_task(flood_one()) for _ in range(flood)]
    while not all(t.done() for t in tasks):
        peak = max(peak, rss_kib(server.process.pid))
        await asyncio.sleep(0.05)
    out[f"{flood}_sockets_x_16MiB"] = {"outcomes": dict(closes), "server_rss_mib_before": round(before / 1024), "server_rss_mib_peak": round(peak / 1024)}
    out["server_still_serves_after"] = await outcome(authed, [])
    return out


def attack_sockets(server: Server, flood: int) -> dict:
    player = Player(server, "socketplayer")
    player.signup()
    round_id, _, how = deal_and_start(player)
    if round_id is None:
        return {"error": how}
    return asyncio.run(_socket_attacks(server, player.cookie("sessionid") or "", round_id, flood))


def attack_import(server: Server) -> dict:
    """An FM2 file whose one claim is 60 MB long."""
    sample = (REPO / "fixtures" / "fm2-dev-sample.jsonl").read_text(encoding="utf-8").splitlines()[0]
    row = json.loads(sample)
    row.update(id="bench-huge-claim", text="Big " + "word " * 12_000_000)
    path = server.workdir / "dev.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    started = time.monotonic()
    result = server.manage("import_fm2", str(path), check=False)
    found = server.orm("from foolgame.claims.models import Claim; print(Claim.objects.filter(external_id='bench-huge-claim').count())") if result.returncode == 0 else 0
    message = (result.stderr.strip().splitlines() or [""])[-1]
    return {"exit": result.returncode, "message": message.replace(str(path), "FILE")[:160], "claims_imported": found,
            "seconds": round(time.monotonic() - started, 1)}


def attack_redis_down(server: Server) -> dict:
    player = Player(server, "redisdown")
    player.signup()
    server.redis.terminate()
    server.redis.wait(timeout=10)
    status, payload, headers = player.call("GET", "/api/me")
    return {"logged_in_GET_api_me": code_of(status, payload), "content_type": headers.get("content-type")}


ATTACKS: dict[str, Callable[[Server, argparse.Namespace], dict]] = {
    "reports": lambda s, a: attack_reports(s, a.report_rounds),
    "junk_claims": lambda s, a: attack_junk_claims(s),
    "hints": lambda s, a: attack_hints_and_clue_counts(s, a.hint_rounds),
    "relabel": lambda s, a: attack_relabel(s),
    "accounts": lambda s, a: attack_accounts(s),
    "http_edges": lambda s, a: attack_http_edges(s, a.body_mb),
    "sockets": lambda s, a: attack_sockets(s, a.flood),
    "import": lambda s, a: attack_import(s),
    "redis_down": lambda s, a: attack_redis_down(s),  # last: it stops the server's Redis
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"), help="PostgreSQL (a throwaway database is made beside it); default SQLite")
    parser.add_argument("--only", default="", help="comma-separated attacks: " + ",".join(ATTACKS))
    parser.add_argument("--report-rounds", type=int, default=60, help="rounds each of the three reporters deals at most")
    parser.add_argument("--hint-rounds", type=int, default=30)
    parser.add_argument("--flood", type=int, default=8, help="sockets sending a 16 MiB frame at once")
    parser.add_argument("--body-mb", type=int, default=50)
    args = parser.parse_args()
    if not shutil.which("redis-server"):
        sys.exit("redis-server is not installed (apt-get install redis-server)")
    chosen = [name for name in ATTACKS if not args.only or name in args.only.split(",")]
    server = Server(args.database_url)
    try:
        server.start()
        for name in chosen:
            started = time.monotonic()
            try:
                figures = ATTACKS[name](server, args)
            except Exception as error:  # noqa: BLE001 - one attack's failure must not hide the others
                figures = {"bench_error": repr(error)[:300]}
            print(json.dumps({"attack": name, **figures, "wall_s": round(time.monotonic() - started, 1)}, default=str), flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
