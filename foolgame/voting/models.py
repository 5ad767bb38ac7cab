"""Voting rounds: two claims, one server clock, clues that cost time, one vote.

The database is the clock: a round stores when it started and when each clue was bought,
and ``deadline`` (start + 180 s - 10 s per clue) is rewritten under the round's row lock
at every reveal, so every request, task and socket computes the same remaining time.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from foolgame.claims.models import Claim


class Round(models.Model):
    class State(models.TextChoices):
        READY = "ready", "Ready to start"
        PLAYING = "playing", "Playing"
        VOTED = "voted", "Voted"
        TIMED_OUT = "timeout", "Timed out"
        REPORTED = "reported", "Ended by a report"
        VOIDED = "voided", "Voided by moderation"
        FORFEITED = "forfeited", "Given up"

    OPEN_STATES = (State.READY, State.PLAYING)

    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="rounds")
    left_claim = models.ForeignKey(Claim, on_delete=models.PROTECT, related_name="+")
    right_claim = models.ForeignKey(Claim, on_delete=models.PROTECT, related_name="+")
    state = models.CharField(max_length=10, choices=State.choices, default=State.READY, db_index=True)
    created = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    deadline = models.DateTimeField(null=True, blank=True, db_index=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    # The answer as dealt: a later relabel never rewrites a round's answer (null only for
    # rounds made before the column; their answer is then read from the current labels).
    false_claim_index = models.PositiveSmallIntegerField(null=True, blank=True)
    # Which moderation action voided the round (relabel, remove, edit_evidence); the export
    # marks voided rounds with it. Blank for every other state, and for rounds voided before.
    void_action = models.CharField(max_length=20, blank=True, default="")
    # A forfeit (``round_forfeit``): when its answer may be shown, no sooner than a player
    # who kept waiting would have seen it (the deadline at the forfeit; for a round never
    # started, the forfeit + ROUND_SECONDS). Null for every other state.
    answer_at = models.DateTimeField(null=True, blank=True)
    # A forfeit of a started round counts as a wrong vote in the ratings: False until the
    # rating task (``rate_forfeits``, or the ``rate_pending_votes`` sweep) applied it, then
    # True; null for every round with nothing to rate (not forfeited, or never started).
    forfeit_rated = models.BooleanField(null=True, blank=True, editable=False)
    # The player's skill rating (1500 scale) just before and just after this round's rating
    # update (its vote's, or its forfeit's as a wrong vote), written by that update; null
    # until it ran, and for a round it does not rate. The result shows the change.
    rating_before = models.FloatField(null=True, blank=True, editable=False)
    rating_after = models.FloatField(null=True, blank=True, editable=False)
    # The game the round is played under, fixed when it is dealt from its player's settings
    # (``hooks.player_settings``: a study's arm may change them), so a later change of the
    # defaults or of an arm never moves an open round's deadline or its clue cost: the clock
    # (null for rounds made before the columns and for a room's rounds: the game's
    # defaults), whether clues may be bought, whether the player is shown points.
    round_seconds = models.PositiveSmallIntegerField(null=True, blank=True, editable=False)
    clue_seconds = models.PositiveSmallIntegerField(null=True, blank=True, editable=False)
    hints = models.BooleanField(default=True, editable=False)
    points_shown = models.BooleanField(default=True, editable=False)

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [
            models.Index(fields=["player", "state"]),
            # The hourly deal limit reads a player's latest rounds (``_check_deal_rate``).
            models.Index(fields=["player", "created"], name="round_player_created"),
            models.Index(fields=["id"], condition=models.Q(forfeit_rated=False), name="round_forfeit_unrated"),
        ]
        constraints = [
            models.CheckConstraint(condition=~models.Q(left_claim=models.F("right_claim")), name="round_two_distinct_claims"),
            # A round given up before its start keeps no clock: it was never started.
            models.CheckConstraint(
                condition=models.Q(state="ready")
                | models.Q(state="forfeited", started_at__isnull=True, deadline__isnull=True)
                | models.Q(started_at__isnull=False, deadline__isnull=False),
                name="round_started_has_deadline",
            ),
        ]

    def __str__(self) -> str:
        return f"round {self.pk} of {self.player} ({self.state})"

    @property
    def claims(self) -> tuple[Claim, Claim]:
        return (self.left_claim, self.right_claim)

    @property
    def false_index(self) -> int:
        if self.false_claim_index is not None:
            return self.false_claim_index
        return 0 if self.left_claim.label == Claim.Label.REFUTES else 1

    @property
    def is_open(self) -> bool:
        return self.state in self.OPEN_STATES


class SeenClaim(models.Model):
    """A claim a player has been dealt. The unique pair is the database's guarantee that a
    player never gets the same claim twice, even from two rounds created at once."""

    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="dealt")
    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="seen")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["player", "claim"], name="seen_claim_once_per_player")]


class ClueReveal(models.Model):
    """The n-th clue of one claim of a round, bought at a moment; each costs the round 10 s."""

    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="reveals")
    claim_index = models.PositiveSmallIntegerField()
    position = models.PositiveSmallIntegerField()
    revealed_at = models.DateTimeField()

    class Meta:
        ordering = ["revealed_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["round", "claim_index", "position"], name="reveal_once"),
            models.CheckConstraint(condition=models.Q(claim_index__in=[0, 1]), name="reveal_claim_index_0_1"),
        ]


class Vote(models.Model):
    """The one vote of a round (the one-to-one is the database's one-vote rule)."""

    round = models.OneToOneField(Round, on_delete=models.PROTECT, related_name="vote")
    false_claim_index = models.PositiveSmallIntegerField()
    correct = models.BooleanField()
    points = models.PositiveIntegerField(help_text="Points the voter earned.")
    remaining = models.FloatField(help_text="Seconds left on the server clock when the vote arrived.")
    created = models.DateTimeField()
    # Whether the vote's ratings update (foolgame.voting.ratings) has been applied: the
    # rating task (rate_votes) sets it with the update, in one transaction, so a vote is rated once.
    rated = models.BooleanField(default=False, editable=False)
    # Why the vote counts for nothing (no ledger rows, no rating), blank when it counts:
    # ``moderator_saw_claim``, the voter had seen one of its claims with its answer as a
    # moderator before voting. Such a vote is stored with ``rated`` set: nothing to apply.
    unpaid = models.CharField(max_length=30, blank=True, default="")
    # Whether the vote's ledger rows, its authors' notifications and its rating have been
    # written. A vote on a room's round while its question plays waits (False) until the
    # question is over (``votes_settle``): points on the leaderboards or a rating that moved
    # would tell the room who was right before the answer.
    settled = models.BooleanField(default=True, editable=False)

    class Meta:
        ordering = ["-created"]
        indexes = [models.Index(fields=["id"], condition=models.Q(rated=False), name="vote_unrated")]


class Like(models.Model):
    """After the vote, which claim the voter found more interesting (null: not sure)."""

    round = models.OneToOneField(Round, on_delete=models.PROTECT, related_name="like")
    claim = models.ForeignKey(Claim, null=True, blank=True, on_delete=models.PROTECT, related_name="likes")
    created = models.DateTimeField()


class NotificationCursor(models.Model):
    """How far a player has read their notifications; what came after is unread."""

    player = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    seen_until = models.DateTimeField()


class Report(models.Model):
    class Reason(models.TextChoices):
        SPAM = "spam", "Spam"
        INAPPROPRIATE = "inappropriate", "Inappropriate"
        WRONG_LABEL = "wrong_label", "Wrong label"
        OTHER = "other", "Other"

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="reports")
    reporter = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="reports")
    round = models.ForeignKey(Round, null=True, blank=True, on_delete=models.SET_NULL, related_name="reports")
    reason = models.CharField(max_length=20, choices=Reason.choices)
    note = models.TextField(blank=True, max_length=1000)
    created = models.DateTimeField(default=timezone.now)
    # Decided at report time from the reporter's standing (voted rounds, account age): only
    # such reports count towards hiding a claim automatically; every report reaches the queue.
    counts_for_hiding = models.BooleanField(default=True)

    class Meta:
        ordering = ["-created"]
        indexes = [models.Index(fields=["reporter", "created"], name="report_reporter_created")]
        constraints = [models.UniqueConstraint(fields=["claim", "reporter"], name="report_once_per_player")]
