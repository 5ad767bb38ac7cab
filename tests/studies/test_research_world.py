"""A study with two arms and participants who did known work, for the researcher's view, the
bonus file and the export's study fields (no test here: the tests import it).

Studies, arms and participants are made with the ORM (their creation and arrival are another
part's); the work is the game's own rows, as the dataset tests make them: claims with their
gold evidence, the verifier's save-time verdict (``WrittenAgainst``), checkers who confirm a
label (``confirm_by_checkers``), ended rounds with their votes (``play``) and answered checks.
``Planted`` keeps what was made, so that a test counts the bonuses itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from foolgame.checks.models import Check
from foolgame.claims.models import Claim
from foolgame.studies.models import Arm, AttentionCheck, Participant, Study
from foolgame.verifier.models import VerifierVersion, WrittenAgainst
from foolgame.voting.models import Round
from tests.dataset.conftest import make_claim, play
from tests.factories import CategoryFactory, PageFactory, UserFactory
from tests.verifier.conftest import confirm_by_checkers

S, R = "SUPPORTS", "REFUTES"
FLIP = {S: R, R: S}
BONUS = {"currency": "GBP", "per_verified_fooling_claim": "1.00", "per_right_vote": "0.05", "per_right_check": "0.02", "cap": "1.50"}
PLATFORM_IDS = ("5f1e0aPROLIFICaa01", "5f1e0aPROLIFICbb02", "5f1e0aPROLIFICcc03", "A1MTURKWORKERDD04")


@dataclass
class Planted:
    """What each participant did, by participant platform id."""

    verified_fooling: dict[str, int] = field(default_factory=dict)
    right_votes: dict[str, int] = field(default_factory=dict)
    right_checks: dict[str, int] = field(default_factory=dict)

    def owed(self, platform_id: str, rules: dict[str, str]) -> Decimal:
        total = (
            Decimal(rules.get("per_verified_fooling_claim", "0")) * self.verified_fooling.get(platform_id, 0)
            + Decimal(rules.get("per_right_vote", "0")) * self.right_votes.get(platform_id, 0)
            + Decimal(rules.get("per_right_check", "0")) * self.right_checks.get(platform_id, 0)
        )
        return min(total, Decimal(rules["cap"])) if "cap" in rules else total


@dataclass
class StudyWorld:
    study: Study
    owner: object
    other_researcher: object
    player: object
    staff: object
    arms: list[Arm]
    participants: dict[str, Participant]
    planted: Planted
    outsider_claim: Claim


def researcher(username: str):
    user = UserFactory(username=username)
    user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    return user


def _participant(study: Study, arm: Arm, sequence: int, platform: str, platform_id: str, **fields) -> Participant:
    now = timezone.now()
    user = UserFactory(username=f"participant-{study.slug}-{sequence}")
    user.set_unusable_password()
    user.save(update_fields=["password"])
    extra = {"assignmentId": f"ASSIGN{sequence}", "hitId": "HIT1"} if platform == "mturk" else {"STUDY_ID": "st1", "SESSION_ID": f"se{sequence}"}
    return Participant.objects.create(
        study=study, arm=arm, user=user, platform=platform, platform_id=platform_id, platform_extra=extra,
        address=f"digest{sequence}", sequence=sequence, consented=now - timedelta(minutes=30), **fields,
    )


def _version() -> VerifierVersion:
    return VerifierVersion.objects.create(number=1, kind="head", name="head 1", status="retired", fingerprint="x", blob=b"")


def write(author, page, *, label: str, fooled: bool, verified: bool, version: VerifierVersion, text: str) -> Claim:
    """A claim saved by ``author``, written against ``version`` (wrong at the save when
    ``fooled``), its label confirmed by three independent checkers when ``verified``."""
    claim = make_claim(page, label=label, author=author, text=text)
    WrittenAgainst.objects.create(claim=claim, version=version, label=FLIP[label] if fooled else label, tries=2)
    if verified:
        confirm_by_checkers(claim)
    return claim


def answer_check(player, claim: Claim, *, label: str, settled: str = "") -> Check:
    now = timezone.now()
    return Check.objects.create(
        player=player, claim=claim, dealt_at=now - timedelta(minutes=1), expires_at=now + timedelta(minutes=1), answered_at=now,
        label=label, settled_label=settled, correct=(label == settled) if settled else None,
    )


@pytest.fixture
def study_world(db) -> StudyWorld:
    owner = researcher("rosalind")
    other = researcher("otto")
    staff = UserFactory(username="stella", is_staff=True)
    player = UserFactory(username="plain_player")
    now = timezone.now()
    study = Study.objects.create(
        slug="clue-cost", name="Clue cost", owner=owner, consent_text="You agree.", tasks=[{"kind": "write", "count": 2}, {"kind": "vote", "count": 4}, {"kind": "check", "count": 2}],
        per_arm=10, block_size=2, seed=7, arrivals=4, completion_code="DONE123", screen_out_code="OUT456", attention_checks=1,
        attention_max_failures=0, bonus=BONUS, address_cap=3, created=now - timedelta(hours=1),
    )
    arms = [
        Arm.objects.create(study=study, name="clue10", position=0, settings={"clue_seconds": 10}),
        Arm.objects.create(study=study, name="clue20", position=1, settings={"clue_seconds": 20}),
    ]
    ids = PLATFORM_IDS
    participants = {
        ids[0]: _participant(study, arms[0], 0, "prolific", ids[0], status=Participant.Status.FINISHED, ended=now - timedelta(minutes=20)),
        ids[1]: _participant(study, arms[1], 1, "prolific", ids[1], status=Participant.Status.FINISHED, ended=now - timedelta(minutes=10)),
        ids[2]: _participant(study, arms[0], 2, "prolific", ids[2], status=Participant.Status.SCREENED_OUT, ended=now - timedelta(minutes=5)),
        ids[3]: _participant(study, arms[1], 3, "mturk", ids[3]),
    }
    version = _version()
    history = CategoryFactory(name="Study topics")
    pages = [PageFactory(title=f"Study page {i}", category=history) for i in range(6)]
    outsider = UserFactory(username="outsider")
    # Rounds need claims by others: an outsider's pairs, one per page.
    pairs = [
        (make_claim(page, label=S, author=outsider, text=f"{page.title} is true in a round."),
         make_claim(page, label=R, author=outsider, text=f"{page.title} is false in a round."))
        for page in pages
    ]
    planted = Planted()
    u = {pid: p.user for pid, p in participants.items()}

    # Participant 0 (arm clue10): 2 verified fooling claims, 1 fooling unverified, 1 verified not
    # fooling; 3 right votes, 1 wrong, 1 timed out; 2 right checks of 3. Owed 2.19, capped at 1.50.
    write(u[ids[0]], pages[0], label=S, fooled=True, verified=True, version=version, text="P0 first fooling claim.")
    write(u[ids[0]], pages[1], label=R, fooled=True, verified=True, version=version, text="P0 second fooling claim.")
    write(u[ids[0]], pages[2], label=S, fooled=True, verified=False, version=version, text="P0 unverified fooling claim.")
    write(u[ids[0]], pages[3], label=R, fooled=False, verified=True, version=version, text="P0 claim the model got right.")
    for i in range(3):
        play(u[ids[0]], *pairs[i], correct=True, reveals=(1, 0))
    play(u[ids[0]], *pairs[3], correct=False)
    play(u[ids[0]], *pairs[4], state=Round.State.TIMED_OUT)
    answer_check(u[ids[0]], pairs[0][0], label=S, settled=S)
    answer_check(u[ids[0]], pairs[1][1], label=R, settled=R)
    answer_check(u[ids[0]], pairs[2][0], label=R, settled=S)
    planted.verified_fooling[ids[0]], planted.right_votes[ids[0]], planted.right_checks[ids[0]] = 2, 3, 2

    # Participant 1 (arm clue20): 4 right votes, a check on an unsettled claim (no bonus). Owed 0.20.
    write(u[ids[1]], pages[4], label=S, fooled=False, verified=False, version=version, text="P1 claim one.")
    write(u[ids[1]], pages[5], label=R, fooled=True, verified=False, version=version, text="P1 claim two.")
    for i in range(4):
        play(u[ids[1]], *pairs[i], correct=True, reveals=(0, 2))
    answer_check(u[ids[1]], pairs[5][0], label=S)
    planted.right_votes[ids[1]] = 4

    # Participant 2 (arm clue10, screened out): only wrong votes and a failed attention check: owed nothing.
    for i in range(2):
        play(u[ids[2]], *pairs[i], correct=False)
    attention = answer_check(u[ids[2]], pairs[3][0], label=R, settled=S)
    AttentionCheck.objects.create(participant=participants[ids[2]], claim=attention.claim, position=0, passed=False, answered=now)

    # Participant 3 (arm clue20, Mechanical Turk, still working): one verified fooling claim. Owed 1.00.
    write(u[ids[3]], pages[0], label=R, fooled=True, verified=True, version=version, text="P3 fooling claim.")
    planted.verified_fooling[ids[3]] = 1

    # Someone who is no participant: a verified fooling claim that is no study's.
    outsider_claim = write(UserFactory(username="volunteer"), pages[1], label=S, fooled=True, verified=True, version=version, text="A volunteer's fooling claim.")
    return StudyWorld(
        study=study, owner=owner, other_researcher=other, player=player, staff=staff, arms=arms,
        participants=participants, planted=planted, outsider_claim=outsider_claim,
    )
