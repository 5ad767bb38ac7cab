"""A study: a researcher's paid crowd study or class experiment run on the game, with arms
(versions of the game's settings), participants who arrive from Prolific, Mechanical Turk or a
plain link, their attention checks, and the codes and bonuses that send them back.

A participant is an account of its own, made on arrival with no password, one per platform id
and study: every claim, vote and check made by that account is the study's, in its arm."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from foolgame.claims.models import Claim


class Study(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", "Open: participants may arrive"
        PAUSED = "paused", "Paused: nobody new may start"
        CLOSED = "closed", "Closed"

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="studies_owned")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN, db_index=True)
    consent_text = models.TextField(help_text="Shown before anything else; nothing happens until the participant consents.")
    tasks = models.JSONField(
        default=list, help_text='The work, in order: [{"kind": "write"|"vote"|"check", "count": n}, ...].'
    )
    page_ids = models.JSONField(default=list, blank=True, help_text="The pages the work draws from (empty: any, or the categories).")
    categories = models.JSONField(default=list, blank=True, help_text="Or the categories it draws from.")
    per_arm = models.PositiveIntegerField(help_text="Participants wanted in each arm; the study closes itself when every arm is full.")
    block_size = models.PositiveIntegerField(help_text="Blocked randomisation: each block of this many arrivals (a multiple of the arms) fills every arm equally.")
    seed = models.BigIntegerField(help_text="Seeds the order of arms within each block.")
    arrivals = models.PositiveIntegerField(default=0, help_text="How many participants have arrived: the next one's place in the blocks.")
    completion_code = models.CharField(max_length=64)
    screen_out_code = models.CharField(max_length=64, blank=True)
    attention_checks = models.PositiveIntegerField(default=0, help_text="Settled claims mixed unannounced into the checks.")
    attention_max_failures = models.PositiveIntegerField(default=0, help_text="More failures than this end the study for the participant.")
    time_limit_minutes = models.PositiveIntegerField(null=True, blank=True)
    bonus = models.JSONField(default=dict, blank=True, help_text="Bonus rules: amounts per verified model-fooling claim, per right vote, a cap, the currency.")
    address_cap = models.PositiveIntegerField(help_text="At most this many participants from one address.")
    created = models.DateTimeField()
    closed = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "studies"
        permissions = [("run_study", "Can run studies and read their bonus files")]

    def __str__(self) -> str:
        return self.slug


class Arm(models.Model):
    """One version of the game in a study: a name and overrides of the listed game settings."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="arms")
    name = models.CharField(max_length=64)
    position = models.PositiveSmallIntegerField()
    settings = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["study", "position"]
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="study_arm_name_unique"),
            models.UniqueConstraint(fields=["study", "position"], name="study_arm_position_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.study_id}: {self.name}"


class Participant(models.Model):
    class Platform(models.TextChoices):
        PROLIFIC = "prolific", "Prolific"
        MTURK = "mturk", "Mechanical Turk"
        LINK = "link", "A plain link (a class list)"

    class Status(models.TextChoices):
        ACTIVE = "active", "Doing the work"
        FINISHED = "finished", "Finished: given the completion code"
        SCREENED_OUT = "screened_out", "Failed the attention checks: given the screen-out code"
        TIMED_OUT = "timed_out", "Ran out of the study's time"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="participants")
    arm = models.ForeignKey(Arm, on_delete=models.PROTECT, related_name="participants")
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="study_participant")
    platform = models.CharField(max_length=10, choices=Platform.choices)
    platform_id = models.CharField(max_length=200, help_text="PROLIFIC_PID, workerId or pid: seen only by the study's owner.")
    platform_extra = models.JSONField(default=dict, blank=True, help_text="STUDY_ID, SESSION_ID; assignmentId, hitId.")
    address = models.CharField(max_length=64, db_index=True, help_text="HMAC-SHA256 of the arrival address (players.services.address_digest).")
    sequence = models.PositiveIntegerField(help_text="Arrival order in the study (its place in the blocks).")
    status = models.CharField(max_length=14, choices=Status.choices, default=Status.ACTIVE, db_index=True)
    consented = models.DateTimeField()
    ended = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "platform", "platform_id"], name="study_participant_unique"),
            models.UniqueConstraint(fields=["study", "sequence"], name="study_participant_sequence_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.study_id}: participant {self.sequence}"


class AttentionCheck(models.Model):
    """A settled claim put unannounced among a participant's checks; passed when the label
    given matches the settled one."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="attention_checks")
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveSmallIntegerField(help_text="Among the participant's checks: the n-th check asked.")
    passed = models.BooleanField(null=True, blank=True)
    answered = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["participant", "claim"], name="attention_check_unique")]

    def __str__(self) -> str:
        return f"{self.participant_id}: attention check on {self.claim_id}"
