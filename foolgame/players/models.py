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
        # Paid from a *correct* vote: the authors share the time the voter needed (docs/rules.md).
        FOOL = "fool", "Hard to check"
        LIKE = "like", "A liked claim"
        CHECK = "check", "Checking claims against their evidence"
        # Paid once people confirm the label of a claim the model in the loop got wrong: outside
        # the zero-sum of a round (GAME.md, "The model in the loop").
        MODEL = "model", "Fooling the model"

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


class Notification(models.Model):
    """One piece of news for a claim's author, stored when it happens and read once.

    Written by the services that cause it (a vote, a like, a moderator's action) in their
    transaction, so the news exists exactly when its cause does. ``read_at`` is set when the
    player sees it (the notifications page, or the API).
    """

    class Kind(models.TextChoices):
        FOOLED = "fooled", "You fooled a voter"
        FOOL_POINTS = "fool_points", "Hard to check"
        LIKED = "liked", "A voter liked your claim"
        MODERATED = "moderated", "A moderator acted on your claim"
        MODEL_FOOLED = "model_fooled", "Your claim fooled the model"

    class Detail(models.TextChoices):
        NONE = "", "—"
        PICKED_TRUE = "picked_true", "The voter picked your true claim as the false one"
        BELIEVED_FALSE = "believed_false", "The voter took your false claim for true"
        REMOVE = "remove", "Removed"
        RELABEL = "relabel", "Relabelled"
        EDIT_EVIDENCE = "edit_evidence", "Evidence edited"

    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    detail = models.CharField(max_length=20, choices=Detail.choices, blank=True, default=Detail.NONE)
    claim = models.ForeignKey("claims.Claim", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="The voter or moderator who caused it; never shown to the player for votes and likes.",
    )
    points = models.PositiveIntegerField(default=0)
    label = models.CharField(max_length=8, blank=True, help_text="For a relabel: the claim's new label.")
    note = models.TextField(blank=True, help_text="For a moderator's action: their reason.")
    created = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["player", "read_at"], name="notification_player_unread")]

    def __str__(self) -> str:
        return f"{self.kind} for {self.player_id} (claim {self.claim_id})"


class PlayerRating(models.Model):
    """A player's skill on the 1500 scale (scoring.ratings: Glicko-2, updated by each vote in
    its transaction; rebuilt by ``refit_ratings``). No row until the first vote."""

    player = models.OneToOneField(settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="skill")
    rating = models.FloatField(default=1500.0)
    deviation = models.FloatField(default=350.0)
    volatility = models.FloatField(default=0.06)
    votes = models.PositiveIntegerField(default=0)
    updated = models.DateTimeField(auto_now=True)
    # The skill table's order: a rating the player is very likely above (scoring.ratings.conservative).
    floor = models.GeneratedField(
        expression=models.F("rating") - 2 * models.F("deviation"), output_field=models.FloatField(), db_persist=True
    )

    class Meta:
        indexes = [models.Index(fields=["-floor"], name="player_rating_floor")]

    def __str__(self) -> str:
        return f"{self.player_id}: {self.rating:.0f} +- {self.deviation:.0f}"


class PlayerName(models.Model):
    """A user name's TR39 confusable skeleton (``foolgame.players.tr39.username_skeleton``):
    no two accounts may have names that look alike (``admin``, ``admın``, ``admіn``, ``ɑdmin``).

    Kept in step with ``auth_user.username`` by a ``post_save`` receiver
    (``player_name_record``), so every path that names or renames an account (signup, the
    admin, ``createsuperuser``) goes through it. The unique index is on ``digest``, the
    SHA-256 of the skeleton: a 150-letter name's skeleton can reach 3 KiB, past what a
    PostgreSQL index entry holds. ``grandfathered`` marks the later accounts of look-alike
    names that existed before this rule (the backfill keeps them, see migration 0005): they
    stay outside the unique index, and new names are still compared with theirs.
    """

    user = models.OneToOneField(settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="name_skeleton")
    skeleton = models.TextField()
    digest = models.CharField(max_length=64, db_index=True)
    grandfathered = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["digest"], condition=models.Q(grandfathered=False), name="player_name_skeleton_unique")
        ]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.skeleton}"


class Guest(models.Model):
    """An account made with a nickname alone, to join a live room from its link (a class in
    front of a projector): ``guest_create``. It plays rooms and nothing else (no claims, checks,
    moderation or exports: ``GuestLimitsMiddleware`` refuses every other path), and stays off
    the public leaderboards and the skill board. Its player may claim it with a password
    (``guest_claim``): this row goes, and the account, with its history, is an ordinary one."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="guest")
    created = models.DateTimeField()

    def __str__(self) -> str:
        return f"guest {self.user_id}"

class TutorialProgress(models.Model):
    """How far a player went with the first-run tutorial (spotting the false claim, writing a
    claim): finished or skipped, or asked for again. No row: not yet, and the game's pages
    show it until the player has finished a round and saved a claim (then it finishes itself:
    ``players.services.player_tutorial_get``). Kept on the server so it follows the account
    from device to device."""

    class State(models.TextChoices):
        NEW = "new", "Asked for again"
        DONE = "done", "Finished"
        SKIPPED = "skipped", "Skipped"

    player = models.OneToOneField(settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="tutorial")
    state = models.CharField(max_length=10, choices=State.choices)
    updated = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.player_id}: tutorial {self.state}"


class SignupOrigin(models.Model):
    """Where an account was made, kept as a keyed digest of the address (never the address
    itself: ``players.services.address_digest``) with the moment, so that accounts made from
    one address within a window can be told apart from independent ones (docs/verifier.md:
    a claim's confirmation counts only people not linked to its author)."""

    player = models.OneToOneField(settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="signup_origin")
    address = models.CharField(max_length=64, db_index=True, help_text="HMAC-SHA256 of the signup address under the server's secret key.")
    created = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"signup origin of {self.player_id}"
