"""Dealing a fair pair: one true and one false claim, same page when possible, else same
category, least-voted first, or near a rated player's level. Reads only: the round services
(``round_create``) and the rooms service deal with these under their own locks."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import models

from foolgame.claims.models import Claim
from foolgame.core.queries import prepared_rows
from foolgame.players.models import PlayerRating
from scoring.ratings import DEFAULT_RATING, Rating, pair_target


@dataclass(frozen=True)
class Candidate:
    id: int
    page_id: int
    category_id: int | None
    label: str
    votes: int
    rating: float | None
    tiebreak: float


def _pick_pair(candidates: list[Candidate]) -> tuple[Candidate, Candidate] | None:
    """Over a whole pool: the least-voted claim that has a partner of the other label on its
    page, else in its category; its partner is the least-voted such claim. Ties break at
    random. The dealer's last resort (see ``deal_pair``)."""
    ordered = sorted(candidates, key=lambda c: (c.votes, c.tiebreak))
    by_page: dict[tuple[int, str], list[Candidate]] = {}
    by_category: dict[tuple[int, str], list[Candidate]] = {}
    for c in ordered:
        by_page.setdefault((c.page_id, c.label), []).append(c)
        if c.category_id is not None:
            by_category.setdefault((c.category_id, c.label), []).append(c)
    best: tuple[tuple[int, int, float], tuple[Candidate, Candidate]] | None = None
    for anchor in ordered:
        same_page = by_page.get((anchor.page_id, _other_label(anchor.label)))
        if same_page:
            return anchor, same_page[0]
        if best is None and anchor.category_id is not None:
            same_category = by_category.get((anchor.category_id, _other_label(anchor.label)))
            if same_category:
                best = ((1, anchor.votes, anchor.tiebreak), (anchor, same_category[0]))
    return best[1] if best else None


# How many of the least-voted claims open to a player are tried as the first claim of a
# pair; how many claims of their pages are read to find a partner; how many of a category's
# least-voted claims of one label a partner is drawn from (the least-voted of them).
DEAL_WINDOW = 32


DEAL_PAGE_ROWS = 500


DEAL_CATEGORY_ROWS = 8


DEAL_FIELDS = ("id", "page_id", "page__category_id", "label", "deal_votes", "rating")


class Pool:
    """The claims a deal may draw from, and how the dealer reads them.

    Either a queryset (``Pool(claims)``: each read is Django's, built and compiled afresh),
    or a recipe: ``build(**values)`` makes the queryset from a few values (a player's id),
    and each of the dealer's reads is built and compiled once per process and shape
    (``core.queries.prepared_rows``), then only run with the values. A player's pool is half
    a dozen subqueries (own claims, dealt claims, the higher apps' exclusions), and building
    and compiling it for each of a deal's four to six reads was the largest cost of a deal,
    itself the largest of the REST mix. ``build`` may only put the values into lookups: it
    sees stand-ins the first time."""

    def __init__(self, claims: models.QuerySet[Claim] | None = None, *, build: Callable[..., models.QuerySet[Claim]] | None = None,
                 name: str = "", **values: Any) -> None:
        if (claims is None) == (build is None):
            raise TypeError("a Pool is a queryset or a recipe, one of the two")
        self.claims, self.build, self.name, self.values = claims, build, name, values

    def rows(self, read: str, query: Callable[..., models.QuerySet[Any]], **values: Any) -> list[tuple[Any, ...]]:
        """The rows of ``query(pool's claims, **values)``; ``read`` names the read (with the
        pool's name, the prepared query's)."""
        if self.build is None:
            return [tuple(row) for row in query(self.claims, **values)]
        recipe, own = self.build, list(self.values)

        def build(**given: Any) -> models.QuerySet[Any]:
            return query(recipe(**{key: given[key] for key in own}), **{key: given[key] for key in values})

        return prepared_rows(f"deal:{self.name}:{read}", build, **self.values, **values)


def as_pool(pool: Pool | models.QuerySet[Claim]) -> Pool:
    return pool if isinstance(pool, Pool) else Pool(pool)


def _other_label(label: str) -> str:
    return Claim.Label.REFUTES if label == Claim.Label.SUPPORTS else Claim.Label.SUPPORTS


def candidates(rows: Any) -> list[Candidate]:
    return [Candidate(*row, tiebreak=random.random()) for row in rows]


def _weighted_shuffle(window: list[Candidate], halvings: Callable[[Candidate], float]) -> list[Candidate]:
    """The window in a random order: each claim draws an exponential waiting time, doubled
    for each of its ``halvings`` (0 for the window's most wanted claim), soonest first. A
    claim's chance to come first is proportional to ``2 ** -halvings``."""
    keys = {c.id: random.expovariate(1.0) * 2.0 ** min(halvings(c), 60.0) for c in window}
    return sorted(window, key=lambda c: keys[c.id])


def shuffled_least_voted_first(window: list[Candidate]) -> list[Candidate]:
    """The window in a random order that favours the least-voted: each claim draws an
    exponential waiting time, doubled for each vote it has above the window's least-voted,
    and the soonest comes first (a weighted shuffle, weights ``2 ** -(votes - floor)``).
    Consecutive players are not handed the same claims in the same order (issue 36: a
    window read in vote order dealt every new account the same least-voted pairs, so one
    account could forfeit them and another vote on them knowing the answers), while a claim
    behind on votes is still dealt about twice as often as one a vote ahead of it."""
    if not window:
        return []
    floor = min(c.votes for c in window)
    return _weighted_shuffle(window, lambda c: c.votes - floor)


# Rating points (1500 scale) a level deal's claim is further from the target than the
# window's nearest for its chance to come first to halve: about a quarter of a logit
# (a 60% pair solved 57% of the time), well within a claim rating's usual deviation.
DEAL_LEVEL_HALVING = 50.0


def shuffled_nearest_first(window: list[Candidate], target: float) -> list[Candidate]:
    """A level window in a random order that favours the claims nearest ``target``: the
    weighted shuffle of ``shuffled_least_voted_first``, weights ``2 ** -(distance - nearest)
    / DEAL_LEVEL_HALVING``. Read nearest first, the level deal handed every player of one
    rating the same claims in the same order (issue 36); now two such players draw apart,
    and a claim 50 points further from the target than the nearest is still dealt about half
    as often as it."""
    if not window:
        return []
    nearest = min(abs(c.rating - target) for c in window)
    return _weighted_shuffle(window, lambda c: (abs(c.rating - target) - nearest) / DEAL_LEVEL_HALVING)


def _least_voted(candidates: list[Candidate]) -> Candidate:
    return min(candidates, key=lambda c: (c.votes, c.tiebreak))


def deal_window(pool: Pool | models.QuerySet[Claim]) -> list[Candidate]:
    """The ``DEAL_WINDOW`` least-voted claims of the pool, read along the (deal_votes, id)
    index: the claims at the lowest vote count are entered at a random id and read round
    from there, so that ties rotate among players; when that level holds fewer, the next
    levels follow in (votes, id) order. Bounded reads: a LIMIT on an index walk each."""
    pool = as_pool(pool)
    first = pool.rows("floor", lambda claims: claims.order_by("deal_votes", "id").values_list("deal_votes", "id")[:1])
    if not first:
        return []
    floor, lowest = first[0]
    top = prepared_rows("deal_top_claim", lambda: Claim.objects.order_by("-id").values_list("id")[:1])
    # From the floor's lowest id, not from 0: with the tied claims' ids far above 0 (a
    # database that has seen many claims) a pivot from 0 fell below them nearly every time,
    # and every deal started at the same end.
    pivot = random.randint(lowest, max(top[0][0] if top else lowest, lowest))
    rows = pool.rows(
        "floor_from_pivot",
        lambda claims, floor, pivot: claims.filter(deal_votes=floor, id__gte=pivot).order_by("id").values_list(*DEAL_FIELDS)[:DEAL_WINDOW],
        floor=floor,
        pivot=pivot,
    )
    # The reads below take what is missing of a window; their LIMIT is the whole window
    # (a LIMIT is written in the SQL, which a prepared read keeps): the rows past it are cut here.
    if len(rows) < DEAL_WINDOW:
        rows += pool.rows(
            "floor_below_pivot",
            lambda claims, floor, pivot: claims.filter(deal_votes=floor, id__lt=pivot).order_by("id").values_list(*DEAL_FIELDS)[:DEAL_WINDOW],
            floor=floor,
            pivot=pivot,
        )[: DEAL_WINDOW - len(rows)]
    if len(rows) < DEAL_WINDOW:
        rows += pool.rows(
            "above_floor",
            lambda claims, floor: claims.filter(deal_votes__gt=floor).order_by("deal_votes", "id").values_list(*DEAL_FIELDS)[:DEAL_WINDOW],
            floor=floor,
        )[: DEAL_WINDOW - len(rows)]
    return candidates(rows)


def _level_window(pool: Pool | models.QuerySet[Claim], target: float) -> list[Candidate]:
    """The ``DEAL_WINDOW`` rated claims of the pool nearest ``target`` (1500 scale), nearest
    first: one index walk up from it and one down, a LIMIT each (``claim_status_rating``)."""
    pool = as_pool(pool)
    target = float(target)
    up = pool.rows(
        "level_up", lambda claims, target: claims.filter(rating__gte=target).order_by("rating", "id").values_list(*DEAL_FIELDS)[:DEAL_WINDOW], target=target
    )
    down = pool.rows(
        "level_down", lambda claims, target: claims.filter(rating__lt=target).order_by("-rating", "-id").values_list(*DEAL_FIELDS)[:DEAL_WINDOW], target=target
    )
    return sorted(candidates([*up, *down]), key=lambda c: (abs(c.rating - target), c.tiebreak))[:DEAL_WINDOW]


def _nearest(wanted: float) -> Callable[[list[Candidate]], Candidate]:
    """A partner picker: the claim whose rating is nearest ``wanted`` (an unrated claim
    counts as a newcomer's 1500), ties at random."""

    def pick(candidates: list[Candidate]) -> Candidate:
        return min(candidates, key=lambda c: (abs((c.rating if c.rating is not None else DEFAULT_RATING) - wanted), c.tiebreak))

    return pick


def pair_from(
    pool: Pool | models.QuerySet[Claim], anchors: list[Candidate], partner: Callable[[Candidate], Callable[[list[Candidate]], Candidate]]
) -> tuple[Candidate, Candidate] | None:
    """The first of ``anchors`` (in their order) with a partner of the other label on its
    page, else in its category; ``partner(anchor)`` picks among the candidates. Bounded
    reads: the anchors' pages (``DEAL_PAGE_ROWS``), then a few rows per category."""
    pool = as_pool(pool)
    on_pages: dict[int, Candidate] = {c.id: c for c in anchors}
    # Unordered, so that the read goes through the page index; the picker chooses here. The
    # pages are padded with ids no page has to a power of two: a prepared read per length.
    pages = sorted({c.page_id for c in anchors})
    pages += [-n for n in range(_padded(len(pages)) - len(pages))]
    page_rows = pool.rows(
        "pages", lambda claims, pages: claims.filter(page_id__in=pages).order_by().values_list(*DEAL_FIELDS)[:DEAL_PAGE_ROWS], pages=pages
    )
    for c in candidates(page_rows):
        on_pages.setdefault(c.id, c)
    by_page: dict[tuple[int, str], list[Candidate]] = {}
    for c in on_pages.values():
        by_page.setdefault((c.page_id, c.label), []).append(c)
    for anchor in anchors:
        partners = by_page.get((anchor.page_id, _other_label(anchor.label)))
        if partners:
            return anchor, partner(anchor)(partners)
    tried: set[tuple[int, str]] = set()
    for anchor in anchors:
        if anchor.category_id is None or (anchor.category_id, _other_label(anchor.label)) in tried:
            continue
        tried.add((anchor.category_id, _other_label(anchor.label)))
        rows = pool.rows(
            "category",
            lambda claims, category, label: claims.filter(page__category_id=category, label=label)
            .order_by("deal_votes", "id")
            .values_list(*DEAL_FIELDS)[:DEAL_CATEGORY_ROWS],
            category=anchor.category_id,
            label=str(_other_label(anchor.label)),
        )
        partners = candidates(rows)
        if partners:
            return anchor, partner(anchor)(partners)
    return None


def deal_pair(pool: Pool | models.QuerySet[Claim], *, level: float | None = None) -> tuple[Candidate, Candidate] | None:
    """A fair pair from the pool without reading the pool (the policy is in docs/rounds.md,
    "How a round is dealt").

    With a ``level`` (a claim difficulty on the 1500 scale, ``scoring.ratings.pair_target``),
    the first claim is drawn among the ``DEAL_WINDOW`` rated claims nearest it, the nearer
    the likelier (``shuffled_nearest_first``), its partner the one of the other label nearest
    ``2 * level - first`` (so the pair's sum is on target) on its page, else among its
    category's least-voted. Without one, or when no pair is found near the
    level: the window's claims are tried in a random order that favours the least-voted
    (``shuffled_least_voted_first``), each partnered with the least-voted of its page, else
    of its category. Only when no
    claim of a full window has a partner even in its category is the whole pool read, with
    ``_pick_pair``: a player with almost nothing left to play."""
    pool = as_pool(pool)
    if level is not None:
        window = shuffled_nearest_first(_level_window(pool, level), level)
        pair = pair_from(pool, window, lambda anchor: _nearest(2 * level - anchor.rating))
        if pair is not None:
            return pair
    window = deal_window(pool)
    if not window:
        return None
    pair = pair_from(pool, shuffled_least_voted_first(window), lambda anchor: _least_voted)
    if pair is not None or len(window) < DEAL_WINDOW:
        return pair  # a short window was the whole pool: every claim was tried
    return _pick_pair(candidates(pool.rows("all", lambda claims: claims.values_list(*DEAL_FIELDS))))


def _padded(count: int) -> int:
    """The power of two at or above ``count`` (1 for 0)."""
    return 1 << max(0, count - 1).bit_length()


def deal_level(player: AbstractBaseUser) -> float | None:
    """The claim difficulty this deal looks for, or None for a least-voted deal: a share
    ``DEAL_LEVEL_SHARE`` of the deals of a player with a rating worth the name."""
    options = settings.FM2_RATINGS
    skill = prepared_rows(
        "deal_level",
        lambda player, votes: PlayerRating.objects.filter(player_id=player, votes__gte=votes).values_list("rating", "deviation", "volatility")[:1],
        player=player.pk,
        votes=int(options["DEAL_LEVEL_MIN_VOTES"]),
    )
    if not skill or random.random() >= options["DEAL_LEVEL_SHARE"]:
        return None
    return pair_target(Rating(*skill[0]), options["DEAL_SOLVE_CHANCE"])
