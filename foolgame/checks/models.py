"""What validation keeps: each check a player was dealt (a claim with its gold evidence, to
label against a short clock) and, per claim, where its independent labels stand."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from foolgame.claims.models import Claim


class Check(models.Model):
    """One claim dealt to one player for checking, answered once before ``expires_at``.

    ``settled_label`` is set when the claim's label was settled at the deal (a hidden gold
    item: a release claim with strong vote agreement, or one a moderator confirmed); then
    ``correct`` says whether the answer agreed with it, and only then can a check earn points.
    """

    class Label(models.TextChoices):
        SUPPORTS = "SUPPORTS", "Supported by the evidence"
        REFUTES = "REFUTES", "Refuted by the evidence"
        NOT_ENOUGH_INFO = "NOT ENOUGH INFO", "Not enough information"
        FLAWED = "FLAWED", "The claim is flawed (a report)"

    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="checks")
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="checks")
    dealt_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    answered_at = models.DateTimeField(null=True, blank=True)
    label = models.CharField(max_length=16, choices=Label.choices, blank=True, default="")
    settled_label = models.CharField(max_length=8, blank=True, default="", help_text="The settled label of a hidden gold item, else blank.")
    correct = models.BooleanField(null=True, blank=True, help_text="A gold item's answer agreed with its settled label.")
    points = models.PositiveIntegerField(default=0, help_text="What this gold item earned when its tally paid (0 until then, and for an unpaid tally).")
    streak = models.PositiveIntegerField(default=0, help_text="Checks answered in a row before their clock ran out, this one included (says nothing of labels).")
    tally = models.ForeignKey("CheckTally", null=True, blank=True, on_delete=models.PROTECT, related_name="checks", help_text="The tally that counted this answer; null while its batch is open.")

    class Meta:
        ordering = ["-dealt_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["player", "claim"], name="check_once_per_player")]
        indexes = [
            models.Index(fields=["player", "answered_at"], name="check_player_answered"),
            models.Index(fields=["claim", "answered_at"], name="check_claim_answered"),
        ]

    @property
    def gold(self) -> bool:
        return bool(self.settled_label)

    def __str__(self) -> str:
        return f"{self.player} · claim {self.claim_id} · {self.label or 'open'}"


class ClaimValidation(models.Model):
    """Where a claim's checks stand: how many labels count (dealing goes least-checked first
    until LABELS_NEEDED) and its gold label by the weighted 3-of-5 rule
    (``scoring.validation.gold_label``; "-" without one)."""

    claim = models.OneToOneField(Claim, on_delete=models.CASCADE, primary_key=True, related_name="validation")
    labels = models.PositiveIntegerField(default=0, db_index=True, help_text="Answered checks with a label that counts (FLAWED is a report, not a label; a checker under the accuracy bar counts nothing).")
    gold_label = models.CharField(max_length=16, default="-")
    updated = models.DateTimeField(auto_now=True)

    @property
    def disputed(self) -> bool:
        """The gold label is another than the author's. (Whether a moderator must still decide
        is moderation's ``ClaimQuality.disputed``.)"""
        return self.gold_label not in ("-", self.claim.label)


class CheckTally(models.Model):
    """One batch of a player's answered checks, counted at once (``checks.services``): the only
    moment their answers on settled claims turn into points or move their record, so that no
    single answer tells whether its claim was settled or what its label is. ``answered``,
    ``gold`` and ``right`` are the batch's; ``record_right`` and ``record_seen`` the player's
    record on gold items over every tally to this one; ``counting`` whether their labels count
    from here on."""

    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="check_tallies")
    number = models.PositiveIntegerField(help_text="1 for the player's first tally, and so on.")
    closed_at = models.DateTimeField()
    answered = models.PositiveIntegerField()
    gold = models.PositiveIntegerField(help_text="Answers in this batch on claims whose label was settled at the deal.")
    right = models.PositiveIntegerField(help_text="Of those, answered with the settled label.")
    record_right = models.PositiveIntegerField()
    record_seen = models.PositiveIntegerField()
    # The same for the settled claims labelled SUPPORTS (the rest were REFUTES): a record shows
    # reading only on both labels, so answering one label to everything never pays, however
    # the settled claims lean (docs/checks.md).
    gold_supports = models.PositiveIntegerField(default=0)
    right_supports = models.PositiveIntegerField(default=0)
    record_right_supports = models.PositiveIntegerField(default=0)
    record_seen_supports = models.PositiveIntegerField(default=0)
    paid = models.BooleanField(help_text="The record showed reading (docs/checks.md), so the batch's right answers paid.")
    points = models.PositiveIntegerField(default=0)
    counting = models.BooleanField()

    class Meta:
        ordering = ["-number"]
        constraints = [models.UniqueConstraint(fields=["player", "number"], name="check_tally_once_per_number")]

    def __str__(self) -> str:
        return f"{self.player} · tally {self.number} · {self.right}/{self.gold} · {self.points} points"
