"""The model in the loop: its versions, the claims written against each, the authors' tries,
and the model's own answers beside the players'."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from foolgame.authoring.models import WriteTask
from foolgame.checks.models import Check
from foolgame.claims.models import Claim
from foolgame.voting.models import Round


class VerifierVersion(models.Model):
    """One trained (or operator-supplied) verifier, its data cut and its figures on the
    frozen evaluation slice. The span in which it is active is a collection round."""

    class Kind(models.TextChoices):
        HEAD = "head", "MiniLM head trained on the game's verified claims"
        FOLDER = "folder", "An operator's local NLI model folder"

    class Status(models.TextChoices):
        CANDIDATE = "candidate", "Trained, not promoted (worse on the frozen slice)"
        ACTIVE = "active", "Active: writers play against it"
        RETIRED = "retired", "Was active"

    number = models.PositiveIntegerField(unique=True)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    name = models.CharField(max_length=200)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.CANDIDATE, db_index=True)
    created = models.DateTimeField(auto_now_add=True)
    blob = models.BinaryField(null=True, blank=True, help_text="The head's weights (numpy .npz, never a pickle).")
    model_path = models.CharField(max_length=500, blank=True, help_text="For a folder model: the folder it was loaded from.")
    fingerprint = models.CharField(max_length=64, blank=True)
    # The data cut: what it was trained on.
    claims_trained = models.PositiveIntegerField(default=0)
    newest_claim_id = models.PositiveIntegerField(default=0, help_text="Verified claims up to this id were available to it.")
    verified_claims = models.PositiveIntegerField(default=0, help_text="Verified claims in the database when it was trained.")
    trained_page_ids = models.JSONField(default=list, help_text="The pages of its training claims: never evaluated on.")
    seconds = models.FloatField(default=0.0, help_text="Training time.")
    # Its figures on the frozen slice, with the claim-only baseline trained on the same cut.
    figures = models.JSONField(default=dict)
    promoted = models.BooleanField(default=False)
    decision = models.TextField(blank=True, help_text="Why it was or was not promoted.")
    # Its skill on the players' scale, from its answers to settled rounds (scoring.ratings).
    rating = models.FloatField(null=True, blank=True)
    rating_deviation = models.FloatField(null=True, blank=True)
    answers = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-number"]
        constraints = [
            models.UniqueConstraint(fields=["status"], condition=models.Q(status="active"), name="verifier_one_active"),
        ]

    def __str__(self) -> str:
        return f"v{self.number} {self.name} ({self.status})"


class Activation(models.Model):
    """A version became active (promoted after training, activated or rolled back to by an
    operator): the start of a collection round, which ends at the next activation."""

    class Action(models.TextChoices):
        PROMOTE = "promote", "Promoted after training"
        ACTIVATE = "activate", "Activated by an operator"
        ROLLBACK = "rollback", "Rolled back to by an operator"

    version = models.ForeignKey(VerifierVersion, on_delete=models.CASCADE, related_name="activations")
    action = models.CharField(max_length=10, choices=Action.choices)
    at = models.DateTimeField(auto_now_add=True, db_index=True)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["-at", "-id"]


class EvaluationSlice(models.Model):
    """The frozen page-disjoint slice every version is measured on (one row)."""

    created = models.DateTimeField(auto_now_add=True)
    page_ids = models.JSONField(default=list)
    claim_ids = models.JSONField(default=list)


class WrittenAgainst(models.Model):
    """The version a claim was written against, what it said at the save, and the author's tries."""

    claim = models.OneToOneField(Claim, on_delete=models.CASCADE, primary_key=True, related_name="written_against")
    version = models.ForeignKey(VerifierVersion, on_delete=models.PROTECT, related_name="claims_written")
    label = models.CharField(max_length=8, blank=True, help_text="The model's label at the save (blank while it loaded).")
    supports = models.FloatField(null=True, blank=True)
    tries = models.PositiveIntegerField(default=1, help_text="Distinct drafts the model judged, the save included.")
    paid = models.BooleanField(default=False, help_text="model points paid to the author.")

    class Meta:
        indexes = [models.Index(fields=["version", "paid"], name="written_version_paid")]


class Try(models.Model):
    """A draft the model judged while its author wrote (one per distinct text and gold)."""

    task = models.ForeignKey(WriteTask, on_delete=models.CASCADE, related_name="model_tries")
    version = models.ForeignKey(VerifierVersion, on_delete=models.CASCADE, related_name="+")
    digest = models.CharField(max_length=64)
    label = models.CharField(max_length=8)
    supports = models.FloatField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["task", "version", "digest"], name="try_once_per_draft")]


class ClaimVerdict(models.Model):
    """A version's verdict on a claim with its gold sentences (for hardness and the export)."""

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="model_verdicts")
    version = models.ForeignKey(VerifierVersion, on_delete=models.CASCADE, related_name="verdicts")
    supports = models.FloatField()
    label = models.CharField(max_length=8)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["claim", "version"], name="verdict_once_per_version")]


class MachineAnswer(models.Model):
    """The active version's own answer to a settled round or an answered check, beside the player's."""

    version = models.ForeignKey(VerifierVersion, on_delete=models.CASCADE, related_name="machine_answers")
    round = models.ForeignKey(Round, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    fact_check = models.ForeignKey(Check, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    answer = models.CharField(max_length=8, help_text="A round: the index (0/1) it marks false; a check: its label.")
    probability = models.FloatField()
    correct = models.BooleanField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["version", "round"], condition=models.Q(round__isnull=False), name="machine_once_per_round"),
            models.UniqueConstraint(fields=["version", "fact_check"], condition=models.Q(fact_check__isnull=False), name="machine_once_per_check"),
            models.CheckConstraint(
                condition=models.Q(round__isnull=False, fact_check__isnull=True) | models.Q(round__isnull=True, fact_check__isnull=False),
                name="machine_round_xor_check",
            ),
        ]
