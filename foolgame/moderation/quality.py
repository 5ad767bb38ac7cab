"""Moderation's quality flags: each claim's live flags and the Beta prior they are smoothed with.

A claim's :class:`ClaimQuality` row is a function of its votes (the release's counts plus
the game's own votes), its reports and its review state, so recomputing it is idempotent:
the per-vote task and the periodic full refresh may both run, in any order and any number
of times. Locking rule: every write of a quality row happens in a transaction that holds
that row's lock (``select_for_update``, claim ids in ascending order), and reads the review
fields under it; every writer (refresh, moderator action, vote) locks the claims first, then
their quality rows. So a refresh can never write back a review state older than a
moderator's action (:mod:`foolgame.moderation.actions` takes the same locks through
:func:`quality_rows_lock` and writes under them with :func:`quality_rows_refresh`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from foolgame.claims.models import Claim
from foolgame.moderation.models import ClaimQuality, PriorFit
from foolgame.voting.counters import claim_votes_lock
from foolgame.voting.models import Report, Vote
from scoring import filters

REFRESH_CHUNK = 500


def _config() -> dict[str, Any]:
    return settings.FM2_MODERATION


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


def quality_rows_lock(claim_ids: Sequence[int]) -> dict[int, ClaimQuality]:
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


def quality_rows_refresh(rows: dict[int, ClaimQuality], prior: tuple[float, float]) -> int:
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
    """Recompute the flags of these claims from their votes and reports. Idempotent. (Their
    dealer counters are voting's own: ``voting.counters``.)

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
        rows = quality_rows_lock(ids)
        quality_rows_refresh(rows, prior)
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


def claim_validation_set(*, claim_id: int, gold_label: str, labels: dict[str, int]) -> bool:
    """Record a claim's checks (its gold label by the weighted 3-of-5 rule, "-" without one,
    and its labels by kind) and put it in the queue as ``disputed`` when the gold label is
    another than its author's. A verdict a moderator already decided on (the same gold label
    at their review) does not come back; a new one does. Locking: the claim's quality row.
    Returns whether the claim is disputed now."""
    with transaction.atomic():
        # The claim first, as every writer takes it (see ``quality_refresh``), then its row.
        if not claim_votes_lock(claim_ids=[claim_id]):
            return False
        label = Claim.objects.filter(pk=claim_id).values_list("label", flat=True).get()
        quality = quality_rows_lock([claim_id])[claim_id]
        disagrees = gold_label not in ("-", label)
        decided = quality.reviewed_at is not None and not quality.disputed and quality.validation.get("gold_label") == gold_label
        quality.disputed = disagrees and not decided
        quality.validation = {"gold_label": gold_label, "labels": labels}
        quality.save(update_fields=["disputed", "validation"])
    return quality.disputed
