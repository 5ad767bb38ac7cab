"""Moderation's services: live quality flags, the fitted prior, moderators and their actions.

Flags. A claim's :class:`ClaimQuality` row is a function of its votes (the release's counts
plus the game's own votes), its reports and its review state, so recomputing it is
idempotent: the per-vote task and the periodic full refresh may both run, in any order and
any number of times. Locking rule: every write of a quality row happens in a transaction
that holds that row's lock (``select_for_update``, claim ids in ascending order), and reads
the review fields under it; every writer (refresh, moderator action, vote) locks the claims
first, then their quality rows. So a
refresh can never write back a review state older than a moderator's action.

Actions. ``check_claim_action`` validates the request and takes the locks;
``do_claim_action`` writes the change, the refreshed flags and the audit record, all in the
caller's transaction; ``claim_moderate`` runs both in one. Points already awarded for a
claim are never touched: the ledger is history.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from foolgame.api.errors import ServiceError
from foolgame.claims.models import Claim, ClaimGold
from foolgame.moderation.models import AuditRecord, ClaimQuality, PriorFit, Sighting
from foolgame.pages.models import Sentence
from foolgame.players.roles import is_moderator
from foolgame.players.services import player_role_set, role_group_ensure
from foolgame.voting.counters import claim_votes_lock, claim_votes_recount
from foolgame.voting.models import Report, Vote
from foolgame.voting.notifications import notification_for_moderation
from scoring import filters

MODERATORS_GROUP = "moderators"
REASON_MAX_CHARS = 1000
REFRESH_CHUNK = 500

# What the moderators group may do beyond the queue: read claims, reports and the audit log
# in the admin (when a moderator is also staff).
MODERATOR_PERMISSIONS = [
    ("moderation", "moderate_claims"),
    ("moderation", "view_claimquality"),
    ("moderation", "view_auditrecord"),
    ("moderation", "view_priorfit"),
    ("claims", "view_claim"),
    ("voting", "view_report"),
    ("voting", "view_round"),
]


def _config() -> dict[str, Any]:
    return settings.FM2_MODERATION


# --- moderators ---------------------------------------------------------------------------


def moderators_group_ensure() -> Group:
    """The ``moderators`` group with its permissions (created when missing; run after migrate)."""
    return role_group_ensure(name=MODERATORS_GROUP, permissions=MODERATOR_PERMISSIONS)


def moderator_set(*, username: str, moderator: bool = True) -> AbstractBaseUser:
    """Add a player to the moderators group (or take them out of it)."""
    return player_role_set(username=username, group=moderators_group_ensure(), member=moderator)


# --- the prior ----------------------------------------------------------------------------


def prior_current() -> tuple[float, float]:
    """The Beta prior the flags use: the settings' ``a, b``, or the latest fit when
    ``USE_FITTED_PRIOR`` is on and a fit exists."""
    config = _config()
    if config["USE_FITTED_PRIOR"]:
        fit = PriorFit.objects.order_by("-created", "-id").first()
        if fit is not None:
            return fit.a, fit.b
    return float(config["PRIOR_A"]), float(config["PRIOR_B"])


def claim_vote_counts(*, claim_ids: Iterable[int] | None = None) -> dict[int, tuple[int, int]]:
    """``{claim id: (correct, votes)}``: the release's counts plus the game's own votes.

    A vote is on both claims of its round, and is correct for both or for neither (the voter
    spotted the false one or did not). ``None`` means every active claim.
    """
    claims = Claim.objects.filter(status=Claim.Status.ACTIVE) if claim_ids is None else Claim.objects.filter(pk__in=list(claim_ids))
    counts = {pk: [correct, total] for pk, correct, total in claims.values_list("id", "release_correct_votes", "release_total_votes")}
    votes = Vote.objects.all() if claim_ids is None else Vote.objects.filter(Q(round__left_claim_id__in=counts) | Q(round__right_claim_id__in=counts))
    for left, right, correct in votes.values_list("round__left_claim_id", "round__right_claim_id", "correct").iterator():
        for pk in (left, right):
            if pk in counts:
                counts[pk][0] += int(correct)
                counts[pk][1] += 1
    return {pk: (c, v) for pk, (c, v) in counts.items()}


def prior_fit() -> PriorFit:
    """Fit the Beta prior to every active claim's counts (empirical Bayes) and store the fit.

    Stored whether or not the flags use it (``USE_FITTED_PRIOR``), so that it is reported."""
    pairs = list(claim_vote_counts().values())
    prior = filters.fit_beta_binomial_prior(pairs)
    return PriorFit.objects.create(
        a=prior.a,
        b=prior.b,
        mean=prior.mean,
        n_claims=prior.n_claims,
        pooled_correct=sum(c for c, _ in pairs),
        pooled_votes=sum(v for _, v in pairs),
        log_likelihood=prior.log_likelihood,
        converged=prior.converged,
    )


# --- flags --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClaimCounts:
    """Everything the flags of one claim are computed from, except its review state."""

    release_correct: int = 0
    release_total: int = 0
    game_votes: list[filters.VoteFacts] = field(default_factory=list)
    reports: list[tuple[int, int, bool]] = field(default_factory=list)  # (report id, reporter id, counts for hiding)

    @property
    def correct(self) -> int:
        return self.release_correct + sum(v.correct for v in self.game_votes)

    @property
    def total(self) -> int:
        return self.release_total + len(self.game_votes)


def _counts(claim_ids: Sequence[int]) -> dict[int, ClaimCounts]:
    counts = {
        pk: ClaimCounts(release_correct=c, release_total=t)
        for pk, c, t in Claim.objects.filter(pk__in=claim_ids).values_list("id", "release_correct_votes", "release_total_votes")
    }
    votes = (
        Vote.objects.filter(Q(round__left_claim_id__in=claim_ids) | Q(round__right_claim_id__in=claim_ids))
        .annotate(reveals=Count("round__reveals"))
        .values_list("round__left_claim_id", "round__right_claim_id", "correct", "points", "reveals")
    )
    for left, right, correct, points, reveals in votes:
        facts = filters.VoteFacts(correct=correct, clues_revealed=reveals, points=points)
        for pk in (left, right):
            if pk in counts:
                counts[pk].game_votes.append(facts)
    reports = Report.objects.filter(claim_id__in=claim_ids).values_list("claim_id", "id", "reporter_id", "counts_for_hiding")
    for pk, report_id, reporter_id, weighs in reports:
        counts[pk].reports.append((report_id, reporter_id, weighs))
    return counts


@lru_cache(maxsize=4096)
def _too_hard(correct: int, votes: int, a: float, b: float, threshold: float, min_votes: int, mass: float) -> tuple[float, tuple[float, float], filters.Verdict]:
    """Score, interval and too-hard verdict of one count pair; cached, since a whole refresh
    sees few distinct pairs (FM2 claims have 0 to 10 votes) and each interval costs two
    Beta quantiles."""
    verdict = filters.is_too_hard(correct, votes, a=a, b=b, threshold=threshold, min_votes_for_interval=min_votes, mass=mass)
    return filters.smoothed_rate(correct, votes, a, b), filters.credible_interval(correct, votes, a, b, mass), verdict


def _apply(row: ClaimQuality, counts: ClaimCounts, prior: tuple[float, float]) -> None:
    """Recompute a locked row's derived fields from its counts and its review state."""
    config = _config()
    a, b = prior
    score, interval, hard = _too_hard(
        counts.correct, counts.total, a, b, config["TOO_HARD_THRESHOLD"], config["MIN_VOTES_FOR_INTERVAL"], config["INTERVAL_MASS"]
    )
    # The release's votes carry no clue or time, so only the game's votes can show a claim
    # too easy; but one wrong vote of the release shows it is not.
    easy = filters.is_too_easy(counts.game_votes, min_votes=config["TOO_EASY_MIN_VOTES"], min_points=config["TOO_EASY_MIN_POINTS"])
    too_easy = easy.flagged and counts.release_correct == counts.release_total
    row.correct_votes, row.total_votes, row.game_votes = counts.correct, counts.total, len(counts.game_votes)
    row.score, (row.interval_low, row.interval_high) = score, interval
    row.prior_a, row.prior_b = a, b
    row.too_hard, row.too_easy = hard.flagged, too_easy
    row.reasons = [v.reason for v, flagged in ((hard, hard.flagged), (easy, too_easy)) if flagged]
    row.report_count = len({reporter for _, reporter, _ in counts.reports})
    row.open_reports = len({reporter for report_id, reporter, _ in counts.reports if report_id > row.reviewed_report_id})
    # Only trusted reporters' reports (enough votes, old enough account) hide a claim.
    hiding = {reporter for report_id, reporter, weighs in counts.reports if report_id > row.reviewed_report_id and weighs}
    row.hidden_until_review = len(hiding) >= config["REPORT_HIDE_THRESHOLD"]
    row.out_of_play = row.hidden_until_review or (row.too_hard and not row.kept)


_DERIVED_FIELDS = [
    "correct_votes",
    "total_votes",
    "game_votes",
    "score",
    "interval_low",
    "interval_high",
    "prior_a",
    "prior_b",
    "too_hard",
    "too_easy",
    "reasons",
    "report_count",
    "open_reports",
    "hidden_until_review",
    "out_of_play",
    "updated",
]


def _lock_rows(claim_ids: Sequence[int]) -> dict[int, ClaimQuality]:
    """Create the missing rows, then lock them all in claim-id order (no deadlock between
    two refreshes). Must run inside a transaction."""
    a, b = float(_config()["PRIOR_A"]), float(_config()["PRIOR_B"])
    ClaimQuality.objects.bulk_create(
        [ClaimQuality(claim_id=pk, score=a / (a + b), interval_low=0.0, interval_high=1.0, prior_a=a, prior_b=b) for pk in claim_ids],
        ignore_conflicts=True,
    )
    rows = ClaimQuality.objects.select_for_update().filter(claim_id__in=claim_ids).order_by("claim_id")
    return {row.claim_id: row for row in rows}


def _derived(row: ClaimQuality) -> tuple[Any, ...]:
    return tuple(getattr(row, name) for name in _DERIVED_FIELDS if name != "updated")


def _refresh_locked(rows: dict[int, ClaimQuality], prior: tuple[float, float]) -> int:
    """Recompute locked rows and write the ones that changed (one upsert: Django's
    bulk_update builds a CASE per field and row, 50x slower on a full refresh)."""
    counts = _counts(list(rows))
    now = timezone.now()
    changed = []
    for pk, row in rows.items():
        before = _derived(row)
        _apply(row, counts.get(pk, ClaimCounts()), prior)
        if _derived(row) != before:
            row.updated = now
            changed.append(row)
    if changed:
        ClaimQuality.objects.bulk_create(changed, update_conflicts=True, unique_fields=["claim"], update_fields=_DERIVED_FIELDS)
    return len(changed)


def quality_refresh(*, claim_ids: Sequence[int], prior: tuple[float, float] | None = None) -> int:
    """Recompute the flags of these claims from their votes and reports, and their vote
    counters (``claim_votes_recount``). Idempotent.

    Called on commit after every vote (both claims of the round; batched with the other
    votes of half a second) and every report, and in chunks by :func:`quality_refresh_all`.
    Returns how many claims were refreshed."""
    ids = sorted({int(pk) for pk in claim_ids})
    prior = prior or prior_current()
    with transaction.atomic():
        # The claims first, in id order, as a moderator's action and a vote take them: a
        # refresh that inserted a missing quality row while a moderator held its claim (and
        # was about to insert the same row) deadlocked. No key update: votes in flight, which
        # hold the claims key share, are not waited for.
        ids = claim_votes_lock(claim_ids=ids)
        if not ids:
            return 0
        claim_votes_recount(claim_ids=ids)  # the dealer's counters: see voting.counters
        rows = _lock_rows(ids)
        _refresh_locked(rows, prior)
    return len(ids)


def quality_refresh_chunked(*, claim_ids: Sequence[int]) -> int:
    """:func:`quality_refresh` over many claims, one chunk at a time under one prior (an
    import's new claims). Returns how many claims were refreshed."""
    prior = prior_current()
    return sum(quality_refresh(claim_ids=chunk, prior=prior) for chunk in _chunks(sorted(claim_ids), REFRESH_CHUNK))


@dataclass(frozen=True)
class RefreshSummary:
    claims: int
    prior: tuple[float, float]
    fit: PriorFit | None
    too_hard: int
    too_easy: int
    hidden: int
    out_of_play: int


def _chunks(items: Sequence[int], size: int) -> Iterator[Sequence[int]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def quality_refresh_all(
    *, fit: bool = True, progress: Callable[[Iterable[Sequence[int]], int], Iterable[Sequence[int]]] | None = None
) -> RefreshSummary:
    """Refit the prior (when ``fit``), then recompute every claim's flags, one chunk of
    claims per transaction so votes are never blocked for long (the periodic task, the
    ``refresh_quality`` command). ``progress`` wraps the chunks, given their count."""
    fitted = prior_fit() if fit else None
    prior = prior_current()
    ids = list(Claim.objects.order_by("pk").values_list("pk", flat=True))
    chunks: Iterable[Sequence[int]] = list(_chunks(ids, REFRESH_CHUNK))
    if progress is not None:
        chunks = progress(chunks, len(ids))
    for chunk in chunks:
        quality_refresh(claim_ids=chunk, prior=prior)
    active = ClaimQuality.objects.filter(claim__status=Claim.Status.ACTIVE)
    return RefreshSummary(
        claims=len(ids),
        prior=prior,
        fit=fitted,
        too_hard=active.filter(too_hard=True).count(),
        too_easy=active.filter(too_easy=True).count(),
        hidden=active.filter(hidden_until_review=True).count(),
        out_of_play=active.filter(out_of_play=True).count(),
    )


def flags_under_prior(*, a: float, b: float) -> tuple[int, int]:
    """How many active claims the too-hard filter flags under a given prior, and of those how
    many are kept by a moderator: a what-if for the ``refresh_quality`` report; writes nothing."""
    config = _config()
    flagged = [
        pk
        for pk, (correct, votes) in claim_vote_counts().items()
        if filters.is_too_hard(
            correct,
            votes,
            a=a,
            b=b,
            threshold=config["TOO_HARD_THRESHOLD"],
            min_votes_for_interval=config["MIN_VOTES_FOR_INTERVAL"],
            mass=config["INTERVAL_MASS"],
        )
    ]
    kept = ClaimQuality.objects.filter(claim_id__in=flagged, kept=True).count()
    return len(flagged), kept


# --- moderator actions --------------------------------------------------------------------

ACTIONS = AuditRecord.Action.values
_ACTION_FIELDS = {"relabel": "label", "edit_evidence": "gold_sentence_ids"}


@dataclass
class CheckedAction:
    claim: Claim
    quality: ClaimQuality
    action: str
    reason: str
    label: str | None = None
    gold: list[Sentence] | None = None


def _check_input(*, action: Any, reason: Any, label: Any, gold_sentence_ids: Any) -> tuple[str, str]:
    if action not in ACTIONS:
        raise ServiceError("invalid_action", f"action must be one of: {', '.join(ACTIONS)}.")
    if not isinstance(reason, str) or not reason.strip():
        raise ServiceError("reason_required", "Say why: every moderation action needs a reason.")
    reason = reason.strip()
    if len(reason) > REASON_MAX_CHARS:
        raise ServiceError("reason_too_long", f"A reason holds at most {REASON_MAX_CHARS} characters.")
    for other_action, name in _ACTION_FIELDS.items():
        given = label if name == "label" else gold_sentence_ids
        if other_action != action and given is not None:
            raise ServiceError("unexpected_field", f"{name} goes only with action {other_action!r}.")
    if action == "relabel" and label not in Claim.Label.values:
        raise ServiceError("invalid_label", f"label must be one of: {', '.join(Claim.Label.values)}.")
    if action == "edit_evidence":
        ids = gold_sentence_ids
        if (
            not isinstance(ids, list)
            or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids)
            or not 1 <= len(ids) <= 2
            or len(set(ids)) != len(ids)
        ):
            raise ServiceError("invalid_gold", "gold_sentence_ids must list 1 or 2 different sentence ids.")
    return action, reason


def check_claim_action(
    *, claim_id: int, action: Any, reason: Any, label: Any = None, gold_sentence_ids: Any = None
) -> CheckedAction:
    """Validate a moderator's action and lock what it changes.

    Locking: the claim's row, then its quality row (``select_for_update``); must run inside a
    transaction, which ``do_claim_action`` then writes in. Raises :class:`ServiceError`
    (nothing written) when the action does not apply."""
    action, reason = _check_input(action=action, reason=reason, label=label, gold_sentence_ids=gold_sentence_ids)
    try:
        claim = Claim.objects.select_for_update(of=("self",)).select_related("page").get(pk=claim_id)
    except Claim.DoesNotExist:
        raise ServiceError("claim_not_found", "No such claim.", status_code=404) from None
    if claim.status == Claim.Status.REMOVED:
        raise ServiceError("claim_removed", "This claim was removed; removed claims stay as they are.", status_code=409)
    quality = _lock_rows([claim.pk])[claim.pk]
    checked = CheckedAction(claim=claim, quality=quality, action=action, reason=reason)
    if action == "relabel":
        if label == claim.label:
            raise ServiceError("label_unchanged", f"The claim is already labelled {label}.")
        checked.label = label
    elif action == "edit_evidence":
        found = {s.pk: s for s in Sentence.objects.filter(pk__in=gold_sentence_ids)}
        missing = [pk for pk in gold_sentence_ids if pk not in found]
        if missing:
            raise ServiceError("gold_not_found", f"No sentence has id {missing[0]}.", details={"sentence_ids": missing})
        other_page = [pk for pk in gold_sentence_ids if found[pk].page_id != claim.page_id]
        if other_page:
            raise ServiceError("gold_not_on_page", "Gold sentences must belong to the claim's own page.", details={"sentence_ids": other_page})
        retired = [pk for pk in gold_sentence_ids if found[pk].retired]
        if retired:
            raise ServiceError("gold_retired", "That sentence is no longer part of the page.", details={"sentence_ids": retired})
        if list(claim.gold_links.order_by("position").values_list("sentence_id", flat=True)) == list(gold_sentence_ids):
            raise ServiceError("gold_unchanged", "Those are already the claim's gold sentences.")
        checked.gold = [found[pk] for pk in gold_sentence_ids]
    return checked


def _snapshot(claim: Claim, quality: ClaimQuality) -> dict[str, Any]:
    gold = list(claim.gold_links.select_related("sentence").order_by("position"))
    return {
        "status": claim.status,
        "removed_reason": claim.removed_reason,
        "label": claim.label,
        "gold_sentence_ids": [g.sentence_id for g in gold],
        "gold": [g.sentence.text for g in gold],
        "flags": {
            "too_hard": quality.too_hard,
            "too_easy": quality.too_easy,
            "kept": quality.kept,
            "open_reports": quality.open_reports,
            "hidden_until_review": quality.hidden_until_review,
            "out_of_play": quality.out_of_play,
            "score": round(quality.score, 4),
        },
    }


def _clue(sentence: Sentence) -> dict[str, Any]:
    return {"sentence_id": sentence.pk, "text": sentence.text, "section_header": sentence.section_header}


def _replace_gold(claim: Claim, gold: list[Sentence]) -> None:
    """New gold sentences, and the clue list's gold tail with them: the clues keep the
    retrieved sentences in their order (less any that became gold) and end with the gold."""
    old_ids = set(claim.gold_links.values_list("sentence_id", flat=True))
    old_texts = set(Sentence.objects.filter(pk__in=old_ids).values_list("text", flat=True))
    new_ids = {s.pk for s in gold}
    retrieved = [
        clue
        for clue in claim.clues
        if clue.get("sentence_id") not in old_ids | new_ids and (clue.get("sentence_id") is not None or clue.get("text") not in old_texts)
    ]
    claim.gold_links.all().delete()
    ClaimGold.objects.bulk_create(ClaimGold(claim=claim, sentence=s, position=i) for i, s in enumerate(gold))
    claim.clues = retrieved + [_clue(s) for s in gold]
    claim.save(update_fields=["clues"])


def do_claim_action(checked: CheckedAction, *, moderator: AbstractBaseUser) -> AuditRecord:
    """Apply a checked action under its locks: the claim's change, its review (every action
    reviews the claim: open reports are seen, filters cleared unless it was removed), its
    refreshed flags, and the audit record with the claim before and after."""
    claim, quality = checked.claim, checked.quality
    before = _snapshot(claim, quality)
    if checked.action == "remove":
        claim.status, claim.removed_reason = Claim.Status.REMOVED, checked.reason
        claim.save(update_fields=["status", "removed_reason"])
    elif checked.action == "relabel":
        assert checked.label is not None
        claim.label = checked.label
        claim.save(update_fields=["label"])
    elif checked.action == "edit_evidence":
        assert checked.gold is not None
        _replace_gold(claim, checked.gold)
    if checked.action != "keep":
        # Open rounds holding the claim were dealt under what just changed: they end
        # without points, in this transaction (a finished round keeps its stored answer).
        from foolgame.voting.services import rounds_void_for_claim  # voting imports moderation's tasks

        rounds_void_for_claim(claim_id=claim.pk, action=checked.action)
    if checked.action != "remove":
        quality.kept = True
    last_report = Report.objects.filter(claim=claim).order_by("-id").values_list("id", flat=True).first()
    quality.reviewed_report_id = max(quality.reviewed_report_id, last_report or 0)
    quality.reviewed_at, quality.reviewed_by = timezone.now(), moderator
    quality.save(update_fields=["kept", "reviewed_report_id", "reviewed_at", "reviewed_by"])
    _refresh_locked({claim.pk: quality}, prior_current())
    record = AuditRecord.objects.create(
        moderator=moderator, claim=claim, action=checked.action, reason=checked.reason, before=before, after=_snapshot(claim, quality)
    )
    notification_for_moderation(claim=claim, moderator=moderator, action=checked.action, reason=checked.reason)
    sightings_record(moderator=moderator, claim_ids=[claim.pk])
    return record


def sightings_record(*, moderator: AbstractBaseUser, claim_ids: Iterable[int]) -> None:
    """Record that the moderator now sees these claims with their answers (a queue page,
    a claim after an action, the audit log): one bulk insert, idempotent (a claim already
    seen keeps its first moment). See ``Sighting`` for what it changes."""
    now = timezone.now()
    rows = [Sighting(moderator=moderator, claim_id=claim_id, first_seen=now) for claim_id in dict.fromkeys(claim_ids)]
    if rows:
        Sighting.objects.bulk_create(rows, ignore_conflicts=True)


def claim_moderate(
    *,
    moderator: AbstractBaseUser,
    claim_id: int,
    action: Any,
    reason: Any,
    label: Any = None,
    gold_sentence_ids: Any = None,
) -> AuditRecord:
    """Keep, remove, relabel or re-evidence a claim, in one transaction, audited.

    ``keep`` clears the claim's flags and reports (it returns to play); ``remove`` takes it
    out of play and out of exports at once, kept in the database with the reason;
    ``relabel`` fixes its label; ``edit_evidence`` replaces its gold with 1 or 2 current
    sentences of its page. Points already awarded stay as they are."""
    if not is_moderator(moderator):
        raise ServiceError("not_a_moderator", "Only moderators can do this.", status_code=403)
    with transaction.atomic():
        checked = check_claim_action(claim_id=claim_id, action=action, reason=reason, label=label, gold_sentence_ids=gold_sentence_ids)
        return do_claim_action(checked, moderator=moderator)

