"""The learnt fluency check: a model trained on this instance's pages judges whether a claim
reads as a claim or as words of the page put in a sentence's slots (``retrieval.fluency``).

``manage.py train_fluency`` trains it (minutes, in a command, never in a request) into
``FM2_FLUENCY["MODEL_DIR"]``; from then on every save and draft check asks it, after the word
rules (``rules.fluency_problem``). While there is no model (a fresh instance) nothing is loaded
and only the word rules judge. docs/authoring.md (Templates) says what it refuses, measured.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.db.models import Prefetch

from foolgame.claims.models import Claim
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


def training_pages() -> dict[str, PageTexts]:
    """Every writable page's live sentences and active claims, by title: what the model learns from."""
    sentences = Prefetch("sentences", queryset=Sentence.objects.filter(retired=False).order_by("position"), to_attr="live")
    claims = Prefetch("claims", queryset=Claim.objects.filter(status=Claim.Status.ACTIVE).only("id", "page_id", "text"), to_attr="active")
    pages: dict[str, PageTexts] = {}
    for page in Page.objects.prefetch_related(sentences, claims).order_by("pk"):
        if len(page.live) >= WRITABLE_MIN_SENTENCES:
            pages[f"{page.title} #{page.pk}"] = PageTexts(
                sentences=[sentence.text for sentence in page.live], claims=[claim.text for claim in page.active]
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
        examples=examples or config["EXAMPLES"], epochs=epochs or config["EPOCHS"], real_share=config["REAL_SHARE"]
    )
    return train_fluency(pages, base_model=base, out_dir=config["MODEL_DIR"], options=options, progress=progress)


def report_line(report: FluencyReport) -> str:
    return (
        f"fluency model: {report.trained_pages} pages trained on, {report.examples} texts x {report.epochs} epochs "
        f"(losses {report.losses}) in {report.seconds:.0f} s; bar {report.threshold:.3f}, refusing "
        f"{report.real_share:.1%} of {report.held_out_texts} texts of {report.held_out_pages} held-out pages"
    )

