"""Fact checks: deal a claim with its gold evidence to a player, take their label once before
its clock runs out, and keep each claim's gold label (the weighted 3-of-5 rule) up to date.

Independence: a check shows the claim's text, page and gold evidence, never its author's
label nor another checker's; what an answer returns (points, streak, the next check) says
nothing of other labels. Points come only from hidden gold items (claims whose label is
settled), never from agreeing with the other checkers of an open claim.

Noninterference: nothing a single answer returns depends on whether its claim was settled or
on its label. The deal does not look at settledness (settled claims come as any other claim
does), except for a player a higher app says is owed settled checks (a study's attention
checks), who gets them as any other check; the streak counts answers given in time; answers on settled claims turn into points and
move the checker's record only in a *tally* of TALLY_SIZE answers at once, which pays only a
checker whose record shows reading (``scoring.validation.record_shows_reading``). A tally tells
how many of its answers agreed with a settled label, never which (docs/checks.md).

Locking: a deal takes the player's row lock (two tabs never get two checks at once), an
answer the check's row lock; the claim's gold label is written under the claim's lock
(``moderation.quality.claim_validation_set``, as every writer of its flags).
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import timedelta
from typing import Any, NotRequired, TypedDict

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, models, transaction
from django.db.models import Min

from foolgame.checks import selectors
from foolgame.checks.models import Check, CheckTally, ClaimValidation
from foolgame.claims.models import Claim, ClaimGold
from foolgame.core import clock, hooks
from foolgame.core.errors import ServiceError
from foolgame.moderation.quality import claim_validation_set
from foolgame.pages.models import Sentence
from foolgame.pages.selectors import reading_order
from foolgame.players.models import LedgerEntry
from foolgame.players.selectors import points_shown
from foolgame.voting.models import Report
from foolgame.voting.payloads import Evidence, PageRef
from scoring.validation import LABELS, checker_weight, gold_label, record_shows_reading

NOT_COUNTING_MESSAGE = (
    "Your answers on claims whose label is settled were too often wrong, so your labels no longer count "
    "towards any claim's gold label, and your tallies pay no points. You can keep playing: a better record "
    "brings both back."
)


class CheckedClaim(TypedDict):
    id: int
    text: str
    page: PageRef


class CheckPayload(TypedDict):
    """A check as its player sees it (``POST /api/checks``): never the claim's label."""

    id: int
    claim: CheckedClaim
    evidence: list[Evidence]
    expires_at: str


class TallyPayload(TypedDict):
    """A closed tally as its player sees it: counts over the whole batch, never which answer."""

    number: int
    answered: int
    gold: int
    right: int
    paid: bool
    points: NotRequired[int]
    counting: bool


class TallyProgress(TypedDict):
    answered: int  # answers since the last tally
    size: int  # answers a tally counts
    last: TallyPayload | None


class AnswerPayload(TypedDict):
    points: NotRequired[int]
    streak: int
    counting: bool
    message: str | None
    tally: TallyProgress
    next: CheckPayload | None


def _config() -> dict[str, Any]:
    return settings.FM2_CHECKS


def check_payload(check: Check) -> CheckPayload:
    """The claim and its gold sentences in the order its page reads (``pages.selectors.reading_order``)."""
    claim = check.claim
    gold = {link.sentence_id for link in ClaimGold.objects.filter(claim_id=claim.pk)}
    page = reading_order(list(Sentence.objects.filter(page_id=claim.page_id).order_by("position", "id")))
    evidence = [sentence for sentence in page if sentence.pk in gold]
    return {
        "id": check.pk,
        "claim": {"id": claim.pk, "text": claim.text, "page": {"id": claim.page_id, "title": claim.page.title}},
        "evidence": [{"text": sentence.text, "section_header": sentence.section_header} for sentence in evidence],
        "expires_at": check.expires_at.isoformat(),
    }


def _pick(claims: models.QuerySet[Claim]) -> Claim | None:
    """A claim of ``claims`` at random, from an id pivot (no ORDER BY random over the table)."""
    bounds = claims.aggregate(low=Min("pk"), high=models.Max("pk"))
    if bounds["low"] is None:
        return None
    pivot = random.randint(bounds["low"], bounds["high"])
    return claims.filter(pk__gte=pivot).order_by("pk").first() or claims.order_by("pk").first()


def _choose(player: AbstractBaseUser) -> tuple[Claim, str] | None:
    """The claim to deal and its settled label ("" for an open claim). The choice never looks
    at whether a claim is settled or at its label, so which claim comes tells nothing of
    either: at REVISIT_SHARE of the deals (or when no claim needs labels) any claim the player
    may check, at random; else one of the least-checked claims that still need labels. A
    settled claim comes through either draw as often as an open one would, and is then a
    hidden gold item.

    The one exception is a player owed settled checks by a higher app
    (``hooks.player_settings``' ``settled_checks_owed``: a study's attention checks): while
    they are owed one, a settled claim they may check comes first, at random, dealt as any
    other check (same payload, same clock); with none left, the usual draw."""
    pool = selectors.claims_to_check(player=player)
    if hooks.player_settings.get().settled_checks_owed(player_id=player.pk) > 0:
        claim = _pick(pool.filter(selectors.settled()).select_related("page"))
        if claim is not None:
            return claim, claim.label
    needing = selectors.needing_labels(pool)
    lowest = needing.aggregate(lowest=Min("labels"))["lowest"]
    least = needing.filter(labels=lowest) if lowest is not None else needing.none()
    order = [pool, least] if random.random() < _config()["REVISIT_SHARE"] else [least, pool]
    for claims in order:
        claim = _pick(claims.select_related("page"))
        if claim is not None:
            is_settled = Claim.objects.filter(pk=claim.pk).filter(selectors.settled()).exists()
            return claim, claim.label if is_settled else ""
    return None


def _check_rate(player: AbstractBaseUser, now: Any) -> None:
    limit = _config()["PER_HOUR"]
    if Check.objects.filter(player=player, dealt_at__gt=now - timedelta(hours=1)).count() >= limit:
        raise ServiceError("check_rate_limited", f"At most {limit} checks an hour; take a break and come back.", status_code=429, retry_after=60)


def check_deal(*, player: AbstractBaseUser) -> CheckPayload:
    """Deal the player's next check, or give back the one still open (a reload resumes it).

    409 ``nothing_to_check`` when no claim is left that this player may check. Locking: the
    player's row, so two requests at once deal one check."""
    User = get_user_model()
    now = clock.now()
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=player.pk).exists()
        open_check = selectors.open_check(player=player, now=now)
        if open_check is not None:
            return check_payload(open_check)
        _check_rate(player, now)
        chosen = _choose(player)
        if chosen is None:
            raise ServiceError("nothing_to_check", "No claim is left for you to check right now.", status_code=409)
        claim, settled_label = chosen
        try:
            with transaction.atomic():
                check = Check.objects.create(
                    player=player, claim=claim, dealt_at=now, expires_at=now + timedelta(seconds=_config()["SECONDS"]), settled_label=settled_label
                )
        except IntegrityError:  # checked meanwhile in another way: the unique pair says no
            raise ServiceError("nothing_to_check", "That claim was just dealt to you; ask again.", status_code=409) from None
        return check_payload(check)


def _previous_streak(player: AbstractBaseUser, check: Check) -> int:
    """The streak before this check: the last check dealt before it, if it was answered (one
    left to expire breaks the streak). Answers in time, whatever the labels: the streak says
    nothing of which claims were settled."""
    last = Check.objects.filter(player=player, dealt_at__lte=check.dealt_at).exclude(pk=check.pk).order_by("-dealt_at", "-pk").first()
    return last.streak if last is not None and last.answered_at is not None else 0


def current_streak(*, player: AbstractBaseUser, now: Any) -> int:
    """The streak as the page shows it on arrival: the last check done with (answered, or
    expired unanswered, which breaks it), the open one aside."""
    last = Check.objects.filter(player=player).exclude(answered_at__isnull=True, expires_at__gt=now).order_by("-dealt_at", "-pk").first()
    if last is None or last.answered_at is None:
        return 0
    return last.streak


def _points_left_today(player: AbstractBaseUser, now: Any) -> int:
    """What the player may still earn from checks in the last 24 hours (POINTS_PER_DAY)."""
    earned = LedgerEntry.objects.filter(player=player, kind=LedgerEntry.Kind.CHECK, created__gt=now - timedelta(days=1)).aggregate(
        total=models.Sum("amount")
    )["total"]
    return max(0, _config()["POINTS_PER_DAY"] - (earned or 0))


def player_weight(*, player_id: int) -> float:
    """The weight of the player's labels, from their record as their last tally left it."""
    right, seen = selectors.checker_records(player_ids=[player_id]).get(player_id, (0, 0))
    return record_weight(right, seen)


def tally_payload(tally: CheckTally) -> TallyPayload:
    return {
        "number": tally.number,
        "answered": tally.answered,
        "gold": tally.gold,
        "right": tally.right,
        "paid": tally.paid,
        "points": tally.points,
        "counting": tally.counting,
    }


def tally_progress(*, player: AbstractBaseUser) -> TallyProgress:
    """How far the player's open batch is, and their last tally (without its points when
    the player's game hides them)."""
    last = CheckTally.objects.filter(player=player).order_by("-number").first()
    shown = tally_payload(last) if last is not None else None
    if shown is not None and not points_shown(player_id=player.pk):
        del shown["points"]
    return {"answered": selectors.untallied(player=player).count(), "size": _config()["TALLY_SIZE"], "last": shown}


def _tally_if_due(player: AbstractBaseUser, now: Any) -> CheckTally | None:
    """Count the player's untallied answers once TALLY_SIZE are in (the caller holds the
    player's row lock): the batch's gold items and right answers, the record they make with
    every earlier tally, whether the labels count from now on, and, when that record shows
    reading, POINTS for each right answer of the batch (to the daily cap), one ledger row for
    the whole tally."""
    config = _config()
    batch = list(selectors.untallied(player=player).order_by("answered_at", "pk").values_list("pk", "settled_label", "correct"))
    if len(batch) < config["TALLY_SIZE"]:
        return None
    gold = sum(1 for _, settled, _ in batch if settled)
    right_ids = [pk for pk, settled, correct in batch if settled and correct]
    gold_supports = sum(1 for _, settled, _ in batch if settled == Check.Label.SUPPORTS)
    right_supports = sum(1 for _, settled, correct in batch if settled == Check.Label.SUPPORTS and correct)
    previous = CheckTally.objects.filter(player=player).order_by("-number").first()
    record_right = (previous.record_right if previous else 0) + len(right_ids)
    record_seen = (previous.record_seen if previous else 0) + gold
    supports = ((previous.record_right_supports if previous else 0) + right_supports, (previous.record_seen_supports if previous else 0) + gold_supports)
    refutes = (record_right - supports[0], record_seen - supports[1])
    counting = record_weight(record_right, record_seen) > 0
    paid = counting and record_shows_reading(record_right, record_seen, by_label=(supports, refutes), min_seen=config["PAY_MIN_GOLD"])
    points = min(config["POINTS"] * len(right_ids), _points_left_today(player, now)) if paid else 0
    tally = CheckTally.objects.create(
        player=player,
        number=(previous.number if previous else 0) + 1,
        closed_at=now,
        answered=len(batch),
        gold=gold,
        right=len(right_ids),
        record_right=record_right,
        record_seen=record_seen,
        gold_supports=gold_supports,
        right_supports=right_supports,
        record_right_supports=supports[0],
        record_seen_supports=supports[1],
        paid=paid,
        points=points,
        counting=counting,
    )
    Check.objects.filter(pk__in=[pk for pk, _, _ in batch]).update(tally=tally)
    paid_ids = right_ids[: points // config["POINTS"]] if points else []
    Check.objects.filter(pk__in=paid_ids).update(points=config["POINTS"])
    if points:
        LedgerEntry.objects.create(player=player, amount=points, kind=LedgerEntry.Kind.CHECK, cause=f"check-tally:{tally.pk}")
    return tally


def record_weight(right: int, seen: int) -> float:
    """A checker's weight from their record on settled claims. ``WEIGHTS`` "bar" (the default):
    1 for a checker who clears the accuracy bar (or has not met MIN_GOLD settled claims yet),
    0 for one under it. "log_odds": ``scoring.validation.checker_weight``'s graded weight.
    bench/bench_validation_sim.py measured the bar alone recovering the true label more often
    (96.5%) than the graded weights (91.5%: uneven weights push 3-to-2 splits under the 3-of-5
    share) and the plain majority (90.9%), with checks dealt until four that count are in."""
    config = _config()
    weight = checker_weight(gold_right=right, gold_seen=seen, min_gold=config["MIN_GOLD"], min_accuracy=config["MIN_ACCURACY"])
    if config.get("WEIGHTS", "bar") == "bar":
        return 1.0 if weight > 0 else 0.0
    return weight


def claim_validation_refresh(*, claim_id: int) -> str:
    """Recompute the claim's gold label from its labels, each weighted by its checker's
    current record, and tell moderation (a disagreement with the author is ``disputed``).
    Returns the gold label."""
    labels = selectors.claim_labels(claim_id=claim_id)
    records = selectors.checker_records(player_ids=[player_id for player_id, _ in labels])
    weighted = [(label, record_weight(*records.get(player_id, (0, 0)))) for player_id, label in labels]
    author_label = Claim.objects.filter(pk=claim_id).values_list("label", flat=True).get()
    gold = gold_label(author_label, weighted, min_checks=_config()["LABELS_NEEDED"])
    counted = sum(1 for _, weight in weighted if weight > 0)  # a label that stopped counting does not fill the claim's need
    ClaimValidation.objects.update_or_create(claim_id=claim_id, defaults={"labels": counted, "gold_label": gold})
    claim_validation_set(claim_id=claim_id, gold_label=gold, labels=dict(Counter(label for _, label in labels)))
    return gold


def _flawed(check: Check, player: AbstractBaseUser) -> None:
    """FLAWED is a report: the moderators see it with the claim's other reports. It does not
    count towards hiding the claim (a check is not a round's report, with its limits)."""
    created = Report.objects.get_or_create(
        claim_id=check.claim_id,
        reporter=player,
        defaults={"reason": Report.Reason.OTHER, "note": "Flagged as flawed in a fact check.", "counts_for_hiding": False},
    )[1]
    if created:
        hooks.claim_reported.send(claim_id=check.claim_id)


def check_answer(*, check_id: int, player: AbstractBaseUser, label: str) -> AnswerPayload:
    """Answer a check once, before it expires, by its own player; then the next check.

    What the answer returns does not depend on whether the claim was settled nor on its label:
    the streak counts answers in time, ``counting`` is as the last tally left it, and
    ``points`` are what a tally closed by this answer paid (every TALLY_SIZE answers; 0
    otherwise). A label counts towards the claim's gold label with the checker's weight.
    Locking: the player's row (a tally closes once), then the check's."""
    if not isinstance(label, str) or label not in Check.Label.values:
        raise ServiceError("invalid_label", "label must be one of: " + ", ".join(Check.Label.values) + ".")
    User = get_user_model()
    now = clock.now()
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=player.pk).exists()
        check = Check.objects.select_for_update().filter(pk=check_id).first()
        if check is None or check.player_id != player.pk:
            raise ServiceError("not_found", "No such check of yours.", status_code=404)
        if check.answered_at is not None:
            raise ServiceError("check_answered", "This check is answered already.", status_code=409)
        if now >= check.expires_at:
            raise ServiceError("check_expired", "Time is up for this check; ask for the next one.", status_code=409)
        check.label, check.answered_at = label, now
        if check.gold:
            check.correct = label == check.settled_label
        check.streak = _previous_streak(player, check) + 1
        check.save(update_fields=["label", "answered_at", "correct", "streak"])
        if label == Check.Label.FLAWED:
            _flawed(check, player)
        if label in LABELS:
            claim_validation_refresh(claim_id=check.claim_id)
        tally = _tally_if_due(player, now)
        hooks.check_answered.send(check_id=check.pk, claim_id=check.claim_id)
    counting = player_weight(player_id=player.pk) > 0
    progress = tally_progress(player=player)
    try:
        upcoming: CheckPayload | None = check_deal(player=player)
    except ServiceError as error:
        if error.code not in ("nothing_to_check", "check_rate_limited"):
            raise
        upcoming = None
    answer: AnswerPayload = {
        "points": tally.points if tally is not None else 0,
        "streak": check.streak,
        "counting": counting,
        "message": None if counting else NOT_COUNTING_MESSAGE,
        "tally": progress,
        "next": upcoming,
    }
    if not points_shown(player_id=player.pk):  # paid all the same (the tally's ledger row)
        del answer["points"]
    return answer


def validation_refresh_all() -> int:
    """``claim_validation_refresh`` for every claim with an answered label, one claim at a
    time (each its own short transaction). Returns how many it refreshed."""
    claim_ids = list(
        Check.objects.filter(answered_at__isnull=False, label__in=LABELS).values_list("claim_id", flat=True).distinct().order_by("claim_id")
    )
    for claim_id in claim_ids:
        with transaction.atomic():
            claim_validation_refresh(claim_id=claim_id)
    return len(claim_ids)
