"""Reads for authoring: the label balance of the pool, pages that need claims, tasks, detectors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from foolgame.authoring.models import GiveawayModel, WriteTask
from foolgame.claims.models import Claim
from foolgame.pages.models import Page, Sentence
from foolgame.pages.selectors import WRITABLE_MIN_SENTENCES


@dataclass(frozen=True, slots=True)
class Balance:
    """How many TRUE and FALSE claims a pool holds (or will hold, counting open tasks)."""

    true: int = 0
    false: int = 0

    def plus(self, veracity: str) -> Balance:
        if veracity == WriteTask.Veracity.TRUE:
            return Balance(self.true + 1, self.false)
        return Balance(self.true, self.false + 1)

    @property
    def share_true(self) -> float:
        total = self.true + self.false
        return self.true / total if total else 0.5


def open_write_tasks() -> QuerySet[WriteTask]:
    """Tasks handed out and still usable: each is a claim on its way."""
    return WriteTask.objects.filter(used_at__isnull=True, expires_at__gt=timezone.now())


def veracity_balance(*, category_id: int | None = None, author: Any = None) -> Balance:
    """TRUE and FALSE counts of the active claims plus the open tasks, overall or in one category;
    with ``author``, only that player's own claims and tasks (what a task hands out is balanced
    on these: the author knows every one of their labels, and no one else's).

    Open tasks count because twenty authors asking at once must not all get the label the
    pool lacks. ``category_id=None`` is the whole pool.
    """
    claims = Claim.objects.filter(status=Claim.Status.ACTIVE)
    tasks = open_write_tasks()
    if author is not None:
        claims = claims.filter(author=author)
        tasks = tasks.filter(player=author)
    if category_id is not None:
        claims = claims.filter(page__category_id=category_id)
        tasks = tasks.filter(page__category_id=category_id)
    claim_counts = claims.aggregate(
        true=Count("id", filter=Q(label=Claim.Label.SUPPORTS)), false=Count("id", filter=Q(label=Claim.Label.REFUTES))
    )
    task_counts = tasks.aggregate(
        true=Count("id", filter=Q(veracity=WriteTask.Veracity.TRUE)),
        false=Count("id", filter=Q(veracity=WriteTask.Veracity.FALSE)),
    )
    return Balance(claim_counts["true"] + task_counts["true"], claim_counts["false"] + task_counts["false"])




def pages_needing_claims(*, category: str | None = None) -> QuerySet[Page]:
    """Pages an author can write about, the ones most in need first.

    Priority pages (a ``*`` in the category lists) first, then those with the fewest active
    claims plus open tasks; a page needs at least two live sentences to be worth a task.
    ``category`` is a category slug or name.
    """
    now = timezone.now()

    def count(queryset: QuerySet) -> Coalesce:
        # One correlated subquery per count: joining sentences, claims and tasks at once
        # would multiply the rows (a page's sentences times its claims times its tasks).
        counted = queryset.filter(page=OuterRef("pk")).order_by().values("page").annotate(n=Count("id")).values("n")
        return Coalesce(Subquery(counted, output_field=IntegerField()), 0)

    pages = Page.objects.annotate(
        live_sentences=count(Sentence.objects.filter(retired=False)),
        active_claims=count(Claim.objects.filter(status=Claim.Status.ACTIVE)),
        open_tasks=count(WriteTask.objects.filter(used_at__isnull=True, expires_at__gt=now)),
    ).filter(live_sentences__gte=WRITABLE_MIN_SENTENCES)
    if category:
        pages = pages.filter(Q(category__slug=category) | Q(category__name__iexact=category))
    return pages.select_related("category").order_by("-priority", "active_claims", "open_tasks", "?")


def claims_on_page(*, page: Page) -> QuerySet[Claim]:
    return Claim.objects.filter(page=page, status=Claim.Status.ACTIVE)


def active_claim_examples() -> QuerySet[Claim]:
    """The training data of the giveaway detector: every active claim, with its page."""
    return Claim.objects.filter(status=Claim.Status.ACTIVE).order_by("id")


def giveaway_model_latest() -> GiveawayModel | None:
    return GiveawayModel.objects.order_by("-created", "-id").first()


def player_has_open_write_task_on_page(*, player_id: int, page_id: int) -> bool:
    """Does the player hold an unexpired, unused write task for the page? (Only then may they
    read its hints: ``services.player_page_hints``.)"""
    return WriteTask.objects.filter(
        player_id=player_id, page_id=page_id, used_at__isnull=True, expires_at__gt=timezone.now()
    ).exists()
