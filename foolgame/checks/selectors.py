"""Reads of validation: which claims a player may check, which labels are settled (the hidden
gold items), and each checker's record on them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, F, Max, Q, QuerySet
from django.db.models.functions import Coalesce

from foolgame.checks.models import Check, CheckTally
from foolgame.claims.models import Claim
from foolgame.core import hooks
from foolgame.moderation.models import AuditRecord
from foolgame.voting.models import Round
from scoring.validation import LABELS


def _config() -> dict[str, Any]:
    return settings.FM2_CHECKS


def claims_checked_by(*, players: Sequence[AbstractBaseUser]) -> Q:
    """The claims any of these players checked (or holds a check of): never dealt to them in a
    round, since they read its evidence (``hooks.claims_kept_from``)."""
    return Q(pk__in=Check.objects.filter(player__in=players).values("claim_id"))


def settled() -> Q:
    """Claims whose label is settled, the hidden gold items: a release claim that at least
    GOLD_MIN_VOTES voters of the original game judged, GOLD_MIN_AGREEMENT or more of them as its
    label says (a correct vote on a claim agrees with its label), or a claim a moderator kept
    or relabelled (confirmed)."""
    config = _config()
    release = Q(release_total_votes__gte=max(1, config["GOLD_MIN_VOTES"])) & Q(
        release_correct_votes__gte=F("release_total_votes") * config["GOLD_MIN_AGREEMENT"]
    )
    confirmed = Q(pk__in=AuditRecord.objects.filter(action__in=["keep", "relabel"]).values("claim_id"))
    return release | confirmed


def in_open_rounds() -> Q:
    """Claims in any player's round that is still open (dealt or playing, a room's included):
    a check shows a claim's gold evidence, so none of them is dealt as a check to anyone (a
    colluder's check would hand the evidence to the round's player)."""
    open_rounds = Round.objects.filter(state__in=Round.OPEN_STATES)
    return Q(pk__in=open_rounds.values("left_claim_id")) | Q(pk__in=open_rounds.values("right_claim_id"))


def claims_to_check(*, player: AbstractBaseUser) -> QuerySet[Claim]:
    """Active claims this player may be dealt for checking: not written by them, never dealt
    to them in a round (voting's dealt claims), not seen with its answer as a moderator, not
    checked by them before, in no player's open round, and with gold evidence to show; only
    claims of the player's pages when their game has its own (``hooks.player_settings``: a
    study's pages)."""
    claims = (
        Claim.objects.filter(status=Claim.Status.ACTIVE, gold_links__isnull=False)
        .exclude(author=player)
        .exclude(dealt__player=player)
        .exclude(moderation_sightings__moderator=player)
        .exclude(checks__player=player)
        .exclude(in_open_rounds())
        .distinct()
    )
    pages = hooks.player_settings.get().page_ids_for(player_id=player.pk)
    return claims if pages is None else claims.filter(page_id__in=pages)


def needing_labels(claims: QuerySet[Claim]) -> QuerySet[Claim]:
    """Those of ``claims`` with fewer than LABELS_NEEDED labels, each annotated ``labels``."""
    return claims.annotate(labels=Coalesce("validation__labels", 0)).filter(labels__lt=_config()["LABELS_NEEDED"])


def checker_records(*, player_ids: Iterable[int]) -> dict[int, tuple[int, int]]:
    """``{player id: (gold items answered right, gold items answered)}``, over the answers
    their tallies counted (an answer moves the record only with its batch, so the weight it
    gives, and ``counting``, say nothing of a single answer). An answer is a label (FLAWED on
    a gold item counts as a wrong one: the claim was settled); a gold item left to expire does
    not count."""
    rows = (
        Check.objects.filter(player_id__in=set(player_ids), answered_at__isnull=False, tally__isnull=False)
        .exclude(settled_label="")
        .values("player_id")
        .annotate(right=Count("pk", filter=Q(correct=True)), seen=Count("pk"))
    )
    return {row["player_id"]: (row["right"], row["seen"]) for row in rows}


def last_tallies() -> dict[int, tuple[int, int]]:
    """``{player id: (record right, record seen)}`` as each checker's last tally left it."""
    latest = CheckTally.objects.values("player_id").annotate(number=Max("number"))
    wanted = {(row["player_id"], row["number"]) for row in latest}
    rows = CheckTally.objects.filter(number__in={n for _, n in wanted}).values_list("player_id", "number", "record_right", "record_seen")
    return {player: (right, seen) for player, number, right, seen in rows if (player, number) in wanted}


def claim_labels(*, claim_id: int) -> list[tuple[int, str]]:
    """``(checker id, label)`` of the claim's answered checks that carry a label."""
    return list(
        Check.objects.filter(claim_id=claim_id, answered_at__isnull=False, label__in=LABELS).order_by("pk").values_list("player_id", "label")
    )


def untallied(*, player: AbstractBaseUser) -> QuerySet[Check]:
    """The player's answered checks that no tally has counted yet."""
    return Check.objects.filter(player=player, answered_at__isnull=False, tally__isnull=True)


def open_check(*, player: AbstractBaseUser, now: Any) -> Check | None:
    """The player's check dealt and not yet answered nor expired, if any (one at most)."""
    return Check.objects.select_related("claim__page").filter(player=player, answered_at__isnull=True, expires_at__gt=now).first()
