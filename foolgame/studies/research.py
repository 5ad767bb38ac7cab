"""What a study's owner sees of it: the figures per arm, the bonuses and the bonus file, and
pausing, resuming and closing it.

Everything is counted from the participants' accounts, by the rules every helper of the study
shares (docs/studies.md): a participant's **write** work is the claims its account saved (any
status), its **vote** work the rounds it voted in (not forfeited, timed out or reported), its
**check** work the checks it answered (attention checks included). A bonus is paid only on
verified work:

- a claim that fooled the model *and* whose label people then confirmed: the rule of the model
  points (``verifier.services.model_points_award``): the version it was written against gave
  another label at the save, and the claim is active and in ``confirmed_by_people()``;
- a vote that found the false claim (``Vote.correct``) and counts (``Vote.unpaid`` blank: a
  moderator who had seen the answer is paid nothing);
- a check whose label is the claim's settled label: the settled label at the deal
  (``Check.correct``), or, for a claim settled since, its label now.

Amounts are decimals (never floats) rounded to cents, and capped per participant.
"""

from __future__ import annotations

import csv
import io
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.db.models import Count, F, Q, QuerySet
from django.utils import timezone

from foolgame.checks import selectors as checks_selectors
from foolgame.checks.models import Check
from foolgame.claims.models import Claim
from foolgame.core.errors import ServiceError
from foolgame.players.roles import is_researcher
from foolgame.studies.models import Arm, AttentionCheck, Participant, Study
from foolgame.studies.services import counted_work, study_summary, study_time_limit
from foolgame.verifier.models import WrittenAgainst

KINDS = ("write", "vote", "check")
BONUS_FORMATS = ("prolific", "mturk")
CENT = Decimal("0.01")
BONUS_KEYS = {"claim": "per_verified_fooling_claim", "vote": "per_right_vote", "check": "per_right_check"}
MTURK_HEADER = ("workerId", "assignmentId", "amount", "reason")


# --- who may see a study --------------------------------------------------------------------------


def studies_for(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Study]:
    """The studies ``user`` may read the figures of: their own; every study for staff; none for
    anyone else (players, participants, the anonymous)."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return Study.objects.none()
    if user.is_staff:
        return Study.objects.all()
    if not is_researcher(user):
        return Study.objects.none()
    return Study.objects.filter(owner=user)


def study_for_reader(*, slug: str, user: AbstractBaseUser | AnonymousUser, owner_only: bool = False) -> Study:
    """The study named ``slug`` if ``user`` may read it: 404 ``not_found`` when no study has
    that slug, 403 ``not_study_owner`` for anyone but its owner and staff (``owner_only``:
    anyone but its owner, staff included: the bonus file and platform ids)."""
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise ServiceError("not_found", "No study has this name.", status_code=404)
    owner = getattr(user, "is_authenticated", False) and user.is_active and study.owner_id == user.pk
    if owner or (not owner_only and getattr(user, "is_authenticated", False) and user.is_active and user.is_staff):
        return study
    raise ServiceError(
        "not_study_owner",
        "Only the study's owner may see this or change it." if owner_only else "Only the study's owner (or staff) may see this study.",
        status_code=403,
    )


# --- the work each participant did ----------------------------------------------------------------


@dataclass
class Work:
    """What one participant's account did, counted by the shared rules."""

    write: int = 0
    vote: int = 0
    check: int = 0
    verified_fooling_claims: int = 0
    right_votes: int = 0
    right_checks: int = 0
    attention_answered: int = 0
    attention_failed: int = 0

    def done(self, kind: str) -> int:
        return {"write": self.write, "vote": self.vote, "check": self.check}[kind]


def _by_user(rows: Iterable[tuple[int, int]]) -> Counter[int]:
    return Counter({user: n for user, n in rows})


def _counted(queryset: QuerySet[Any], user_field: str) -> Counter[int]:
    return _by_user(queryset.order_by().values(user_field).annotate(n=Count("pk")).values_list(user_field, "n"))


def verified_fooling_claims(user_ids: Sequence[int], *, time_limit: timedelta | None = None) -> QuerySet[WrittenAgainst]:
    """The rows of the claims by these accounts that fooled the model at the save and whose
    label people confirmed since: model points' rule (``verifier.services.model_points_award``)
    without its daily cap, which bounds points, not a study's pay. ``time_limit``: only claims
    written by their author's deadline (``services.counted_work``)."""
    from foolgame.verifier.services import confirmed_by_people  # the rule lives with the payments

    written, _, _ = counted_work(user_ids, time_limit=time_limit)
    return (
        WrittenAgainst.objects.filter(claim__in=written.filter(status=Claim.Status.ACTIVE).values("pk"))
        .exclude(label="")
        .exclude(label=F("claim__label"))
        .filter(claim__in=Claim.objects.filter(confirmed_by_people()).values("pk"))
    )


def work_by_participant(participants: Sequence[Participant]) -> dict[int, Work]:
    """``{participant.pk: Work}``: a fixed number of queries per study among the
    participants' (one, for every caller), whatever the number of participants. With a time
    limit, only the work each participant did by their deadline counts, as for their own
    progress (``services.participant_deadline``): for the bonuses and every figure."""
    work = {p.pk: Work() for p in participants}
    if not participants:
        return work
    limits = dict(Study.objects.filter(pk__in={p.study_id for p in participants}).values_list("pk", "time_limit_minutes"))
    groups: dict[int | None, list[Participant]] = {}
    for participant in participants:
        groups.setdefault(limits[participant.study_id], []).append(participant)
    for minutes, members in groups.items():
        work.update(_work_within(members, timedelta(minutes=minutes) if minutes else None))
    return work


def _work_within(participants: Sequence[Participant], time_limit: timedelta | None) -> dict[int, Work]:
    users = {p.user_id: p.pk for p in participants}
    ids = list(users)
    work = {p.pk: Work() for p in participants}
    written, voted, answered = counted_work(ids, time_limit=time_limit)
    writes = _counted(written, "author_id")
    votes = _counted(voted, "player_id")
    right_votes = _counted(voted.filter(vote__correct=True, vote__unpaid=""), "player_id")
    checks = _counted(answered, "player_id")
    settled_now = Claim.objects.filter(checks_selectors.settled()).values("pk")
    right = Q(correct=True) | (Q(settled_label="") & Q(claim__in=settled_now) & Q(label=F("claim__label")))
    right_checks = _counted(answered.filter(right), "player_id")
    fooling = _counted(verified_fooling_claims(ids, time_limit=time_limit), "claim__author_id")
    attention = AttentionCheck.objects.filter(participant_id__in=list(work), passed__isnull=False)
    if time_limit is not None:
        attention = attention.filter(answered__lte=F("participant__consented") + time_limit)
    attention_answered = _counted(attention, "participant_id")
    attention_failed = _counted(attention.filter(passed=False), "participant_id")
    for user_id, pk in users.items():
        work[pk] = Work(
            write=writes[user_id], vote=votes[user_id], check=checks[user_id],
            verified_fooling_claims=fooling[user_id], right_votes=right_votes[user_id], right_checks=right_checks[user_id],
            attention_answered=attention_answered[pk], attention_failed=attention_failed[pk],
        )
    return work


def current_task(tasks: Sequence[Mapping[str, Any]], work: Work) -> int | None:
    """The index in the study's ordered ``tasks`` of the first task not done (each kind's work
    fills its tasks in order), or None when every task is done."""
    used: Counter[str] = Counter()
    for index, task in enumerate(tasks):
        used[task["kind"]] += int(task["count"])
        if work.done(task["kind"]) < used[task["kind"]]:
            return index
    return None


# --- bonuses ------------------------------------------------------------------------------------------


def _amount(value: Any) -> Decimal:
    try:
        amount = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return Decimal(0)
    return amount if amount.is_finite() and amount > 0 else Decimal(0)


@dataclass(frozen=True)
class Bonus:
    participant: Participant
    amount: Decimal
    verified_fooling_claims: int
    right_votes: int
    right_checks: int
    capped: bool

    @property
    def reason(self) -> str:
        parts = [
            f"{self.verified_fooling_claims} verified claim(s) that fooled the model",
            f"{self.right_votes} right vote(s)",
            f"{self.right_checks} right check(s)",
        ]
        return "Bonus for " + ", ".join(parts) + (" (capped)" if self.capped else "")


def bonus_amount(rules: Mapping[str, Any], work: Work) -> tuple[Decimal, bool]:
    """The bonus ``work`` earns under ``rules`` (``Study.bonus``: amounts as decimal strings,
    a missing key is 0, no ``cap`` is no cap), rounded to cents, and whether the cap cut it."""
    total = (
        _amount(rules.get(BONUS_KEYS["claim"])) * work.verified_fooling_claims
        + _amount(rules.get(BONUS_KEYS["vote"])) * work.right_votes
        + _amount(rules.get(BONUS_KEYS["check"])) * work.right_checks
    )
    capped = False
    if rules.get("cap") not in (None, ""):
        cap = _amount(rules.get("cap"))
        if total > cap:
            total, capped = cap, True
    return total.quantize(CENT, rounding=ROUND_HALF_UP), capped


def study_bonuses(study: Study) -> list[Bonus]:
    """Every participant owed more than 0, in arrival order."""
    participants = list(study.participants.order_by("sequence"))
    work = work_by_participant(participants)
    rows = []
    for participant in participants:
        mine = work[participant.pk]
        amount, capped = bonus_amount(study.bonus or {}, mine)
        if amount > 0:
            rows.append(Bonus(participant, amount, mine.verified_fooling_claims, mine.right_votes, mine.right_checks, capped))
    return rows


def bonus_file(study: Study, *, file_format: str) -> str:
    """The bonus file of ``study`` for upload: Prolific's bulk bonus (``participant id,amount``
    a line, no header, as Prolific takes it) or Mechanical Turk's
    (``workerId,assignmentId,amount,reason`` with a header), for the participants who arrived
    from that platform."""
    if file_format not in BONUS_FORMATS:
        raise ServiceError("invalid", f"format is one of {', '.join(BONUS_FORMATS)}.")
    platform = Participant.Platform.PROLIFIC if file_format == "prolific" else Participant.Platform.MTURK
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if file_format == "mturk":
        writer.writerow(MTURK_HEADER)
    for bonus in study_bonuses(study):
        participant = bonus.participant
        if participant.platform != platform:
            continue
        if file_format == "prolific":
            writer.writerow([participant.platform_id, f"{bonus.amount:.2f}"])
        else:
            assignment = str((participant.platform_extra or {}).get("assignmentId", ""))
            writer.writerow([participant.platform_id, assignment, f"{bonus.amount:.2f}", bonus.reason])
    return out.getvalue()


# --- the figures --------------------------------------------------------------------------------------


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _arm_figures(study: Study, arm: Arm, participants: Sequence[Participant], work: Mapping[int, Work]) -> dict[str, Any]:
    status = Counter(p.status for p in participants)
    finished = [p for p in participants if p.status == Participant.Status.FINISHED and p.ended is not None]
    seconds = [(p.ended - p.consented).total_seconds() for p in finished]
    tasks = list(study.tasks or [])
    drop = [{"task": i + 1, "kind": t["kind"], "count": int(t["count"]), "reached": 0, "working": 0, "stopped": 0} for i, t in enumerate(tasks)]
    for participant in participants:
        here = current_task(tasks, work[participant.pk])
        for index in range(len(tasks) if here is None else here + 1):
            drop[index]["reached"] += 1
        if here is None or participant.status == Participant.Status.FINISHED:
            continue
        drop[here]["working" if participant.status == Participant.Status.ACTIVE else "stopped"] += 1
    mine = [work[p.pk] for p in participants]
    votes = sum(w.vote for w in mine)
    claims, voted, _ = counted_work([p.user_id for p in participants], time_limit=study_time_limit(study))
    right_votes_all = voted.filter(vote__correct=True).count()
    written = WrittenAgainst.objects.filter(claim__in=claims.values("pk")).exclude(label="")
    judged = written.count()
    fooled = written.exclude(label=F("claim__label")).count()
    return {
        "arm": arm.name,
        "settings": arm.settings,
        "wanted": study.per_arm,
        "started": len(participants),
        "active": status[Participant.Status.ACTIVE],
        "finished": status[Participant.Status.FINISHED],
        "screened_out": status[Participant.Status.SCREENED_OUT],
        "timed_out": status[Participant.Status.TIMED_OUT],
        "median_seconds_to_finish": round(statistics.median(seconds), 1) if seconds else None,
        "drop_off": drop,
        "attention": {
            "answered": sum(w.attention_answered for w in mine),
            "failed": sum(w.attention_failed for w in mine),
            "participants_failing": sum(1 for w in mine if w.attention_failed),
        },
        "collected": {
            "claims": sum(w.write for w in mine),
            "verified_fooling_claims": sum(w.verified_fooling_claims for w in mine),
            "votes": votes,
            "checks": sum(w.check for w in mine),
        },
        "vote_accuracy": _rate(right_votes_all, votes),
        "model_judged_claims": judged,
        "model_error_rate": _rate(fooled, judged),
        "bonus_total": str(sum((bonus_amount(study.bonus or {}, w)[0] for w in mine), Decimal("0.00"))),
    }


def study_figures(study: Study) -> dict[str, Any]:
    """The researcher's figures of ``study``, per arm (``_arm_figures``), and its totals. No
    platform id is in them: the figures are for the owner and staff, and staff are not owed
    the participants' ids."""
    participants = list(study.participants.order_by("sequence"))
    work = work_by_participant(participants)
    arms = list(study.arms.order_by("position"))
    by_arm: dict[int, list[Participant]] = {arm.pk: [] for arm in arms}
    for participant in participants:
        by_arm.setdefault(participant.arm_id, []).append(participant)
    return {
        **study_summary(study),
        "tasks": study.tasks,  # in the study's order, each {kind, count}
        "by_arm": [_arm_figures(study, arm, by_arm[arm.pk], work) for arm in arms],
    }


def study_participants(study: Study) -> list[dict[str, Any]]:
    """The owner's list of participants, with their platform ids (only the owner may be
    shown it: ``study_for_reader(owner_only=True)``), their work and bonus, in arrival order."""
    participants = list(study.participants.select_related("arm").order_by("sequence"))
    work = work_by_participant(participants)
    rows = []
    for participant in participants:
        mine = work[participant.pk]
        rows.append({
            "sequence": participant.sequence,
            "arm": participant.arm.name,
            "platform": participant.platform,
            "platform_id": participant.platform_id,
            "platform_extra": participant.platform_extra,
            "status": participant.status,
            "consented": participant.consented,
            "ended": participant.ended,
            "work": {kind: mine.done(kind) for kind in KINDS},
            "bonus": f"{bonus_amount(study.bonus or {}, mine)[0]:.2f}",
        })
    return rows


# --- pause, resume, close -----------------------------------------------------------------------------

TRANSITIONS = {"pause": Study.Status.PAUSED, "resume": Study.Status.OPEN, "close": Study.Status.CLOSED}


def study_set_status(*, slug: str, user: AbstractBaseUser, action: str) -> Study:
    """Pause, resume or close a study: its owner only (403 ``not_study_owner``; staff read
    figures but do not run another's study). Closing is final (409 ``study_already_closed`` for any
    change after it); pausing a paused study or resuming an open one changes nothing. Takes
    the study's row lock, which an arrival takes too, so no one arrives across a close."""
    if action not in TRANSITIONS:
        raise ServiceError("invalid", f"action is one of {', '.join(TRANSITIONS)}.")
    study_for_reader(slug=slug, user=user, owner_only=True)
    with transaction.atomic():
        study = Study.objects.select_for_update().get(slug=slug)
        if study.status == Study.Status.CLOSED:
            raise ServiceError("study_already_closed", "This study is closed: closing is final.", status_code=409)
        target = TRANSITIONS[action]
        if study.status != target:
            study.status = target
            fields = ["status"]
            if target == Study.Status.CLOSED:
                study.closed = timezone.now()
                fields.append("closed")
            study.save(update_fields=fields)
    return study
