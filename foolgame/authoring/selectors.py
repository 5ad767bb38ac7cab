"""Reads for authoring: the label balance of the pool, pages that need claims, tasks, detectors."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from foolgame.authoring.models import GiveawayModel, WriteTask
from foolgame.claims.models import Claim
from foolgame.pages.models import Page


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


def veracity_balance(*, category_id: int | None = None) -> Balance:
    """TRUE and FALSE counts of the active claims plus the open tasks, overall or in one category.

    Open tasks count because twenty authors asking at once must not all get the label the
    pool lacks. ``category_id=None`` is the whole pool.
    """
    claims = Claim.objects.filter(status=Claim.Status.ACTIVE)
    tasks = open_write_tasks()
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
    pages = Page.objects.annotate(
        live_sentences=Count("sentences", filter=Q(sentences__retired=False), distinct=True),
        active_claims=Count("claims", filter=Q(claims__status=Claim.Status.ACTIVE), distinct=True),
        open_tasks=Count(
            "write_tasks",
            filter=Q(write_tasks__used_at__isnull=True, write_tasks__expires_at__gt=now),
            distinct=True,
        ),
    ).filter(live_sentences__gte=2)
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
