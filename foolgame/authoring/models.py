"""What authoring keeps: the tasks handed to authors and the trained giveaway detectors."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from foolgame.claims.models import Claim
from foolgame.pages.models import Page


class WriteTask(models.Model):
    """A page and a veracity handed to one author, to be used once before it expires.

    ``write_by`` is what the author's timer counts down to (8 minutes); ``expires_at`` adds
    the grace period (2 minutes) so that a claim submitted as the timer runs out, over a
    slow network, still counts. The server only ever checks ``expires_at``.
    """

    class Veracity(models.TextChoices):
        TRUE = "TRUE", "True: the page supports the claim"
        FALSE = "FALSE", "False: the page refutes the claim"

    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="write_tasks")
    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="write_tasks")
    veracity = models.CharField(max_length=5, choices=Veracity.choices)
    created = models.DateTimeField(default=timezone.now, db_index=True)
    write_by = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)
    used_at = models.DateTimeField(null=True, blank=True)
    claim = models.OneToOneField(Claim, null=True, blank=True, on_delete=models.SET_NULL, related_name="write_task")

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [models.Index(fields=["used_at", "expires_at"])]

    def __str__(self) -> str:
        return f"{self.player} · {self.page} · {self.veracity}"

    @property
    def label(self) -> str:
        return Claim.Label.SUPPORTS if self.veracity == self.Veracity.TRUE else Claim.Label.REFUTES


class GiveawayModel(models.Model):
    """A trained claim-only classifier (joblib blob) and its cross-validated figures.

    The newest row is the one in use; older rows stay as the record of how the pool's
    artifacts evolved.
    """

    created = models.DateTimeField(auto_now_add=True, db_index=True)
    examples = models.PositiveIntegerField(help_text="Active claims it was trained on.")
    newest_claim_id = models.BigIntegerField(default=0, help_text="The highest claim id in its training data.")
    cv_accuracy = models.FloatField(help_text="5-fold stratified cross-validated accuracy.")
    cv_accuracy_by_page = models.FloatField(null=True, blank=True, help_text="The same with each page kept in one fold.")
    threshold = models.FloatField(help_text="Probability from which a guess is confident (above 1: never).")
    confident_share = models.FloatField(default=0.0)
    confident_precision = models.FloatField(default=0.0)
    blob = models.BinaryField()

    class Meta:
        ordering = ["-created", "-id"]
        get_latest_by = ["created", "id"]

    def __str__(self) -> str:
        return f"giveaway detector #{self.pk}: {self.examples} claims, CV {self.cv_accuracy:.3f}"
