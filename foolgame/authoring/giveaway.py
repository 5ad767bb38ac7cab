"""The giveaway detector: how confidently a claim's wording alone gives its label away.

Model in the loop, after Adversarial NLI and Annotation Artifacts: a claim-only classifier
(the one ``scoring.artifacts`` measures the release with: TF-IDF word 1-2-grams and
character 2-5-grams, logistic regression) is trained on the active claims and consulted
when an author saves, so that "the wording says FALSE" is pointed out while the author
can still learn from it.

Training also fixes what "high confidence" means for this model: the smallest probability
at which the cross-validated guesses were right at least ``target_precision`` (75%) of the
time on enough claims. A model that is never that sure never warns: a warning that is
wrong half the time would teach authors nothing.

Plain functions over texts and labels, no Django: the Celery task and the bench both call
:func:`train`.
"""

from __future__ import annotations

import io
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import joblib
import numpy as np

# The pipeline the artifact analysis is measured with; one definition, two users.
from scoring.artifacts import claim_only_pipeline, cross_validated_accuracy

NEVER = 1.01  # a threshold no probability reaches


@dataclass(frozen=True, slots=True)
class Trained:
    """A fitted detector and what cross-validation says about it."""

    model: Any
    examples: int
    cv_accuracy: float  # stratified folds, pages shared across folds (as in use)
    cv_accuracy_by_page: float | None  # each page kept in one fold: the artifact figure
    threshold: float  # probability from which a guess counts as confident
    confident_share: float  # share of CV claims at or above the threshold
    confident_precision: float  # CV accuracy on those claims

    def dumps(self) -> bytes:
        buffer = io.BytesIO()
        joblib.dump(self.model, buffer, compress=3)
        return buffer.getvalue()


def loads(blob: bytes) -> Any:
    return joblib.load(io.BytesIO(blob))


def confident_threshold(
    probabilities: np.ndarray,
    correct: np.ndarray,
    *,
    target_precision: float = 0.75,
    min_support: int = 20,
) -> tuple[float, float, float]:
    """The lowest confidence at which the CV guesses were right ``target_precision`` of the time.

    Returns ``(threshold, share of claims at or above it, precision there)``; the threshold
    is :data:`NEVER` when no cut-off with ``min_support`` claims reaches the target.
    """
    order = np.argsort(-probabilities, kind="stable")
    hits = np.cumsum(correct[order])
    counts = np.arange(1, len(order) + 1)
    precision = hits / counts
    best = None
    for index in range(min_support - 1, len(order)):
        # Only cut between distinct probabilities, so the threshold means what it says.
        if index + 1 < len(order) and probabilities[order[index + 1]] == probabilities[order[index]]:
            continue
        if precision[index] >= target_precision:
            best = index
    if best is None:
        return NEVER, 0.0, 0.0
    return float(probabilities[order[best]]), float(counts[best] / len(order)), float(precision[best])


def train(
    texts: Sequence[str],
    labels: Sequence[str],
    *,
    groups: Sequence[Hashable] | None = None,
    folds: int = 5,
    seed: int = 0,
    target_precision: float = 0.75,
) -> Trained:
    """Cross-validate, calibrate the confidence threshold, then fit on every claim.

    The threshold is calibrated on ordinary stratified folds because that is how the model
    is used: a new claim's page usually has claims in the training pool already. With
    ``groups`` (each claim's page) the page-grouped accuracy is measured too, through
    ``scoring.artifacts.cross_validated_accuracy``: the honest artifact figure, free of
    page-topic words (FM2 dev: about 53% grouped against 61% ungrouped; chance is 51%).
    """
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    texts, labels = list(texts), list(labels)
    counts = {label: labels.count(label) for label in set(labels)}
    if len(counts) < 2 or min(counts.values()) < 2:
        raise ValueError("the detector needs at least two claims of each label")
    folds = max(2, min(folds, min(counts.values())))
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    probabilities = cross_val_predict(
        claim_only_pipeline(seed), texts, labels, cv=splitter, method="predict_proba"
    )
    classes = np.array(sorted(counts))  # cross_val_predict orders columns like the model
    correct = classes[probabilities.argmax(axis=1)] == np.array(labels)
    threshold, share, precision = confident_threshold(
        probabilities.max(axis=1), correct, target_precision=target_precision
    )
    grouped = None
    if groups is not None and len(set(groups)) >= 2:
        grouped = cross_validated_accuracy(
            list(zip(texts, labels)), folds=min(folds, len(set(groups))), seed=seed, groups=list(groups)
        )
    model = claim_only_pipeline(seed).fit(texts, labels)
    return Trained(
        model=model,
        examples=len(texts),
        cv_accuracy=float(correct.mean()),
        cv_accuracy_by_page=grouped,
        threshold=threshold,
        confident_share=share,
        confident_precision=precision,
    )


def guess(model: Any, text: str) -> tuple[str, float]:
    """The label the wording suggests and the model's probability for it."""
    probabilities = model.predict_proba([text])[0]
    best = int(np.argmax(probabilities))
    return str(model.classes_[best]), float(probabilities[best])
