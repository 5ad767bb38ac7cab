"""A claim about a page: what authors write, voters judge, moderators review and researchers export."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from foolgame.pages.models import Page, Sentence


class Claim(models.Model):
    class Label(models.TextChoices):
        SUPPORTS = "SUPPORTS", "True (the page supports it)"
        REFUTES = "REFUTES", "False (the page refutes it)"

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        REMOVED = "removed", "Removed"

    class Split(models.TextChoices):
        NONE = "", "Not from a release"
        TRAIN = "train", "train"
        DEV = "dev", "dev"
        TEST = "test", "test"

    page = models.ForeignKey(Page, on_delete=models.PROTECT, related_name="claims")
    text = models.TextField()
    label = models.CharField(max_length=8, choices=Label.choices)
    gold_sentences = models.ManyToManyField(Sentence, through="ClaimGold", related_name="gold_for")
    clues = models.JSONField(
        default=list,
        blank=True,
        help_text="The clue list snapshot, in reveal order: [{sentence_id, text, section_header}], gold last.",
    )
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="claims")
    created = models.DateTimeField(auto_now_add=True, db_index=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE, db_index=True)
    removed_reason = models.TextField(blank=True)

    # Where a claim came from a published release: its id there, its split and the votes
    # and likes it had gathered in the original game (the game's own votes add to these).
    external_id = models.CharField(max_length=64, null=True, blank=True, unique=True)
    release_split = models.CharField(max_length=5, choices=Split.choices, blank=True, default=Split.NONE)
    release_total_votes = models.PositiveIntegerField(default=0)
    release_correct_votes = models.PositiveIntegerField(default=0)
    release_total_likes = models.PositiveIntegerField(default=0)
    release_retrieved = models.JSONField(
        null=True, blank=True, help_text="The release's retrieved_evidence in its own order, for a faithful export."
    )

    # Votes cast on the claim in this game (voted rounds that dealt it), counted by the vote
    # in its own transaction, so that dealing reads a column instead of aggregating the
    # history; ``deal_votes`` adds the release's votes and is what the dealer orders by.
    game_votes = models.PositiveIntegerField(default=0, editable=False)
    deal_votes = models.GeneratedField(
        expression=models.F("release_total_votes") + models.F("game_votes"), output_field=models.IntegerField(), db_persist=True
    )

    # The claim's difficulty on the 1500 scale (scoring.ratings: Glicko-2 per vote, from the
    # last refit_ratings), with its deviation and volatility. NULL until the game's first vote
    # on it: the release's votes have no voters to rate against.
    rating = models.FloatField(null=True, blank=True, editable=False)
    rating_deviation = models.FloatField(default=350.0, editable=False)
    rating_volatility = models.FloatField(default=0.06, editable=False)

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [
            models.Index(fields=["page", "status", "label"]),
            # The dealer reads the claims nearest a player's level along it.
            models.Index(fields=["status", "rating", "id"], name="claim_status_rating"),
            # The dealer walks active claims least-voted first, ties rotated by id.
            models.Index(fields=["status", "deal_votes", "id"], name="claim_status_deal_votes"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(release_correct_votes__lte=models.F("release_total_votes")),
                name="claim_release_correct_le_total",
            )
        ]

    def __str__(self) -> str:
        return self.text[:80]

    @property
    def is_true(self) -> bool:
        return self.label == self.Label.SUPPORTS


class ClaimGold(models.Model):
    """A gold sentence of a claim (1 or 2, of the claim's own page), in the author's order."""

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="gold_links")
    sentence = models.ForeignKey(Sentence, on_delete=models.PROTECT, related_name="gold_links")
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["claim", "position"]
        constraints = [models.UniqueConstraint(fields=["claim", "sentence"], name="claim_gold_unique")]
