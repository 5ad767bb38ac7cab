"""The learnt fluency check: a model trained on this instance's pages judges whether a claim
reads as a claim or as words of the page put in a sentence's slots (``retrieval.fluency``).

The trainer role trains it by itself (``tasks.fluency_train``, asked by beat every hour: due
when there is no model yet and ``MIN_PAGES`` writable pages, or when the writable pages grew by
``RETRAIN_GROWTH`` since the last training); ``manage.py train_fluency`` trains it now
(minutes, in a command or the worker, never in a request). It goes into
``FM2_FLUENCY["MODEL_DIR"]``; from then on every save and draft check asks it, after the word
rules (``rules.fluency_problem``), and the word-order rule defers to it for a text it vouches
for (``learnt_vouches_for``: a short plain claim can read no better than its own shuffles).
While there is no model (a fresh instance) nothing is loaded and only the word rules judge. docs/authoring.md (Templates) says what it refuses, measured.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.db.models import Count, Prefetch, Q

from foolgame.claims.models import Claim
from foolgame.core.caches import held_lock
from foolgame.pages.models import Page, Sentence
from foolgame.pages.selectors import WRITABLE_MIN_SENTENCES
from retrieval.fluency import META_FILE, FluencyReport, FluencyScorer, PageTexts, TrainOptions, train_fluency

_lock = threading.Lock()
_loaded: tuple[tuple[str, float], FluencyScorer] | None = None


def fluency_scorer() -> FluencyScorer | None:
    """The trained model, loaded once per process and again after a training replaces it;
    None while there is none."""
    global _loaded
    folder = Path(settings.FM2_FLUENCY["MODEL_DIR"])
    try:
        key = (str(folder), (folder / META_FILE).stat().st_mtime)
    except OSError:
        return None
    with _lock:
        if _loaded is None or _loaded[0] != key:
            _loaded = (key, FluencyScorer(folder))
        return _loaded[1]


def learnt_fluency_problem(text: str) -> str | None:
    """Why the trained model takes ``text`` for a template rather than a claim, or None (also
    when no model is trained)."""
    scorer = fluency_scorer()
    if scorer is not None and scorer.refuses(text):
        return "it reads as words of the page put in a sentence's slots, not as something said about the page"
    return None


def learnt_vouches_for(text: str) -> bool:
    """Does the trained model read ``text`` as a claim as plainly as nine real claims in ten
    (``FluencyScorer.vouches_for``)? The word-order rule then defers to it. False when no
    model is trained: the word rules judge alone."""
    scorer = fluency_scorer()
    return scorer is not None and scorer.vouches_for(text)


def training_pages() -> dict[str, PageTexts]:
    """Every writable page's live sentences and active claims, by title: what the model learns from."""
    sentences = Prefetch("sentences", queryset=Sentence.objects.filter(retired=False).order_by("position"), to_attr="live")
    claims = Prefetch("claims", queryset=Claim.objects.filter(status=Claim.Status.ACTIVE).only("id", "page_id", "text"), to_attr="active")
    pages: dict[str, PageTexts] = {}
    for page in Page.objects.prefetch_related(sentences, claims).order_by("pk"):
        if len(page.live) >= WRITABLE_MIN_SENTENCES:
            pages[f"{page.title} #{page.pk}"] = PageTexts(
                sentences=[sentence.text for sentence in page.live], claims=[claim.text for claim in page.active], title=page.title
            )
    return pages


def fluency_train(*, examples: int | None = None, epochs: int | None = None, progress: Callable[[int, int], None] | None = None) -> FluencyReport:
    """Train the model on the instance's pages into ``MODEL_DIR`` (replacing any there, whole)."""
    config = settings.FM2_FLUENCY
    pages = training_pages()
    if len(pages) < 2:
        raise ValueError(f"{len(pages)} page(s) with {WRITABLE_MIN_SENTENCES} live sentences or more: the model needs two pages at least")
    base = config["BASE_MODEL_PATH"] or settings.FM2_RETRIEVAL["MODEL_PATH"]
    if base is None:
        from retrieval.encoder import default_model_path

        base = default_model_path()
    options = TrainOptions(
        examples=examples or config["EXAMPLES"], epochs=epochs or config["EPOCHS"], real_share=config["REAL_SHARE"],
        vouch_share=config["VOUCH_SHARE"],
    )
    return train_fluency(pages, base_model=base, out_dir=config["MODEL_DIR"], options=options, progress=progress)


def writable_page_count() -> int:
    """How many pages have enough live sentences to write on (what training reads)."""
    return (
        Page.objects.annotate(live_sentences=Count("sentences", filter=Q(sentences__retired=False)))
        .filter(live_sentences__gte=WRITABLE_MIN_SENTENCES)
        .count()
    )


def fluency_model_meta() -> dict | None:
    """What the stored model's training wrote beside it (``FluencyReport`` as a dict), or None."""
    try:
        return json.loads((Path(settings.FM2_FLUENCY["MODEL_DIR"]) / META_FILE).read_text())
    except (OSError, ValueError):
        return None


def fluency_retrain_due() -> bool:
    """Train when there is no model and ``MIN_PAGES`` writable pages, or when the writable
    pages grew by ``RETRAIN_GROWTH`` (a share) over the pages the model knows. Off with
    ``AUTO_TRAIN`` false (``manage.py train_fluency`` still trains)."""
    config = settings.FM2_FLUENCY
    if not config["AUTO_TRAIN"]:
        return False
    pages = writable_page_count()
    meta = fluency_model_meta()
    if meta is None:
        return pages >= max(2, config["MIN_PAGES"])
    known = int(meta.get("trained_pages", 0)) + int(meta.get("held_out_pages", 0))
    return pages >= max(known + 1, known * (1 + config["RETRAIN_GROWTH"]))


FLUENCY_TRAIN_LOCK = "fm2:fluency:train"


def fluency_train_if_due(
    *,
    force: bool = False,
    examples: int | None = None,
    epochs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> FluencyReport | None:
    """Train if due (or ``force``: an operator's ``train_fluency``), once across every worker
    and command: the due check and the training run under one lock (an atomic cache ``add``,
    shared by every worker on Redis), as the giveaway detector's do. A second delivery finds
    the lock taken, or the new model there, and does nothing (None); a trainer that dies
    holding it blocks training until the lock expires (``FM2_JOBS["FLUENCY_TRAIN_LOCK_SECONDS"]``)
    and beat asks again an hour later."""
    with held_lock(FLUENCY_TRAIN_LOCK, seconds=settings.FM2_JOBS["FLUENCY_TRAIN_LOCK_SECONDS"]) as mine:
        if not mine or (not force and not fluency_retrain_due()):
            return None
        return fluency_train(examples=examples, epochs=epochs, progress=progress)


def _ordinal(n: int) -> str:
    """Nothing for 1 (the highest), then "2nd ", "3rd ", "4th ", "11th ", "21st ", ..."""
    if n == 1:
        return ""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix} "


def report_line(report: FluencyReport) -> str:
    return (
        f"fluency model: {report.trained_pages} pages trained on, {report.examples} texts x {report.epochs} epochs "
        f"(losses {report.losses}) in {report.seconds:.0f} s; bar {report.threshold:.3f} (the {_ordinal(report.bar_rank)}highest "
        f"score of {report.held_out_texts} texts of {report.held_out_pages} held-out pages: it refuses at most "
        f"{report.bar_rank / (report.held_out_texts + 1):.1%} of real claims)"
    )

