"""Players are Django users; their points live in an append-only ledger."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class LedgerEntry(models.Model):
    """One award of points. Totals are sums over these rows; nothing keeps a running total.

    ``claim`` and ``cause`` say what earned the points (the claim written, the round voted
    in, the like given); rows are never edited or deleted, so the ledger is the audit trail.
    """

    class Kind(models.TextChoices):
        WRITE = "write", "Writing a claim"
        VERIFY = "verify", "Spotting the false claim"
        FOOL = "fool", "Fooling a voter"
        LIKE = "like", "A liked claim"

    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="ledger")
    amount = models.PositiveIntegerField()
    kind = models.CharField(max_length=10, choices=Kind.choices)
    claim = models.ForeignKey("claims.Claim", null=True, blank=True, on_delete=models.PROTECT, related_name="ledger")
    cause = models.CharField(max_length=100, help_text="What earned the points, e.g. 'claim:12' or 'round:40'.")
    created = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created", "-id"]
        verbose_name_plural = "ledger entries"
        indexes = [models.Index(fields=["player", "kind"])]
        constraints = [models.CheckConstraint(condition=models.Q(amount__gt=0), name="ledger_amount_positive")]

    def __str__(self) -> str:
        return f"{self.player} +{self.amount} {self.kind} ({self.cause})"
