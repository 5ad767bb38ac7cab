"""Live rooms: a group plays the same pairs on one server clock, with a live scoreboard.

A room is a host's game of ``questions`` questions. Each question is one fair pair dealt for
the whole room and played as one ordinary ``voting.Round`` per member present, all started
at the question's instant: clues, votes, awards, the ledger and the export are the solo
round's own. The database holds every deadline and every state, so any web process can serve
any member and a question ends when the database says so (its deadline, or every round over).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from foolgame.claims.models import Claim
from foolgame.voting.models import Round


class Room(models.Model):
    class State(models.TextChoices):
        LOBBY = "lobby", "Waiting for the host to start"
        PLAYING = "playing", "Playing"
        ENDED = "ended", "Ended"

    class EndReason(models.TextChoices):
        DONE = "done", "Every question was played"
        HOST_LEFT = "host_left", "The host left"
        HOST_GONE = "host_gone", "The host was away too long"
        NO_PAIR = "no_pair", "No fair pair was left for the room"

    code = models.CharField(max_length=8, unique=True)
    host = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="hosted_rooms")
    category = models.CharField(max_length=100, blank=True, help_text="slug or name of a category; blank for any")
    questions = models.PositiveSmallIntegerField()
    seconds = models.PositiveSmallIntegerField(help_text="each question's clock (at most the round's 180 s)")
    host_plays = models.BooleanField(
        default=False,
        help_text="the host plays the questions too (\"I'll play too\"); else they run the room and are dealt nothing, "
        "counted in no answers-in count, finish, scoreboard or podium",
    )
    state = models.CharField(max_length=10, choices=State.choices, default=State.LOBBY, db_index=True)
    current = models.PositiveSmallIntegerField(default=0, help_text="the number of the latest question dealt (0: none yet)")
    created = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    end_reason = models.CharField(max_length=10, choices=EndReason.choices, blank=True)
    next_room = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="previous",
        help_text="the room the host opened to play again with this room's members (``room_play_again``)",
    )

    class Meta:
        ordering = ["-created", "-id"]
        constraints = [
            models.CheckConstraint(condition=models.Q(questions__gte=1), name="room_has_questions"),
            models.CheckConstraint(condition=models.Q(seconds__gte=1), name="room_has_seconds"),
        ]

    def __str__(self) -> str:
        return f"room {self.code} of {self.host} ({self.state})"


class RoomMember(models.Model):
    """A player in a room. ``seen_at`` is renewed by their open socket (and by their REST
    reads of the room): a member seen lately is present and gets the next question."""

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="members")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    joined_at = models.DateTimeField()
    left_at = models.DateTimeField(null=True, blank=True)
    seen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["joined_at", "id"]
        constraints = [models.UniqueConstraint(fields=["room", "player"], name="room_member_once")]


class RoomQuestion(models.Model):
    """One pair dealt for the whole room, shown to every member present at ``started_at``."""

    class State(models.TextChoices):
        PLAYING = "playing", "Playing"
        DONE = "done", "Done"

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="question_set")
    number = models.PositiveSmallIntegerField()
    left_claim = models.ForeignKey(Claim, on_delete=models.PROTECT, related_name="+")
    right_claim = models.ForeignKey(Claim, on_delete=models.PROTECT, related_name="+")
    false_claim_index = models.PositiveSmallIntegerField()
    state = models.CharField(max_length=10, choices=State.choices, default=State.PLAYING)
    started_at = models.DateTimeField()
    deadline = models.DateTimeField(db_index=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    # The host ended it before its clock ran out (``ended_early``: its ``deadline`` moved to
    # that instant, the rounds still open timed out), or skipped it (``skipped``, early too:
    # the votes cast on it pay nothing and it counts on no scoreboard).
    ended_early = models.BooleanField(default=False)
    skipped = models.BooleanField(default=False)

    class Meta:
        ordering = ["room", "number"]
        constraints = [models.UniqueConstraint(fields=["room", "number"], name="room_question_once")]

    @property
    def claims(self) -> tuple[Claim, Claim]:
        return (self.left_claim, self.right_claim)

    @property
    def false_index(self) -> int:
        return self.false_claim_index


class RoomRound(models.Model):
    """A member's own round of a question: the solo round the services play and score."""

    question = models.ForeignKey(RoomQuestion, on_delete=models.CASCADE, related_name="plays")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    round = models.OneToOneField(Round, on_delete=models.CASCADE, related_name="room_play")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["question", "player"], name="room_round_once_per_player")]
