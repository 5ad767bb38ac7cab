"""What moderation keeps: each claim's quality flags, the fitted priors, and the audit log.

``ClaimQuality`` is a derived row (one per claim) that the filters and the report count
rewrite; only the review fields (``kept``, ``reviewed_*``) are a moderator's decision.
``AuditRecord`` is the opposite: written once per moderator action and never changed.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from foolgame.claims.models import Claim


class ClaimQuality(models.Model):
    """A claim's vote-based score and flags, and whether moderation keeps it out of play.

    ``out_of_play`` is stored (not computed in the pairing query) so that dealing a round
    stays one indexed filter; every write of this row recomputes it under the row's lock.
    """

    claim = models.OneToOneField(Claim, on_delete=models.CASCADE, primary_key=True, related_name="quality")
    correct_votes = models.PositiveIntegerField(default=0, help_text="The release's correct votes plus the game's own.")
    total_votes = models.PositiveIntegerField(default=0, help_text="The release's votes plus the game's own.")
    game_votes = models.PositiveIntegerField(default=0, help_text="Votes cast in this game (the rest came with the release).")
    score = models.FloatField(help_text="Posterior mean of the correct-vote rate.")
    interval_low = models.FloatField()
    interval_high = models.FloatField()
    prior_a = models.FloatField()
    prior_b = models.FloatField()
    too_hard = models.BooleanField(default=False, db_index=True)
    too_easy = models.BooleanField(default=False, db_index=True)
    reasons = models.JSONField(default=list, blank=True, help_text="The filters' reasons, as a moderator reads them.")
    report_count = models.PositiveIntegerField(default=0, help_text="Players who ever reported the claim.")
    open_reports = models.PositiveIntegerField(default=0, db_index=True, help_text="Players who reported it since its last review.")
    hidden_until_review = models.BooleanField(default=False, help_text="Reported by enough players: out of play until a moderator reviews it.")
    kept = models.BooleanField(default=False, help_text="A moderator kept it: the filters no longer take it out of play.")
    disputed = models.BooleanField(
        default=False, db_index=True, help_text="Its checkers' gold label is not its author's label: a moderator decides."
    )
    validation = models.JSONField(default=dict, blank=True, help_text="Its checks when disputed: the gold label and the labels by kind.")
    reviewed_report_id = models.PositiveBigIntegerField(default=0, help_text="Reports up to this id were seen at the last review.")
    reviewed_at = models.DateTimeField(null=True, blank=True)
    reviewed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    out_of_play = models.BooleanField(default=False, db_index=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "claim quality"
        verbose_name_plural = "claim qualities"
        permissions = [("moderate_claims", "Can work the moderation queue")]

    def __str__(self) -> str:
        return f"quality of claim {self.claim_id}: {self.score:.2f}"

    @property
    def needs_review(self) -> bool:
        return self.open_reports > 0 or ((self.too_hard or self.too_easy) and not self.kept)


class PriorFit(models.Model):
    """One empirical-Bayes fit of the Beta prior over every active claim's vote counts."""

    a = models.FloatField()
    b = models.FloatField()
    mean = models.FloatField()
    n_claims = models.PositiveIntegerField(help_text="Claims with at least one vote.")
    pooled_correct = models.PositiveIntegerField()
    pooled_votes = models.PositiveIntegerField()
    log_likelihood = models.FloatField()
    converged = models.BooleanField()
    created = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created", "-id"]
        get_latest_by = ["created", "id"]

    def __str__(self) -> str:
        return f"prior a={self.a:.2f} b={self.b:.2f} (mean {self.mean:.3f}, {self.n_claims} claims)"


class AuditRecordQuerySet(models.QuerySet):
    def update(self, **kwargs: Any) -> int:
        raise TypeError("Audit records are never changed.")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise TypeError("Audit records are never deleted.")


class _AppendOnly(models.Model):
    """An audit row: written once, never changed or deleted (through the ORM)."""

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and not self._state.adding:
            raise TypeError("Audit records are never changed.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise TypeError("Audit records are never deleted.")


class AuditRecord(_AppendOnly):
    """Who did what to which claim, when and why, with the claim before and after.

    Append-only: saving an existing record, deleting one or bulk-updating them raises, the
    admin shows them read-only, and the claim and moderator are protected from deletion.
    """

    class Action(models.TextChoices):
        KEEP = "keep", "Keep"
        REMOVE = "remove", "Remove"
        RELABEL = "relabel", "Relabel"
        EDIT_EVIDENCE = "edit_evidence", "Edit evidence"

    moderator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="moderation_actions")
    claim = models.ForeignKey(Claim, on_delete=models.PROTECT, related_name="audit_records")
    action = models.CharField(max_length=20, choices=Action.choices, db_index=True)
    reason = models.TextField()
    before = models.JSONField()
    after = models.JSONField()
    created = models.DateTimeField(auto_now_add=True, db_index=True)

    objects = AuditRecordQuerySet.as_manager()

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"{self.action} of claim {self.claim_id} by {self.moderator_id}"


class Sighting(models.Model):
    """A moderator saw a claim with its answer (label and gold) in the moderation tools.

    From then on the moderator's votes on that claim are no evidence of how hard it is: the
    dealer never deals it to them, and the export marks a vote cast after this moment.
    Only the first sighting is kept (one row per moderator and claim, written idempotently
    with one bulk insert per page of the queue).
    """

    moderator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="moderation_sightings")
    first_seen = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["moderator", "claim"], name="sighting_once_per_moderator")]

    def __str__(self) -> str:
        return f"{self.moderator} saw claim {self.claim_id} at {self.first_seen:%Y-%m-%d %H:%M}"


class PlayerHold(models.Model):
    """An account whose votes are improbable for a person (``scoring.integrity``), held until
    a moderator clears it.

    One row per player, rewritten by the integrity refresh (``held`` and the evidence) and by
    a moderator's action. ``held`` is stored, not derived in queries, so that the lower apps
    read it through the reverse relation without importing this one: the leaderboards leave
    out ``integrity_hold__held=True``, the ratings skip such a voter's votes, the export marks
    them ``voter_held``. A cleared hold covers its evidence: the refresh then tests only votes
    cast after ``cleared_through_vote`` (new evidence), so a cleared player is never re-held
    for the votes a moderator already judged.
    """

    class Status(models.TextChoices):
        HELD = "held", "Held"
        CLEARED = "cleared", "Cleared"
        CONFIRMED = "confirmed", "Confirmed"

    HOLDING = (Status.HELD, Status.CONFIRMED)

    class Reason(models.TextChoices):
        IMPROBABLE = "improbable_accuracy", "Right far more often than a person at that speed and clue use"
        FOLLOWS = "follows_give_ups", "Votes right on pairs another account had just given up"

    player = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="integrity_hold")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.HELD, db_index=True)
    held = models.BooleanField(default=True, db_index=True, help_text="Held or confirmed: off the leaderboards and the ratings.")
    reasons = models.JSONField(default=list, blank=True)
    evidence = models.JSONField(default=dict, blank=True, help_text="The numbers: votes, right, expected, p-values, linked accounts and pairs.")
    p_value = models.FloatField(help_text="The smallest of the evidence's p-values.")
    evidence_through_vote = models.PositiveBigIntegerField(default=0, help_text="The last vote id the evidence read.")
    cleared_through_vote = models.PositiveBigIntegerField(default=0, help_text="Votes up to this id were judged by a moderator's clear.")
    held_at = models.DateTimeField()
    acted_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    acted_at = models.DateTimeField(null=True, blank=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["p_value", "id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(held=True, status__in=["held", "confirmed"]) | models.Q(held=False, status="cleared"),
                name="player_hold_held_matches_status",
            )
        ]

    def __str__(self) -> str:
        return f"{self.player_id} {self.status} (p {self.p_value:.2g})"


class PlayerAuditRecord(_AppendOnly):
    """A moderator's clear or confirm of a held player, with the hold before and after;
    append-only like :class:`AuditRecord`."""

    class Action(models.TextChoices):
        CLEAR = "clear", "Clear"
        CONFIRM = "confirm", "Confirm"

    moderator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="player_moderation_actions")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="player_audit_records")
    action = models.CharField(max_length=20, choices=Action.choices, db_index=True)
    reason = models.TextField()
    before = models.JSONField()
    after = models.JSONField()
    created = models.DateTimeField(auto_now_add=True, db_index=True)

    objects = AuditRecordQuerySet.as_manager()

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"{self.action} of player {self.player_id} by {self.moderator_id}"
