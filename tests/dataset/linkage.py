"""The re-identification attack of issue 17, and a simulated game to run it on.

The attacker holds the public leaderboards (every kind, every player: the strongest reading
of ``GET /api/leaderboard``) and one export. For each pseudonym of the export they work out
the interval of points each kind of leaderboard must show for its owner (exact sums when the
export carries exact points, bounds when it carries time buckets), and match it against the
players. A player is *identified* when the join pairs them with one pseudonym unambiguously.

Two readings of a pseudonym are tried and both count. As a fragment of a person (the format
that splits a person's claims and votes into runs), each kind's interval only bounds the
owner's points from below, which holds for any export: a pseudonym that fits one player
only is theirs, and so is the one pseudonym a player fits. As a whole person (main's format:
one pseudonym per player, as author and voter), every kind must fall inside its interval;
that reading may be wrong, so a pair counts only when each is the other's only fit.

``simulate_game`` writes a game of many players straight into the database with
``bulk_create``: claims with their write rows, rounds with votes, clues, likes and the
ledger rows ``scoring.rounds.round_awards`` gives, exactly as the services would write them.

Rooms (issue 24). A live room's results are public to its members: after each question,
who found it with their points, and the scoreboard (whose ``voted`` count grew: who voted).
The members know the pair's texts, hence its claim ids in the export. ``room_reidentify``
joins those results to ``votes.jsonl``: each member who voted on a question must own one of
the pair's votes whose ``correct`` and time bucket fit what the room showed; a member left
with one candidate pseudonym (after taking out those pinned on others) is named.
``simulate_rooms`` plays rooms among a simulated game's players, and ``room_results``
reads what their members saw.
"""

from __future__ import annotations

import json
import math
import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone as dt_timezone
from pathlib import Path
from typing import Any

import numpy as np

KINDS = ("total", "write", "verify", "fool", "like")
"""The points leaderboards (``GET /api/leaderboard?kind=``)."""
COLUMNS = (*KINDS, "votes")
"""What the join compares: each kind's points, and the rated votes the skill table shows."""
SKILL_MIN_VOTES = 10
"""The skill table lists players with at least this many votes (docs/ratings.md), so a player
missing from it is known to have fewer."""
POT = 120
WRITE_POINTS = 100
LIKE_POINTS = 10


# --- the attack ------------------------------------------------------------------------------


@dataclass
class _Bounds:
    lo: dict[str, float] = field(default_factory=lambda: dict.fromkeys(COLUMNS, 0.0))
    hi: dict[str, float] = field(default_factory=lambda: dict.fromkeys(COLUMNS, 0.0))

    def add(self, kind: str, lo: float, hi: float) -> None:
        for k in (kind, "total"):
            self.lo[k] += lo
            self.hi[k] += hi


def _voter_points_range(vote: Mapping[str, Any]) -> tuple[int, int]:
    """What a correct vote paid its voter, as the export lets one tell."""
    if vote.get("points") is not None:
        return vote["points"], vote["points"]
    if vote.get("remaining") is not None:
        exact = min(POT, max(0, math.floor(vote["remaining"])))
        return exact, exact
    if vote.get("remaining_bucket") is not None:
        low = vote["remaining_bucket"]
        width = vote.get("remaining_bucket_width", 30)
        return min(POT, low), min(POT, low + width - 1)
    return 0, POT


def _read_jsonl(path: Path) -> Iterable[dict[str, Any]]:
    if path.exists():
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                yield json.loads(line)


def export_bounds(export_dir: Path) -> dict[str, _Bounds]:
    """Per pseudonym, the interval each leaderboard kind must show for its owner."""
    bounds: dict[str, _Bounds] = defaultdict(_Bounds)
    authors: dict[str, str] = {}
    for split in ("train", "dev", "test"):
        for claim in _read_jsonl(export_dir / f"{split}.jsonl"):
            if not str(claim["id"]).startswith("game-"):
                continue  # the release's claims: its system author is on no leaderboard
            authors[claim["id"]] = claim["author"]
            bounds[claim["author"]].add("write", WRITE_POINTS, WRITE_POINTS)
            likes = claim.get("total_likes") or 0
            bounds[claim["author"]].add("like", LIKE_POINTS * likes, LIKE_POINTS * likes)
    for vote in _read_jsonl(export_dir / "votes.jsonl"):
        if vote.get("voter") is None:
            continue  # a vote of no pseudonym (a room's): nothing to pin it on
        voter = bounds[vote["voter"]]
        if vote.get("outcome") == "voted" or vote.get("correct") is not None:
            voter.lo["votes"] += 1
            voter.hi["votes"] += 1
        if not vote.get("correct"):
            continue
        low, high = _voter_points_range(vote)
        bounds[vote["voter"]].add("verify", low, high)
        for role in ("true_claim", "false_claim"):
            author = authors.get(vote[role])
            if author is None:
                continue
            # The authors share what the voter left: the true claim's author the lower half.
            def share(won: int, role: str = role) -> int:
                left = POT - won
                return left // 2 if role == "true_claim" else left - left // 2
            bounds[author].add("fool", share(high), share(low))
    return dict(bounds)


@dataclass
class Linkage:
    matches: dict[str, str]
    """username -> the pseudonym the join pins on them."""
    pseudonyms: int
    players: int


def reidentify(leaderboards: Mapping[str, Iterable[Mapping[str, Any]]], export_dir: Path) -> Linkage:
    """Join the public leaderboards to an export; return the unambiguous pairs it finds.

    ``leaderboards`` maps each points kind to its rows (``username``, ``points``) and, when
    the game has it, ``"skill"`` to the skill table's rows (``username``, ``votes``)."""
    public_lo: dict[str, dict[str, float]] = defaultdict(lambda: {**dict.fromkeys(KINDS, 0.0), "votes": 0.0})
    public_hi: dict[str, dict[str, float]] = defaultdict(lambda: {**dict.fromkeys(KINDS, 0.0), "votes": SKILL_MIN_VOTES - 1.0})
    for kind, rows in leaderboards.items():
        for row in rows:
            column, value = ("votes", row["votes"]) if kind == "skill" else (kind, row["points"])
            public_lo[row["username"]][column] = public_hi[row["username"]][column] = value
    if "skill" not in leaderboards:  # no skill table: nothing is known of the votes
        for name in public_hi:
            public_hi[name]["votes"] = np.inf
    names = sorted(public_lo)
    p_lo = np.array([[public_lo[name][k] for k in COLUMNS] for name in names], dtype=float)  # players x columns
    p_hi = np.array([[public_hi[name][k] for k in COLUMNS] for name in names], dtype=float)
    bounds = export_bounds(export_dir)
    pseudonyms = sorted(bounds)
    lo = np.array([[bounds[p].lo[k] for k in COLUMNS] for p in pseudonyms], dtype=float)  # pseudonyms x columns
    hi = np.array([[bounds[p].hi[k] for k in COLUMNS] for p in pseudonyms], dtype=float)
    matches: dict[str, str] = {}
    if not names or not pseudonyms:
        return Linkage(matches, len(pseudonyms), len(names))
    above = (p_hi[:, None, :] >= lo[None, :, :]).all(axis=2)  # players x pseudonyms
    whole = above & (p_lo[:, None, :] <= hi[None, :, :]).all(axis=2)
    # Lower bounds hold whatever a pseudonym stands for: one that fits a single player is
    # theirs, and so is the only one a player fits. Exact intervals hold only if a pseudonym
    # is a whole person, so there the pair must be each other's only fit (else the reading
    # contradicts itself: two whole pseudonyms for one player).
    for fits, mutual in ((above, False), (whole, True)):
        by_player, by_pseudonym = fits.sum(axis=1), fits.sum(axis=0)
        for i, j in zip(*np.nonzero(fits)):
            alone = (by_player[i] == 1, by_pseudonym[j] == 1)
            if all(alone) if mutual else any(alone):
                matches.setdefault(names[i], pseudonyms[j])
    return Linkage(matches, len(pseudonyms), len(names))


def identified(linkage: Linkage, owns: Callable[[str, str], bool]) -> list[str]:
    """The players the join named rightly: ``owns(username, pseudonym)`` is the truth."""
    return sorted(name for name, pseudonym in linkage.matches.items() if owns(name, pseudonym))


# --- the room join (issue 24) ---------------------------------------------------------------


@dataclass
class RoomLinkage:
    matches: dict[str, set[str]]
    """username -> the pseudonyms the join pins on them."""
    questions: int
    players: int


def _points_fit(bucket: int | None, points: int) -> bool:
    """A vote's ``remaining_bucket`` and the points the room showed for it agree."""
    if bucket is None:
        return True
    return min(POT, bucket) <= points <= min(POT, bucket + 29)


def room_reidentify(results: Iterable[Mapping[str, Any]], export_dir: Path) -> RoomLinkage:
    """Join the rooms' public results (``room_results``) to an export's votes."""
    by_pair: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for vote in _read_jsonl(export_dir / "votes.jsonl"):
        if vote.get("voter") is not None and vote.get("outcome", "voted") == "voted":
            by_pair[(vote["true_claim"], vote["false_claim"])].append(vote)
    candidates: list[tuple[str, set[str]]] = []
    players: set[str] = set()
    results = list(results)
    for question in results:
        found = {f["username"]: f["points"] for f in question["found"]}
        rows = by_pair.get((question["true_claim"], question["false_claim"]), [])
        for name in question["voters"]:
            players.add(name)
            fits = {
                row["voter"]
                for row in rows
                if bool(row.get("correct")) == (name in found) and (name not in found or _points_fit(row.get("remaining_bucket"), found[name]))
            }
            candidates.append((name, fits))
    matches: dict[str, set[str]] = defaultdict(set)
    owner: dict[str, str] = {}
    changed = True
    while changed:  # pin the lone candidates, take them from the others, again
        changed = False
        for name, fits in candidates:
            left = {p for p in fits if owner.get(p, name) == name}
            if len(left) == 1:
                (pseudonym,) = left
                if pseudonym not in owner:
                    owner[pseudonym] = name
                    matches[name].add(pseudonym)
                    changed = True
    return RoomLinkage(dict(matches), len(results), len(players))


def room_identified(linkage: RoomLinkage, owns: Callable[[str, str], bool]) -> tuple[list[str], int]:
    """The players the room join named rightly, and how many of its pins were wrong."""
    right = sorted(name for name, pseudonyms in linkage.matches.items() if any(owns(name, p) for p in pseudonyms))
    wrong = sum(1 for name, pseudonyms in linkage.matches.items() for p in pseudonyms if not owns(name, p))
    return right, wrong


def simulate_rooms(game: SimulatedGame, *, rooms: int = 30, seed: int = 0, start: datetime | None = None) -> int:
    """Rooms played by the game's players (2 to 6 members, 3 to 5 questions of 180 s), each
    question one pair for all, with the rounds, votes, awards and room rows the services
    write. Returns the number of questions."""
    from foolgame.claims.models import Claim
    from foolgame.players.models import LedgerEntry
    from foolgame.rooms.models import Room, RoomMember, RoomQuestion, RoomRound
    from foolgame.voting.models import Round, Vote
    from scoring.rounds import round_awards

    rng = random.Random(seed + 1000)
    moment = start or datetime(2026, 3, 20, 18, 0, tzinfo=dt_timezone.utc)
    ids = sorted(game.usernames)
    claims = list(Claim.objects.filter(author_id__in=ids).values("id", "label", "author_id"))
    by_label = {label: [c for c in claims if c["label"] == label] for label in Claim.Label.values}
    asked = 0
    for n in range(rooms):
        members = rng.sample(ids, rng.randint(2, 6))
        moment += timedelta(minutes=rng.randint(5, 90))
        room = Room.objects.create(code=f"S{seed % 10}{n:04d}"[:8], host_id=members[0], questions=rng.randint(3, 5), seconds=180,
                                   state=Room.State.ENDED, created=moment, end_reason=Room.EndReason.DONE)
        RoomMember.objects.bulk_create(RoomMember(room=room, player_id=m, joined_at=moment, seen_at=moment) for m in members)
        for number in range(1, room.questions + 1):
            true_c = rng.choice([c for c in by_label["SUPPORTS"] if c["author_id"] not in members])
            false_c = rng.choice([c for c in by_label["REFUTES"] if c["author_id"] not in members])
            false_index = rng.randint(0, 1)
            left, right = (false_c, true_c) if false_index == 0 else (true_c, false_c)
            moment += timedelta(minutes=4)
            question = RoomQuestion.objects.create(room=room, number=number, left_claim_id=left["id"], right_claim_id=right["id"],
                                                   false_claim_index=false_index, state=RoomQuestion.State.DONE, started_at=moment,
                                                   deadline=moment + timedelta(seconds=180), ended_at=moment + timedelta(seconds=180))
            asked += 1
            for member in members:
                remaining = rng.uniform(3.0, 176.0)
                votes = rng.random() < 0.9
                round_ = Round.objects.create(player_id=member, left_claim_id=left["id"], right_claim_id=right["id"], false_claim_index=false_index,
                                              state=Round.State.VOTED if votes else Round.State.TIMED_OUT, started_at=moment,
                                              deadline=moment + timedelta(seconds=180),
                                              ended_at=moment + timedelta(seconds=180 - (remaining if votes else 0)))
                RoomRound.objects.create(question=question, player_id=member, round=round_)
                if not votes:
                    continue
                correct = rng.random() < 0.7
                awards = round_awards(outcome="correct" if correct else "wrong", remaining=remaining, voter=member,
                                      true_claim_author=true_c["author_id"], false_claim_author=false_c["author_id"], pot=POT)
                Vote.objects.create(round=round_, false_claim_index=false_index if correct else 1 - false_index, correct=correct,
                                    points=sum(a.amount for a in awards if a.role == "voter"), remaining=remaining, created=round_.ended_at)
                LedgerEntry.objects.bulk_create(
                    LedgerEntry(player_id=a.player, amount=a.amount, kind=str(a.kind), claim_id=false_c["id"] if a.role != "true_claim_author" else true_c["id"],
                                cause=f"round:{round_.pk}")
                    for a in awards
                )
        room.ended_at = moment + timedelta(seconds=180)
        room.current = room.questions  # as the services leave a room that dealt them all
        room.save(update_fields=["ended_at", "current"])
    return asked


def room_results() -> list[dict[str, Any]]:
    """What every room's members saw after each question: the pair (as the export's claim
    ids: the members read its texts), who found it with their points (``found``), and who
    voted on it (the ``voted`` counts that grew on the scoreboard)."""
    from foolgame.rooms.models import Room, RoomQuestion, RoomRound
    from foolgame.rooms.selectors import room_results as results_of

    shown = []
    for room in Room.objects.all():
        for question in RoomQuestion.objects.filter(room=room, state=RoomQuestion.State.DONE).order_by("number"):
            _, found = results_of(room=room, question=question)
            true_id, false_id = (question.right_claim_id, question.left_claim_id) if question.false_claim_index == 0 else (question.left_claim_id, question.right_claim_id)
            voters = RoomRound.objects.filter(question=question, round__vote__isnull=False).values_list("player__username", flat=True)
            shown.append({"true_claim": f"game-{true_id}", "false_claim": f"game-{false_id}", "found": found, "voters": sorted(voters)})
    return shown


# --- the simulated game ----------------------------------------------------------------------


@dataclass
class SimulatedGame:
    usernames: dict[int, str]
    """user id -> username of the simulated players."""
    rounds: int
    claims: int


def _activity(rng: random.Random, scale: float, cap: int) -> int:
    """Heavy-tailed: most players do a little, a few do a lot (as in real games)."""
    return min(cap, int(rng.paretovariate(1.3) * scale) - int(scale) + rng.randint(0, 2))


def simulate_game(*, players: int = 240, seed: int = 0, start: datetime | None = None) -> SimulatedGame:
    """A played game of ``players`` players written with bulk_create; see the module doc."""
    from django.contrib.auth import get_user_model

    from foolgame.claims.models import Claim
    from foolgame.pages.models import Category, Page
    from foolgame.players.models import LedgerEntry
    from foolgame.voting.models import ClueReveal, Like, Round, Vote
    from scoring.rounds import round_awards

    rng = random.Random(seed)
    start = start or datetime(2026, 3, 2, 9, 0, tzinfo=dt_timezone.utc)
    User = get_user_model()
    users = User.objects.bulk_create(User(username=f"sim_{seed}_{i:04d}") for i in range(players))
    users = list(User.objects.filter(username__startswith=f"sim_{seed}_").order_by("id"))
    category, _ = Category.objects.get_or_create(name="Simulated", defaults={"slug": "simulated"})
    pages = Page.objects.bulk_create(Page(title=f"Sim {seed} page {i}", category=category, source=Page.Source.TEXT) for i in range(40))
    pages = list(Page.objects.filter(title__startswith=f"Sim {seed} page ").order_by("id"))
    words = "river castle empire novel album planet engine island treaty season".split()
    claim_rows = []
    for user in users:
        for n in range(_activity(rng, 3.0, 60)):
            page = rng.choice(pages)
            label = rng.choice(Claim.Label.values)
            text = f"{page.title} {rng.choice(words)} {rng.choice(words)} claim {user.pk}-{n} is {label.lower()}."
            claim_rows.append(Claim(page=page, text=text, label=label, author=user, clues=[]))
    Claim.objects.bulk_create(claim_rows)
    claims = list(Claim.objects.filter(page__in=pages).values("id", "label", "author_id", "page_id"))
    by_label = {label: [c for c in claims if c["label"] == label] for label in Claim.Label.values}
    ledger = [LedgerEntry(player_id=c["author_id"], amount=WRITE_POINTS, kind="write", claim_id=c["id"], cause=f"claim:{c['id']}") for c in claims]
    plays = []  # (round, vote or None, reveals, liked claim id or None, awards)
    moment = start
    for user in users:
        for _ in range(_activity(rng, 6.0, 150)):
            true_c = rng.choice(by_label["SUPPORTS"])
            false_c = rng.choice(by_label["REFUTES"])
            if user.pk in (true_c["author_id"], false_c["author_id"]):
                continue
            moment += timedelta(seconds=rng.randint(20, 400))
            false_index = rng.randint(0, 1)
            left, right = (false_c, true_c) if false_index == 0 else (true_c, false_c)
            reveals = (rng.choice((0, 0, 1, 2, 3)), rng.choice((0, 0, 1, 2)))
            remaining = rng.uniform(1.0, 178.0) - 10 * sum(reveals)
            state = Round.State.TIMED_OUT if remaining <= 0 else Round.State.VOTED
            ended = moment + timedelta(seconds=180 - max(remaining, 0) - 10 * sum(reveals))
            round_ = Round(player=user, left_claim_id=left["id"], right_claim_id=right["id"], state=state, started_at=moment,
                           deadline=moment + timedelta(seconds=180 - 10 * sum(reveals)), ended_at=ended, false_claim_index=false_index)
            vote = awards = None
            liked = None
            if state == Round.State.VOTED:
                correct = rng.random() < 0.75
                awards = round_awards(outcome="correct" if correct else "wrong", remaining=remaining, voter=user.pk,
                                      true_claim_author=true_c["author_id"], false_claim_author=false_c["author_id"], pot=POT)
                points = sum(a.amount for a in awards if a.role == "voter")
                vote = Vote(false_claim_index=false_index if correct else 1 - false_index, correct=correct, points=points,
                            remaining=remaining, created=ended)
                awards = [(a, {"voter": false_c, "true_claim_author": true_c, "false_claim_author": false_c}[str(a.role)]) for a in awards]
                if rng.random() < 0.35:
                    liked = rng.choice((true_c, false_c))
            plays.append((round_, vote, reveals, liked, awards or []))
    Round.objects.bulk_create([p[0] for p in plays])
    votes, clue_rows, likes = [], [], []
    for round_, vote, reveals, liked, awards in plays:
        for index, count in enumerate(reveals):
            clue_rows += [ClueReveal(round=round_, claim_index=index, position=k, revealed_at=round_.started_at) for k in range(count)]
        if vote is None:
            continue
        vote.round = round_
        votes.append(vote)
        ledger += [LedgerEntry(player_id=a.player, amount=a.amount, kind=str(a.kind), claim_id=c["id"], cause=f"round:{round_.pk}")
                   for a, c in awards]
        likes.append(Like(round=round_, claim_id=liked["id"] if liked else None, created=vote.created))
        if liked and liked["author_id"] != round_.player_id:
            ledger.append(LedgerEntry(player_id=liked["author_id"], amount=LIKE_POINTS, kind="like", claim_id=liked["id"], cause=f"round:{round_.pk}"))
    Vote.objects.bulk_create(votes)
    ClueReveal.objects.bulk_create(clue_rows)
    Like.objects.bulk_create(likes)
    LedgerEntry.objects.bulk_create(ledger)
    return SimulatedGame(usernames={u.pk: u.username for u in users}, rounds=len(plays), claims=len(claims))


def public_leaderboards() -> dict[str, list[dict[str, Any]]]:
    """Every kind of the public leaderboard and the skill table, every player on them (no
    top-50 cut). The skill table's ratings come from a Glicko-2 replay of the votes."""
    from foolgame.voting.ratings import ratings_refit, skill_table
    from foolgame.voting.selectors import leaderboard

    ratings_refit(method="glicko2")
    return {**{kind: leaderboard(kind=kind, limit=1_000_000) for kind in KINDS}, "skill": skill_table(limit=1_000_000)}


def write_exact_export(out_dir: Path, pseudonym: Callable[[int], str]) -> None:
    """What main's export gave the join, from the database: one pseudonym per person (as
    author and voter), each claim's likes and each vote's exact points. The positive control
    that shows the join is sharp enough to matter (the bench runs main's own code too)."""
    from foolgame.claims.models import Claim
    from foolgame.voting.models import Like, Round

    out_dir.mkdir(parents=True, exist_ok=True)
    likes: dict[int, int] = defaultdict(int)
    for claim_id in Like.objects.exclude(claim=None).values_list("claim_id", flat=True):
        likes[claim_id] += 1
    with (out_dir / "train.jsonl").open("w", encoding="utf-8") as handle:
        for pk, author in Claim.objects.filter(external_id=None).values_list("pk", "author_id"):
            handle.write(json.dumps({"id": f"game-{pk}", "author": pseudonym(author), "total_likes": likes[pk]}) + "\n")
    with (out_dir / "votes.jsonl").open("w", encoding="utf-8") as handle:
        rows = Round.objects.filter(vote__isnull=False).values_list("player_id", "left_claim_id", "right_claim_id", "false_claim_index",
                                                                    "vote__correct", "vote__points")
        for player, left, right, false_index, correct, points in rows:
            true_id, false_id = (right, left) if false_index == 0 else (left, right)
            handle.write(json.dumps({"voter": pseudonym(player), "true_claim": f"game-{true_id}", "false_claim": f"game-{false_id}",
                                     "correct": correct, "points": points}) + "\n")
