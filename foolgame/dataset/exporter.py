"""The streaming export: plan the splits, open the record files, write claims and votes.

Claims and votes are written as they are read, chunk by chunk (:mod:`foolgame.dataset.writers`,
which says how memory stays bounded). The statistics and the artifact analysis then read
the written files back (:mod:`foolgame.dataset.reports`).
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Count, Q, Sum

from foolgame.claims.models import Claim
from foolgame.dataset.model_fields import ClaimModels
from foolgame.dataset.privacy import Fragments, Pseudonyms
from foolgame.dataset.records import FORMATS, ExportError, ExportOptions, Progress, WriteSummary
from foolgame.dataset.splits import SPLITS, PageClaims, SplitPlan, plan_splits
from foolgame.dataset.study_fields import StudyMarks
from foolgame.dataset.validation import RUN_CHECKS, ClaimChecks
from foolgame.dataset.writers import CLAIM_FIELDS, LABEL_FIELDS, VOTE_FIELDS, RecordFiles, exported_claims, write_claims, write_votes
from foolgame.pages.importing import NO_CATEGORY
from foolgame.pages.models import Page
from foolgame.players.models import LedgerEntry

LINKAGE_K = 5
"""A run of one person's records ends before the least points it shows pass the K-th best
player's on any leaderboard, so at least K players could own it (``privacy.Fragments``)."""
RUN_CLAIMS = 2
RUN_ROUNDS = 10
"""A pseudonym names at most this many of one author's claims, or of one voter's rounds:
the largest runs with which the re-identification join (``tests/dataset/linkage.py``) named
nobody in a simulated 240-player game (seed 0; with 3 claims a run it named 1 player, with
5, 2; 10 or 20 rounds made no difference there). What it matches is a whole person in one
run: busy players in long runs, or a one-claim author whose claim is unlike any other
(``bench/bench_reidentify.py``: 1 of 494 players in one of eight games)."""


def linkage_caps(k: int = LINKAGE_K) -> dict[str, int]:
    """Per leaderboard kind (and total), the k-th highest points of any player: a run of one
    person's records is cut before the least it shows passes one of these, so at least k
    players out-score it on every leaderboard (when k players have points of the kind)."""
    entries = LedgerEntry.objects.exclude(player__username__in=settings.FM2["SYSTEM_PLAYERS"])
    caps: dict[str, int] = {}
    for kind in (*LedgerEntry.Kind.values, "total"):
        rows = entries if kind == "total" else entries.filter(kind=kind)
        top = list(rows.values("player_id").annotate(points=Sum("amount")).order_by("-points").values_list("points", flat=True)[:k])
        caps[kind] = top[k - 1] if len(top) == k else 0
    return caps


def _exclusive_author_ids(usernames: frozenset[str]) -> set[int]:
    if not usernames:
        return set()
    found = dict(get_user_model().objects.filter(username__in=usernames).values_list("username", "pk"))
    unknown = sorted(usernames - set(found))
    if unknown:
        raise ExportError(f"unknown test-exclusive author(s): {', '.join(unknown)}")
    return set(found.values())


def _plan(options: ExportOptions, exclusive_ids: set[int]) -> SplitPlan:
    """One grouped query over the claims: per page, claims, release splits and exclusive claims."""
    rows = (
        exported_claims(options)
        .order_by()
        .values("page_id", "release_split")
        .annotate(n=Count("id"), exclusive=Count("id", filter=Q(author_id__in=exclusive_ids)))
    )
    pages: dict[int, dict[str, Any]] = {}
    for row in rows.iterator(chunk_size=options.chunk_size):
        page = pages.setdefault(row["page_id"], {"claims": 0, "release": {}, "exclusive": 0})
        page["claims"] += row["n"]
        page["exclusive"] += row["exclusive"]
        if row["release_split"]:
            page["release"][row["release_split"]] = row["n"]
    titles = dict(Page.objects.filter(pk__in=list(pages)).values_list("pk", "title")) if pages else {}
    return plan_splits(
        (
            PageClaims(
                page_id=page_id,
                title=titles[page_id],
                claims=info["claims"],
                release_claims=info["release"],
                exclusive_claims=info["exclusive"],
            )
            for page_id, info in pages.items()
        ),
        seed=options.seed,
        proportions=options.splits,
        resplit_release=options.resplit_release,
    )


def write_records(
    *,
    out_dir: Path,
    options: ExportOptions,
    pseudonyms: Pseudonyms,
    progress: Progress = lambda stage, done, total: None,
) -> WriteSummary:
    """Write ``{train,dev,test}`` and ``votes`` in every requested format; return the counts."""
    unknown = set(options.formats) - set(FORMATS)
    if unknown or not options.formats:
        raise ExportError(f"formats must be among {', '.join(FORMATS)}")
    exclusive_ids = _exclusive_author_ids(options.exclusive_test_authors)
    caps = linkage_caps()
    progress("plan", 0, 1)
    plan = _plan(options, exclusive_ids)
    progress("plan", 1, 1)
    summary = WriteSummary(plan=plan)
    if not options.include_removed:
        summary.removed_left_out = Claim.objects.filter(status=Claim.Status.REMOVED).count()
    page_info = {
        pk: (title, category or NO_CATEGORY)
        for pk, title, category in Page.objects.filter(pk__in=list(plan.page_split)).values_list("pk", "title", "category__name").iterator(chunk_size=options.chunk_size)
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    marks = StudyMarks()
    summary.studies = marks
    with ExitStack() as stack:
        claim_files = RecordFiles(stack=stack, out_dir=out_dir, names=SPLITS, fields=CLAIM_FIELDS, formats=options.formats)
        authors = Fragments(pseudonyms, role="author", caps=caps, max_records=RUN_CLAIMS)
        checkers = Fragments(pseudonyms, role="checker", caps=caps, max_records=RUN_CHECKS)
        claim_models = ClaimModels()
        summary.active_version = claim_models.active
        label_files = RecordFiles(stack=stack, out_dir=out_dir, names=["validation_labels"], fields=LABEL_FIELDS, formats=options.formats)
        write_claims(
            files=claim_files, label_files=label_files, options=options, plan=plan, page_info=page_info,
            exclusive_ids=exclusive_ids, authors=authors, claim_checks=ClaimChecks(checkers, marks), claim_models=claim_models,
            summary=summary, progress=progress, marks=marks,
        )
        vote_files = RecordFiles(stack=stack, out_dir=out_dir, names=["votes"], fields=VOTE_FIELDS, formats=options.formats)
        voters = Fragments(pseudonyms, role="voter", caps=caps, max_records=RUN_ROUNDS)
        write_votes(
            files=vote_files, options=options, plan=plan, exclusive_ids=exclusive_ids, voters=voters, summary=summary, progress=progress,
            marks=marks,
        )
        summary.files = [path.name for path in (*claim_files.paths, *vote_files.paths, *label_files.paths)]
    return summary
