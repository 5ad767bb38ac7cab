"""Reads for voting: which claims can be dealt, what a player may see of a round, standings."""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import F, Q, QuerySet, Sum, Window
from django.db.models.functions import Rank

from foolgame.claims.models import Claim
from foolgame.core import clock, hooks
from foolgame.core.queries import compiled_rows
from foolgame.players.models import LedgerEntry
from foolgame.voting.dealing import Pool
from foolgame.voting.models import Round, Vote


def claims_playable() -> QuerySet[Claim]:
    """Claims that may be dealt to anyone: active ones that no higher app has taken out of
    play (``hooks.play_rules``: moderation's, hidden by reports until reviewed, or flagged too
    hard and not kept by a moderator)."""
    claims = Claim.objects.filter(status=Claim.Status.ACTIVE)
    out = hooks.play_rules.get().claims_out_of_play()
    return claims if out is None else claims.exclude(out)


def claims_for_player(*, player: AbstractBaseUser, category: str | None = None, page_id: int | None = None) -> QuerySet[Claim]:
    """Claims this player may be dealt; their vote count (release plus the game's own) is
    the stored ``deal_votes`` column.

    Never the player's own claims, never one already dealt to them (voted on, timed out,
    reported or held in an open round), never one a higher app keeps from them
    (``claims_kept_from``: one they saw with its answer as a moderator, whose vote would be
    no evidence; one they checked); only claims of the player's pages when their game has its
    own (``hooks.player_settings``: a study's pages).
    """
    claims = claims_for_players(players=[player], category=category)
    pages = hooks.player_settings.get().page_ids_for(player_id=player.pk)
    if pages is not None:
        claims = claims.filter(page_id__in=pages)
    return claims if page_id is None else claims.filter(page_id=page_id)


def deal_pool_for_player(*, player: AbstractBaseUser, category: str | None = None, page_id: int | None = None) -> Pool:
    """``claims_for_player`` as the dealer's ``Pool``: a recipe from the player's id (and the
    page's), whose reads are compiled once, for the plain deal; a queryset (Django's reads)
    when a study gives the player pages of their own or the deal is asked from a category
    (a list, or a name matched without case, which SQLite escapes for ``LIKE``)."""
    if category or hooks.player_settings.get().page_ids_for(player_id=player.pk) is not None:
        return Pool(claims_for_player(player=player, category=category, page_id=page_id))
    users = get_user_model()

    def build(player: int, page: int | None = None) -> QuerySet[Claim]:
        claims = claims_for_players(players=[users(pk=player)])
        return claims if page is None else claims.filter(page_id=page)

    # The higher apps' rules are in the compiled SQL: named by who gives them (tests swap them).
    rules = ",".join(str(id(given)) for given in (hooks.play_rules.get(), *hooks.claims_kept_from.receivers))
    return Pool(build=build, name=f"solo:{rules}", player=player.pk, **({} if page_id is None else {"page": page_id}))


def claims_for_players(*, players: Sequence[AbstractBaseUser], category: str | None = None) -> QuerySet[Claim]:
    """Claims that may be dealt to every one of these players at once (a room's question):
    none written by any of them, none already dealt to any of them, none a higher app keeps
    from them (``claims_kept_from``: the claims they checked, the claims they saw with their
    answer as moderators, the claims of rooms they hosted without playing)."""
    claims = claims_playable().exclude(author__in=players).exclude(dealt__player__in=players)
    for kept in hooks.claims_kept_from.send(players=players):
        claims = claims.exclude(kept)
    if category:
        claims = claims.filter(Q(page__category__slug=category) | Q(page__category__name__iexact=category))
    return claims


def leaderboard(*, kind: str = "total", limit: int = 50) -> list[dict]:
    """Players ranked by points of one kind (or in total), summed from the ledger.
    Equal points share a rank; system players (the release's author), players a higher app
    holds (``hooks.play_rules``: moderation's improbable players, until a moderator clears
    them), guests (a nickname for live rooms, until claimed with a password) and players a
    higher app keeps off the boards (``hooks.player_settings``: a study's participants) are
    left out."""
    entries = LedgerEntry.objects.exclude(player__username__in=settings.FM2["SYSTEM_PLAYERS"])
    held = hooks.play_rules.get().players_held(prefix="player__")
    if held is not None:
        entries = entries.exclude(held)
    off = hooks.player_settings.get().players_off_boards(prefix="player__")
    if off is not None:
        entries = entries.exclude(off)
    entries = entries.exclude(player__guest__isnull=False)
    if kind != "total":
        entries = entries.filter(kind=kind)
    rows = (
        entries.values("player_id", "player__username")
        .annotate(points=Sum("amount"))
        .annotate(rank=Window(Rank(), order_by=F("points").desc()))
        .order_by("rank", "player__username")[:limit]
    )
    return [{"rank": r["rank"], "username": r["player__username"], "points": r["points"]} for r in rows]


def player_past_rounds(*, player: AbstractBaseUser) -> QuerySet[Round]:
    """The player's finished rounds that may have their answer out now, newest first: voted,
    timed out, reported, and given up from their ``answer_at`` on (never an open or a voided
    round). A superset: the caller keeps the ones ``payloads.answer_out`` says (a room's
    round waits for its question; a solo report for its deadline)."""
    return (
        Round.objects.filter(player=player)
        .filter(
            Q(state__in=(Round.State.VOTED, Round.State.TIMED_OUT, Round.State.REPORTED))
            | Q(state=Round.State.FORFEITED, answer_at__lte=clock.now())
        )
        .select_related("left_claim__page", "right_claim__page", "vote", *hooks.round_groups.get().related)
        .defer("left_claim__release_retrieved", "right_claim__release_retrieved")
        .order_by("-ended_at", "-id")
    )


def player_rounds(*, player: AbstractBaseUser) -> QuerySet[Round]:
    return Round.objects.filter(player=player).select_related("left_claim__page", "right_claim__page")


def system_players() -> QuerySet:
    return get_user_model().objects.filter(username__in=settings.FM2["SYSTEM_PLAYERS"])


def player_voted_a_round(*, player_id: int) -> bool:
    """Has the player finished a round with a vote, solo or in a room? (voting's answer to
    ``rounds_voted``: the first-run tutorial finishes itself once they have.)"""
    return Vote.objects.filter(round__player_id=player_id).exists()


def player_has_open_round_on_page(*, player_id: int, page_id: int) -> bool:
    """Is the player in a round (ready or playing) where either claim is about the page?
    (voting's answer to ``page_in_play``.)"""
    return (
        Round.objects.filter(player_id=player_id, state__in=Round.OPEN_STATES)
        .filter(Q(left_claim__page_id=page_id) | Q(right_claim__page_id=page_id))
        .exists()
    )


STREAK_CHUNK = 100


def player_streak(*, player_id: int) -> int:
    """The player's current streak: how many of their latest solo rounds in a row they voted
    right. A wrong vote, a timeout or a started round given up ends it; rounds ended by a
    report or a moderator, and rounds given up before their start, are left out. A room's
    rounds are the room's game and are left out too (and a room's answer may not be out)."""
    def finished() -> QuerySet[Round]:
        return (
            Round.objects.filter(hooks.round_groups.get().solo(), player_id=player_id)
            .filter(Q(state__in=(Round.State.VOTED, Round.State.TIMED_OUT)) | Q(state=Round.State.FORFEITED, started_at__isnull=False))
            .order_by("-ended_at", "-id")
            .values_list("vote__correct", flat=True)
        )

    states = [Round.State.VOTED.value, Round.State.TIMED_OUT.value, Round.State.FORFEITED.value]
    streak = 0
    while True:
        # Read after every vote (its result): compiled once per chunk (``compiled_rows``).
        rows = compiled_rows(f"player_streak:{streak}:{STREAK_CHUNK}", lambda: finished()[streak : streak + STREAK_CHUNK], [player_id, *states])
        chunk = [row[0] for row in rows]
        for correct in chunk:
            if not correct:
                return streak
            streak += 1
        if len(chunk) < STREAK_CHUNK:
            return streak
