"""Studies: a researcher defines one (``study_create``), participants arrive from a platform
by link (``participant_enter``), and the server counts their work until it hands them the
completion code (``participant_refresh``), or screens them out on failed attention checks.

Arms by blocked randomisation: arrival number ``sequence`` is the study's ``arrivals`` before
the increment, taken under the study row's lock; in block ``b = sequence // block_size`` the
arms' slots (each arm ``block_size / n_arms`` times) are shuffled by
``random.Random(f"{seed}:{b}")``, and the arrival takes the slot at ``sequence % block_size``.
So after any number of arrivals no two arms differ by more than one block's share.

Locking: an arrival locks the study row (``select_for_update``), so parallel arrivals get
consecutive sequences and the balance holds; a participant's status changes under the
participant row's lock.
"""

from __future__ import annotations

import random
import re
import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any, TypedDict

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q, QuerySet
from django.utils import timezone
from django.utils.text import slugify

from foolgame.checks.models import Check
from foolgame.claims.models import Claim
from foolgame.core import arms as arm_settings
from foolgame.core import clock
from foolgame.core.errors import ServiceError
from foolgame.pages.models import Category, Page
from foolgame.players.roles import has_role_permission
from foolgame.players.services import address_digest, signup_origin_record
from foolgame.studies.models import Arm, AttentionCheck, Participant, Study
from foolgame.voting.models import Round

TASK_KINDS = ("write", "vote", "check")
TASK_TITLES = {"write": "write a claim", "vote": "spot the false claim", "check": "check a claim"}
TASK_MAX = 500
MAX_ARMS = 20
CODE_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
BONUS_AMOUNTS = ("per_verified_fooling_claim", "per_right_vote", "per_right_check", "cap")
PLATFORM_EXTRA = {
    Participant.Platform.PROLIFIC: ("STUDY_ID", "SESSION_ID"),
    Participant.Platform.MTURK: ("assignmentId", "hitId"),
    Participant.Platform.LINK: (),
}
PROLIFIC_RETURN = "https://app.prolific.com/submissions/complete?cc={code}"


def may_run_studies(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Who may define a study: holders of ``studies.run_study`` (the ``researchers`` group
    grants it, superusers hold every permission), and staff."""
    if not user.is_authenticated or not user.is_active:
        return False
    return bool(user.is_staff or has_role_permission(user, "studies.run_study"))


# --- Defining a study ---------------------------------------------------------------------------


def _whole(value: Any, low: int, high: int) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        return None
    return value


def _text(value: Any, *, limit: int) -> str | None:
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        return None
    return value.strip()


def _amount(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return None
    if not amount.is_finite() or amount < 0 or amount > 10_000 or amount.as_tuple().exponent < -2:  # type: ignore[operator]
        return None
    return amount


def _check_tasks(value: Any, problems: dict[str, list[str]]) -> list[dict[str, Any]]:
    if not isinstance(value, Mapping) or not value:
        problems["tasks"] = ['an object of the work in order, e.g. {"write": 2, "vote": 4, "check": 2}']
        return []
    tasks, messages = [], []
    for kind, count in value.items():
        if kind not in TASK_KINDS:
            messages.append(f"{kind!r} is not a kind of work (write, vote, check)")
        elif _whole(count, 0, TASK_MAX) is None:
            messages.append(f"{kind} is a whole number from 0 to {TASK_MAX}")
        elif count:
            tasks.append({"kind": kind, "count": count})
    if not messages and not tasks:
        messages.append("the work is at least one task")
    if messages:
        problems["tasks"] = messages
    return tasks


def _check_arms(value: Any, problems: dict[str, list[str]]) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_ARMS:
        problems["arms"] = [f"a list of 1 to {MAX_ARMS} arms, each {{\"name\", \"settings\"}}"]
        return []
    arms, messages, names = [], [], set()
    for index, arm in enumerate(value):
        if not isinstance(arm, Mapping):
            messages.append(f"arms[{index}]: an object {{\"name\", \"settings\"}}")
            continue
        unknown = set(arm) - {"name", "settings"}
        if unknown:
            messages.append(f"arms[{index}]: unknown fields {', '.join(sorted(map(str, unknown)))}")
        name = _text(arm.get("name"), limit=64)
        if name is None:
            messages.append(f"arms[{index}].name: a name of 1 to 64 characters")
        elif name.lower() in names:
            messages.append(f"arms[{index}].name: {name!r} names two arms; arm names are unique")
        else:
            names.add(name.lower())
        overrides = arm.get("settings", {})
        messages += [f"arms[{index}].settings: {problem}" for problem in arm_settings.validate_arm_settings(overrides)]
        arms.append({"name": name, "settings": dict(overrides) if isinstance(overrides, Mapping) else {}})
    if messages:
        problems["arms"] = messages
    return arms


def _check_bonus(value: Any, problems: dict[str, list[str]]) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        problems["bonus"] = ["an object: currency and amounts as decimal strings (per_verified_fooling_claim, per_right_vote, per_right_check, cap)"]
        return {}
    bonus, messages = {}, []
    for key, amount in value.items():
        if key == "currency":
            if not isinstance(amount, str) or not re.fullmatch(r"[A-Z]{3}", amount):
                messages.append("currency is a three-letter code such as GBP or USD")
            else:
                bonus[key] = amount
        elif key in BONUS_AMOUNTS:
            parsed = _amount(amount)
            if parsed is None:
                messages.append(f"{key} is an amount from 0 to 10000 with at most two decimals, as a string (\"0.05\")")
            else:
                bonus[key] = f"{parsed:.2f}"
        else:
            messages.append(f"{key!r} is not a bonus rule (currency, {', '.join(BONUS_AMOUNTS)})")
    if messages:
        problems["bonus"] = messages
    return bonus


def _check_pages(spec: Mapping[str, Any], problems: dict[str, list[str]]) -> tuple[list[int], list[str]]:
    page_ids = spec.get("pages", [])
    categories = spec.get("categories", [])
    if not isinstance(page_ids, list) or not all(_whole(pk, 1, 2**62) is not None for pk in page_ids) or len(page_ids) > 10_000:
        problems["pages"] = ["a list of page ids"]
        page_ids = []
    elif page_ids:
        found = set(Page.objects.filter(pk__in=page_ids).values_list("pk", flat=True))
        missing = [pk for pk in page_ids if pk not in found]
        if missing:
            problems["pages"] = [f"no page has the id {', '.join(map(str, missing[:20]))}"]
    if not isinstance(categories, list) or not all(isinstance(c, str) and c for c in categories) or len(categories) > 1_000:
        problems["categories"] = ["a list of category slugs or names"]
        categories = []
    slugs = []
    for wanted in categories:
        category = Category.objects.filter(Q(slug=wanted) | Q(name__iexact=wanted)).first()
        if category is None:
            problems.setdefault("categories", []).append(f"no category has the slug or name {wanted!r}")
        else:
            slugs.append(category.slug)
    return list(dict.fromkeys(page_ids)), list(dict.fromkeys(slugs))


SPEC_FIELDS = {
    "name", "consent", "tasks", "pages", "categories", "arms", "participants", "completion_code", "screen_out_code",
    "attention_checks", "attention_max_failures", "time_limit_minutes", "bonus", "block_size", "address_cap", "seed",
}


def study_spec_check(spec: Any) -> dict[str, Any]:
    """The study ``spec`` (the REST body, or the command's JSON file) checked field by field:
    its cleaned values, or 400 ``invalid`` whose ``details`` give each field's messages."""
    if not isinstance(spec, Mapping):
        raise ServiceError("invalid", "Send a study as a JSON object.")
    problems: dict[str, list[str]] = {}
    for key in sorted(set(spec) - SPEC_FIELDS):
        problems[str(key)] = [f"not a field of a study (the fields: {', '.join(sorted(SPEC_FIELDS))})"]
    name = _text(spec.get("name"), limit=200)
    if name is None or not slugify(name):
        problems["name"] = ["a name of 1 to 200 characters, with letters or digits"]
    consent = _text(spec.get("consent"), limit=20_000)
    if consent is None:
        problems["consent"] = ["the consent text shown before anything else: 1 to 20,000 characters"]
    tasks = _check_tasks(spec.get("tasks"), problems)
    page_ids, categories = _check_pages(spec, problems)
    arms = _check_arms(spec.get("arms"), problems)
    per_arm = _whole(spec.get("participants"), 1, 100_000)
    if per_arm is None:
        problems["participants"] = ["participants wanted in each arm: a whole number from 1 to 100,000"]
    completion_code = spec.get("completion_code")
    if not isinstance(completion_code, str) or not CODE_PATTERN.match(completion_code):
        problems["completion_code"] = ["1 to 64 letters, digits, - or _ (the code the platform expects)"]
    attention = _whole(spec.get("attention_checks", 0), 0, TASK_MAX)
    checks_asked = next((task["count"] for task in tasks if task["kind"] == "check"), 0)
    if attention is None:
        problems["attention_checks"] = [f"a whole number from 0 to {TASK_MAX}"]
    elif attention > checks_asked:
        problems["attention_checks"] = [f"attention checks are among the checks: at most the {checks_asked} checks of the work"]
    max_failures = _whole(spec.get("attention_max_failures", 0), 0, TASK_MAX)
    if max_failures is None:
        problems["attention_max_failures"] = [f"a whole number from 0 to {TASK_MAX}"]
    elif attention is not None and attention and max_failures >= attention:
        problems["attention_max_failures"] = [f"fewer than the {attention} attention checks (more failures than this screen a participant out)"]
    screen_out_code = spec.get("screen_out_code", "")
    if screen_out_code == "" and attention:
        problems["screen_out_code"] = ["a study with attention checks needs a screen-out code"]
    elif screen_out_code != "" and (not isinstance(screen_out_code, str) or not CODE_PATTERN.match(screen_out_code)):
        problems["screen_out_code"] = ["1 to 64 letters, digits, - or _"]
    elif screen_out_code and screen_out_code == completion_code:
        problems["screen_out_code"] = ["the screen-out code differs from the completion code"]
    time_limit = spec.get("time_limit_minutes")
    if time_limit is not None and _whole(time_limit, 1, 7 * 24 * 60) is None:
        problems["time_limit_minutes"] = ["null, or minutes from 1 to 10,080 (a week)"]
    bonus = _check_bonus(spec.get("bonus"), problems)
    block_size = spec.get("block_size", 2 * len(arms) if arms else None)
    if _whole(block_size, 1, 1_000) is None:
        problems["block_size"] = ["a whole number from 1 to 1,000"]
    elif arms and block_size % len(arms):
        problems["block_size"] = [f"a multiple of the number of arms ({len(arms)})"]
    elif arms and per_arm is not None and per_arm % (block_size // len(arms)):
        problems["participants"] = [
            f"with {len(arms)} arms in blocks of {block_size}, each block brings {block_size // len(arms)} to each arm: "
            f"participants per arm is a multiple of {block_size // len(arms)}, so that every arm fills"
        ]
    address_cap = _whole(spec.get("address_cap", settings.FM2_STUDIES["ADDRESS_CAP"]), 1, 100_000)
    if address_cap is None:
        problems["address_cap"] = ["participants from one address: a whole number from 1 to 100,000"]
    seed = spec.get("seed", secrets.randbelow(2**62))
    if _whole(seed, 0, 2**62) is None:
        problems["seed"] = ["a whole number from 0 to 2**62"]
    if problems:
        first = next(iter(problems))
        raise ServiceError("invalid", f"{first}: {problems[first][0]}", details=problems)
    return {
        "name": name, "consent_text": consent, "tasks": tasks, "page_ids": page_ids, "categories": categories,
        "arms": arms, "per_arm": per_arm, "completion_code": completion_code, "screen_out_code": screen_out_code,
        "attention_checks": attention, "attention_max_failures": max_failures, "time_limit_minutes": time_limit,
        "bonus": bonus, "block_size": block_size, "address_cap": address_cap, "seed": seed,
    }


def _free_slug(name: str) -> str:
    base = slugify(name)[:56].strip("-") or "study"
    slug, number = base, 1
    while Study.objects.filter(slug=slug).exists():
        number += 1
        slug = f"{base}-{number}"
    return slug


def study_create(*, owner: AbstractBaseUser, spec: Any) -> Study:
    """A new open study of ``owner``'s from ``spec`` (``study_spec_check``), with its arms.
    403 ``not_a_study_runner`` unless the owner may run studies; the slug comes from the name,
    made unique with a number."""
    if not may_run_studies(owner):
        raise ServiceError("not_a_study_runner", "Only researchers may define studies.", status_code=403)
    clean = study_spec_check(spec)
    arms = clean.pop("arms")
    for _attempt in range(5):
        try:
            with transaction.atomic():
                study = Study.objects.create(owner=owner, slug=_free_slug(clean["name"]), created=timezone.now(), **clean)
                Arm.objects.bulk_create(
                    Arm(study=study, name=arm["name"], position=position, settings=arm["settings"]) for position, arm in enumerate(arms)
                )
                return study
        except IntegrityError:  # a study of the same name was made meanwhile: the next number
            continue
    raise ServiceError("invalid", "Could not find a free slug for this name; choose another name.")


def study_entry_path(study: Study) -> str:
    return f"/s/{study.slug}/"


def study_summary(study: Study) -> dict[str, Any]:
    """A study as its owner reads it back, and as the researcher's list and figures show it
    (no participant in it, no platform id): its definition (``tasks`` by kind, ``arms`` with
    their settings, ``participants`` wanted per arm, also as ``per_arm``), its state
    (``status``, ``created``, ``closed``, ``arrivals``) and per arm how many participants
    arrived (``participants``) and how many fill it (``filled``: not screened out, the count
    that closes the study, ``arm_counts``). One query for the arms."""
    screened_out = Q(participants__status=Participant.Status.SCREENED_OUT)
    arms = study.arms.annotate(arrived=Count("participants"), filled=Count("participants", filter=~screened_out)).order_by("position")
    return {
        "slug": study.slug,
        "name": study.name,
        "status": study.status,
        "created": study.created,
        "closed": study.closed,
        "tasks": {task["kind"]: task["count"] for task in study.tasks},
        "arms": [{"name": arm.name, "settings": arm.settings, "participants": arm.arrived, "filled": arm.filled} for arm in arms],
        "participants": study.per_arm,
        "per_arm": study.per_arm,
        "block_size": study.block_size,
        "address_cap": study.address_cap,
        "attention_checks": study.attention_checks,
        "attention_max_failures": study.attention_max_failures,
        "time_limit_minutes": study.time_limit_minutes,
        "bonus": study.bonus,
        "arrivals": study.arrivals,
    }


# --- Arriving -----------------------------------------------------------------------------------


def arm_position_for(*, seed: int, block_size: int, arm_count: int, sequence: int) -> int:
    """The arm (its position) of the arrival numbered ``sequence``: its slot in its block's
    shuffled order (module docstring)."""
    block, slot = divmod(sequence, block_size)
    slots = [position for position in range(arm_count) for _ in range(block_size // arm_count)]
    random.Random(f"{seed}:{block}").shuffle(slots)
    return slots[slot]


def _checked_arrival(platform: Any, participant_id: Any, extra: Any) -> tuple[str, str, dict[str, str]]:
    problems: dict[str, list[str]] = {}
    if platform not in Participant.Platform.values:
        problems["platform"] = [f"one of {', '.join(Participant.Platform.values)}"]
    pid = participant_id.strip() if isinstance(participant_id, str) else ""
    if not pid or len(pid) > 200 or not pid.isprintable():
        problems["participant"] = ["the participant's id on the platform: 1 to 200 printable characters"]
    kept: dict[str, str] = {}
    if extra is None:
        extra = {}
    if not isinstance(extra, Mapping):
        problems["extra"] = ["an object of the platform's other parameters"]
    elif platform in PLATFORM_EXTRA:
        for key, value in extra.items():
            if key not in PLATFORM_EXTRA[platform]:
                continue  # a parameter the platform adds that the study does not keep
            if not isinstance(value, str) or len(value) > 200 or not value.isprintable():
                problems.setdefault("extra", []).append(f"{key}: up to 200 printable characters")
            elif value:
                kept[key] = value
    if problems:
        first = next(iter(problems))
        raise ServiceError("invalid", f"{first}: {problems[first][0]}", details=problems)
    return str(platform), pid, kept


def arm_counts(study: Study) -> dict[int, int]:
    """``{arm id: participants who fill it}``: the study's participants not screened out
    (a forgotten participant is gone with their account). Active, finished and timed-out
    participants all hold their place."""
    rows = Participant.objects.filter(study=study).exclude(status=Participant.Status.SCREENED_OUT).values("arm_id").annotate(n=Count("pk"))
    return {row["arm_id"]: row["n"] for row in rows}


def arms_full(study: Study, arms: Sequence[Arm]) -> bool:
    """Every arm has the participants wanted (``per_arm``, counted by ``arm_counts``)."""
    counts = arm_counts(study)
    return all(counts.get(arm.pk, 0) >= study.per_arm for arm in arms)


def _study(slug: str, *, lock: bool = False) -> Study:
    studies = Study.objects.select_for_update() if lock else Study.objects
    study = studies.filter(slug=slug).first() if isinstance(slug, str) else None
    if study is None:
        raise ServiceError("study_not_found", "No study has this address.", status_code=404)
    return study


def participant_enter(
    *, slug: str, platform: Any, participant_id: Any, consent: Any, extra: Any = None, ip: str | None
) -> tuple[Participant, bool]:
    """The participant of ``participant_id`` on ``platform`` in the study, and whether they
    are new: a returning participant (a reload, another day, another device) is given back
    as they stand, never refused; a newcomer consents (400 ``consent_required`` otherwise,
    nothing stored), arrives only while the study is open (403 ``study_paused`` or
    ``study_closed``) and under its address cap (429 ``study_address_cap``), and gets an
    account of their own with no usable password and an arm by blocked randomisation. The
    arrival that fills every arm (``arms_full``: participants not screened out) closes the
    study; a screened-out participant's place is taken by a later arrival.

    Locking: the study row, so that parallel arrivals take consecutive sequences."""
    platform, pid, kept = _checked_arrival(platform, participant_id, extra)
    if consent is not True:
        raise ServiceError("consent_required", "Nothing happens without your consent: send consent: true.")
    with transaction.atomic():
        study = _study(slug, lock=True)
        found = Participant.objects.select_related("arm", "user").filter(study=study, platform=platform, platform_id=pid).first()
        if found is not None:
            return found, False
        if study.status == Study.Status.PAUSED:
            raise ServiceError("study_paused", "This study is paused: nobody new may start now. Try again later.", status_code=403)
        arms = list(study.arms.order_by("position"))
        if study.status == Study.Status.CLOSED:
            raise ServiceError("study_closed", "This study is closed: it takes no new participants.", status_code=403)
        address = address_digest(ip or "unknown")
        if Participant.objects.filter(study=study, address=address).count() >= study.address_cap:
            raise ServiceError(
                "study_address_cap",
                f"This study takes at most {study.address_cap} participants from one address, and that many came from yours.",
                status_code=429,
            )
        sequence = study.arrivals
        arm = arms[arm_position_for(seed=study.seed, block_size=study.block_size, arm_count=len(arms), sequence=sequence)]
        User = get_user_model()
        user = User(username=f"p_{secrets.token_hex(8)}")
        user.set_unusable_password()
        user.save()
        if ip is not None:
            signup_origin_record(player=user, ip=ip)
        now = timezone.now()
        participant = Participant.objects.create(
            study=study, arm=arm, user=user, platform=platform, platform_id=pid, platform_extra=kept,
            address=address, sequence=sequence, consented=now,
        )
        study.arrivals = sequence + 1
        fields = ["arrivals"]
        if arms_full(study, arms):
            study.status, study.closed = Study.Status.CLOSED, now
            fields += ["status", "closed"]
        study.save(update_fields=fields)
        return participant, True


# --- The way through ----------------------------------------------------------------------------


def participant_of(user: Any) -> Participant | None:
    """The user's participant row (with its study and arm), or None for every other account.
    Remembered on the user object for the request."""
    if not getattr(user, "is_authenticated", False):
        return None
    if not hasattr(user, "_fm2_participant"):
        user._fm2_participant = Participant.objects.select_related("study", "arm").filter(user_id=user.pk).first()
    return user._fm2_participant


def participant_in(*, user: Any, slug: str) -> Participant:
    """The user's participant row in the study of ``slug``: 404 ``study_not_found``, 403
    ``not_a_participant`` for any other account."""
    study = _study(slug)
    participant = participant_of(user)
    if participant is None or participant.study_id != study.pk:
        raise ServiceError("not_a_participant", "This account is not a participant of this study.", status_code=403)
    return participant


def participant_deadline(participant: Participant) -> datetime | None:
    limit = study_time_limit(participant.study)
    return participant.consented + limit if limit else None


def study_time_limit(study: Study) -> timedelta | None:
    minutes = study.time_limit_minutes
    return timedelta(minutes=minutes) if minutes else None


def counted_work(
    user_ids: Sequence[int], *, until: datetime | None = None, time_limit: timedelta | None = None
) -> tuple[QuerySet[Claim], QuerySet[Round], QuerySet[Check]]:
    """What counts as these accounts' work (``until``: only what was done by then;
    ``time_limit``: only what each participant did by their own deadline, their consent plus
    the study's time limit): the claims they saved (any status), the rounds they voted (not
    given up, timed out or reported), the checks they answered (attention checks included).
    The one rule behind a participant's progress (``work_done``) and the researcher's figures
    and bonuses (``research.work_by_participant``)."""
    ids = list(user_ids)
    claims = Claim.objects.filter(author_id__in=ids)
    rounds = Round.objects.filter(player_id__in=ids, state=Round.State.VOTED, vote__isnull=False)
    checks = Check.objects.filter(player_id__in=ids, answered_at__isnull=False).exclude(label="")
    if until is not None:
        claims, rounds, checks = claims.filter(created__lte=until), rounds.filter(ended_at__lte=until), checks.filter(answered_at__lte=until)
    if time_limit is not None:
        claims = claims.filter(created__lte=F("author__study_participant__consented") + time_limit)
        rounds = rounds.filter(ended_at__lte=F("player__study_participant__consented") + time_limit)
        checks = checks.filter(answered_at__lte=F("player__study_participant__consented") + time_limit)
    return claims, rounds, checks


def work_done(*, user_id: int, until: datetime | None = None) -> dict[str, int]:
    """The account's counted work by kind (``counted_work``)."""
    claims, rounds, checks = counted_work([user_id], until=until)
    return {"write": claims.count(), "vote": rounds.count(), "check": checks.count()}


class TaskProgress(TypedDict):
    kind: str
    done: int
    needed: int


def _progress(study: Study, done: Mapping[str, int]) -> list[TaskProgress]:
    return [{"kind": task["kind"], "done": min(done.get(task["kind"], 0), task["count"]), "needed": task["count"]} for task in study.tasks]


def attention_failures(participant: Participant) -> int:
    return AttentionCheck.objects.filter(participant=participant, passed=False).count()


def participant_refresh(*, participant: Participant) -> Participant:
    """The participant's status by the server's own count: an active participant whose
    work is all done is finished (done before the deadline, when the study has a time
    limit); past the deadline without it, timed out. Locking: the participant row."""
    if participant.status != Participant.Status.ACTIVE:
        return participant
    deadline = participant_deadline(participant)
    now = clock.now()
    past = deadline is not None and now >= deadline
    done = work_done(user_id=participant.user_id, until=deadline if past else None)
    finished = all(item["done"] >= item["needed"] for item in _progress(participant.study, done))
    if not finished and not past:
        return participant
    with transaction.atomic():
        locked = Participant.objects.select_for_update().get(pk=participant.pk)
        if locked.status == Participant.Status.ACTIVE:
            locked.status = Participant.Status.FINISHED if finished else Participant.Status.TIMED_OUT
            locked.ended = now
            locked.save(update_fields=["status", "ended"])
        participant.status, participant.ended = locked.status, locked.ended
    return participant


def participant_state(*, participant: Participant) -> dict[str, Any]:
    """What the participant's pages and ``GET /api/studies/<slug>/me`` show: their arm, the
    work by kind (done of needed, in the study's order), the next task, their status and the
    code the server gives once its own count says so (the completion code only when
    finished, the screen-out code only when screened out), the deadline, and for Prolific
    the address back to it. Never their platform id."""
    participant = participant_refresh(participant=participant)
    study = participant.study
    deadline = participant_deadline(participant)
    progress = _progress(study, work_done(user_id=participant.user_id, until=deadline))
    completion = study.completion_code if participant.status == Participant.Status.FINISHED else None
    screen_out = study.screen_out_code if participant.status == Participant.Status.SCREENED_OUT else None
    code = completion or screen_out
    upcoming = next((item["kind"] for item in progress if item["done"] < item["needed"]), None)
    total = sum(item["needed"] for item in progress)
    done = sum(item["done"] for item in progress)
    return {
        "study": study.slug,
        "name": study.name,
        "arm": participant.arm.name,
        "status": participant.status,
        "progress": progress,
        "done": done,
        "total": total,
        "next": upcoming if participant.status == Participant.Status.ACTIVE else None,
        "next_title": TASK_TITLES[upcoming] if upcoming and participant.status == Participant.Status.ACTIVE else None,
        "completion_code": completion,
        "screen_out_code": screen_out,
        "deadline": deadline.isoformat() if deadline else None,
        "return_url": PROLIFIC_RETURN.format(code=code) if code and participant.platform == Participant.Platform.PROLIFIC else None,
    }


def attention_positions(participant: Participant) -> list[int]:
    """Where among the participant's checks (1 for the first answered) their study's
    attention checks fall: ``attention_checks`` places drawn among the study's checks by
    ``random.Random(f"{seed}:{sequence}:attention")``, so each participant meets them at
    places of their own, unannounced (a study asks no more of them than it has checks)."""
    study = participant.study
    checks = sum(task["count"] for task in study.tasks if task["kind"] == "check")
    wanted = min(study.attention_checks, checks)
    if not wanted:
        return []
    return sorted(random.Random(f"{study.seed}:{participant.sequence}:attention").sample(range(1, checks + 1), wanted))


def settled_checks_owed(participant: Participant) -> int:
    """How many attention checks the participant is owed by now, their next check included:
    the places (``attention_positions``) up to their next check, less the attention checks
    recorded. 0 once they are no longer active."""
    if participant.status != Participant.Status.ACTIVE or not participant.study.attention_checks:
        return 0
    following = Check.objects.filter(player_id=participant.user_id, answered_at__isnull=False).count() + 1
    reached = sum(1 for place in attention_positions(participant) if place <= following)
    if not reached:
        return 0
    return max(0, reached - AttentionCheck.objects.filter(participant=participant).count())


def attention_check_record(*, check_id: int) -> None:
    """A participant answered a check: when it was on a settled claim (a hidden gold item the
    checks mode mixes in), record it as an attention check, passed when the label given is
    the settled one; more failures than the study allows screen the participant out. Runs
    inside the answer's transaction (``check_answered``)."""
    check = Check.objects.filter(pk=check_id).only("player_id", "claim_id", "label", "settled_label", "answered_at").first()
    if check is None or not check.settled_label or check.answered_at is None:
        return
    participant = Participant.objects.select_for_update().select_related("study").filter(user_id=check.player_id).first()
    if participant is None or participant.status != Participant.Status.ACTIVE:
        return
    position = Check.objects.filter(player_id=check.player_id, answered_at__isnull=False, answered_at__lte=check.answered_at).count()
    AttentionCheck.objects.get_or_create(
        participant=participant,
        claim_id=check.claim_id,
        defaults={"position": min(position, 32767), "passed": check.label == check.settled_label, "answered": check.answered_at},
    )
    if participant.study.attention_checks and attention_failures(participant) > participant.study.attention_max_failures:
        participant.status, participant.ended = Participant.Status.SCREENED_OUT, timezone.now()
        participant.save(update_fields=["status", "ended"])


# --- Forgetting a participant -----------------------------------------------------------------


def participant_forget(*, slug: str, participant_id: str, platform: str | None = None) -> dict[str, int]:
    """Delete the participant of ``participant_id`` in the study (a data-protection request)
    with their account and everything it made: their claims (and every round that dealt
    one, whoever played it, with its votes and likes), their rounds, votes, likes, reports,
    checks, tallies, points and notifications. Returns how many rows of each kind went.

    Moderation's audit records are never deleted: a participant whose claims or account a
    moderator acted on is refused (400 ``invalid``) with a message saying so, and nothing is
    deleted. 404 ``participant_not_found`` for an unknown id."""
    from foolgame.moderation.models import AuditRecord, PlayerAuditRecord
    from foolgame.players.models import LedgerEntry
    from foolgame.rooms.models import RoomQuestion
    from foolgame.voting.models import Like, Report, Vote

    with transaction.atomic():
        study = _study(slug, lock=True)
        participants = Participant.objects.filter(study=study, platform_id=participant_id)
        if platform is not None:
            participants = participants.filter(platform=platform)
        found = list(participants.select_for_update())
        if not found:
            raise ServiceError("participant_not_found", f"Study {slug} has no participant {participant_id!r}.", status_code=404)
        if len(found) > 1:
            raise ServiceError(
                "invalid", f"{participant_id!r} arrived from several platforms ({', '.join(p.platform for p in found)}): name the platform."
            )
        user_id = found[0].user_id
        claims = Claim.objects.filter(author_id=user_id)
        audited = AuditRecord.objects.filter(Q(claim__in=claims) | Q(moderator_id=user_id)).count()
        audited += PlayerAuditRecord.objects.filter(Q(player_id=user_id) | Q(moderator_id=user_id)).count()
        if audited:
            raise ServiceError(
                "invalid",
                f"Moderators acted on this participant or their claims ({audited} audit records), and audit records are "
                "never deleted: nothing was deleted. Remove the participant's data by hand with the database's owner.",
            )
        rounds = Round.objects.filter(Q(player_id=user_id) | Q(left_claim__in=claims) | Q(right_claim__in=claims))
        steps = [
            Like.objects.filter(Q(round__in=rounds) | Q(claim__in=claims)),
            Vote.objects.filter(round__in=rounds),
            LedgerEntry.objects.filter(Q(player_id=user_id) | Q(claim__in=claims)),
            Report.objects.filter(reporter_id=user_id),
            RoomQuestion.objects.filter(Q(left_claim__in=claims) | Q(right_claim__in=claims)),
            rounds,
            claims,
            get_user_model().objects.filter(pk=user_id),
        ]
        gone: dict[str, int] = {}
        for queryset in steps:
            _, per_model = queryset.delete()
            for label, count in per_model.items():
                if count:
                    gone[label] = gone.get(label, 0) + count
        return gone
