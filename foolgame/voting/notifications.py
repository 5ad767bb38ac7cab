"""News for authors: a voter their claim fooled, the time a voter needed on it, a like, a
moderator's action. Each is a stored :class:`Notification`, written by the service that
causes it in that service's transaction, and read once: by the notifications page, or
through the API, only ever by its own player.

Words matter here: a *wrong* vote fools the authors' voter and pays nobody; a *correct*
vote pays the authors the time the voter needed ("Hard to check", ledger kind ``fool``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet, Sum

from foolgame.claims.models import Claim
from foolgame.players.models import LedgerEntry, Notification
from foolgame.players.selectors import points_shown
from foolgame.core import clock
from foolgame.voting.models import NotificationCursor, Round, Vote

Kind, Detail = Notification.Kind, Notification.Detail

# Moderators' actions an author hears about; "keep" only clears flags, nothing of theirs changed.
NOTIFIED_ACTIONS = {"remove": Detail.REMOVE, "relabel": Detail.RELABEL, "edit_evidence": Detail.EDIT_EVIDENCE}
PAGE_SIZE = 50


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


# --- Writing: called by the services that cause the news ---------------------------------


def notifications_for_vote(*, round_: Round, vote: Vote, ledger: Iterable[LedgerEntry]) -> list[Notification]:
    """A vote's news for the round's authors, in the vote's transaction: a wrong vote fooled
    both of them (the true claim taken for the false one, the false one for true); a correct
    vote pays each of them a "Hard to check" share, one notification per ``fool`` ledger row."""
    return Notification.objects.bulk_create(vote_notifications(round_=round_, vote=vote, ledger=ledger))


def notifications_for_votes(*, paid: Iterable[tuple[Round, Vote, Iterable[LedgerEntry]]]) -> list[Notification]:
    """``notifications_for_vote`` for many votes (each with its round and ledger rows), in
    one insert."""
    return Notification.objects.bulk_create([note for round_, vote, ledger in paid for note in vote_notifications(round_=round_, vote=vote, ledger=ledger)])


def vote_notifications(*, round_: Round, vote: Vote, ledger: Iterable[LedgerEntry]) -> list[Notification]:
    """``notifications_for_vote``'s rows, not written yet: a caller paying many votes writes
    them all with one insert."""
    voter_id = round_.player_id
    notes: list[Notification] = []
    if not vote.correct:
        false_claim = round_.claims[round_.false_index]
        true_claim = round_.claims[1 - round_.false_index]
        for claim, detail in ((true_claim, Detail.PICKED_TRUE), (false_claim, Detail.BELIEVED_FALSE)):
            if claim.author_id != voter_id:
                notes.append(Notification(player_id=claim.author_id, kind=Kind.FOOLED, detail=detail, claim=claim, actor_id=voter_id))
    for entry in ledger:
        if entry.kind == LedgerEntry.Kind.FOOL and entry.player_id != voter_id:
            notes.append(Notification(player_id=entry.player_id, kind=Kind.FOOL_POINTS, claim=entry.claim, actor_id=voter_id, points=entry.amount))
    return notes


def notification_for_like(*, claim: Claim, voter: AbstractBaseUser, points: int) -> Notification | None:
    """A like's news for the liked claim's author (nobody hears of liking their own claim)."""
    if claim.author_id == voter.pk:
        return None
    return Notification.objects.create(player_id=claim.author_id, kind=Kind.LIKED, claim=claim, actor=voter, points=points)


def notification_for_moderation(*, claim: Claim, moderator: AbstractBaseUser, action: str, reason: str) -> Notification | None:
    """A moderator's remove, relabel or evidence edit, for the claim's author, with the reason."""
    detail = NOTIFIED_ACTIONS.get(action)
    if detail is None or claim.author_id == moderator.pk:
        return None
    return Notification.objects.create(
        player_id=claim.author_id,
        kind=Kind.MODERATED,
        detail=detail,
        claim=claim,
        actor=moderator,
        label=claim.label if action == "relabel" else "",
        note=reason,
    )


# --- Reading ------------------------------------------------------------------------------


def notification_message(note: Notification, *, show_points: bool = True) -> str:
    """The news in a player's words; without the points when the player's points are hidden
    (``players.selectors.points_shown``: a study's arm may hide them)."""
    def won(text: str) -> str:
        return f"{text} {_plural(note.points, 'point', 'points')} for you." if show_points else text

    if note.kind == Kind.FOOLED:
        if note.detail == Detail.PICKED_TRUE:
            return "You fooled a voter: they picked your true claim as the false one."
        return "You fooled a voter: they took your false claim for true."
    if note.kind == Kind.FOOL_POINTS:
        return won("Hard to check: a voter took their time on your claim before finding the false one.")
    if note.kind == Kind.LIKED:
        return won("A voter liked your claim.")
    if note.kind == Kind.MODEL_FOOLED:
        return won("Your claim fooled the model, and people have now confirmed its label.")
    if note.detail == Detail.REMOVE:
        return "A moderator removed your claim from the game."
    if note.detail == Detail.RELABEL:
        label = "true" if note.label == Claim.Label.SUPPORTS else "false"
        return f"A moderator changed your claim's label to {label}."
    return "A moderator changed the evidence sentences of your claim."


def notifications_of(*, player: AbstractBaseUser) -> QuerySet[Notification]:
    """The player's notifications, newest first (only ever their own)."""
    return Notification.objects.filter(player=player).select_related("claim").order_by("-id")


def notifications_unread_count(*, player: AbstractBaseUser) -> int:
    return Notification.objects.filter(player=player, read_at__isnull=True).count()


def notification_payload(note: Notification, *, show_points: bool = True) -> dict[str, Any]:
    return {
        "id": note.pk,
        "kind": note.kind,
        "message": notification_message(note, show_points=show_points),
        "claim": {"id": note.claim_id, "text": note.claim.text} if note.claim is not None else None,
        "points": note.points if show_points else None,
        "reason": note.note,
        "created": note.created.isoformat(),
        "read": note.read_at is not None,
    }


def player_notifications(*, player: AbstractBaseUser) -> dict[str, Any]:
    """Unread news, grouped by kind (as the OpenAPI schema documents), with the unread count and the
    unread notifications themselves, newest first (at most ``PAGE_SIZE``)."""
    cursor = NotificationCursor.objects.filter(player=player).first()
    unread = notifications_of(player=player).filter(read_at__isnull=True)
    groups = []
    fooled = unread.filter(kind=Kind.FOOLED)
    fooled_players = fooled.values("actor").distinct().count()
    if fooled_players:
        groups.append({"kind": "fooled", "count": fooled_players,
                       "message": f"{_plural(fooled_players, 'player was', 'players were')} fooled by your claims."})
    show_points = points_shown(player_id=player.pk)
    if show_points:
        points = unread.filter(kind=Kind.FOOL_POINTS).aggregate(total=Sum("points"))["total"] or 0
        if points:
            groups.append({"kind": "fool_points", "count": points,
                           "message": f"Hard to check: voters took their time on your claims, {_plural(points, 'point', 'points')} for you."})
    else:  # the points hidden: the news counted in claims voters took their time on
        slow = unread.filter(kind=Kind.FOOL_POINTS).count()
        if slow:
            groups.append({"kind": "fool_points", "count": slow,
                           "message": f"Hard to check: voters took their time on your claims {_plural(slow, 'time', 'times')}."})
    liked = unread.filter(kind=Kind.LIKED).count()
    if liked:
        groups.append({"kind": "liked", "count": liked,
                       "message": f"Your claims were liked {_plural(liked, 'time', 'times')}."})
    moderated = unread.filter(kind=Kind.MODERATED).count()
    if moderated:
        groups.append({"kind": "moderated", "count": moderated,
                       "message": f"A moderator acted on your claims {_plural(moderated, 'time', 'times')}."})
    items = list(unread[:PAGE_SIZE])
    return {
        "since": cursor.seen_until.isoformat() if cursor else None,
        "unread": unread.count(),
        "notifications": groups,
        "items": [notification_payload(note, show_points=show_points) for note in items],
    }


def notifications_mark_read(*, player: AbstractBaseUser, ids: Iterable[int] | None = None, up_to: int | None = None) -> int:
    """Mark the player's unread notifications read: all of them, or those with these ids,
    or those up to this id (with both: either). Ids of another player's notifications match nothing (no error,
    so ids are not probed). Returns how many were marked."""
    now = clock.now()
    unread = Notification.objects.filter(player=player, read_at__isnull=True)
    chosen = Q()
    if ids is not None:
        chosen |= Q(pk__in=list(ids))
    if up_to is not None:
        chosen |= Q(pk__lte=up_to)
    unread = unread.filter(chosen)
    marked = unread.update(read_at=now)
    NotificationCursor.objects.update_or_create(player=player, defaults={"seen_until": now})
    return marked
