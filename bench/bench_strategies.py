"""The game's economy (GAME.md, "No points without the work"; issue 36, item 8): every strategy
that skips the reading, played against one server beside a simulated honest population, and
what it earns against honest play.

    python bench/bench_strategies.py [--database-url postgres://...] [--redis-url redis://...]
        [--claims-file ../shared/data/fm2/dev.jsonl] [--rounds 40] [--record FILE]

One server, started as the Procfile starts it (``bench_abuse.Server``: the demo data, and
``--claims-file`` for more claims to deal), and these accounts, each over the public interface:

- **honest readers** (6): vote with the accuracy of the FM2 release's voters (0.8, GAME.md's
  prior), after buying two clues: the population.
- **honest random** (3): a vote at random, no clue. The bar: GAME.md says no strategy that does
  not read may earn more than honest random play.
- **constant**: always the left claim. **instant oracle**: always right at once, no clue (any
  leak, or a look-up, played as fast as a script can).
- **forfeit and relay**: one account deals and gives up rounds, reads their answers once each
  original deadline has passed (as designed), and a second votes only on claims it saw.
- **check reader**: answers SUPPORTS to every fact check and reads what comes back.
- **template writer**: claims of page words in a grammatical template ("<Title> was the <word>
  of <word> in <word>."). **near-copy editor**: a live claim with one word changed.
- **model-point ring**: an author's claim the model got wrong, voted as labelled by five fresh
  accounts; then the verifier's award runs.
- **look-alike names**: sign-ups that read as reserved or taken names.

The operator's look-ups (a claim's label to simulate a reader, holds) use the ORM through
``manage.py shell``, never the players' interface.

**Points an hour** are on the game's own clock: a round costs the seconds its clock ran (the
server's ``180 - remaining`` at the vote, clues included, 180 for a give-up) plus 10 s to deal
and read the result; a check its 45 s at most (the time it was answered in, here ~0, plus 10 s);
a write task 30 s (a script's); capped by the deal limit of a new account. **Board points** are
what the public leaderboards show: a held account is not on them. The rating is ``skill`` of
``GET /api/me``. Each strategy's row says whether it was held or refused, and the verdict:
``ok`` when a strategy that does not read earns no more board points an hour than the honest
random median (or is held), and meets the defence issue 36 names for it: the instant oracle and
the relay's voter held (within 50 relayed votes: fewer need not be held yet), the check reader paid no check points, every template and near-copy
refused, the ring paid nothing and not trained on, every look-alike name refused.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from bench_abuse import Player, Server, _some_gold, code_of  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
READER_ACCURACY = 0.8
RELAY_HOLD_WITHIN = 50  # relayed votes by which the relay's voter must be held (issue 36, item 4)
OVERHEAD_S = 10.0


class Account:
    """One strategy's account and its tally on the game's clock."""

    def __init__(self, server: Server, name: str, *, signup: bool = True) -> None:
        self.player = Player(server, name)
        self.name = name
        self.clock_s = 0.0
        self.actions = 0
        self.refused: dict[str, int] = {}
        if signup:
            status = self.player.signup()
            assert status == 201, (name, status)

    def refuse(self, code: str) -> None:
        self.refused[code] = self.refused.get(code, 0) + 1


def labels_by_text(server: Server) -> dict[str, str]:
    """Every claim's label by its text (the operator's look-up standing in for reading)."""
    return server.orm("from foolgame.claims.models import Claim; import json; print(json.dumps(dict(Claim.objects.values_list('text', 'label'))))")


def play_rounds(account: Account, rounds: int, choose: Callable[[dict], int | None], *, clues: int = 0) -> None:
    """Deal, start, buy ``clues`` clues, and vote ``choose(state)`` (None: give up), ``rounds`` times."""
    for _ in range(rounds):
        status, dealt, _ = account.player.call("POST", "/api/rounds", {})
        if status != 201:
            account.refuse(code_of(status, dealt))
            if status in (404, 429):
                return
            continue
        round_id = dealt["id"]
        status, state, _ = account.player.call("POST", f"/api/rounds/{round_id}/start")
        if status != 200:
            account.refuse(code_of(status, state))
            continue
        remaining = state.get("remaining") or 180.0
        for n in range(clues):
            status, clue, _ = account.player.call("POST", f"/api/rounds/{round_id}/reveal", {"claim": n % 2})
            if status == 200:
                remaining = clue["remaining"]
        choice = choose(state)
        if choice is None:
            account.player.call("POST", f"/api/rounds/{round_id}/forfeit")
            account.clock_s += 180 + OVERHEAD_S
        else:
            status, result, _ = account.player.call("POST", f"/api/rounds/{round_id}/vote", {"false_claim": choice})
            if status != 200:
                account.refuse(code_of(status, result))
            account.clock_s += max(0.0, 180 - float(remaining)) + OVERHEAD_S
        account.actions += 1


def _false_of(state: dict, labels: dict[str, str]) -> int | None:
    known = [labels.get(claim["text"]) for claim in state.get("claims") or []]
    if "REFUTES" in known:
        return known.index("REFUTES")
    return None


def reader(labels: dict[str, str], rng: random.Random) -> Callable[[dict], int]:
    def choose(state: dict) -> int:
        false = _false_of(state, labels)
        if false is None:
            return rng.randrange(2)
        return false if rng.random() < READER_ACCURACY else 1 - false

    return choose


def strategy_relay(server: Server, labels: dict[str, str], rounds: int, wait_s: float) -> tuple[Account, Account]:
    """A gives up ``rounds`` rounds, waits for their original deadlines, reads the answers in
    its history; B votes only on pairs holding a claim A saw (and gives up the rest)."""
    giver, voter = Account(server, "relay-giver"), Account(server, "relay-voter")
    play_rounds(giver, rounds, lambda state: None)
    time.sleep(wait_s)
    learned: dict[str, str] = {}
    status, history, _ = giver.player.call("GET", f"/api/me/rounds?limit={min(rounds, 50)}")
    for row in (history or {}).get("rounds", []) if status == 200 else []:
        if row.get("false_claim") in (0, 1):
            for i, claim in enumerate(row["claims"]):
                learned[claim["text"]] = "REFUTES" if i == row["false_claim"] else "SUPPORTS"

    votes = [0]

    def relayed(state: dict) -> int | None:
        known = [learned.get(claim["text"]) for claim in state.get("claims") or []]
        if "REFUTES" in known:
            votes[0] += 1
            return known.index("REFUTES")
        if "SUPPORTS" in known:
            votes[0] += 1
            return 1 - known.index("SUPPORTS")
        return None

    play_rounds(voter, rounds, relayed)
    voter.learned = len(learned)  # type: ignore[attr-defined]
    voter.relayed_votes = votes[0]  # type: ignore[attr-defined]
    return giver, voter


def strategy_check_reader(server: Server, checks: int) -> Account:
    account = Account(server, "check-reader")
    status, check, _ = account.player.call("POST", "/api/checks")
    for _ in range(checks):
        if status not in (200, 201) or not check:
            account.refuse(code_of(status, check))
            break
        status, result, _ = account.player.call("POST", f"/api/checks/{check['id']}", {"label": "SUPPORTS"})
        account.clock_s += OVERHEAD_S
        account.actions += 1
        check = (result or {}).get("next") if status == 200 else None
        status = 200 if check else status
    return account


def _task(account: Account) -> dict | None:
    status, task, _ = account.player.call("POST", "/api/write-tasks", {})
    if status != 201:
        account.refuse(code_of(status, task))
        return None
    return task


def _save_claim(account: Account, task: dict, text: str) -> bool:
    """Save ``text`` under the write task (gold: a sentence that is not its lexical top hit), a
    script's 30 s of writing on the clock; a refusal is counted by its code. Saved or not."""
    gold = _some_gold(account.player, task["page"], text)
    status, body, _ = account.player.call("POST", "/api/claims", {"task": task["id"], "text": text, "gold_sentence_ids": gold}, timeout=300)
    account.clock_s += 30 + OVERHEAD_S
    account.actions += 1
    if status != 201:
        account.refuse(code_of(status, body))
    return status == 201


def strategy_template_writer(server: Server, claims: int, rng: random.Random) -> Account:
    """``claims`` templates; a refused one leaves its write task open, and the next template
    is tried on it (as a script would), a new task only after a save."""
    account = Account(server, "template-writer")
    task = None
    for _ in range(claims):
        task = task or _task(account)
        if task is None:
            break
        status, page, _ = account.player.call("GET", f"/api/pages/{task['page']}")
        sentences = (page or {}).get("sentences") or []
        words = [w.strip(".,;:()\"'") for s in sentences for w in s["text"].split()]
        words = [w for w in words if len(w) > 3 and w.isalpha()]
        if len(words) < 3 or not sentences:
            continue
        a, b, c = rng.sample(words, 3)
        text = f"{page['title']} was the {a.lower()} of {b.lower()} in {c.lower()}."
        if _save_claim(account, task, text):
            task = None
    return account


def strategy_near_copy(server: Server, claims: int, by_page: dict[str, list[str]]) -> Account:
    account = Account(server, "near-copier")
    for _ in range(claims):
        task = _task(account)
        if task is None:
            break
        live = by_page.get(str(task["page"])) or []
        if not live:
            continue
        original = live[0]
        text = original.replace(" was ", " is ", 1) if " was " in original else original.replace(" the ", " a ", 1) if " the " in original else original.rsplit(" ", 1)[0] + "."
        _save_claim(account, task, text)
    return account


def strategy_ring(server: Server, members: int) -> dict:
    """An author's claim the model got wrong (planted, as an active version would record it),
    five fresh accounts that vote its label as settled votes (planted through the ORM: being
    dealt it takes tens of deals each), then the verifier's award and the training set."""
    author = Account(server, "ring-author")
    ring = [Account(server, f"ring-member-{i}") for i in range(members)]
    code = f"""
import json
from django.utils import timezone
from datetime import timedelta
from django.contrib.auth import get_user_model
from foolgame.claims.models import Claim
from foolgame.verifier.models import VerifierVersion, WrittenAgainst
from foolgame.verifier import services
from foolgame.voting.models import Round, Vote
User = get_user_model()
author = User.objects.get(username="ring-author")
claim = Claim.objects.filter(status="active", gold_links__isnull=False, external_id__isnull=True).first() or Claim.objects.filter(status="active", gold_links__isnull=False).first()
Claim.objects.filter(pk=claim.pk).update(author=author, external_id=None)
claim.refresh_from_db()
version = VerifierVersion.objects.filter(status="active").first() or VerifierVersion.objects.create(number=999, kind="head", name="ring", status="active", fingerprint="ring", blob=b"")
WrittenAgainst.objects.update_or_create(claim=claim, version=version, defaults=dict(label="REFUTES" if claim.label == "SUPPORTS" else "SUPPORTS", supports=0.5))
partner = Claim.objects.filter(page=claim.page, status="active").exclude(label=claim.label).first() or Claim.objects.exclude(label=claim.label).exclude(pk=claim.pk).first()
now = timezone.now()
for name in {json.dumps([a.name for a in ring])}:
    r = Round.objects.create(player=User.objects.get(username=name), left_claim=claim, right_claim=partner, state="voted", started_at=now - timedelta(seconds=5), deadline=now + timedelta(seconds=175), false_claim_index=0 if claim.label == "REFUTES" else 1)
    Vote.objects.create(round=r, false_claim_index=r.false_claim_index, correct=True, points=115, remaining=115.0, created=now)
paid = services.model_points_award(claim_ids=[claim.pk])
print(json.dumps({{"model_points_paid": paid, "settled_by_ring": claim.pk in services.settled_by_game_votes(), "trained_on": services.verified_claims().filter(pk=claim.pk).exists()}}))
"""
    return server.orm(code)


def strategy_lookalikes(server: Server) -> dict:
    names = ["ǝdmin", "аdmin", "admіn", "ADMIN", "adm1n"]
    codes = {}
    for name in names:
        status, body, _ = Player(server, name).call("POST", "/api/auth/signup", {"username": name, "password": "correct horse battery staple 42"})
        codes[name] = code_of(status, body)
    return codes


def standing(server: Server, accounts: list[Account]) -> dict[str, dict]:
    """Each account's ledger points, rating and hold (operator's view) and board presence."""
    names = [a.name for a in accounts]
    code = f"""
import json
from django.contrib.auth import get_user_model
from django.db.models import Sum
from foolgame.players.models import LedgerEntry
from foolgame.moderation.models import PlayerHold
User = get_user_model()
out = {{}}
for user in User.objects.filter(username__in={json.dumps(names)}):
    points = LedgerEntry.objects.filter(player=user).aggregate(n=Sum("amount"))["n"] or 0
    by_kind = dict(LedgerEntry.objects.filter(player=user).values_list("kind").annotate(n=Sum("amount")))
    out[user.username] = {{"points": points, "by_kind": by_kind, "held": PlayerHold.objects.filter(player=user, held=True).exists()}}
print(json.dumps(out))
"""
    rows = server.orm(code)
    for account in accounts:
        me = account.player.call("GET", "/api/me")[1] or {}
        skill = me.get("skill") or {}
        rows.setdefault(account.name, {}).update(rating=skill.get("rating") if isinstance(skill, dict) else skill)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claims-file", type=Path, help="an FM2 release file imported after the demo data (more claims to deal)")
    parser.add_argument("--rounds", type=int, default=40, help="rounds each voting strategy plays")
    parser.add_argument("--relay-wait", type=float, default=185, help="seconds the relay waits for the give-ups' deadlines")
    parser.add_argument("--checks", type=int, default=60)
    parser.add_argument("--claims", type=int, default=12, help="claims each writing strategy tries")
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument(
        "--fluency-model", type=Path, default=None,
        help="the learnt fluency check's folder (FM2_FLUENCY_MODEL_DIR) the server saves claims with: trained on the server's "
        "pages first when it holds no model (minutes), and kept for the next run on the same pages (default: "
        "var/bench/fluency-strategies-<the claims file's name, or demo>)",
    )
    parser.add_argument("--no-fluency-model", action="store_true", help="the word rules alone, as on an instance whose trainer has not run")
    harness.add_service_args(parser)
    args = parser.parse_args()
    record = harness.Record("bench_strategies", args.record)
    if not args.redis_url and not shutil.which("redis-server"):
        sys.exit("redis-server is not installed (apt-get install redis-server), or pass --redis-url")
    rng = random.Random(args.seed)
    server = Server(args.database_url, args.claims_file, args.redis_url)
    pages_of = args.claims_file.stem if args.claims_file else "demo"
    fluency = None if args.no_fluency_model else (args.fluency_model or REPO / "var" / "bench" / f"fluency-strategies-{pages_of}").resolve()
    server.env["FM2_FLUENCY_MODEL_DIR"] = str(fluency or server.workdir / "no-fluency-model")
    server.env["FM2_FLUENCY_AUTO_TRAIN"] = "0"
    rows: list[dict[str, Any]] = []
    try:
        server.start()
        if fluency is not None and not (fluency / "fluency.json").exists():
            # What the trainer role does by itself on an instance with pages (docs/authoring.md);
            # the web process loads the new model at its next save.
            print(f"training the fluency check on the server's pages into {fluency} (minutes)", file=sys.stderr, flush=True)
            fluency.parent.mkdir(parents=True, exist_ok=True)
            print(server.manage("train_fluency", "-v0").stdout.strip(), file=sys.stderr)
        if fluency is None:
            print("fluency check: the word rules alone", flush=True)
        else:
            trained = json.loads((fluency / "fluency.json").read_text())
            print(f"fluency check: the word rules and the learnt score ({trained['trained_pages']} pages trained on, "
                  f"{trained['held_out_pages']} held out; {fluency})", flush=True)
        labels = labels_by_text(server)
        by_page = server.orm(
            "import json\nfrom foolgame.claims.models import Claim\nout = {}\n"
            "for page, text in Claim.objects.filter(status='active').values_list('page_id', 'text'): out.setdefault(str(page), []).append(text)\n"
            "print(json.dumps(out))"
        )
        honest = [Account(server, f"honest-reader-{i}") for i in range(6)]
        randoms = [Account(server, f"honest-random-{i}") for i in range(3)]
        constant, oracle = Account(server, "constant"), Account(server, "instant-oracle")
        for account in honest:
            play_rounds(account, args.rounds, reader(labels, rng), clues=2)
        for account in randoms:
            play_rounds(account, args.rounds, lambda state: rng.randrange(2))
        play_rounds(constant, args.rounds, lambda state: 0)
        play_rounds(oracle, args.rounds, lambda state: _false_of(state, labels) if _false_of(state, labels) is not None else 0)
        giver, relayed = strategy_relay(server, labels, args.rounds, args.relay_wait)
        checker = strategy_check_reader(server, args.checks)
        templates = strategy_template_writer(server, args.claims, rng)
        copier = strategy_near_copy(server, args.claims, by_page)
        ring = strategy_ring(server, 5)
        lookalikes = strategy_lookalikes(server)
        accounts = [*honest, *randoms, constant, oracle, giver, relayed, checker, templates, copier]
        table = standing(server, accounts)
    finally:
        server.stop()

    def hourly(account: Account) -> tuple[float, float]:
        row = table.get(account.name, {})
        hours = max(account.clock_s, 1.0) / 3600
        points = row.get("points", 0) / hours
        return round(points), round(0 if row.get("held") else points)

    bar = statistics.median(hourly(a)[1] for a in randoms)
    honest_median = statistics.median(hourly(a)[1] for a in honest)
    honest_rating = statistics.median((table[a.name].get("rating") or 0) for a in honest)
    print(f"honest readers' median: {honest_median} board points an hour, rating {honest_rating}; honest random play's median (the bar): {bar}")
    print(f"{'strategy':<22} {'actions':>7} {'points/h':>9} {'board/h':>8} {'rating':>7} {'held':>5}  refused / outcome  verdict")
    strategies = [("constant", constant), ("instant oracle", oracle), ("relay: giver", giver), ("relay: voter", relayed),
                  ("check reader", checker), ("template writer", templates), ("near-copy editor", copier)]

    def refused_all(account: Account) -> bool:
        saved = account.actions - sum(n for code, n in account.refused.items() if not code.endswith("too_many_open_tasks"))
        return account.actions > 0 and saved <= 0

    # Beyond earning no more than honest random play, what issue 36 says each must meet.
    defences: dict[str, Callable[[Account, dict], bool]] = {
        "instant oracle": lambda account, row: bool(row.get("held")),
        # Held within 50 relayed votes (issue 36, item 4): fewer than 50 need not be held yet.
        "relay: voter": lambda account, row: bool(row.get("held")) or getattr(account, "relayed_votes", 0) < RELAY_HOLD_WITHIN,
        "check reader": lambda account, row: not (row.get("by_kind") or {}).get("check"),
        "template writer": lambda account, row: refused_all(account),
        "near-copy editor": lambda account, row: refused_all(account),
    }
    for label, account in [("honest reader", honest[0]), ("honest random", randoms[0])] + strategies:
        row = table.get(account.name, {})
        points, board = hourly(account)
        refused = account.refused or ""
        if hasattr(account, "relayed_votes"):
            refused = f"{account.relayed_votes} relayed votes {refused}".strip()
        reads = label.startswith("honest")
        ok = reads or ((board <= bar or bool(row.get("held"))) and defences.get(label, lambda *_: True)(account, row))
        print(f"{label:<22} {account.actions:>7} {points:>9} {board:>8} {str(row.get('rating')):>7} {str(row.get('held')):>5}  {refused}  {'' if reads else ('ok' if ok else 'NOT HELD')}")
        rows.append({"strategy": label, "points_per_hour": points, "board_points_per_hour": board, "rating": row.get("rating"), "held": row.get("held"),
                     "refused": account.refused, "by_kind": row.get("by_kind")})
        if not reads:
            record.add(label, "board points an hour", board, "points/h", floor=bar, target="<= honest random, and held or refused as issue 36 says", ok=ok)
    ring_ok = not ring.get("model_points_paid") and not ring.get("trained_on")
    print(f"{'model-point ring':<22} {ring}  {'ok' if ring_ok else 'PAID'}")
    record.add("model-point ring", "model points paid", ring.get("model_points_paid"), "claims", target="0 and not trained on", ok=ring_ok)
    refused_names = sum(1 for code in lookalikes.values() if not code.startswith("201"))
    print(f"{'look-alike names':<22} {lookalikes}  refused {refused_names} of {len(lookalikes)}")
    record.add("look-alike names", "refused", refused_names, f"of {len(lookalikes)}", target="all", ok=refused_names == len(lookalikes))
    print(json.dumps({"bar": bar, "honest_median": honest_median, "honest_rating": honest_rating, "rows": rows, "ring": ring, "lookalikes": lookalikes,
                      "relay_claims_learned": getattr(relayed, "learned", 0),
                      "relayed_votes": getattr(relayed, "relayed_votes", 0)}, default=str))


if __name__ == "__main__":
    main()
