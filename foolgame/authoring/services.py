"""Authoring: handing out write tasks and turning a task into a claim, checked by the server.

The original game checked its rules in the browser only; here every rule is checked on
save, each with its own error code, and a refused claim writes nothing.
"""

from __future__ import annotations

import math
import random
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from foolgame.core import clock, events, hooks
from foolgame.core.caches import held_lock
from foolgame.core.errors import ServiceError
from foolgame.authoring import fluency, giveaway, rules, selectors
from foolgame.authoring.models import GiveawayModel, WriteTask
from foolgame.claims.models import Claim, ClaimGold
from foolgame.evidence import selectors as evidence_selectors
from foolgame.evidence import services as evidence
from foolgame.pages.models import Category, Page, Sentence
from foolgame.players.models import LedgerEntry
from scoring.word_order import OrderRule
from foolgame.core.throttle import throttle_bump

# How far one label may lead in a pool before the other is assigned whenever it can be.
BALANCE_BAND = 0.05


def _config(key: str, default: Any) -> Any:
    return settings.FM2.get(key, default)


# --- Write tasks -------------------------------------------------------------------------------


def _drift(balance: selectors.Balance, veracity: str) -> float:
    """How far past 50% the given label would stand in the pool once one more is added."""
    after = balance.plus(veracity)
    share = after.share_true if veracity == WriteTask.Veracity.TRUE else 1 - after.share_true
    return share - 0.5


def veracity_choose(
    *, overall: selectors.Balance, category: selectors.Balance | None, rng: random.Random | None = None
) -> str:
    """TRUE or FALSE, whichever keeps the pool and the page's category nearer 50% TRUE.

    A label that would lead past 55% in either pool is given only when the other one
    would too (both pools pulling opposite ways); otherwise the label that leaves the
    worse-balanced pool closer to even wins, the category first (it is the smaller pool,
    and rounds pair claims within a category), and a true tie is a coin toss.
    """
    rng = rng or random.Random(random.random())  # the process's generator seeds it: a seeded game replays
    pools = [overall] if category is None else [category, overall]

    def key(veracity: str) -> tuple[bool, float, float, float]:
        drifts = [_drift(pool, veracity) for pool in pools]
        past_band = any(drift > BALANCE_BAND + 1e-9 for drift in drifts)
        deviations = [abs(drift) for drift in drifts]
        return (past_band, max(deviations), deviations[0], rng.random())

    return min(WriteTask.Veracity.values, key=key)


def write_task_create(
    *,
    player: AbstractBaseUser,
    category: str | None = None,
    page_id: int | None = None,
    now: datetime | None = None,
    rng: random.Random | None = None,
) -> WriteTask:
    """A page and a veracity for ``player``: the page most in need of claims, the label the
    player's own claims and tasks lack.

    With ``page_id`` the player chose the page (the topic menu, "write about this page"):
    that page, if it exists (404 ``unknown_page``) and can be written about, i.e. has at
    least two live sentences (409 ``page_not_writable``); ``category`` is then ignored.
    Refused (409 ``too_many_open_tasks``) while the player holds ``MAX_OPEN_WRITE_TASKS``
    unexpired, unused tasks. Locking: the player's row, for the whole hand-out.
    """
    if page_id is not None:
        category = None
        if not Page.objects.filter(pk=page_id).exists():
            raise ServiceError("unknown_page", f"There is no page {page_id}.", status_code=404)
    elif category and not Category.objects.filter(slug=category).exists() and not Category.objects.filter(name__iexact=category).exists():
        raise ServiceError("unknown_category", f"There is no category {category!r}.", status_code=404)
    now = now or clock.now()
    limit = _config("MAX_OPEN_WRITE_TASKS", 3)
    with transaction.atomic():
        # The player's row is locked for the whole hand-out, as round_create does, so two
        # requests of one player run one after the other and the cap holds.
        get_user_model().objects.select_for_update().get(pk=player.pk)
        if selectors.open_write_tasks().filter(player=player).count() >= limit:
            raise ServiceError(
                "too_many_open_tasks",
                f"You already hold {limit} open write task{'' if limit == 1 else 's'}: "
                "write a claim for one (or let it expire) before taking another.",
                status_code=409,
            )
        allowed = hooks.player_settings.get().page_ids_for(player_id=player.pk)  # a study's pages, or None for any
        if page_id is not None:
            if allowed is not None and page_id not in allowed:
                raise ServiceError("no_page", "This page is not one of the pages you write about here; take a task without a page.", status_code=404)
            page = selectors.pages_needing_claims().filter(pk=page_id).first()
            if page is None:
                raise ServiceError(
                    "page_not_writable",
                    "This page has too few sentences to write a claim about; choose another page.",
                    status_code=409,
                )
        else:
            pages = selectors.pages_needing_claims(category=category)
            page = (pages if allowed is None else pages.filter(pk__in=allowed)).first()
        if page is None:
            raise ServiceError("no_page", "No page is ready for writing in this choice yet.", status_code=404)
        # Balanced on the player's own claims and tasks, overall and in the page's category:
        # balancing on the pool would tell a writer which label the pool lacks, i.e. something
        # of the labels of claims they never saw (tests/test_noninterference.py). Every writer
        # kept near 50% keeps the claims they write near 50%.
        veracity = veracity_choose(
            overall=selectors.veracity_balance(author=player),
            category=selectors.veracity_balance(category_id=page.category_id, author=player) if page.category_id else None,
            rng=rng,
        )
        write_by = now + timedelta(seconds=settings.FM2["WRITE_TASK_SECONDS"])
        return WriteTask.objects.create(
            player=player,
            page=page,
            veracity=veracity,
            created=now,
            write_by=write_by,
            expires_at=write_by + timedelta(seconds=settings.FM2["WRITE_TASK_GRACE_SECONDS"]),
        )


# --- Claims --------------------------------------------------------------------------------------


@dataclass
class Problem:
    code: str
    field: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "field": self.field, "message": self.message}


@dataclass
class CheckedClaim:
    """A claim that passed every blocking rule, with the task row locked for the write."""

    task: WriteTask
    text: str
    gold: list[Sentence]
    warnings: list[dict[str, str]] = field(default_factory=list)


def _refuse(problems: list[Problem], *, status_code: int = 400) -> ServiceError:
    first = problems[0]
    message = first.message if len(problems) == 1 else " ".join(p.message for p in problems)
    return ServiceError(first.code, message, status_code=status_code, details=[p.as_dict() for p in problems])


def _check_task(*, author: AbstractBaseUser, task_id: Any, now: datetime, lock: bool = True) -> WriteTask:
    # Only the task row: the page row is locked on its own, by name, in check_claim_create.
    # A draft check (lock=False) reads without a lock: it writes nothing.
    tasks = WriteTask.objects.select_for_update(of=("self",)) if lock else WriteTask.objects.all()
    task = tasks.select_related("page").filter(pk=task_id).first() if isinstance(task_id, int) else None
    if task is None:
        raise _refuse([Problem("task_not_found", "task", "There is no such write task.")], status_code=404)
    if task.player_id != author.pk:
        raise _refuse([Problem("task_not_yours", "task", "This write task was given to another player.")], status_code=403)
    if task.used_at is not None:
        raise _refuse([Problem("task_used", "task", "This write task has already been used for a claim.")], status_code=409)
    if task.expires_at <= now:
        raise _refuse([Problem("task_expired", "task", "This write task has expired; take a new one.")], status_code=410)
    return task


def _check_text(raw: Any) -> tuple[str, list[Problem]]:
    if not isinstance(raw, str):
        return "", [Problem("text_invalid", "text", "The claim must be a string.")]
    text = rules.normalise(raw)
    low, high = settings.FM2["CLAIM_MIN_WORDS"], settings.FM2["CLAIM_MAX_WORDS"]
    max_chars = _config("CLAIM_MAX_CHARS", 600)
    problems: list[Problem] = []
    if not text:
        problems.append(Problem("text_empty", "text", "Write a claim."))
    elif len(text) > max_chars:
        problems.append(Problem("text_too_long", "text", f"A claim is at most {max_chars} characters; this one has {len(text)}."))
    else:
        words = rules.word_count(text)
        if words < low:
            problems.append(Problem("text_too_short", "text", f"A claim has at least {low} words; this one has {words}."))
        elif words > high:
            problems.append(Problem("text_too_long", "text", f"A claim has at most {high} words; this one has {words}."))
    if text and not problems and not rules.has_real_words(
        text,
        min_words=_config("CLAIM_MIN_REAL_WORDS", 3),
        min_real_share=_config("CLAIM_MIN_REAL_WORD_SHARE", 0.5),
        min_letter_share=_config("CLAIM_MIN_LETTER_SHARE", 0.5),
    ):
        problems.append(Problem("text_no_words", "text", "Write the claim in words: a sentence a reader can read."))
    elif text and not problems and not rules.reads_as_sentence(text, rule=_order_rule()) and not fluency.learnt_vouches_for(text):
        problems.append(
            Problem(
                "not_a_sentence",
                "text",
                "The claim does not read as a sentence: its words could as well come in any order. Write it as a sentence.",
            )
        )
    elif text and not problems:
        reason = rules.fluency_problem(text) or fluency.learnt_fluency_problem(text)
        if reason is not None:
            problems.append(
                Problem("not_fluent", "text", f"The claim does not read as a claim: {reason}. Write it as a sentence a person would say.")
            )
    controls = rules.control_characters(text)
    if controls:
        problems.append(Problem("text_control_characters", "text", f"The claim holds control characters ({', '.join(controls[:5])})."))
    return text, problems


def _order_rule() -> OrderRule:
    return OrderRule(
        base=_config("CLAIM_SENTENCE_Z_BASE", 1.0),
        per_word=_config("CLAIM_SENTENCE_Z_PER_WORD", 0.15),
        cap=_config("CLAIM_SENTENCE_Z_CAP", 3.5),
    )


def _check_claim_rate(*, author: AbstractBaseUser, now: datetime) -> None:
    """At most ``CLAIMS_PER_WINDOW`` claims per ``CLAIM_WINDOW_SECONDS`` and ``CLAIMS_PER_DAY``
    per day (429 ``claim_rate_limited``, Retry-After in seconds), counted from the stored claims,
    removed ones too. The caller holds the author's row lock, so two saves cannot both pass."""
    limits = ((_config("CLAIMS_PER_WINDOW", 12), _config("CLAIM_WINDOW_SECONDS", 600)), (_config("CLAIMS_PER_DAY", 120), 24 * 3600))
    for limit, seconds in limits:
        since = now - timedelta(seconds=seconds)
        recent = list(
            Claim.objects.filter(author=author, created__gt=since).order_by("-created").values_list("created", flat=True)[:limit]
        )
        if len(recent) >= limit:
            again = recent[-1] + timedelta(seconds=seconds)
            wait = max(1, math.ceil((again - now).total_seconds()))
            span = f"{seconds // 3600} h" if seconds >= 3600 else f"{seconds // 60} min"
            raise ServiceError(
                "claim_rate_limited",
                f"You saved {limit} claims in the last {span}; you can save another in {wait} s (at {again.isoformat(timespec='seconds')}).",
                status_code=429,
                retry_after=wait,  # the Retry-After header; details keep this endpoint's documented shape
            )


def _check_gold(raw: Any, page: Page) -> tuple[list[Sentence], list[Problem]]:
    if not isinstance(raw, list) or not all(isinstance(pk, int) and not isinstance(pk, bool) for pk in raw):
        return [], [Problem("gold_invalid", "gold_sentence_ids", "Gold sentences are given as a list of sentence ids.")]
    ids = list(raw)
    if not 1 <= len(ids) <= 2:
        return [], [Problem("gold_count", "gold_sentence_ids", f"Mark 1 or 2 gold sentences, not {len(ids)}.")]
    if len(set(ids)) != len(ids):
        return [], [Problem("gold_duplicate", "gold_sentence_ids", "The same gold sentence is marked twice.")]
    found = {s.pk: s for s in Sentence.objects.filter(pk__in=ids, page=page, retired=False)}
    if len(found) != len(ids):
        return [], [Problem("gold_not_on_page", "gold_sentence_ids", "Every gold sentence must be a sentence of the task's page.")]
    return [found[pk] for pk in ids], []


def _warnings(*, task: WriteTask, text: str) -> list[dict[str, str]]:
    page = task.page
    found: list[Problem] = []
    if rules.opens_with_pronoun(text):
        found.append(Problem("not_standalone", "text", "The claim starts with a word like he, she, it, they or this: name what it is about."))
    elif not rules.names_title(text, page.title):
        found.append(Problem("not_standalone", "text", f"The claim names nothing of the page title ({page.title}): a voter may not know what it is about."))
    others = selectors.claims_on_page(page=page).values_list("text", flat=True)
    if rules.closest(text, others) >= _config("CLOSE_CLAIM_SIMILARITY", 0.6):
        found.append(Problem("close_to_existing_claim", "text", "The claim is very close to one already written about this page."))
    confident = giveaway_guess(text=text)
    if confident is not None and confident[0] == task.label:
        found.append(
            Problem(
                "giveaway",
                "text",
                f"The wording alone gives the label away: a claim-only model guesses it with {confident[1]:.0%} confidence. Try wording it differently.",
            )
        )
    return [p.as_dict() for p in found]


def _names_page(*, text: str, page: Page) -> bool:
    prefix = _config("CLAIM_PAGE_WORD_PREFIX", 5)
    sentences = Sentence.objects.filter(page=page, retired=False).values_list("text", flat=True)
    return rules.names_page(text, rules.page_words(page.title, sentences, prefix=prefix), prefix=prefix)


def _near_duplicate(*, text: str, page: Page) -> Problem | None:
    """The ``near_duplicate`` problem when ``text`` is the same as an active claim of ``page``
    (up to case, accents, punctuation, spacing and word order), one word away from one (a word
    changed, put in or taken out: "was" to "is" flips a claim's meaning and keeps its words), or
    at least ``NEAR_DUPLICATE_SIMILARITY`` close to one; else None. Every active claim of the
    page counts, whoever wrote it; removed ones do not. The refusal names no claim: a claim in
    play stays unsaid."""
    others = list(selectors.claims_on_page(page=page).values_list("text", flat=True))
    key = rules.duplicate_key(text)
    if any(rules.duplicate_key(other) == key for other in others):
        return _NEAR_DUPLICATE
    if rules.one_word_edit(text, others):
        return _ONE_WORD_EDIT
    if rules.closest(text, others) >= _config("NEAR_DUPLICATE_SIMILARITY", 0.8):
        return _NEAR_DUPLICATE
    return None


_NEAR_DUPLICATE = Problem("near_duplicate", "text", "A claim saying nearly the same already exists for this page. Write a different one.")
_ONE_WORD_EDIT = Problem(
    "near_duplicate",
    "text",
    "A claim one word away from this one already exists for this page: changing, adding or dropping one word "
    "of a claim is no new claim. Write a different one.",
)


def _off_page(page: Page) -> Problem:
    return Problem("text_off_page", "text", f"The claim names nothing of its page ({page.title}): write about what the page says.")


def _evidence_problems(*, text: str, gold: list[Sentence], page: Page) -> list[Problem]:
    """The rules between a claim and its gold sentences: not the top hit, not a copy."""
    problems: list[Problem] = []
    top = evidence.page_top_lexical_hit(page=page, query=text)
    if top is not None and top in {s.pk for s in gold}:
        problems.append(
            Problem(
                "gold_too_easy",
                "gold_sentence_ids",
                "A gold sentence is the retriever's top hit for this claim: it is too easy to find. Reword the claim.",
            )
        )
    share = _config("COPIES_GOLD_SHARE", 0.8)
    if any(rules.copies(text, sentence.text, share=share) for sentence in gold):
        problems.append(
            Problem("copies_gold", "text", "The claim repeats a gold sentence nearly word for word. Say it in your own words.")
        )
    return problems


def check_claim_create(
    *, author: AbstractBaseUser, task_id: Any, text: Any, gold_sentence_ids: Any, now: datetime | None = None
) -> CheckedClaim:
    """Every rule of a new claim; raises a ServiceError naming each one broken.

    Locking: takes ``select_for_update`` on the author's row, the task row, then the task's page row, so
    call inside ``transaction.atomic`` and write in the same transaction. Two submissions
    of one task then queue, and the second finds it used; two claims for one page (any
    authors) queue too, and the second is checked against the first (near duplicates).
    Order: author, task, page, everywhere.
    """
    now = now or timezone.now()
    # The author's row first (as write_task_create does), so the rate count below holds.
    get_user_model().objects.select_for_update().filter(pk=author.pk).first()
    task = _check_task(author=author, task_id=task_id, now=now)
    _check_claim_rate(author=author, now=now)
    # Claims of one page are written one at a time: the near-duplicate check below reads
    # the page's claims, and two near-identical claims submitted at once must not both pass.
    Page.objects.select_for_update().filter(pk=task.page_id).first()
    text, problems = _check_text(text)
    gold, gold_problems = _check_gold(gold_sentence_ids, task.page)
    problems += gold_problems
    if text and not problems and not _names_page(text=text, page=task.page):
        problems.append(_off_page(task.page))
    if problems:
        raise _refuse(problems)
    duplicate = _near_duplicate(text=text, page=task.page)
    if duplicate is not None:
        raise _refuse([duplicate], status_code=409)
    problems += _evidence_problems(text=text, gold=gold, page=task.page)
    if problems:
        raise _refuse(problems)
    return CheckedClaim(task=task, text=text, gold=gold, warnings=_warnings(task=task, text=text))


def do_claim_create(*, checked: CheckedClaim, now: datetime | None = None) -> Claim:
    """Write the claim, its gold, its clue list, the author's write points and use the task.

    Call in the transaction that ran :func:`check_claim_create` (it holds the task lock).
    """
    task = checked.task
    claim = Claim.objects.create(page=task.page, text=checked.text, label=task.label, author=task.player)
    ClaimGold.objects.bulk_create(
        ClaimGold(claim=claim, sentence=sentence, position=position) for position, sentence in enumerate(checked.gold)
    )
    claim.clues = evidence.claim_clue_list(
        page=task.page, claim_text=checked.text, gold_ids=[s.pk for s in checked.gold], k=settings.FM2["CLUES_PER_CLAIM"]
    )
    claim.save(update_fields=["clues"])
    LedgerEntry.objects.create(
        player=task.player, amount=settings.FM2["WRITE_POINTS"], kind=LedgerEntry.Kind.WRITE, claim=claim, cause=f"claim:{claim.pk}"
    )
    task.used_at = now or timezone.now()
    task.claim = claim
    task.save(update_fields=["used_at", "claim"])
    return claim


def claim_create(
    *, author: AbstractBaseUser, task_id: Any, text: Any, gold_sentence_ids: Any, now: datetime | None = None
) -> tuple[Claim, list[dict[str, str]], dict[str, Any] | None]:
    """A new claim from a write task, the warnings it was saved with, and the verdict of the
    model in the loop on it with its gold sentences (None when no model is active, or when the
    author's game hides the model's verdict: a study's arm; it is recorded all the same)."""
    now = now or timezone.now()
    # The clue list needs the page's sentence vectors; encoding them (first use of a page, or
    # of the model in this process) takes seconds, so it happens before the write lock is
    # taken. Idempotent: a page already encoded costs one query.
    page_id = WriteTask.objects.filter(pk=task_id, player=author).values_list("page_id", flat=True).first() if isinstance(task_id, int) else None
    if page_id is not None:
        evidence.page_index_build(page_id=page_id)
    with transaction.atomic():
        checked = check_claim_create(author=author, task_id=task_id, text=text, gold_sentence_ids=gold_sentence_ids, now=now)
        claim = do_claim_create(checked=checked, now=now)
        verdict = hooks.model_verdicts.get().on_save(claim=claim, task=checked.task, gold=checked.gold)
        giveaway_retrain_on_commit()
    return claim, checked.warnings, verdict if verdict_shown(player_id=author.pk) else None


def verdict_shown(*, player_id: int) -> bool:
    """Is the model's verdict shown to this author while writing (``hooks.player_settings``:
    a study's arm may hide it)? Hidden or not, the verdict is asked and recorded."""
    return bool(hooks.player_settings.get().settings_for(player_id=player_id)["model_verdict"])


# --- Draft checks (while the author types) ------------------------------------------------------


@dataclass
class DraftCheck:
    """What saving this draft now would say: the problems that would refuse it, the warnings it would carry."""

    problems: list[dict[str, str]]
    warnings: list[dict[str, str]]
    verdict: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def _draft_check_throttle(*, player_id: int) -> None:
    """At most ``DRAFT_CHECKS_PER_MINUTE`` checks per player and minute (429 ``check_throttled``).

    The page asks after each pause in typing, a few times a minute; the cap only stops a
    script from using the check as a free oracle. Counted in the cache (Redis when set),
    with the login throttles' fixed windows (foolgame.core.throttle).
    """
    limit = _config("DRAFT_CHECKS_PER_MINUTE", 90)
    count, retry_after = throttle_bump("draft-check", (str(player_id),), 60)
    if count > limit:
        raise ServiceError("check_throttled", "Too many draft checks; they resume in a moment.", status_code=429, retry_after=retry_after)


def claim_draft_check(
    *, author: AbstractBaseUser, task_id: Any, text: Any, gold_sentence_ids: Any, now: datetime | None = None
) -> DraftCheck:
    """The rules of :func:`check_claim_create` run over a draft, writing nothing and paying nothing.

    The task must be the author's own and open (the same 404/403/409/410 as a save); no
    lock is taken. Unlike a save, which stops at the first group of rules broken, a draft
    is checked on every rule that applies to what is there yet: the text's rules
    (``text_no_words``, ``text_off_page``, ``near_duplicate``...) even before a gold
    sentence is ticked, the gold rules once one is, the warnings whenever the text itself
    passes. Each code is one a save of the same text and gold would give. Like the hints,
    never for a player in a round about the page (403 ``check_during_round``).
    """
    now = now or timezone.now()
    _draft_check_throttle(player_id=author.pk)  # every call counts, a refused one too
    task = _check_task(author=author, task_id=task_id, now=now, lock=False)
    if evidence_selectors.player_in_round_on_page(player_id=author.pk, page_id=task.page_id):
        raise ServiceError("check_during_round", "No draft checks on the page of a round you are playing.", status_code=403)
    page = task.page
    text, text_problems = _check_text(text)
    if text and not text_problems and not _names_page(text=text, page=page):
        text_problems.append(_off_page(page))
    duplicate = _near_duplicate(text=text, page=page) if text and not text_problems else None
    if duplicate is not None:
        text_problems.append(duplicate)
    gold: list[Sentence] = []
    gold_problems: list[Problem] = []
    if gold_sentence_ids:  # nothing ticked yet is not a problem while typing
        gold, gold_problems = _check_gold(gold_sentence_ids, page)
    problems = text_problems + gold_problems
    if text and not problems and gold:
        problems += _evidence_problems(text=text, gold=gold, page=page)
    warnings = _warnings(task=task, text=text) if text and not text_problems else []
    # The model's verdict only on a draft that would save as it stands: never on a copy of a
    # claim in play (near_duplicate), so the verdict is no oracle for another's round.
    verdict = hooks.model_verdicts.get().on_draft(task=task, text=text, gold=gold) if text and gold and not problems else None
    if not verdict_shown(player_id=author.pk):  # asked (the try is recorded), not shown
        verdict = None
    return DraftCheck(problems=[p.as_dict() for p in problems], warnings=warnings, verdict=verdict)


# --- Hints (while the author types) -------------------------------------------------------------


def player_page_hints(*, player_id: int, page: Page, query: str, k: int = evidence.HINT_COUNT) -> list[dict]:
    """The lexical hints (``evidence.page_hints``) on ``page`` for a player writing about it.

    Hints are a writing tool: a player gets them for a page only while holding an open write
    task on it (403 ``hints_need_task``), and never while in a round (ready or playing) about
    that page (403 ``hints_during_round``): the free top-10 would hand a voter the gold
    sentence. The round comes first, so a voter who also holds a task hears why.
    """
    if evidence_selectors.player_in_round_on_page(player_id=player_id, page_id=page.pk):
        raise ServiceError("hints_during_round", "No hints on the page of a round you are playing.", status_code=403)
    if not hooks.player_settings.get().settings_for(player_id=player_id)["hints"]:
        raise ServiceError("hints_off", "Hints are off in this game: find the evidence on the page yourself.", status_code=403)
    if not selectors.player_has_open_write_task_on_page(player_id=player_id, page_id=page.pk):
        raise ServiceError(
            "hints_need_task", "Hints are for writing a claim: take a write task on this page first.", status_code=403
        )
    return evidence.page_hints(page=page, query=query, k=k)


# --- The giveaway detector -------------------------------------------------------------------------

_loaded_lock = threading.Lock()
_loaded: tuple[int, float, Any] | None = None  # (row id, threshold, fitted model)


def _giveaway_current() -> tuple[float, Any] | None:
    """The newest detector and its threshold, unpickled once per process per model."""
    global _loaded
    row = GiveawayModel.objects.order_by("-created", "-id").values_list("id", "threshold").first()
    if row is None:
        return None
    with _loaded_lock:
        if _loaded is None or _loaded[0] != row[0]:
            blob = GiveawayModel.objects.values_list("blob", flat=True).get(pk=row[0])
            _loaded = (row[0], row[1], giveaway.loads(bytes(blob)))
        return _loaded[1], _loaded[2]


def giveaway_guess(*, text: str) -> tuple[str, float] | None:
    """``(label, probability)`` when the detector is confident about ``text``'s label, else None."""
    current = _giveaway_current()
    if current is None:
        return None
    threshold, model = current
    label, probability = giveaway.guess(model, text)
    return (label, probability) if probability >= threshold else None


def giveaway_retrain_due() -> bool:
    """A detector is due when none exists yet or enough claims arrived since the last one."""
    latest = selectors.giveaway_model_latest()
    claims = selectors.active_claim_examples()
    if latest is None:
        return claims.count() >= _config("GIVEAWAY_MIN_CLAIMS", 20)
    return claims.filter(pk__gt=latest.newest_claim_id).count() >= _config("GIVEAWAY_RETRAIN_EVERY", 50)


def giveaway_retrain_on_commit() -> None:
    """Ask for a retrain after this transaction commits, when one is due (cheap to call; the
    due check sees this transaction's own new claim, and the task checks again)."""
    from foolgame.authoring.tasks import giveaway_train

    if giveaway_retrain_due():
        # Training takes 13-19 s on 2 cores: never inside the save that made it due.
        events.task_in_background_on_commit(giveaway_train)


GIVEAWAY_TRAIN_LOCK = "fm2:giveaway:train"


def giveaway_train_now(*, force: bool = False) -> GiveawayModel | None:
    """Train a detector on the active claims and store it (does nothing if not due and not forced).

    Two deliveries at once train once: the "is it due?" check and the training run happen
    under one lock (an atomic cache ``add``, shared by every worker on Redis); the delivery
    that does not get it does nothing, and the holder's new model row makes the retrain not
    due for whoever comes next. A trainer that crashes holding the lock blocks retraining
    only until the lock expires (``GIVEAWAY_TRAIN_LOCK_SECONDS``); the next claim that makes
    a retrain due queues it again.
    """
    with held_lock(GIVEAWAY_TRAIN_LOCK, seconds=settings.FM2_JOBS["GIVEAWAY_TRAIN_LOCK_SECONDS"]) as mine:
        # Not mine: another worker is training right now.
        return _giveaway_train_locked(force=force) if mine else None


def _giveaway_train_locked(*, force: bool) -> GiveawayModel | None:
    if not force and not giveaway_retrain_due():
        return None
    rows = list(selectors.active_claim_examples().values_list("id", "text", "label", "page_id"))
    try:
        trained = giveaway.train(
            [text for _, text, _, _ in rows],
            [label for _, _, label, _ in rows],
            groups=[page for _, _, _, page in rows],
            target_precision=_config("GIVEAWAY_TARGET_PRECISION", 0.75),
        )
    except ValueError:
        return None  # not enough claims of each label yet
    return GiveawayModel.objects.create(
        examples=trained.examples,
        newest_claim_id=max(pk for pk, _, _, _ in rows),
        cv_accuracy=trained.cv_accuracy,
        cv_accuracy_by_page=trained.cv_accuracy_by_page,
        threshold=trained.threshold,
        confident_share=trained.confident_share,
        confident_precision=trained.confident_precision,
        blob=trained.dumps(),
    )
