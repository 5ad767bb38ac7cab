"""Claim verification with evidence: does this evidence support or refute this claim?

Two implementations of one ``Verifier`` interface (``verdicts`` over (claim, evidence
sentences) pairs, each answered by a ``Verdict``):

- ``HeadVerifier`` (the default): the frozen MiniLM sentence encoder the retrievers already
  load, plus a small logistic-regression head over a couple of dozen features of the claim
  and its evidence. It trains in seconds on the claims the game has collected, and is
  stored as an ``.npz`` of numbers (no pickle: a blob read back from a database cannot
  run code).
- ``NliFolderVerifier``: any local Hugging Face sequence-classification NLI model an
  operator supplies, served through ONNX Runtime like the encoder.

Why the head looks only at similarity and word-overlap features, not at the embeddings
themselves. On the FM2 dev split with gold evidence, page-disjoint 5-fold CV (grouped by
page, mean of three fold seeds, best C; one-off experiments, the head itself is measured
by ``bench/bench_verifier.py``; chance 51%):

=====================================================  ========
head input                                             accuracy
=====================================================  ========
claim only (TF-IDF + LR, ``scoring.artifacts``)        52-53
[u, v] (claim and evidence embeddings)                 51-52
[u, v, u*v, |u-v|]                                     55
[u, v, u*v, |u-v|] + the features below                54-55
[u*v, |u-v|] + the features below                      56-57
cosine(u, v) and max cosine alone                      56
the features below (``FEATURE_NAMES``), this head      59
=====================================================  ========

With a thousand claims the 384-dimensional vectors mostly teach the head each page's
topic, which does not carry over to a new page; the overlap features (which of the
claim's words, names and numbers the evidence lacks, negation on one side only) do.
Word vectors for the missing words (is a missing word a near-synonym of an evidence word,
or a substitution?) added nothing, nor did gradient-boosted trees over the same features
(55-57). A fine-tuned MiniLM cross-encoder was measured at 51.3% on this split: too
little data to move a transformer.

Nothing here imports Django, and scikit-learn is imported only to train: a verdict is
numpy arithmetic over the encoder's vectors.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from retrieval.encoder import TextEncoder, _weights_fingerprint, cache_build_lock, default_onnx_cache_dir, export_module_onnx, onnxruntime_quiet

SUPPORTS, REFUTES = "SUPPORTS", "REFUTES"
NEUTRAL = "NEUTRAL"

__all__ = [
    "REFUTES",
    "SUPPORTS",
    "HeadVerifier",
    "LinearHead",
    "NliFolderVerifier",
    "Verdict",
    "Verifier",
    "train_head_verifier",
    "verdict",
]


@dataclass(frozen=True, slots=True)
class Verdict:
    """The verifier's belief that a claim is supported or refuted by its evidence."""

    supports: float
    refutes: float

    def __post_init__(self) -> None:
        if not (0.0 <= self.supports <= 1.0 and 0.0 <= self.refutes <= 1.0):
            raise ValueError(f"probabilities must lie in [0, 1], got {self.supports}, {self.refutes}")
        if abs(self.supports + self.refutes - 1.0) > 1e-6:
            raise ValueError(f"supports + refutes must be 1, got {self.supports + self.refutes}")

    @classmethod
    def from_supports(cls, supports: float) -> Verdict:
        if math.isnan(supports):
            raise ValueError("P(SUPPORTS) is not a number")
        supports = min(1.0, max(0.0, float(supports)))
        return cls(supports=supports, refutes=1.0 - supports)

    @property
    def label(self) -> str:
        return SUPPORTS if self.supports >= self.refutes else REFUTES

    @property
    def probability(self) -> float:
        return max(self.supports, self.refutes)


Item = tuple[str, Sequence[str]]
"""A claim's text and the texts of its evidence sentences (possibly none)."""


@runtime_checkable
class Verifier(Protocol):
    """Anything that judges claims against evidence sentences."""

    name: str

    def verdicts(self, items: Sequence[Item], *, show_progress: bool = False) -> list[Verdict]:
        """One verdict per (claim, evidence) item, in input order. Empty evidence: the
        model judges the claim alone."""
        ...


def verdict(verifier: Verifier, claim: str, evidence: Sequence[str]) -> Verdict:
    """The verdict on one claim."""
    return verifier.verdicts([(claim, list(evidence))])[0]


# -- features of a claim and its evidence ---------------------------------------------------

FEATURE_NAMES: tuple[str, ...] = (
    "cosine",  # claim vector . renormalised mean of the evidence vectors
    "max_cosine",  # best single evidence sentence
    "min_cosine",
    "missing_word_share",  # claim content words absent from the evidence
    "missing_word_count",
    "missing_stem_share",  # the same, matching on the first 5 letters (a cheap stemmer)
    "missing_stem_count",
    "missing_name_count",  # capitalised claim words (after the first) absent from the evidence
    "missing_name_share",
    "missing_number_count",  # numbers of the claim absent from the evidence
    "missing_number_any",
    "claim_number_count",
    "missing_year_count",
    "missing_year_any",
    "missing_bigram_share",
    "shared_bigram_count",
    "negation_mismatch",  # a negation word on one side only
    "claim_negation",
    "evidence_negation",
    "claim_only_negation",
    "evidence_covered_share",  # evidence content words that the claim repeats
    "comparative_count",  # first, only, most, largest, before, ... in the claim
    "missing_comparative_count",
    "claim_length",  # log(1 + tokens)
    "evidence_length",
    "evidence_sentences",
)

# Features that need evidence; without any they are imputed with the training mean, so the
# head falls back to what the claim alone says (its length, numbers, negation, superlatives).
_CLAIM_ONLY_FEATURES = frozenset(
    {"claim_number_count", "claim_negation", "comparative_count", "claim_length"}
)
_EVIDENCE_FEATURE_MASK = np.array([name not in _CLAIM_ONLY_FEATURES for name in FEATURE_NAMES])

_STOP_WORDS = frozenset(
    "a an the of in on at to for from by with and or but is was were are be been being as "
    "that this these those it its he she they his her their which who whom what when where "
    "why how has have had do does did not no than then there here also into onto over under "
    "about after before during while s".split()
)
_NEGATIONS = frozenset(
    "not no never none nobody nothing neither nor without cannot n't didn't doesn't isn't "
    "wasn't weren't aren't won't wouldn't couldn't shouldn't hasn't haven't hadn't only".split()
)
_COMPARATIVES = frozenset(
    "first last only most least largest smallest biggest highest lowest best worst all every "
    "never always before after more less fewer earlier later oldest youngest".split()
)
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_YEAR = re.compile(r"\b(?:1\d{3}|20\d{2})\b")
_CAPITALISED = re.compile(r"\b[A-Z][a-zA-Z]+")

FloatArray = npt.NDArray[np.float64]


def _lexical_features(claim: str, evidence: Sequence[str]) -> list[float]:
    joined = " ".join(evidence)
    claim_tokens = _TOKEN.findall(claim.lower())
    evidence_tokens = _TOKEN.findall(joined.lower())
    evidence_set = set(evidence_tokens)
    claim_set = set(claim_tokens)
    content = [w for w in claim_tokens if w not in _STOP_WORDS]
    evidence_content = [w for w in evidence_tokens if w not in _STOP_WORDS]
    missing = [w for w in content if w not in evidence_set]
    evidence_stems = {w[:5] for w in evidence_set}
    missing_stems = [w for w in content if w[:5] not in evidence_stems]
    names = {w.lower() for w in _CAPITALISED.findall(claim)} - set(claim_tokens[:1])
    missing_names = [w for w in names if w not in evidence_set]
    numbers = set(_NUMBER.findall(claim))
    missing_numbers = numbers - set(_NUMBER.findall(joined))
    years = set(_YEAR.findall(claim))
    missing_years = years - set(_YEAR.findall(joined))
    claim_bigrams = set(zip(claim_tokens, claim_tokens[1:]))
    evidence_bigrams = set(zip(evidence_tokens, evidence_tokens[1:]))
    claim_negation = any(w in _NEGATIONS for w in claim_tokens)
    evidence_negation = any(w in _NEGATIONS for w in evidence_tokens)
    comparatives = [w for w in claim_tokens if w in _COMPARATIVES]
    return [
        len(missing) / max(1, len(content)),
        float(len(missing)),
        len(missing_stems) / max(1, len(content)),
        float(len(missing_stems)),
        float(len(missing_names)),
        len(missing_names) / max(1, len(names)),
        float(len(missing_numbers)),
        float(bool(missing_numbers)),
        float(len(numbers)),
        float(len(missing_years)),
        float(bool(missing_years)),
        len(claim_bigrams - evidence_bigrams) / max(1, len(claim_bigrams)),
        float(len(claim_bigrams & evidence_bigrams)),
        float(claim_negation != evidence_negation),
        float(claim_negation),
        float(evidence_negation),
        float(claim_negation and not evidence_negation),
        sum(w in claim_set for w in evidence_content) / max(1, len(evidence_content)),
        float(len(comparatives)),
        float(sum(w not in evidence_set for w in comparatives)),
        math.log1p(len(claim_tokens)),
        math.log1p(len(evidence_tokens)),
        float(len(evidence)),
    ]


def _features(claim: str, evidence: Sequence[str], claim_vector: np.ndarray, evidence_vectors: np.ndarray) -> list[float]:
    """One row of ``FEATURE_NAMES``; evidence features are NaN when there is no evidence."""
    if len(evidence) == 0:
        row = [0.0, 0.0, 0.0, *_lexical_features(claim, ())]
        return [math.nan if needs else value for value, needs in zip(row, _EVIDENCE_FEATURE_MASK)]
    mean = evidence_vectors.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    cosine = float(claim_vector @ mean) / norm if norm > 0 else 0.0
    similarities = evidence_vectors @ claim_vector
    return [cosine, float(similarities.max()), float(similarities.min()), *_lexical_features(claim, evidence)]


def _feature_matrix(items: Sequence[Item], encoder: TextEncoder, *, show_progress: bool = False) -> FloatArray:
    """Features of every item, every distinct text encoded once in a single encoder call."""
    index: dict[str, int] = {}
    for claim, evidence in items:
        for text in (claim, *evidence):
            index.setdefault(text, len(index))
    vectors = encoder.encode(list(index), show_progress=show_progress) if index else np.zeros((0, 0))
    rows = [
        _features(
            claim,
            evidence,
            vectors[index[claim]],
            vectors[[index[text] for text in evidence]] if evidence else vectors[:0],
        )
        for claim, evidence in items
    ]
    return np.asarray(rows, dtype=np.float64).reshape(len(items), len(FEATURE_NAMES))


# -- the head ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LinearHead:
    """Standardise, then logistic regression: P(SUPPORTS) = sigmoid(coef . z + intercept).

    ``mean`` and ``scale`` standardise each feature; a missing feature (NaN: no evidence)
    becomes 0 after standardisation, i.e. the training mean.
    """

    feature_names: tuple[str, ...]
    mean: FloatArray
    scale: FloatArray
    coef: FloatArray
    intercept: float
    regularisation: float  # scikit-learn's C, chosen by cross-validation
    cv_accuracy: float | None  # of the chosen C, on the training claims (None: no CV run)
    trained_on: int  # number of training claims
    encoder_name: str

    def supports(self, features: FloatArray) -> FloatArray:
        """P(SUPPORTS) for each row of ``features``."""
        standardised = (features - self.mean) / self.scale
        standardised = np.where(np.isnan(standardised), 0.0, standardised)
        logits = standardised @ self.coef + self.intercept
        return np.asarray(1.0 / (1.0 + np.exp(-logits)), dtype=np.float64)


_FORMAT = "fm2-verifier-head/1"


class HeadVerifier:
    """The default verifier: the frozen sentence encoder plus a trained ``LinearHead``.

    A verdict costs one encoder call over the claim and its evidence sentences (a few
    milliseconds with the int8 MiniLM) and a dot product.
    """

    def __init__(self, encoder: TextEncoder, head: LinearHead, *, name: str = "minilm-head") -> None:
        if head.feature_names != FEATURE_NAMES:
            raise ValueError(
                "this head was trained on other features than this code computes; retrain it"
            )
        self.encoder = encoder
        self.head = head
        self.name = name

    def verdicts(self, items: Sequence[Item], *, show_progress: bool = False) -> list[Verdict]:
        if not items:
            return []
        features = _feature_matrix(items, self.encoder, show_progress=show_progress)
        return [Verdict.from_supports(p) for p in self.head.supports(features)]

    def dumps(self) -> bytes:
        """The head alone as an ``.npz``: float arrays and a JSON metadata array, readable
        with ``np.load(..., allow_pickle=False)``."""
        head = self.head
        metadata = {
            "format": _FORMAT,
            "name": self.name,
            "feature_names": list(head.feature_names),
            "intercept": head.intercept,
            "regularisation": head.regularisation,
            "cv_accuracy": head.cv_accuracy,
            "trained_on": head.trained_on,
            "encoder_name": head.encoder_name,
        }
        buffer = io.BytesIO()
        np.savez_compressed(
            buffer,
            mean=head.mean.astype(np.float64),
            scale=head.scale.astype(np.float64),
            coef=head.coef.astype(np.float64),
            metadata=np.frombuffer(json.dumps(metadata).encode("utf-8"), dtype=np.uint8),
        )
        return buffer.getvalue()

    @classmethod
    def loads(cls, blob: bytes, encoder: TextEncoder) -> HeadVerifier:
        """Read what ``dumps`` wrote; ValueError for anything else."""
        try:
            with np.load(io.BytesIO(blob), allow_pickle=False) as archive:
                metadata = json.loads(bytes(archive["metadata"]).decode("utf-8"))
                arrays = {key: np.asarray(archive[key], dtype=np.float64) for key in ("mean", "scale", "coef")}
        except Exception as error:  # whatever a stray blob makes numpy or zipfile raise
            raise ValueError(f"not a stored verifier head: {error}") from error
        if not isinstance(metadata, dict) or metadata.get("format") != _FORMAT:
            raise ValueError(f"not a stored verifier head (format {metadata.get('format')!r})")
        size = len(metadata["feature_names"])
        if any(array.shape != (size,) for array in arrays.values()):
            raise ValueError("stored verifier head has arrays of the wrong shape")
        head = LinearHead(
            feature_names=tuple(metadata["feature_names"]),
            mean=arrays["mean"],
            scale=arrays["scale"],
            coef=arrays["coef"],
            intercept=float(metadata["intercept"]),
            regularisation=float(metadata["regularisation"]),
            cv_accuracy=None if metadata["cv_accuracy"] is None else float(metadata["cv_accuracy"]),
            trained_on=int(metadata["trained_on"]),
            encoder_name=str(metadata["encoder_name"]),
        )
        return cls(encoder, head, name=str(metadata.get("name") or "minilm-head"))


MIN_EXAMPLES = 20
MIN_PER_LABEL = 5
REGULARISATION_GRID = (0.01, 0.1, 1.0)
_DEFAULT_REGULARISATION = 0.1
_CV_FROM = 50  # fewer training claims: too few for 5 folds to choose C, use the default


def train_head_verifier(
    claims: Sequence[str],
    evidence: Sequence[Sequence[str]],
    labels: Sequence[str],
    *,
    encoder: TextEncoder,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
    groups: Sequence[Hashable] | None = None,
) -> HeadVerifier:
    """Train the default verifier's head on verified claims and their evidence.

    ``labels`` are SUPPORTS or REFUTES. The regularisation C is chosen from
    ``REGULARISATION_GRID`` by 5-fold cross-validated accuracy on these claims alone; pass
    each claim's page as ``groups`` to keep a page's claims in one fold (the honest choice:
    the model will meet new pages). ``progress(done, total)`` is called as texts are
    encoded and folds are fitted.
    """
    if not (len(claims) == len(evidence) == len(labels)):
        raise ValueError("claims, evidence and labels must have one entry per claim")
    if groups is not None and len(groups) != len(claims):
        raise ValueError("groups must give one group per claim")
    unknown = sorted({label for label in labels if label not in (SUPPORTS, REFUTES)})
    if unknown:
        raise ValueError(f"labels must be {SUPPORTS} or {REFUTES}, got {unknown}")
    counts = {label: list(labels).count(label) for label in (SUPPORTS, REFUTES)}
    if min(counts.values()) == 0:
        raise ValueError(f"training needs claims of both labels, got {counts}")
    if len(claims) < MIN_EXAMPLES or min(counts.values()) < MIN_PER_LABEL:
        raise ValueError(
            f"training needs at least {MIN_EXAMPLES} claims with at least {MIN_PER_LABEL} of each "
            f"label, got {len(claims)} ({counts[SUPPORTS]} {SUPPORTS}, {counts[REFUTES]} {REFUTES})"
        )

    items = [(claim, list(texts)) for claim, texts in zip(claims, evidence)]
    target = np.array([label == SUPPORTS for label in labels], dtype=np.int64)
    run_cv = len(items) >= _CV_FROM
    texts = len({text for claim, texts in items for text in (claim, *texts)})
    fits = (len(REGULARISATION_GRID) * 5 if run_cv else 0) + 1
    total = texts + fits
    done = 0

    def step(amount: int) -> None:
        nonlocal done
        done += amount
        if progress is not None:
            progress(done, total)

    features = _feature_matrix(items, _ChunkedProgress(encoder, step))
    chosen, cv_accuracy = _DEFAULT_REGULARISATION, None
    if run_cv:
        chosen, cv_accuracy = _choose_regularisation(features, target, groups, seed, step)
    head = _fit_head(features, target, chosen, cv_accuracy, encoder.model_name)
    step(1)
    return HeadVerifier(encoder, head)


class _ChunkedProgress:
    """An encoder that reports progress in chunks of texts (TextEncoder has no callback)."""

    chunk = 256

    def __init__(self, encoder: TextEncoder, step: Callable[[int], None]) -> None:
        self.encoder = encoder
        self.step = step
        self.model_name = encoder.model_name
        self.dimension = encoder.dimension

    def encode(self, texts: Sequence[str], *, show_progress: bool = False) -> np.ndarray:
        parts = []
        for start in range(0, len(texts), self.chunk):
            part = texts[start : start + self.chunk]
            parts.append(self.encoder.encode(part))
            self.step(len(part))
        return np.concatenate(parts) if parts else np.zeros((0, self.dimension), dtype=np.float32)


def _standardiser(features: FloatArray) -> tuple[FloatArray, FloatArray]:
    with np.errstate(all="ignore"):
        mean = np.nanmean(features, axis=0) if features.size else np.zeros(features.shape[1])
        scale = np.nanstd(features, axis=0)
    mean = np.where(np.isnan(mean), 0.0, mean)
    scale = np.where(np.isnan(scale) | (scale < 1e-12), 1.0, scale)
    return mean, scale


def _fit_logistic(features: FloatArray, target: np.ndarray, regularisation: float) -> tuple[FloatArray, FloatArray, FloatArray, float]:
    from sklearn.linear_model import LogisticRegression

    mean, scale = _standardiser(features)
    standardised = np.nan_to_num((features - mean) / scale, nan=0.0)
    model = LogisticRegression(C=regularisation, max_iter=2000)
    model.fit(standardised, target)
    # classes_ are [0, 1]: the coefficients point towards SUPPORTS.
    return mean, scale, np.asarray(model.coef_[0], dtype=np.float64), float(model.intercept_[0])


def _fit_head(
    features: FloatArray, target: np.ndarray, regularisation: float, cv_accuracy: float | None, encoder_name: str
) -> LinearHead:
    mean, scale, coef, intercept = _fit_logistic(features, target, regularisation)
    return LinearHead(
        feature_names=FEATURE_NAMES,
        mean=mean,
        scale=scale,
        coef=coef,
        intercept=intercept,
        regularisation=regularisation,
        cv_accuracy=cv_accuracy,
        trained_on=len(target),
        encoder_name=encoder_name,
    )


def _choose_regularisation(
    features: FloatArray,
    target: np.ndarray,
    groups: Sequence[Hashable] | None,
    seed: int,
    step: Callable[[int], None],
) -> tuple[float, float]:
    """The C of ``REGULARISATION_GRID`` with the best 5-fold accuracy (ties: the smaller C)."""
    from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold

    splitter: Any
    if groups is not None and len(set(groups)) >= 5:
        splitter = StratifiedGroupKFold(n_splits=5, shuffle=True, random_state=seed)
        folds = list(splitter.split(features, target, groups=list(groups)))
    else:
        splitter = StratifiedKFold(n_splits=5, shuffle=True, random_state=seed)
        folds = list(splitter.split(features, target))
    best = (-1.0, 0.0)
    for regularisation in REGULARISATION_GRID:
        hits = 0
        for train, test in folds:
            mean, scale, coef, intercept = _fit_logistic(features[train], target[train], regularisation)
            standardised = np.nan_to_num((features[test] - mean) / scale, nan=0.0)
            hits += int(((standardised @ coef + intercept >= 0).astype(np.int64) == target[test]).sum())
            step(1)
        accuracy = hits / len(target)
        if accuracy > best[0]:
            best = (accuracy, regularisation)
    return best[1], best[0]


# -- any local NLI model ----------------------------------------------------------------

_DEFAULT_LABEL_MAP: Mapping[str, str] = {
    "entailment": SUPPORTS,
    "entails": SUPPORTS,
    "supports": SUPPORTS,
    "supported": SUPPORTS,
    "contradiction": REFUTES,
    "contradicts": REFUTES,
    "refutes": REFUTES,
    "refuted": REFUTES,
    "neutral": NEUTRAL,
    "not enough info": NEUTRAL,
    "nei": NEUTRAL,
}

NeutralPolicy = Literal["drop", "refutes", "supports"]


def _label_key(name: str) -> str:
    return " ".join(name.lower().replace("_", " ").replace("-", " ").split())


class NliFolderVerifier:
    """A Hugging Face sequence-classification NLI model from a local folder.

    The claim is the hypothesis and its evidence, joined by spaces, the premise; the
    model's classes are folded into SUPPORTS and REFUTES by ``label_map`` (the model's
    ``id2label`` names, case-insensitive, to SUPPORTS, REFUTES or NEUTRAL; it extends the
    defaults entailment/supports, contradiction/refutes, neutral/not enough info) and
    ``neutral``: "drop" renormalises over the two other classes, "refutes" or "supports"
    adds NEUTRAL's probability to that side. 2-way and 3-way models both work.

    The weights are exported once to ONNX in ``onnx_cache_dir`` (keyed by a fingerprint of
    the weights) and served by ONNX Runtime, loaded once per process on first use. Nothing
    is downloaded.
    """

    batch_size = 16

    def __init__(
        self,
        model_path: str | Path,
        *,
        label_map: Mapping[str, str] | None = None,
        neutral: NeutralPolicy = "drop",
        onnx_cache_dir: str | Path | None = None,
        threads: int | None = None,
    ) -> None:
        self.model_path = Path(model_path)
        if not (self.model_path / "config.json").is_file():
            raise ValueError(f"{self.model_path} is not a model folder (no config.json)")
        if neutral not in ("drop", "refutes", "supports"):
            raise ValueError(f"neutral must be 'drop', 'refutes' or 'supports', got {neutral!r}")
        self.name = self.model_path.resolve().name
        self.neutral = neutral
        self.onnx_cache_dir = Path(onnx_cache_dir) if onnx_cache_dir is not None else default_onnx_cache_dir()
        self.threads = threads
        config = json.loads((self.model_path / "config.json").read_text(encoding="utf-8"))
        id2label = {int(key): str(value) for key, value in (config.get("id2label") or {}).items()}
        if not id2label:
            raise ValueError(f"{self.model_path}/config.json names no id2label")
        mapping = {_label_key(k): v for k, v in _DEFAULT_LABEL_MAP.items()}
        for key, value in (label_map or {}).items():
            if value not in (SUPPORTS, REFUTES, NEUTRAL):
                raise ValueError(f"label_map values must be {SUPPORTS}, {REFUTES} or {NEUTRAL}, got {value!r}")
            mapping[_label_key(key)] = value
        self.classes: tuple[str, ...] = tuple(
            self._place(id2label[i], mapping) for i in range(len(id2label))
        )
        self._fold = self._folding_matrix()

    def _place(self, name: str, mapping: Mapping[str, str]) -> str:
        placed = mapping.get(_label_key(name))
        if placed is None:
            raise ValueError(
                f"the model's label {name!r} cannot be placed: pass label_map={{{name!r}: "
                f"'SUPPORTS' | 'REFUTES' | 'NEUTRAL'}}"
            )
        return placed

    def _folding_matrix(self) -> FloatArray:
        """classes x 2 weights that turn class probabilities into (supports, refutes) mass."""
        side = {SUPPORTS: 0, REFUTES: 1}
        fold = np.zeros((len(self.classes), 2))
        for row, placed in enumerate(self.classes):
            if placed == NEUTRAL:
                if self.neutral != "drop":
                    fold[row, side[self.neutral.upper()]] = 1.0
            else:
                fold[row, side[placed]] = 1.0
        if not fold[:, 0].any() or not fold[:, 1].any():
            raise ValueError(
                f"the model's labels {self.classes} leave no {SUPPORTS if not fold[:, 0].any() else REFUTES} "
                f"side with neutral={self.neutral!r}"
            )
        return fold

    def probabilities(self, items: Sequence[Item]) -> FloatArray:
        """The model's own class probabilities (softmax of its logits), one row per item."""
        if not items:
            return np.zeros((0, len(self.classes)))
        runner = _load_nli_runner(str(self.model_path), str(self.onnx_cache_dir), self.threads)
        logits = runner.logits(items, self.batch_size)
        shifted = logits - logits.max(axis=1, keepdims=True)
        exp = np.exp(shifted)
        return np.asarray(exp / exp.sum(axis=1, keepdims=True), dtype=np.float64)

    def verdicts(self, items: Sequence[Item], *, show_progress: bool = False) -> list[Verdict]:
        mass = self.probabilities(items) @ self._fold
        total = mass.sum(axis=1)
        supports = np.divide(mass[:, 0], total, out=np.full(len(mass), 0.5), where=total > 0)
        return [Verdict.from_supports(p) for p in supports]


def nli_onnx_path(model_path: str | Path, cache_dir: str | Path) -> Path:
    """Where the ONNX export of an NLI model folder lives (it changes with the weights)."""
    model_dir = Path(model_path)
    return Path(cache_dir) / f"{model_dir.resolve().name}-{_weights_fingerprint(model_dir)}.nli.onnx"


def export_nli_onnx(model_path: str | Path, cache_dir: str | Path) -> Path:
    """Export a sequence-classification model to ONNX (logits output), once per weights.

    Unlike the encoder's export, the graph is neither fused offline nor quantised: NLI
    heads are sensitive to int8, and the optimiser's fusions are BERT-specific while an
    operator may bring any architecture. ONNX Runtime still applies its own graph
    optimisations when it loads the file.
    """
    target = nli_onnx_path(model_path, cache_dir)
    if target.exists():
        return target
    with cache_build_lock(target.parent, target.stem):
        if target.exists():  # built by another process while this one waited
            return target
        with onnxruntime_quiet():
            _export_nli(Path(model_path), target)
    return target


def _export_nli(model_dir: Path, target: Path) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(
        str(model_dir), local_files_only=True, attn_implementation="eager"
    ).eval()
    sample = tokenizer(["a claim", "a longer claim here"], ["some evidence", "more evidence"], padding=True, return_tensors="pt")
    names = [name for name in ("input_ids", "attention_mask", "token_type_ids") if name in sample]

    class _Logits(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *inputs: Any) -> Any:
            return self.inner(**dict(zip(names, inputs))).logits

    export_module_onnx(_Logits(model), sample, names, "logits", {0: "batch"}, target)


class _NliRunner:
    """Tokeniser + one ONNX Runtime session, in length-sorted batches."""

    def __init__(self, model_path: str, onnx_file: Path, threads: int) -> None:
        import onnxruntime as ort
        from transformers import AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
        config = json.loads((Path(model_path) / "config.json").read_text(encoding="utf-8"))
        limits = [int(self.tokenizer.model_max_length), int(config.get("max_position_embeddings") or 512), 512]
        self.max_length = min(limit for limit in limits if limit > 0)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(onnx_file), options, providers=["CPUExecutionProvider"])
        self.input_names = [i.name for i in self.session.get_inputs()]
        self.pad_id = self.tokenizer.pad_token_id or 0

    def _tokenize(self, items: Sequence[Item]) -> tuple[list[list[int]], list[list[int]] | None]:
        """(claim, evidence) pairs; a claim without evidence alone, with no empty second
        segment (what the tokenizer itself does for one claim and an empty string)."""
        ids: list[list[int]] = [[] for _ in items]
        types: list[list[int]] | None = [[] for _ in items]
        for paired in (True, False):
            rows = [i for i, (_, evidence) in enumerate(items) if bool(evidence) == paired]
            if not rows:
                continue
            claims = [items[i][0] for i in rows]
            if paired:
                evidence = [" ".join(items[i][1]) for i in rows]
                encoded = self.tokenizer(claims, evidence, truncation=True, max_length=self.max_length)
            else:
                encoded = self.tokenizer(claims, truncation=True, max_length=self.max_length)
            for position, i in enumerate(rows):
                ids[i] = encoded["input_ids"][position]
                if types is not None:
                    if "token_type_ids" in encoded:
                        types[i] = encoded["token_type_ids"][position]
                    else:
                        types = None
        return ids, types

    def logits(self, items: Sequence[Item], batch_size: int) -> FloatArray:
        ids, types = self._tokenize(items)
        order = sorted(range(len(items)), key=lambda i: -len(ids[i]))
        output: FloatArray | None = None
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            width = max(len(ids[i]) for i in batch)
            input_ids = np.full((len(batch), width), self.pad_id, dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            token_types = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                input_ids[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
                if types is not None:
                    token_types[row, : len(types[i])] = types[i]
            feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": token_types}
            logits = self.session.run(None, {name: feeds[name] for name in self.input_names})[0]
            if output is None:
                output = np.zeros((len(items), logits.shape[1]), dtype=np.float64)
            output[batch] = logits
        assert output is not None
        return output


_nli_lock = threading.Lock()


@lru_cache(maxsize=4)
def _load_nli_runner(model_path: str, cache_dir: str, threads: int | None) -> _NliRunner:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with _nli_lock:
        onnx_file = export_nli_onnx(model_path, cache_dir)
        return _NliRunner(model_path, onnx_file, threads or min(os.cpu_count() or 1, 4))
