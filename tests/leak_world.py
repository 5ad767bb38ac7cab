"""The world the answer-leak walk (tests/test_answer_leak.py) plays in, and the scanner that
says whether a response or a frame carries an answer that is not due yet.

One world is one ordinary player holding, at once:

- ``dealt``: a round dealt and not started;
- ``started``: a round started, no clue bought (so its gold sentences, the last clues, are unseen);
- ``forfeited``: a round started, then given up before its deadline;
- ``room_round``: their round of a live room's question that three other members already
  voted on (the host and ``wrong`` wrong, ``right`` right), the question still playing;
- ``hosted_round``: their round of the question playing in a room they host alone (a host
  may give up: leaving ends the room);

and a write task on the forfeited round's page; and, with ``build_world(study=True)``, a study on
the world's category (``build_study``): its owner, another researcher, staff, two arms (one
hiding points and the model's verdict, one showing them), attention checks, and participants
from Prolific, Mechanical Turk and a plain link just arrived, midway (a check and a round dealt,
not answered), finished and screened out, their work made through the API. Their platform ids
are distinctive strings (``StudyWorld.platform_ids``) that no response but the owner's may hold.

Every gold sentence holds a marker word found nowhere else, so a gold sentence is found in
any body by plain search. Worlds are independent: each has its own category (rounds and the
room are dealt in it), players and pages, so several can live in one database.
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field
from typing import Any

from foolgame.authoring.models import WriteTask
from foolgame.authoring.services import write_task_create
from foolgame.claims.models import Claim, ClaimGold
from foolgame.pages.models import Category, Page, Sentence
from foolgame.checks import services as checks
from foolgame.checks.models import Check
from foolgame.rooms import services as rooms
from foolgame.rooms.models import Room, RoomMember, RoomQuestion, RoomRound
from foolgame.rooms.rounds import room_round_settled
from foolgame.core import clock
from foolgame.voting import services as rounds
from foolgame.voting.models import Round
from tests.factories import PASSWORD, CategoryFactory, UserFactory

LABELS = ("SUPPORTS", "REFUTES")
ROUNDS = ("dealt", "started", "forfeited", "room_round")
"""The player's four rounds, by the world's attribute names."""
PAIRS = 8
"""Pages with one true and one false claim: three solo rounds, the two rooms' questions, the
player's fact check, and two left for a new deal (``POST /api/rounds``, from the category or
from ``extra_page``) to succeed."""
ROOM_ROUNDS = {"room": "room_round", "hosted room": "hosted_round"}
"""The world's rooms (by their label in the walk) and the player's round in each."""

_worlds = itertools.count(1)


@dataclass
class World:
    n: int
    category: Category
    player: Any
    host: Any
    right: Any
    wrong: Any
    newcomer: Any  # not a member: joins during the question on the room socket walk
    room: Room
    task: WriteTask
    hosted: Room | None = None
    rounds: dict[str, Round] = field(default_factory=dict)
    markers: dict[int, set[str]] = field(default_factory=dict)  # claim id -> its gold markers (every claim of the world)
    extra_page: Page | None = None
    check_id: int | None = None  # a fact check dealt to the player (of a claim no round of theirs holds)
    study: Any = None  # a StudyWorld on the world's category (``build_world(study=True)``)

    @property
    def password(self) -> str:
        return PASSWORD

    def round(self, name: str) -> Round:
        return self.rounds[name]

    def question_done(self, round_name: str = "room_round") -> bool:
        """Is the room question of this round of the player's over?"""
        return RoomRound.objects.filter(round_id=self.rounds[round_name].pk, question__state=RoomQuestion.State.DONE).exists()

    def rooms(self) -> dict[str, Room]:
        return {label: room for label, room in (("room", self.room), ("hosted room", self.hosted)) if room is not None}

    def claims(self, name: str) -> tuple[Claim, Claim]:
        return self.rounds[name].claims

    def page(self, name: str) -> Page:
        return self.rounds[name].left_claim.page

    def others(self) -> dict[str, str]:
        """The other members who voted on the open question: username -> right/wrong."""
        return {self.right.username: "right", self.wrong.username: "wrong"}


@dataclass(frozen=True)
class Hidden:
    """The hidden facts of a world (tests/test_noninterference.py builds two that differ only
    in these): ``flip_labels`` swaps the labels of every pair (so the other claim is the
    false one), ``other_gold`` makes each claim's gold sentence another of its page's (the
    last clue follows it), ``settled`` gives every claim release votes that settle its label."""

    flip_labels: bool = False
    other_gold: bool = False
    settled: bool = False


AS_BUILT = Hidden()


def _pair_page(category: Category, tag: str, authors: tuple[Any, Any], hidden: Hidden = AS_BUILT) -> Page:
    """A page with a true and a false claim; each claim's clues are one retrieved sentence
    and its gold sentence last, as the dealer's snapshot stores them. Nothing of a claim's
    text or its page's sentences names its label: only ``hidden`` decides it."""
    page = Page.objects.create(title=f"Leakland {tag}", category=category, source=Page.Source.TEXT)
    texts = [f"Leakland {tag} has a river and a hill number {n}." for n in range(2)]
    markers = [f"goldmark{uuid.uuid4().hex[:12]}" for _ in LABELS]
    for i in range(len(LABELS)):
        texts += [f"Leakland {tag} retrieved sentence for claim {i}.", f"Leakland {tag} decisive {markers[i]} evidence."]
    sentences = Sentence.objects.bulk_create(Sentence(page=page, position=n, section_header="", text=text) for n, text in enumerate(texts))
    labels = LABELS[::-1] if hidden.flip_labels else LABELS
    claims = []
    for i, (label, author) in enumerate(zip(labels, authors)):
        retrieved, gold = sentences[2 + 2 * i], sentences[i if hidden.other_gold else 3 + 2 * i]
        clues = [
            {"sentence_id": retrieved.pk, "text": retrieved.text, "section_header": "Geography"},
            {"sentence_id": gold.pk, "text": gold.text, "section_header": ""},
        ]
        text = f"Leakland {tag} claim number {i} {uuid.uuid4().hex[:6]}."
        votes = {"release_total_votes": 10, "release_correct_votes": 10} if hidden.settled else {}
        claims.append(Claim.objects.create(page=page, label=label, author=author, text=text, clues=clues, **votes))
        ClaimGold.objects.create(claim=claims[-1], sentence=gold, position=0)
    return page


def _markers(category: Category) -> dict[int, set[str]]:
    """Each claim of the world's category: the marker words of its gold sentences."""
    markers: dict[int, set[str]] = {}
    for claim_id, text in ClaimGold.objects.filter(claim__page__category=category).values_list("claim_id", "sentence__text"):
        markers.setdefault(claim_id, set()).update(word for word in text.split() if word.startswith("goldmark"))
    return markers


def build_world(*, question_started: bool = True, hidden: Hidden = AS_BUILT, study: bool | tuple[str, ...] = False) -> World:
    """A fresh world (see the module's docstring). ``question_started=False`` leaves the room
    in its lobby with its members present, for the room socket walk to start the question
    while the player's socket listens (then ``start_question`` does the rest). ``study``: with
    a study on the world's category and its participants at each stage (``build_study``), or
    at the stages named."""
    n = next(_worlds)
    tag = f"{n}{uuid.uuid4().hex[:6]}"
    category = CategoryFactory(name=f"Leak category {tag}", slug=f"leak-{tag}")
    authors = (UserFactory(username=f"leak-author-t-{tag}"), UserFactory(username=f"leak-author-f-{tag}"))
    pages = [_pair_page(category, f"{tag}x{i}", authors, hidden) for i in range(PAIRS)]
    player = UserFactory(username=f"leak-player-{tag}")
    host = UserFactory(username=f"leak-host-{tag}")
    # The wrong voter's name sorts first and they join first: a board ordered by name or by
    # arrival lists them first; only one ordered by results lists the right voter first.
    wrong = UserFactory(username=f"leak-aa-wrong-{tag}")
    right = UserFactory(username=f"leak-zz-right-{tag}")
    newcomer = UserFactory(username=f"leak-newcomer-{tag}")

    world = World(n=n, category=category, player=player, host=host, right=right, wrong=wrong, newcomer=newcomer, room=None, task=None)  # type: ignore[arg-type]
    for name in ("dealt", "started", "forfeited"):
        world.rounds[name] = rounds.round_create(player=player, category=category.slug)
    rounds.round_start(round_id=world.rounds["started"].pk, player=player)
    rounds.round_start(round_id=world.rounds["forfeited"].pk, player=player)
    rounds.round_forfeit(round_id=world.rounds["forfeited"].pk, player=player)

    room = rooms.room_create(host=host, category=category.slug, questions=2, host_plays=True)
    now = clock.now()
    for member in (wrong, right, player):  # joined in this order, present
        RoomMember.objects.create(room=room, player=member, joined_at=now, seen_at=now)
    world.room = room
    # A write task on the forfeited round's page: the authoring endpoints (hints, draft
    # check, save) are walked where the player holds a task, next to a round of theirs.
    used = {c.page_id for name in ("dealt", "started", "forfeited") for c in world.rounds[name].claims}
    world.extra_page = next(p for p in pages if p.pk not in used)
    world.task = write_task_create(player=player, page_id=world.page("forfeited").pk)
    # A fact check dealt to the player: its claim is none of their rounds' (checks never
    # deal those), and the walk answers it like any other operation.
    world.check_id = checks.check_deal(player=player)["id"]
    if question_started:
        start_question(world)
        world.hosted = rooms.room_create(host=player, category=category.slug, questions=1, host_plays=True)
        rooms.room_next_question(code=world.hosted.code, player=player)
        world.rounds["hosted_round"] = Round.objects.get(room_play__question__room=world.hosted, player=player)
    for name, round_ in world.rounds.items():
        world.rounds[name] = Round.objects.select_related("left_claim__page", "right_claim__page").get(pk=round_.pk)
    # A page whose pair no round of the world dealt (the rooms' questions included) nor the
    # player's fact check holds, so that a deal from it (``POST /api/rounds {page}``) reaches a
    # pair and the reads after it.
    used = {c.page_id for round_ in world.rounds.values() for c in round_.claims}
    used |= set(Check.objects.filter(player=player).values_list("claim__page_id", flat=True))
    world.extra_page = next(p for p in pages if p.pk not in used)
    world.markers = _markers(category)
    if study:
        world.study = build_study(world, hidden=hidden, stages=STAGES if study is True else study)
    return world


def start_question(world: World) -> None:
    """The host deals the question, then the others vote on it (``others_vote``)."""
    deal_question(world)
    others_vote(world)


def deal_question(world: World) -> None:
    rooms.room_next_question(code=world.room.code, player=world.host)
    question = RoomQuestion.objects.filter(room=world.room).latest("number")
    round_ = Round.objects.select_related("left_claim__page", "right_claim__page").get(room_play__question=question, player=world.player)
    world.rounds["room_round"] = round_


def others_vote(world: World) -> None:
    """The host and ``wrong`` vote wrong, ``right`` votes right; the player has not voted,
    so the question plays on."""
    question = RoomQuestion.objects.filter(room=world.room).latest("number")
    plays = dict(RoomRound.objects.filter(question=question).values_list("player_id", "round_id"))
    for voter, right in ((world.host, False), (world.wrong, False), (world.right, True)):
        choice = question.false_claim_index if right else 1 - question.false_claim_index
        rounds.vote_cast(round_id=plays[voter.pk], player=voter, false_claim=choice)
        room_round_settled(round_id=plays[voter.pk])  # as the vote does after its commit (a test transaction may hold it back): the question may end, the count moves
    assert RoomQuestion.objects.get(pk=question.pk).state == RoomQuestion.State.PLAYING


class HashEncoder:
    """A stand-in for the sentence encoder (seconds to load, and nothing to do with answers):
    word-hash vectors, so that saving a claim builds its clue list without the model."""

    model_name = "leak-walk-hash"
    backend = "hash"
    dimension = 32

    def encode(self, texts: Any, *, show_progress: bool = False) -> Any:
        import numpy as np

        matrix = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in str(text).lower().split():
                matrix[row, hash(word) % self.dimension] += 1.0
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)

    def encode_query(self, text: str) -> Any:
        return self.encode([text])


# --- the scanner --------------------------------------------------------------------------

ANSWER_KEYS = {"label", "labels", "false_claim", "false_claim_index", "gold", "gold_evidence", "result", "answer", "choice", "verdict"}
"""Keys that carry an answer (or a member's choice) whatever their value, when not null."""


@dataclass
class Secrets:
    """What must not show in a body, given which rounds' answers are due for the player now."""

    world: World
    due: set[int]  # round ids whose answer the player may see now

    def hidden_rounds(self) -> list[int]:
        return [r.pk for r in self.world.rounds.values() if r.pk not in self.due]

    def hidden_markers(self) -> dict[str, str]:
        """Every gold marker of the world but those of rounds whose answer is due: a claim
        not dealt yet is as secret as one in play."""
        shown = {c.pk for r in self.world.rounds.values() if r.pk in self.due for c in r.claims}
        names = {c.pk: name for name, r in self.world.rounds.items() for c in r.claims}
        # A fact check shows its claim's gold evidence by design, to the checker alone, who is
        # never dealt that claim in a round: the evidence of a claim the player checks is no
        # answer for them, unless a round of theirs holds it (then it stays secret).
        checked = set(Check.objects.filter(player=self.world.player).values_list("claim_id", flat=True))
        shown |= checked - set(names)
        return {m: names.get(cid, f"claim #{cid} (not dealt)") for cid, ms in self.world.markers.items() if cid not in shown for m in ms}

    def room_results_hidden(self) -> bool:
        room_round = self.world.rounds.get("room_round")
        return room_round is not None and room_round.pk not in self.due


def scan_text(text: str, secrets: Secrets, *, page_text: bool = False) -> list[str]:
    """Leaks found by plain search in any body (HTML, JSON, a frame): a gold marker of a
    round whose answer is not due (``page_text``: the body is a page's own sentences, public
    by the rules: the markers may be there, unmarked as gold)."""
    found = []
    if not page_text:
        for marker, whose in secrets.hidden_markers().items():
            if marker in text:
                found.append(f"gold sentence of {whose} ({marker})")
    return found


def scan_html(text: str, secrets: Secrets, *, page_text: bool = False, describes_api: bool = False) -> list[str]:
    """Leaks in a body that is not JSON (a page): gold markers, the label words (but in the
    API's own description, ``describes_api``), and, while the room's question plays, a page
    that names the right voter more often than the wrong one."""
    found = scan_text(text, secrets, page_text=page_text)
    if not describes_api and secrets.hidden_rounds():
        found += [f"the label word {label}" for label in LABELS if label in text]
    if secrets.room_results_hidden():
        right, wrong = secrets.world.right.username, secrets.world.wrong.username
        if text.count(right) != text.count(wrong):
            found.append(f"the page names the right voter {text.count(right)}x and the wrong voter {text.count(wrong)}x")
    return found


def scan_json(data: Any, secrets: Secrets, *, context: int | None, page_text: bool = False) -> list[str]:
    """Leaks in a JSON body or frame. ``context``: the round the body is about (the
    operation's round, the room's round for a room's body); a round's state object (with
    ``id``, ``status`` and ``pages``) is about its own round. Answer-bearing keys, label
    values and members' results are leaks unless the round they are about has its answer due."""
    found = scan_text(_dumps(data), secrets, page_text=page_text)
    _walk(data, secrets, context, "$", found)
    if secrets.room_results_hidden():
        _boards(data, secrets, "$", found)
    return found


def _name(secrets: Secrets, round_id: int | None) -> str:
    for name, round_ in secrets.world.rounds.items():
        if round_.pk == round_id:
            return name
    return f"#{round_id}"


def _hidden(secrets: Secrets, context: int | None) -> bool:
    return context is None or context not in secrets.due


def _walk(node: Any, secrets: Secrets, context: int | None, path: str, found: list[str]) -> None:
    if isinstance(node, dict):
        if {"id", "status", "pages"} <= node.keys() and isinstance(node.get("id"), int):
            context = node["id"]  # a round's state: about that round
        for key, value in node.items():
            where = f"{path}.{key}"
            if value is not None and _hidden(secrets, context):
                if key in ANSWER_KEYS and value not in ([], {}):
                    found.append(f"`{key}` at {where} (round {_name(secrets, context)})")
                    continue
                if key == "correct" and (value is True or value is False):
                    found.append(f"`correct` at {where} (round {_name(secrets, context)})")
                    continue
                if key == "found" and value:
                    found.append(f"`found` at {where}: who found it")
                    continue
            _walk(value, secrets, context, where, found)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _walk(value, secrets, context, f"{path}[{i}]", found)
    elif isinstance(node, str) and node in LABELS and _hidden(secrets, context):
        found.append(f"the label {node} at {path} (round {_name(secrets, context)})")


def _boards(node: Any, secrets: Secrets, path: str, found: list[str]) -> None:
    """Rows naming the other members who voted on the open question (scoreboards, the
    leaderboards, who found it): no points, no right answers, and nothing that sets the
    right voter apart from the wrong one (rank, order, being listed at all)."""
    others = secrets.world.others()
    if isinstance(node, dict):
        for key, value in node.items():
            _boards(value, secrets, f"{path}.{key}", found)
    elif isinstance(node, list):
        rows = {row["username"]: (i, row) for i, row in enumerate(node) if isinstance(row, dict) and row.get("username") in others}
        for username, (i, row) in rows.items():
            who = others[username]
            for key in ("points", "correct", "skill", "rating", "found"):
                if row.get(key) not in (None, 0, False, [], ""):
                    found.append(f"the {who} voter's `{key}` = {row[key]!r} at {path}[{i}]")
        if len(rows) == 1:
            (username,) = rows
            found.append(f"only the {others[username]} voter is listed at {path}")
        elif len(rows) == 2:
            (i_right, right), (i_wrong, wrong) = rows[secrets.world.right.username], rows[secrets.world.wrong.username]
            if right.get("rank") != wrong.get("rank"):
                found.append(f"`rank` sets the right voter ({right.get('rank')}) apart from the wrong one ({wrong.get('rank')}) at {path}")
            if i_right < i_wrong:
                found.append(f"the right voter is listed before the wrong one (who sorts and joined first) at {path}")
        for value in node:
            _boards(value, secrets, path, found)


def _dumps(data: Any) -> str:
    import json

    return json.dumps(data, ensure_ascii=False)


# --- a study in the world -------------------------------------------------------------------

STAGES = ("arrived", "midway", "finished", "screened")
"""The study's participants, by the stage each stands at: just arrived (nothing done); midway
(a claim written, a round voted, a check and a round dealt and not answered); finished (the
work done, the code given); screened out (a settled claim checked wrongly)."""
PLATFORMS = {"arrived": "prolific", "midway": "mturk", "finished": "prolific", "screened": "link"}
ARMS = ({"name": "blind", "settings": {"points_shown": False, "model_verdict": False}},
        {"name": "sighted", "settings": {"points_shown": True, "model_verdict": True}})


@dataclass
class StudyWorld:
    """A study on the world's category (``build_study``): its owner, another researcher,
    staff, and its participants by stage (``STAGES``), each with its own signed-in client."""

    world: World
    slug: str
    owner: Any
    other_researcher: Any
    staff: Any
    participants: dict[str, Any]  # stage -> Participant
    clients: dict[str, Any]  # stage -> a Client signed in as that participant
    attention_claims: list[Claim]

    def platform_ids(self) -> set[str]:
        """Every platform id and platform parameter of the study's participants: distinctive
        strings found nowhere else."""
        from foolgame.studies.models import Participant

        found = set()
        for pid, extra in Participant.objects.filter(study__slug=self.slug).values_list("platform_id", "platform_extra"):
            found.add(pid)
            found.update(value for value in extra.values() if len(value) >= 8)
        return found


def _researcher(username: str) -> Any:
    from django.contrib.auth.models import Group

    from foolgame.studies.apps import _ensure_researchers_run_studies

    _ensure_researchers_run_studies()
    user = UserFactory(username=username)
    user.groups.add(Group.objects.get(name="researchers"))
    return user


def _api(client: Any, method: str, path: str, body: Any = None) -> Any:
    import json

    from django.test import TestCase

    with TestCase.captureOnCommitCallbacks(execute=True):
        response = getattr(client, method)(path, data=json.dumps(body) if body is not None else None, content_type="application/json")
    assert response.status_code < 400, (method, path, response.status_code, response.content[:500])
    return response.json() if "json" in response.get("Content-Type", "") else None


def participant_arrives(slug: str, pid: str, platform: str, address: str) -> Any:
    """A browser from the platform's link consents (``POST /api/studies/<slug>/enter``): a
    client signed in as the new participant."""
    from django.test import Client

    extra = {"mturk": {"assignmentId": f"{pid}ASSIGN", "hitId": f"{pid}HIT"}, "prolific": {"STUDY_ID": f"{pid}STUDY", "SESSION_ID": f"{pid}SESSION"}}
    client = Client(REMOTE_ADDR=address)
    _api(client, "post", f"/api/studies/{slug}/enter", {"participant": pid, "platform": platform, "consent": True, "extra": extra.get(platform, {})})
    return client


def participant_writes(client: Any) -> None:
    """A claim on the task's page, its gold one of the page's plain sentences (no marker)."""
    from foolgame.evidence.services import page_top_lexical_hit

    task = _api(client, "post", "/api/write-tasks", {})
    page = Page.objects.get(pk=task["page"]["id"] if isinstance(task.get("page"), dict) else task["page"])
    text = f"{page.title} welcomes many visitors by the harbour each summer."
    top = page_top_lexical_hit(page=page, query=text)
    gold = next(pk for pk in page.sentences.filter(position__lt=2).order_by("position").values_list("pk", flat=True) if pk != top)
    _api(client, "post", "/api/claims", {"task": task["id"], "text": text, "gold_sentence_ids": [gold]})


def participant_votes(client: Any, *, right: bool = True) -> int:
    """A round dealt, started and voted (the false claim found when ``right``)."""
    round_id = _api(client, "post", "/api/rounds", {})["id"]
    _api(client, "post", f"/api/rounds/{round_id}/start")
    false_index = Round.objects.get(pk=round_id).false_index
    _api(client, "post", f"/api/rounds/{round_id}/vote", {"false_claim": false_index if right else 1 - false_index})
    return round_id


def participant_checks(client: Any, *, right: bool = True) -> dict:
    """A check dealt and answered with its claim's label (``right``) or the other one."""
    check = _api(client, "post", "/api/checks", {})
    label = Check.objects.select_related("claim").get(pk=check["id"]).claim.label
    if not right:
        label = LABELS[1 - LABELS.index(label)]
    return _api(client, "post", f"/api/checks/{check['id']}", {"label": label})


def attention_page(category: Category, hidden: Hidden = AS_BUILT) -> list[Claim]:
    """A page of the world's category with a settled true and false claim (release votes):
    the checks deal them as attention checks. Their release votes count in ``deal_votes``, so
    the round dealer (least-voted first) deals every other pair of the world before this one:
    no participant's open round holds them, which would keep them from every check."""
    author = UserFactory(username=f"leak-attention-{uuid.uuid4().hex[:8]}")
    page = Page.objects.create(title=f"Leakland attention {uuid.uuid4().hex[:6]}", category=category, source=Page.Source.TEXT)
    sentences = Sentence.objects.bulk_create(
        Sentence(page=page, position=n, section_header="", text=f"{page.title} plain sentence {n} about the valley.") for n in range(4)
    )
    claims = []
    for i, label in enumerate(LABELS[::-1] if hidden.flip_labels else LABELS):
        clues = [{"sentence_id": s.pk, "text": s.text, "section_header": ""} for s in (sentences[i], sentences[2 + i])]
        claim = Claim.objects.create(page=page, label=label, author=author, text=f"{page.title} settled claim {i}.", clues=clues,
                                     release_total_votes=10, release_correct_votes=10)
        ClaimGold.objects.create(claim=claim, sentence=sentences[2 + i], position=0)
        claims.append(claim)
    return claims


def study_spec(world: World, **overrides: Any) -> dict[str, Any]:
    spec = {
        "name": f"Leak study {world.category.slug}",
        "consent": "You will write, vote and check claims about Leakland.",
        "tasks": {"write": 1, "vote": 1, "check": 2},
        "categories": [world.category.slug],
        "arms": [dict(arm) for arm in ARMS],
        "participants": 4,
        "block_size": 2,
        "seed": 41,
        "completion_code": "LEAKDONE41",
        "screen_out_code": "LEAKOUT41",
        "attention_checks": 1,
        "attention_max_failures": 0,
        "address_cap": 1000,
        "bonus": {"currency": "GBP", "per_verified_fooling_claim": "1.00", "per_right_vote": "0.05", "per_right_check": "0.02", "cap": "2.00"},
    }
    spec.update(overrides)
    return spec


def build_study(world: World, *, hidden: Hidden = AS_BUILT, stages: tuple[str, ...] = STAGES) -> StudyWorld:
    """A study on the world's category (two arms: one hiding points and the model's verdict,
    one showing them; attention checks; bonus rules) defined over REST by its owner, and its
    participants, each arrived through the entry endpoint and brought to its stage through the
    game's own endpoints. Platform ids are distinctive strings (``StudyWorld.platform_ids``)."""
    from django.test import Client

    from foolgame.studies.models import Participant

    tag = world.category.slug.removeprefix("leak-")
    owner = _researcher(f"leak-owner-{tag}")
    owner_client = Client()
    owner_client.force_login(owner)
    # The screened-out participant's attention check: settled claims in the study's pages
    # (with ``hidden.settled``, every claim of the world is one).
    attention = attention_page(world.category, hidden) if "screened" in stages else []
    slug = _api(owner_client, "post", "/api/studies", study_spec(world))["slug"]
    study = StudyWorld(
        world=world, slug=slug, owner=owner, other_researcher=_researcher(f"leak-researcher-{tag}"),
        staff=UserFactory(username=f"leak-staff-{tag}", is_staff=True), participants={}, clients={}, attention_claims=attention,
    )
    for n, stage in enumerate(stages):
        pid = f"PIDLEAK{stage.upper()}{tag}"
        client = participant_arrives(slug, pid, PLATFORMS[stage], f"198.18.41.{n + 1}")
        study.clients[stage] = client
        study.participants[stage] = Participant.objects.select_related("user", "arm").get(study__slug=slug, platform_id=pid)
        if stage in ("midway", "finished"):
            participant_writes(client)
            participant_votes(client)
        if stage == "finished":
            participant_checks(client)
            participant_checks(client)
        elif stage == "midway":
            _api(client, "post", "/api/checks", {})  # dealt, not answered
            round_id = _api(client, "post", "/api/rounds", {})["id"]
            _api(client, "post", f"/api/rounds/{round_id}/start")  # playing, not voted
        elif stage == "screened":
            # Wrong labels until a settled claim comes: an attention check failed ends the study.
            for _ in range(40):
                participant_checks(client, right=False)
                if Participant.objects.get(pk=study.participants[stage].pk).status == Participant.Status.SCREENED_OUT:
                    break
            else:
                raise AssertionError("no attention check was dealt to the screened participant")
        _api(client, "get", f"/api/studies/{slug}/me")  # the server's count: finished when done
        study.participants[stage].refresh_from_db()
    return study
