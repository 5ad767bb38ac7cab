"""A study of N participants in two arms, run through the REST interface only (issue 41, item 7):
the arm balance, the server's time per participant, the bonus total against the bench's own
count, the screened-out participants against the bots told to fail, and the accuracy difference
the bench planted between the arms, recovered with its interval.

    python bench/bench_study.py [--participants 200] [--parallel 4] [--claims-file ../shared/data/fm2/dev.jsonl]
        [--database-url postgres://...] [--redis-url redis://...] [--record FILE]

One server, started as the Procfile starts it (``bench_abuse.Server``: tasks run in the web
process), on the claims of the FM2 dev file (``--claims-file``, by default
``../shared/data/fm2/dev.jsonl`` when it is there) or else the committed sample the demo loads
(``fixtures/fm2-dev-sample.jsonl``). Before the import, the bench holds out some of each
page's claims whose label is not settled: those real claims are the texts its bots write
(each on a write task of its page and veracity), so that a save passes the game's checks as a
player's would; every settled claim is imported (the attention checks are drawn from them).
Then the first verifier is trained (``make run``'s step), so that saves get the model's verdict.

- A researcher (the ``researchers`` group, made through ``manage.py shell``, the operator's
  way) logs in and defines the study over ``POST /api/studies``: the work
  ``{"check": 2, "vote": 3, "write": 1}`` (the checks first, so that a participant who fails an
  attention check is screened out before the rest), one attention check allowed no failure,
  two arms that differ in what a clue costs on the round's clock (20 s and 5 s), N/2
  participants per arm, a bonus per right vote, per right check and per verified claim that
  fooled the model, capped.
- Each bot (``--parallel`` at a time) takes the CSRF cookie, arrives with ``POST
  /api/studies/<slug>/enter`` (three in four as Prolific participants, one in four from
  Mechanical Turk), and plays its arm: its skill (the chance of a right vote, and of a right
  label on a claim nobody settled) is the arm's (``--accuracy-a``, ``--accuracy-b``) give or
  take 0.05, so the planted difference is B - A. About one bot in ``--fail-every`` is told to
  fail the attention checks: it labels every settled claim it is dealt against its label;
  every other bot labels settled claims right. It checks, votes (buying one clue a round),
  writes, then reads ``GET /api/studies/<slug>/me`` until its code comes.
- The researcher reads ``GET /api/studies/<slug>`` (the figures) and both bonus files; the
  operator exports the data (``manage.py export_dataset``) for ``stats.json``'s per-arm
  difference with its bootstrap 95% interval.

What the bots know of labels (to vote or check with a skill) is the operator's look-up: the
claims' labels by text and the settled claims' ids, read through the ORM once before the
study starts, never through the players' interface.

**Server time per participant** is the wall time of the participant's own requests, summed
(from the bot's side of the loopback: the server's work plus the wait for a busy server, not
the bot's own thinking between requests).

**The bench's count of the bonus** is made from what its bots did and the server answered:
right votes are the votes whose answer said ``correct``; right checks the labels a bot gave
on settled claims that agree with their label; a verified fooling claim is a claim whose save
answered ``verdict.fooled`` and which people then confirmed, the confirmation read at the end
through the operator's look-up (``verifier.services.confirmed_by_people``); then the study's
rules and cap, rounded to cents. It must agree with the two bonus files to the penny,
participant by participant. Any answer of 500 or more, a participant left without a code, a
bonus disagreement or an imbalance beyond one block makes the bench exit non-zero.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
import statistics
import sys
import tempfile
import threading
import subprocess
import time
import urllib.parse
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from bench_abuse import PASSWORD, Player, Server, procfile_web_args  # noqa: E402
from run_all import fm2_dev  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "fixtures" / "fm2-dev-sample.jsonl"
GOLD_MIN_VOTES, GOLD_MIN_AGREEMENT = 5, 0.8  # FM2_CHECKS' defaults: a release claim's label is settled
TASKS = {"check": 2, "vote": 3, "write": 1}
BONUS = {"currency": "GBP", "per_verified_fooling_claim": "0.50", "per_right_vote": "0.05", "per_right_check": "0.10", "cap": "0.30"}
ARMS = [{"name": "A", "settings": {"clue_seconds": 20}}, {"name": "B", "settings": {"clue_seconds": 5}}]
CENT = Decimal("0.01")
OTHER = {"SUPPORTS": "REFUTES", "REFUTES": "SUPPORTS"}
VERACITY = {"TRUE": "SUPPORTS", "FALSE": "REFUTES"}


def key(text: str) -> str:
    """A claim's text as the bench looks its label up (the server may tidy spaces on a save)."""
    return " ".join(text.split()).casefold()


def settled(row: dict) -> bool:
    total = int(row.get("total_votes") or 0)
    return total >= GOLD_MIN_VOTES and int(row.get("correct_votes") or 0) >= GOLD_MIN_AGREEMENT * total


def split_claims(rows: list[dict]) -> tuple[list[dict], dict[tuple[str, str], list[dict]]]:
    """The claims to import and the ones held out for the bots to write, by (page, label):
    every settled claim is imported, and on each page at least one claim of each label; the
    other unsettled claims are held out."""
    by_page: dict[str, list[dict]] = {}
    for row in rows:
        by_page.setdefault(row["wikipedia_page"], []).append(row)
    imported: list[dict] = []
    held: dict[tuple[str, str], list[dict]] = {}
    for page, claims in by_page.items():
        for label in ("SUPPORTS", "REFUTES"):
            mine = [row for row in claims if row["label"] == label]
            kept = [row for row in mine if settled(row)]
            open_ = [row for row in mine if not settled(row)]
            if not kept and open_:
                kept.append(open_.pop(0))
            imported += kept
            if open_:
                held[(page, label)] = open_
    return imported, held


@dataclass
class Bot:
    number: int
    platform: str
    pid: str
    fail: bool
    rng: random.Random
    arm: str = ""
    skill: float = 0.0
    status: str = ""
    code: str | None = None
    seconds: float = 0.0
    seconds_by_kind: Counter = field(default_factory=Counter)  # the same wall time, by kind of request
    requests: int = 0
    errors: Counter = field(default_factory=Counter)
    votes: int = 0
    misjudged: int = 0
    odd_votes: int = 0  # the answer's picked or correct is not the vote sent
    meant_right: int = 0
    right_votes: int = 0
    clue_costs: list[float] = field(default_factory=list)
    checks: int = 0
    settled_met: int = 0
    right_checks: int = 0
    fooling_claim_ids: list[int] = field(default_factory=list)
    claim_ids: list[int] = field(default_factory=list)
    unwritten: str = ""
    refused: Counter = field(default_factory=Counter)  # saves refused, by code (the next held-out claim is tried)
    verdicts: Counter = field(default_factory=Counter)  # what the saves answered of the model: judged, pending, none


def request_kind(method: str, path: str) -> str:
    """What a request is for, in the breakdown of a participant's time."""
    path = path.split("?")[0]
    if path.startswith("/api/studies/"):
        return "study " + path.rsplit("/", 1)[1]  # enter, me
    if path.startswith("/api/rounds"):
        return "rounds"
    if path.startswith("/api/checks"):
        return "checks"
    if path in ("/api/claims", "/api/write-tasks") or path.startswith("/api/pages"):
        return "write" if method == "POST" and path == "/api/claims" else "write: task, page, hints"
    return "csrf" if path == "/api/auth/csrf" else path


class TimedPlayer(Player):
    """A participant's browser; the wall time of each of its requests goes on its bot's bill."""

    def __init__(self, server: Server, bot: Bot) -> None:
        super().__init__(server, f"bot{bot.number}")
        self.bot = bot

    def call(self, method: str, path: str, body: Any = None, **kwargs: Any) -> tuple[int, Any, dict]:
        started = time.monotonic()
        status, payload, headers = super().call(method, path, body, **kwargs)
        took = time.monotonic() - started
        self.bot.seconds += took
        self.bot.seconds_by_kind[request_kind(method, path)] += took
        self.bot.requests += 1
        if status >= 500:
            self.bot.errors[f"{method} {path.split('?')[0]} {status}"] += 1
        return status, payload, headers


class Study:
    """What every bot shares: the server, the study's slug, the operator's look-ups, the pool
    of held-out claims to write (taken under a lock)."""

    def __init__(self, server: Server, slug: str, labels: dict[str, str], settled_ids: set[int], pool: dict[tuple[str, str], list[dict]],
                 page_ids: dict[str, int], accuracy: dict[str, float]) -> None:
        self.server, self.slug, self.labels, self.settled_ids, self.accuracy = server, slug, labels, settled_ids, accuracy
        self.pool, self.page_ids = pool, page_ids
        self.lock = threading.Lock()

    def choose_page(self, rng: random.Random, tried: set[str]) -> str | None:
        """A page to write about, as a player picks one in the topic menu: one with held-out
        claims of both labels left when there is one (the server gives the veracity), the
        fullest first, at random among the ten fullest."""
        with self.lock:
            left = {page: (min(len(self.pool.get((page, "SUPPORTS"), [])), len(self.pool.get((page, "REFUTES"), []))),
                           len(self.pool.get((page, "SUPPORTS"), [])) + len(self.pool.get((page, "REFUTES"), [])))
                    for page, _ in self.pool if page in self.page_ids and page not in tried}
        ranked = sorted((page for page in left if left[page][1]), key=lambda page: left[page], reverse=True)
        return rng.choice(ranked[:10]) if ranked else None

    def take_text(self, page: str, label: str) -> dict | None:
        with self.lock:
            claims = self.pool.get((page, label)) or []
            return claims.pop(0) if claims else None


def play(study: Study, bot: Bot) -> None:
    player = TimedPlayer(study.server, bot)
    player.call("GET", "/api/auth/csrf")
    extra = {"STUDY_ID": "bench", "SESSION_ID": f"s{bot.number}"} if bot.platform == "prolific" else {"assignmentId": f"ASSIGN{bot.number}", "hitId": "HIT1"}
    status, state, _ = player.call("POST", f"/api/studies/{study.slug}/enter",
                                   {"participant": bot.pid, "platform": bot.platform, "consent": True, "extra": extra})
    if status != 201:
        bot.errors[f"enter {status}"] += 1
        return
    bot.arm = state["arm"]
    bot.skill = min(0.99, study.accuracy[bot.arm] + bot.rng.uniform(-0.05, 0.05))
    if not checks(study, player, bot):
        return
    vote(study, player, bot)
    write(study, player, bot)
    for _ in range(5):  # the code is counted on the read itself: the first read should carry it
        status, state, _ = player.call("GET", f"/api/studies/{study.slug}/me")
        if status == 200 and (state.get("completion_code") or state.get("screen_out_code")):
            break
        time.sleep(0.2)
    bot.status = state.get("status", "") if status == 200 else f"me {status}"
    bot.code = (state.get("completion_code") or state.get("screen_out_code")) if status == 200 else None


def checks(study: Study, player: TimedPlayer, bot: Bot) -> bool:
    """The checks; False when the bot was screened out by them."""
    for _ in range(TASKS["check"]):
        status, check, _ = player.call("POST", "/api/checks")
        if status != 201:
            bot.errors[f"check deal {status} {(check or {}).get('error', {}).get('code', '')}"] += 1
            return True
        claim = check["claim"]
        label = study.labels.get(key(claim["text"]))
        if label is None:
            bot.errors[f"check on a claim of unknown label: {claim['text'][:70]!r}"] += 1
            continue
        if claim["id"] in study.settled_ids:
            bot.settled_met += 1
            given = OTHER[label] if bot.fail else label
        else:
            given = label if bot.rng.random() < bot.skill else OTHER[label]
        status, _, _ = player.call("POST", f"/api/checks/{check['id']}", {"label": given})
        if status != 200:
            bot.errors[f"check answer {status}"] += 1
            continue
        bot.checks += 1
        bot.right_checks += int(claim["id"] in study.settled_ids and given == label)
        status, state, _ = player.call("GET", f"/api/studies/{study.slug}/me")
        if status == 200 and state["status"] == "screened_out":
            bot.status, bot.code = state["status"], state.get("screen_out_code")
            return False
    return True


def vote(study: Study, player: TimedPlayer, bot: Bot) -> None:
    for _ in range(TASKS["vote"]):
        status, dealt, _ = player.call("POST", "/api/rounds", {})
        if status != 201:
            bot.errors[f"deal {status} {(dealt or {}).get('error', {}).get('code', '')}"] += 1
            return
        status, state, _ = player.call("POST", f"/api/rounds/{dealt['id']}/start")
        if status != 200:
            bot.errors[f"start {status}"] += 1
            continue
        status, clue, _ = player.call("POST", f"/api/rounds/{dealt['id']}/reveal", {"claim": 0})
        if status == 200:
            bot.clue_costs.append(float(state["remaining"]) - float(clue["remaining"]))
        known = [study.labels.get(key(claim["text"])) for claim in state["claims"]]
        false = known.index("REFUTES") if "REFUTES" in known else (1 - known.index("SUPPORTS") if "SUPPORTS" in known else None)
        if false is None:
            bot.errors["round of unknown labels"] += 1
            false = bot.rng.randrange(2)
        choice = false if bot.rng.random() < bot.skill else 1 - false
        status, result, _ = player.call("POST", f"/api/rounds/{dealt['id']}/vote", {"false_claim": choice})
        if status != 200:
            bot.errors[f"vote {status}"] += 1
            continue
        bot.votes += 1
        bot.right_votes += int(bool(result["correct"]))
        bot.misjudged += int(result.get("false_claim") != false)  # the operator's look-up disagreed with the round
        bot.odd_votes += int(result.get("picked") != choice or bool(result["correct"]) != (choice == result.get("false_claim")))
        bot.meant_right += int(choice == false)


def _gold(player: TimedPlayer, page_id: int, sentences: list[dict], row: dict, text: str) -> list[int]:
    """The held-out claim's own gold sentence when the page has it and it is not the retriever's
    top hit for the claim; else the first other sentence of the page."""
    status, hints, _ = player.call("GET", f"/api/pages/{page_id}/hints?q=" + urllib.parse.quote(text))
    top = hints[0]["sentence_id"] if status == 200 and hints else None
    wanted = {e["text"] for e in row.get("gold_evidence") or []}
    own = [s["id"] for s in sentences if s["text"] in wanted and s["id"] != top]
    return own[:1] or [next(s["id"] for s in sentences if s["id"] != top)]


def write(study: Study, player: TimedPlayer, bot: Bot) -> None:
    """One held-out real claim of the task's page and veracity, on a page the bot chose (as
    the topic menu lets a player): a refused one is followed by the next of the pool on the
    same task; a page with none of the task's veracity left, by a task on another page
    (three open tasks at most)."""
    tried: set[str] = set()
    for _ in range(3):
        title = study.choose_page(bot.rng, tried)
        if title is None:
            bot.unwritten = "no held-out claim left"
            return
        tried.add(title)
        status, task, _ = player.call("POST", "/api/write-tasks", {"page": study.page_ids[title]})
        if status != 201:
            bot.unwritten = f"task {status} {(task or {}).get('error', {}).get('code', '')}"
            return
        status, page, _ = player.call("GET", f"/api/pages/{task['page']}")
        label = VERACITY[task["veracity"]]
        for _attempt in range(4):
            row = study.take_text(title, label)
            if row is None:
                bot.unwritten = f"no held-out {label} claim left for its page"
                break
            gold = _gold(player, task["page"], page["sentences"], row, row["text"])
            status, saved, _ = player.call("POST", "/api/claims", {"task": task["id"], "text": row["text"], "gold_sentence_ids": gold}, timeout=300)
            if status == 201:
                bot.claim_ids.append(saved["id"])
                verdict = saved.get("verdict")
                bot.verdicts["none" if not verdict else "pending" if verdict.get("pending") else "judged"] += 1
                if (verdict or {}).get("fooled"):
                    bot.fooling_claim_ids.append(saved["id"])
                bot.unwritten = ""
                return
            bot.unwritten = f"save {status} {(saved or {}).get('error', {}).get('code', '')}"
            bot.refused[bot.unwritten] += 1


def bonus_of(bot: Bot, verified: set[int]) -> Decimal:
    rules = {name: Decimal(value) for name, value in BONUS.items() if name != "currency"}
    total = (rules["per_right_vote"] * bot.right_votes + rules["per_right_check"] * bot.right_checks
             + rules["per_verified_fooling_claim"] * sum(1 for pk in bot.fooling_claim_ids if pk in verified))
    return min(total, rules["cap"]).quantize(CENT, rounding=ROUND_HALF_UP)


def bonus_files(researcher: Player, slug: str) -> dict[str, Decimal]:
    """Each participant's amount in the two bonus files, by platform id."""
    amounts: dict[str, Decimal] = {}
    for file_format in ("prolific", "mturk"):
        request = urllib.request.Request(f"{researcher.server.base}/api/studies/{slug}/bonuses.csv?format={file_format}")
        with researcher.http.open(request, timeout=120) as response:
            text = response.read().decode()
        rows = list(csv.reader(io.StringIO(text)))
        for fields in rows[1:] if file_format == "mturk" else rows:
            if fields:
                amounts[fields[0]] = Decimal(fields[2] if file_format == "mturk" else fields[1])
    return amounts


def exported_difference(server: Server, slug: str) -> dict:
    """stats.json's difference in vote accuracy between the arms, from the operator's export."""
    out = Path(tempfile.mkdtemp(prefix="export-", dir=server.workdir)) / "release"
    result = server.manage("export_dataset", str(out), "--formats", "jsonl", check=False)
    if result.returncode != 0:
        raise RuntimeError(f"export_dataset exit {result.returncode}: {(result.stderr.strip().splitlines() or [''])[-1][:300]}")
    stats = json.loads((out / "stats.json").read_text())
    block = next(study for study in stats.get("studies", []) if study["study"] == slug)
    return {"arms": block["arms"], "difference": block["differences"][0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--participants", type=int, default=200, help="N, a multiple of 4 (two arms in blocks of 4)")
    parser.add_argument("--parallel", type=int, default=4, help="bots at a time")
    parser.add_argument("--claims-file", type=Path, default=None,
                        help="FM2 claims (default: ../shared/data/fm2/dev.jsonl when present, else the committed sample)")
    parser.add_argument("--accuracy-a", type=float, default=0.65)
    parser.add_argument("--accuracy-b", type=float, default=0.80)
    parser.add_argument("--fail-every", type=int, default=8, help="about one bot in this many is told to fail the attention checks")
    parser.add_argument("--seed", type=int, default=41)
    harness.add_service_args(parser)
    args = parser.parse_args()
    if args.participants < 4 or args.participants % 4:
        sys.exit("--participants is a multiple of 4 (two arms, blocks of 4)")
    claims_file = args.claims_file or (Path(fm2_dev()) if Path(fm2_dev()).is_file() else SAMPLE)
    if not claims_file.is_file():
        sys.exit(f"no claims file at {claims_file}")
    record = harness.Record("bench_study", args.record)
    rng = random.Random(args.seed)
    rows = [json.loads(line) for line in claims_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    imported, held = split_claims(rows)
    server = Server(args.database_url, None, args.redis_url)
    server.env["FM2_SIGNUPS_PER_IP"] = "1000"
    began = time.monotonic()
    try:
        data = server.workdir / "imported.jsonl"
        data.write_text("".join(json.dumps(row) + "\n" for row in imported), encoding="utf-8")
        run_setup(server, data)
        setup_s = time.monotonic() - began
        looked_up = server.orm(
            "import json\nfrom foolgame.claims.models import Claim\nfrom foolgame.checks import selectors\nfrom foolgame.pages.models import Page\n"
            "print(json.dumps({'labels': dict(Claim.objects.values_list('text', 'label')),"
            " 'settled': list(Claim.objects.filter(selectors.settled()).values_list('pk', flat=True)),"
            " 'pages': dict(Page.objects.values_list('title', 'pk'))}))")
        labels = {key(text): label for text, label in looked_up["labels"].items()}
        labels.update({key(row["text"]): row["label"] for claims in held.values() for row in claims})
        pages = sorted({looked_up["pages"][page] for page, _ in held if page in looked_up["pages"]})
        server.orm(
            "import json\nfrom django.contrib.auth import get_user_model\nfrom django.contrib.auth.models import Group\n"
            "from foolgame.studies.apps import _ensure_researchers_run_studies\n_ensure_researchers_run_studies()\n"
            f"user = get_user_model().objects.create_user('bench-researcher', password={PASSWORD!r})\n"
            "Group.objects.get(name='researchers').user_set.add(user)\nprint(json.dumps(user.pk))")
        researcher = Player(server, "bench-researcher")
        status, body, _ = researcher.call("POST", "/api/auth/login", {"username": "bench-researcher", "password": PASSWORD})
        assert status == 200, (status, body)
        per_arm = args.participants // 2
        spec = {
            "name": "Bench study", "consent": "A benchmark's bots consent to play.", "tasks": TASKS, "pages": pages, "arms": ARMS,
            "participants": per_arm, "completion_code": "BENCHDONE", "screen_out_code": "BENCHOUT", "attention_checks": 1,
            "attention_max_failures": 0, "bonus": BONUS, "block_size": 4, "address_cap": args.participants, "seed": args.seed,
        }
        status, created, _ = researcher.call("POST", "/api/studies", spec)
        if status != 201:
            sys.exit(f"POST /api/studies answered {status}: {created}")
        study = Study(server, created["slug"], labels, set(looked_up["settled"]), held, looked_up["pages"], {"A": args.accuracy_a, "B": args.accuracy_b})
        bots = [Bot(n, "mturk" if n % 4 == 3 else "prolific", f"BENCH{n:04d}PID{rng.randrange(10**6):06d}",
                    rng.randrange(args.fail_every) == 0, random.Random(args.seed * 100_003 + n)) for n in range(args.participants)]
        study_began = time.monotonic()
        with ThreadPoolExecutor(max_workers=args.parallel) as pool:
            list(pool.map(lambda bot: play(study, bot), bots))
        study_s = time.monotonic() - study_began
        status, figures, _ = researcher.call("GET", f"/api/studies/{study.slug}")
        assert status == 200, (status, figures)
        files = bonus_files(researcher, study.slug)
        fooling = [pk for bot in bots for pk in bot.fooling_claim_ids]
        verified = set(server.orm(
            "import json\nfrom foolgame.claims.models import Claim\nfrom foolgame.verifier.services import confirmed_by_people\n"
            f"print(json.dumps(list(Claim.objects.filter(confirmed_by_people(), pk__in={fooling!r}, status='active').values_list('pk', flat=True))))"))
        exported = exported_difference(server, study.slug)
    finally:
        server.stop()
    if not report(args, bots, figures, files, verified, exported, record, setup_s=setup_s, study_s=study_s, claims_file=claims_file,
                  database="postgresql" if args.database_url else "sqlite"):
        sys.exit(1)


def run_setup(server: Server, data: Path) -> None:
    """``make run``'s steps on the bench's claims: migrate, the categories and the claims, the
    sentence indexes, the first verifier; then the web process, as the Procfile starts it."""
    if not server.given_redis:
        harness.wait_port(server.redis_port)
    server.manage("migrate", "--no-input", "-v0")
    server.manage("load_categories", str(REPO / "fixtures" / "categories"), "--no-progress")
    server.manage("import_fm2", str(data), "--split", "dev", "--no-progress")
    server.manage("build_indexes", "--all", "--no-progress")
    server.manage("verifier", "train", "--if-due")
    log = server.log_path.open("ab")
    server.process = subprocess.Popen(procfile_web_args(server.port), cwd=REPO, env=server.env, stdout=log, stderr=subprocess.STDOUT)
    harness.wait_port(server.port)


def report(args: argparse.Namespace, bots: list[Bot], figures: dict, files: dict[str, Decimal], verified: set[int], exported: dict,
           record: harness.Record, *, setup_s: float, study_s: float, claims_file: Path, database: str) -> bool:
    """Print the figures (and one JSON line last); True when every check of the run held."""
    problems: list[str] = []
    by_arm = {arm["arm"]: arm for arm in figures["by_arm"]}
    started = {name: arm["started"] for name, arm in by_arm.items()}
    block_share = 4 // len(ARMS)
    imbalance = max(started.values()) - min(started.values())
    print(f"{len(bots)} participants on {database}, {claims_file.name}, {args.parallel} bots at a time; setup {setup_s:.0f} s, "
          f"the study {study_s:.0f} s")
    print(f"arm balance: {started} (largest difference {imbalance}; one block gives each arm {block_share})")
    if imbalance > block_share:
        problems.append(f"arms differ by {imbalance}, more than one block's share ({block_share})")
    seconds = [bot.seconds for bot in bots if bot.requests]
    requests = [bot.requests for bot in bots if bot.requests]
    print(f"server time per participant (wall time of its own requests, summed): median {statistics.median(seconds):.2f} s, "
          f"p95 {harness.pct(seconds, 95):.2f} s, max {max(seconds):.2f} s; requests per participant median {statistics.median(requests):.0f}")
    by_kind: Counter = Counter()
    for bot in bots:
        by_kind.update(bot.seconds_by_kind)
    print("  of which, per participant on average: " + ", ".join(f"{kind} {value / len(seconds):.2f} s" for kind, value in by_kind.most_common()))
    costs = {arm: [c for bot in bots if bot.arm == arm for c in bot.clue_costs] for arm in started}
    print("a clue's cost on the round's clock, as the server answered: " + ", ".join(
        f"{arm} {statistics.median(c):.1f} s (set {next(a['settings']['clue_seconds'] for a in ARMS if a['name'] == arm)})" for arm, c in costs.items() if c))
    platform_ids = {bot.pid: bot for bot in bots}
    counted = {bot.pid: bonus_of(bot, verified) for bot in bots}
    counted_total = sum(counted.values(), Decimal("0.00"))
    file_total = sum(files.values(), Decimal("0.00"))
    differing = sorted(pid for pid in set(counted) | set(files) if counted.get(pid, Decimal(0)) != files.get(pid, Decimal(0)))
    fooling = sum(len(bot.fooling_claim_ids) for bot in bots)
    verdicts: Counter = Counter()
    for bot in bots:
        verdicts.update(bot.verdicts)
    print(f"bonus total: {file_total} from the bonus files ({len(files)} participants owed), {counted_total} by the bench's own count "
          f"({sum(b.right_votes for b in bots)} right votes, {sum(b.right_checks for b in bots)} right checks on settled claims, "
          f"{fooling} claims that fooled the model at the save (saves' verdicts {dict(verdicts)}), {len(verified)} of them verified; "
          f"cap {BONUS['cap']}): "
          f"{'they agree' if not differing else f'{len(differing)} participants differ'}")
    if differing:
        problems.append(f"the bonus files and the bench's count differ for {len(differing)} participants, e.g. "
                        + ", ".join(f"{pid}: file {files.get(pid)} counted {counted.get(pid)} ({platform_ids[pid].status})" for pid in differing[:3]))
    refused: Counter = Counter()
    for bot in bots:
        refused.update(bot.refused)
    print(f"claims written: {sum(len(bot.claim_ids) for bot in bots)} saved (held-out real claims), refused saves {dict(refused) or 0}")
    told = [bot for bot in bots if bot.fail]
    met = [bot for bot in told if bot.settled_met]
    screened = sum(arm["screened_out"] for arm in by_arm.values())
    screened_bots = [bot for bot in bots if bot.status == "screened_out"]
    wrongly = [bot for bot in screened_bots if not bot.fail]
    print(f"screened out: {screened} by the server's figures; {len(told)} bots told to fail the attention checks, {len(met)} of them "
          f"dealt a settled claim (the ones who could fail); {len(wrongly)} screened out without being told to")
    if screened != len(met) or wrongly or len(screened_bots) != screened:
        problems.append(f"screened out {screened} (bots saw {len(screened_bots)}), expected the {len(met)} failers dealt a settled claim")
    finished = [bot for bot in bots if bot.status == "finished"]
    right_codes = sum(1 for bot in finished if bot.code == "BENCHDONE") + sum(1 for bot in screened_bots if bot.code == "BENCHOUT")
    unfinished = [bot for bot in bots if bot.status not in ("finished", "screened_out")]
    print(f"codes: {len(finished)} finished with the completion code, {len(screened_bots)} screened out with the screen-out code, "
          f"{len(unfinished)} without a code" + (f" ({Counter(bot.unwritten or bot.status or 'no status' for bot in unfinished).most_common(3)})" if unfinished else ""))
    if right_codes != len(finished) + len(screened_bots) or unfinished:
        problems.append(f"{len(unfinished)} participants got no code")
    accuracy = {arm: by_arm[arm]["vote_accuracy"] for arm in started}
    planted = round(args.accuracy_b - args.accuracy_a, 4)
    own = {arm: sum(b.right_votes for b in bots if b.arm == arm) / max(1, sum(b.votes for b in bots if b.arm == arm)) for arm in started}
    difference = exported["difference"]["vote_accuracy"]
    low, high = difference["ci95"] or (None, None)
    inside = low is not None and low <= planted <= high
    misjudged = sum(bot.misjudged for bot in bots)
    print(f"vote accuracy per arm (the study's figures): {accuracy}; the bots' own: "
          + ", ".join(f"{arm} {value:.4f}" for arm, value in own.items())
          + f"; rounds whose false claim the bench's look-up got wrong: {misjudged}")
    odd = sum(bot.odd_votes for bot in bots)
    meant = {arm: sum(b.meant_right for b in bots if b.arm == arm) / max(1, sum(b.votes for b in bots if b.arm == arm)) for arm in started}
    print(f"votes the bots meant right: " + ", ".join(f"{arm} {value:.4f}" for arm, value in meant.items())
          + f"; answers whose picked or correct is not the vote sent: {odd}")
    if odd:
        problems.append(f"{odd} vote answers name another pick, or call it right or wrong against the false claim they name")
    if misjudged:
        problems.append(f"the bench's look-up named the wrong false claim in {misjudged} rounds: its planted skill is not what it played")
    played = round(meant["B"] - meant["A"], 4) if "A" in meant and "B" in meant else None
    played_inside = low is not None and played is not None and low <= played <= high
    print(f"planted difference B - A {planted:+.3f} (the bots' skills); the bots played {played:+.4f} (their own draws); "
          + (f"recovered from stats.json {difference['difference']:+.4f}, bootstrap 95% interval [{low:+.4f}, {high:+.4f}]: the played "
             f"difference is {'inside' if played_inside else 'OUTSIDE'} it, the planted one {'inside' if inside else 'outside'} "
             f"(a 95% interval misses the planted value in about one seed in twenty)" if low is not None else f"stats.json gave no interval ({difference})"))
    if played is None or difference["difference"] is None or abs(difference["difference"] - played) > 0.00015:
        problems.append(f"stats.json's difference {difference['difference']} is not the one the bots played ({played})")
    errors = Counter()
    for bot in bots:
        errors.update(bot.errors)
    if errors:
        problems.append(f"errors: {dict(errors.most_common(6))}")
    for problem in problems:
        print(f"PROBLEM: {problem}")
    case = f"{len(bots)} participants, 2 arms, {args.parallel} bots at a time, {database}"
    record.add(case, "server time per participant, median", round(statistics.median(seconds), 3), "s")
    record.add(case, "server time per participant, p95", round(harness.pct(seconds, 95), 3), "s")
    record.add(case, "arm imbalance", imbalance, "participants", target=f"<= {block_share}", ok=imbalance <= block_share)
    record.add(case, "bonus total, files minus the bench's count", float(file_total - counted_total), "GBP", target="0", ok=not differing)
    record.add(case, "accuracy difference B - A recovered (stats.json)", difference["difference"], "share", target=f"= the bots' {played}",
               ok=difference["difference"] is not None and played is not None and abs(difference["difference"] - played) <= 0.00015)
    record.add(case, "planted accuracy difference inside the 95% interval", int(inside), "yes/no")
    print(json.dumps({
        "participants": len(bots), "database": database, "parallel": args.parallel, "setup_s": round(setup_s, 1), "study_s": round(study_s, 1),
        "arms": started, "imbalance": imbalance, "block_share": block_share,
        "server_s_per_participant": {"median": round(statistics.median(seconds), 3), "p95": round(harness.pct(seconds, 95), 3), "max": round(max(seconds), 3),
                                     "mean_by_kind": {kind: round(value / len(seconds), 3) for kind, value in by_kind.most_common()}},
        "clue_cost_s": {arm: statistics.median(c) if c else None for arm, c in costs.items()},
        "bonus_file_total": str(file_total), "bonus_counted_total": str(counted_total), "bonus_differing": len(differing),
        "owed": len(files), "right_votes": sum(b.right_votes for b in bots), "right_checks": sum(b.right_checks for b in bots),
        "claims_saved": sum(len(bot.claim_ids) for bot in bots), "saves_refused": dict(refused), "fooling_claims": fooling, "verdicts": dict(verdicts), "verified_fooling_claims": len(verified),
        "told_to_fail": len(told), "failers_dealt_settled": len(met), "screened_out": screened, "screened_without_failing": len(wrongly),
        "finished": len(finished), "without_code": len(unfinished),
        "vote_accuracy": accuracy, "misjudged_rounds": misjudged, "odd_votes": odd, "meant_right": meant, "planted": planted, "played": played, "played_inside": played_inside, "recovered": difference["difference"], "ci95": difference["ci95"], "inside": inside,
        "exported_arms": [{k: arm[k] for k in ("arm", "participants", "votes", "vote_accuracy")} for arm in exported["arms"]],
        "problems": problems,
    }), flush=True)
    return not problems


if __name__ == "__main__":
    main()
