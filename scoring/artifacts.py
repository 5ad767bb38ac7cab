"""Annotation-artifact analysis of the claims, for the researchers' dataset export.

A claim-collection protocol can leave "give-away" words that reveal the label without
the evidence (Gururangan et al. 2018, "Annotation Artifacts"; FM2 paper, Table 3 and
appendix C). The export reports the same measures as those papers so that a new FM2
release can be compared with the original and with FEVER:

* the most label-predictive bigrams by local mutual information (LMI),
* the most label-affiliated words by smoothed PMI,
* a claim-only classifier and the easy/hard partition it induces,
* the split statistics of the FM2 paper's Table 1 and claim length per label.

Pure functions over ``(text, label)`` pairs (labels are any strings, e.g. SUPPORTS and
REFUTES), so the export can call them on any split without Django.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "Example",
    "ScoredTerm",
    "BaselineResult",
    "Table1Stats",
    "LengthStats",
    "tokenize",
    "bigrams",
    "examples_from_records",
    "top_bigrams_by_lmi",
    "top_bigrams_by_lmi_per_label",
    "top_words_by_pmi",
    "claim_only_pipeline",
    "claim_only_baseline",
    "cross_validated_accuracy",
    "table1_stats",
    "claim_length_by_label",
]

Example = tuple[str, str]
"""A claim's text and its label."""

_TOKEN = re.compile(r"\w+|[^\w\s]")


def tokenize(text: str) -> list[str]:
    """Lowercased words, and every punctuation mark as a token of its own.

    This is the tokenization that reproduces the FM2 paper's LMI bigrams: the paper
    lists ``mad ,`` and ``, mad`` (from "It's a Mad, Mad, Mad, Mad World"), so commas
    are split off, and its bigrams are lowercase. Apostrophes are split too ("it's" ->
    ``it ' s``), as BERT's basic tokenizer does; keeping "'s" on the word gives the same
    REFUTES list on dev. Each symbol is its own token ("E=mc^2" -> ``e = mc ^ 2``).
    """
    return _TOKEN.findall(text.lower())


def bigrams(tokens: Sequence[str]) -> list[str]:
    """Adjacent token pairs, joined by a space as the papers print them."""
    return [f"{first} {second}" for first, second in zip(tokens, tokens[1:])]


def examples_from_records(records: Iterable[Mapping[str, Any]]) -> list[Example]:
    """``(text, label)`` pairs from records in the FM2 JSON Lines fields."""
    return [(str(record["text"]), str(record["label"])) for record in records]


@dataclass(frozen=True, slots=True)
class ScoredTerm:
    """A word or bigram with its association score for one label.

    ``count_with_label`` and ``count`` are occurrences (with the label, overall);
    ``label_example_share`` is the share of the label's claims that contain the term,
    the figure Gururangan et al.'s Table 4 prints beside each word.
    """

    term: str
    score: float
    count_with_label: int
    count: int
    label_example_share: float


def _ranked(
    scores: Iterable[tuple[str, float]],
    n: int,
    joint: Counter[tuple[str, str]],
    totals: Counter[str],
    label: str,
    examples_with_term: Counter[str],
    label_examples: int,
) -> list[ScoredTerm]:
    # sorted() is stable: ties keep the order the scores came in (first occurrence).
    ranked = sorted(scores, key=lambda item: -item[1])[:n]
    return [
        ScoredTerm(
            term=term,
            score=score,
            count_with_label=joint[(term, label)],
            count=totals[term],
            label_example_share=(
                examples_with_term[term] / label_examples if label_examples else 0.0
            ),
        )
        for term, score in ranked
    ]


def top_bigrams_by_lmi(examples: Iterable[Example], label: str, n: int = 10) -> list[ScoredTerm]:
    """The ``n`` bigrams most predictive of ``label`` by local mutual information.

    ``LMI(w, l) = p(w, l) * log(p(l | w) / p(l))`` (Schuster et al. 2019, FM2 appendix
    C), with empirical probabilities over bigram occurrences across all claims:
    ``p(w, l) = count(w, l) / N``, ``p(l | w) = count(w, l) / count(w)`` and
    ``p(l) = count(l) / N``, where ``count(l)`` is the number of bigrams in claims
    labelled ``l`` and ``N`` the number of all bigrams. PMI alone favours rare bigrams;
    the ``p(w, l)`` factor weighs them by how often they occur.

    Ties (bigrams with the same counts) keep the order in which the bigrams first occur
    in ``label``'s claims, in input order; on the FM2 dev file this reproduces the
    paper's list exactly, including ``mad ,`` before ``, mad`` and ``mary ,`` before
    ``queen of`` (and ``kinetic energy``, tied with them, just outside the top ten).
    Bigrams never seen with ``label`` are not ranked.
    """
    return top_bigrams_by_lmi_per_label(examples, [label], n)[label]


def top_bigrams_by_lmi_per_label(examples: Iterable[Example], labels: Iterable[str], n: int = 10) -> dict[str, list[ScoredTerm]]:
    """:func:`top_bigrams_by_lmi` for each of ``labels``, in one pass over ``examples``.

    Bounded memory, for exports of any size: each bigram occurrence is one int64 (two token
    ids) in a NumPy array, about 16 bytes per occurrence with its label and claim, and the
    counts come from ``np.unique``. Counting bigrams as strings in dicts took about 270 MB
    for 76,000 claims of a wide vocabulary (a million distinct bigrams), twice this.
    """
    vocabulary: dict[str, int] = {}
    keys: list[np.ndarray] = []
    label_ids: list[np.ndarray] = []
    claim_ids: list[np.ndarray] = []
    label_index: dict[str, int] = {}
    pending_keys: list[int] = []
    pending_labels: list[int] = []
    pending_claims: list[int] = []
    claims_per_label: dict[int, int] = {}
    for claim, (text, label) in enumerate(examples):
        ids = [vocabulary.setdefault(token, len(vocabulary)) for token in tokenize(text)]
        code = label_index.setdefault(label, len(label_index))
        claims_per_label[code] = claims_per_label.get(code, 0) + 1
        for first, second in zip(ids, ids[1:]):
            pending_keys.append((first << 32) | second)
            pending_labels.append(code)
            pending_claims.append(claim)
        if len(pending_keys) >= 200_000:
            keys.append(np.array(pending_keys, dtype=np.int64))
            label_ids.append(np.array(pending_labels, dtype=np.int32))
            claim_ids.append(np.array(pending_claims, dtype=np.int32))
            pending_keys, pending_labels, pending_claims = [], [], []
    keys.append(np.array(pending_keys, dtype=np.int64))
    label_ids.append(np.array(pending_labels, dtype=np.int32))
    claim_ids.append(np.array(pending_claims, dtype=np.int32))
    del pending_keys, pending_labels, pending_claims
    all_keys = np.concatenate(keys)
    all_labels = np.concatenate(label_ids)
    all_claims = np.concatenate(claim_ids)
    del keys, label_ids, claim_ids
    words = [""] * len(vocabulary)
    for token, index in vocabulary.items():
        words[index] = token
    del vocabulary
    total = len(all_keys)
    unique_keys, totals = np.unique(all_keys, return_counts=True)
    result: dict[str, list[ScoredTerm]] = {}
    for label in labels:
        label_code = label_index.get(label)
        if label_code is None or total == 0:
            result[label] = []
            continue
        mask = all_labels == label_code
        label_keys = all_keys[mask]
        if len(label_keys) == 0:
            result[label] = []
            continue
        p_label = len(label_keys) / total
        joint_keys, first_seen, joint = np.unique(label_keys, return_index=True, return_counts=True)
        gram_totals = totals[np.searchsorted(unique_keys, joint_keys)]
        # Vectorised scores pick the candidates; the formula in Python floats,
        # count / total * math.log(count / totals / p_label), then scores them exactly, so
        # the values do not depend on NumPy's rounding and ties fall back on first appearance.
        rough = joint / total * np.log(joint / gram_totals / p_label)
        if len(rough) > n:
            kth = np.partition(rough, len(rough) - n)[len(rough) - n]
            candidates = np.nonzero(rough >= kth - abs(kth) * 1e-9 - 1e-300)[0]
        else:
            candidates = np.arange(len(rough))
        del rough
        exact = [
            (-(c / total * math.log(c / t / p_label)), int(first), int(index))
            for index, c, t, first in zip(
                candidates.tolist(),
                joint[candidates].tolist(),
                gram_totals[candidates].tolist(),
                first_seen[candidates].tolist(),
            )
        ]
        exact.sort()
        order = [index for _, _, index in exact[:n]]
        scores = {index: -negative for negative, _, index in exact[:n]}
        label_claims = all_claims[mask]
        label_examples = claims_per_label[label_code]
        terms = []
        for index in order:
            key = int(joint_keys[index])
            containing = len(np.unique(label_claims[label_keys == key]))
            terms.append(
                ScoredTerm(
                    term=f"{words[key >> 32]} {words[key & 0xFFFFFFFF]}",
                    score=float(scores[index]),
                    count_with_label=int(joint[index]),
                    count=int(gram_totals[index]),
                    label_example_share=containing / label_examples if label_examples else 0.0,
                )
            )
        result[label] = terms
    return result


def top_words_by_pmi(
    examples: Iterable[Example], label: str, n: int = 10, smoothing: float = 100.0
) -> list[ScoredTerm]:
    """The ``n`` words most affiliated with ``label`` by add-``smoothing`` PMI.

    As in Gururangan et al. (2018), section 3.1:
    ``PMI(word, class) = log p(word, class) / (p(word, .) p(., class))``, with
    ``smoothing`` (100) added to every raw word-class count, for every word of the
    vocabulary and every class, before the probabilities are taken. The aggressive
    smoothing pulls rare words' PMI to zero, so the top words are both frequent and
    discriminative. Counts are token occurrences of words (tokens with a letter or
    digit; punctuation is left out: the paper ranks words). Ties keep first-occurrence
    order, as in :func:`top_bigrams_by_lmi`.
    """
    joint: Counter[tuple[str, str]] = Counter()
    totals: Counter[str] = Counter()
    labels: set[str] = set()
    examples_with_term: Counter[str] = Counter()
    label_examples = 0
    for text, example_label in examples:
        labels.add(example_label)
        words = [token for token in tokenize(text) if _is_word(token)]
        for word in words:
            joint[(word, example_label)] += 1
            totals[word] += 1
        if example_label == label:
            label_examples += 1
            examples_with_term.update(set(words))
    if label not in labels or not totals:
        return []
    vocabulary = len(totals)
    grand_total = sum(totals.values()) + smoothing * vocabulary * len(labels)
    label_total = sum(count for (_, l), count in joint.items() if l == label)
    p_label = (label_total + smoothing * vocabulary) / grand_total
    # Every word, seen with the label or not: smoothing gives unseen pairs a count too.
    def pmi(word: str, count: int) -> float:
        joint_count = joint[(word, label)] + smoothing
        if joint_count == 0:  # only without smoothing: never seen with the label
            return -math.inf
        p_joint = joint_count / grand_total
        p_word = (count + smoothing * len(labels)) / grand_total
        return math.log(p_joint / (p_word * p_label))

    scores = ((word, pmi(word, count)) for word, count in totals.items())
    return _ranked(scores, n, joint, totals, label, examples_with_term, label_examples)


def _is_word(token: str) -> bool:
    return any(character.isalnum() for character in token)


@dataclass(frozen=True, slots=True)
class BaselineResult:
    """A claim-only classifier's accuracy per split, and whether it got each claim right.

    ``correct[split][i]`` refers to the i-th example of that split as given, so the
    export can tag each claim easy (the claim alone gives its label away) or hard.
    """

    accuracy: dict[str, float]
    correct: dict[str, list[bool]]
    predictions: dict[str, list[str]]


def claim_only_pipeline(seed: int) -> Any:
    """Logistic regression over TF-IDF word 1-2-grams and character 2-5-grams.

    Gururangan et al. found such a model on par with fastText for hypothesis-only
    classification (their footnote 2); it needs no GPU and no torch, and the word
    features use :func:`tokenize` so punctuation counts, as in the LMI analysis.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline, make_union

    words = TfidfVectorizer(
        tokenizer=tokenize,
        lowercase=False,
        token_pattern=None,
        ngram_range=(1, 2),
        sublinear_tf=True,
    )
    characters = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True)
    return make_pipeline(
        make_union(words, characters),
        LogisticRegression(C=1.0, solver="liblinear", random_state=seed),
    )


def _cross_validated_predictions(
    examples: Sequence[Example], folds: int, seed: int, groups: Sequence[Hashable] | None
) -> list[str]:
    from sklearn.model_selection import (
        StratifiedGroupKFold,
        StratifiedKFold,
        cross_val_predict,
    )

    texts = [text for text, _ in examples]
    labels = [label for _, label in examples]
    if len(set(labels)) < 2:
        raise ValueError("cross-validation needs examples of at least two labels")
    splitter: Any
    if groups is None:
        splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    else:
        if len(groups) != len(examples):
            raise ValueError("groups must give one group per example")
        splitter = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=seed)
    predicted = cross_val_predict(
        claim_only_pipeline(seed), texts, labels, cv=splitter, groups=groups
    )
    return [str(label) for label in predicted]


def claim_only_baseline(
    train: Sequence[Example],
    evaluate_on: Mapping[str, Sequence[Example]],
    *,
    folds: int = 5,
    seed: int = 0,
    groups: Mapping[str, Sequence[Hashable]] | None = None,
) -> BaselineResult:
    """How far the claims alone, without evidence, give their labels away.

    Trained on ``train`` and evaluated on each split of ``evaluate_on``. With an empty
    ``train`` (e.g. only a dev file at hand), each split is scored by ``folds``-fold
    cross-validation within itself, every claim predicted by a model that never saw it.

    ``groups`` (split name -> one group per example, e.g. the claim's page) makes that
    cross-validation keep each group in one fold, as the release keeps each page in
    one split. Without it, claims about the same page land on both sides of a fold and
    the model learns page-specific words (on FM2 dev: about 61% accuracy ungrouped,
    about 52% grouped by page, chance being 51%). Pass pages to measure artifacts, not
    topics; ``groups`` is ignored when ``train`` is given.
    """
    predictions: dict[str, list[str]] = {}
    if train:
        model = claim_only_pipeline(seed)
        model.fit([text for text, _ in train], [label for _, label in train])
        for split, examples in evaluate_on.items():
            if examples:
                predicted = model.predict([text for text, _ in examples])
                predictions[split] = [str(label) for label in predicted]
            else:
                predictions[split] = []
    else:
        for split, examples in evaluate_on.items():
            split_groups = groups.get(split) if groups is not None else None
            predictions[split] = _cross_validated_predictions(examples, folds, seed, split_groups)
    correct = {
        split: [guess == label for guess, (_, label) in zip(predictions[split], examples)]
        for split, examples in evaluate_on.items()
    }
    accuracy = {
        split: (sum(hits) / len(hits) if hits else float("nan")) for split, hits in correct.items()
    }
    return BaselineResult(accuracy=accuracy, correct=correct, predictions=predictions)


def cross_validated_accuracy(
    examples: Sequence[Example],
    folds: int = 5,
    seed: int = 0,
    groups: Sequence[Hashable] | None = None,
) -> float:
    """The claim-only classifier's ``folds``-fold cross-validated accuracy on ``examples``.

    See :func:`claim_only_baseline` for why passing each claim's page as ``groups``
    gives the honest figure.
    """
    result = claim_only_baseline(
        [],
        {"all": examples},
        folds=folds,
        seed=seed,
        groups={"all": groups} if groups is not None else None,
    )
    return result.accuracy["all"]


@dataclass(frozen=True, slots=True)
class Table1Stats:
    """One row of the FM2 paper's Table 1 for a split."""

    claims: int
    supports_percent: float
    pages: int
    claim_tokens: float
    evidence_tokens: float


def table1_stats(
    examples_with_gold: Iterable[Mapping[str, Any]],
    *,
    tokenizer: Callable[[str], Sequence[str]] = tokenize,
    supports_label: str = "SUPPORTS",
) -> Table1Stats:
    """The FM2 paper's Table 1 for records in the FM2 JSON Lines fields.

    Reads ``text``, ``label``, ``wikipedia_page`` and ``gold_evidence`` (a list of
    ``{text, ...}``). ``supports_percent`` is rounded to one decimal as in the paper;
    the token averages are left unrounded. ``evidence_tokens`` averages over gold
    evidence sentences, not claims.

    The paper does not name its tokenizer. On the dev file, :func:`tokenize` gives
    15.9 tokens per claim and 31.4 per evidence sentence against the paper's 15 and 31
    (truncated, it seems); whitespace splitting gives 14.0 and 25.7 (32.4 per claim's
    whole evidence), which fits the paper worse. So the default is :func:`tokenize`.
    """
    claims = 0
    supports = 0
    pages: set[str] = set()
    claim_tokens = 0
    evidence_sentences = 0
    evidence_tokens = 0
    for record in examples_with_gold:
        claims += 1
        supports += record["label"] == supports_label
        pages.add(str(record["wikipedia_page"]))
        claim_tokens += len(tokenizer(str(record["text"])))
        for evidence in record.get("gold_evidence") or ():
            evidence_sentences += 1
            evidence_tokens += len(tokenizer(str(evidence["text"])))
    return Table1Stats(
        claims=claims,
        supports_percent=round(100 * supports / claims, 1) if claims else 0.0,
        pages=len(pages),
        claim_tokens=claim_tokens / claims if claims else 0.0,
        evidence_tokens=evidence_tokens / evidence_sentences if evidence_sentences else 0.0,
    )


@dataclass(frozen=True, slots=True)
class LengthStats:
    """Claim length in tokens for one label (Annotation Artifacts, section 3.2)."""

    claims: int
    mean: float
    median: float
    stdev: float
    minimum: int
    maximum: int
    histogram: dict[int, int]


def claim_length_by_label(
    examples: Iterable[Example], *, tokenizer: Callable[[str], Sequence[str]] = tokenize
) -> dict[str, LengthStats]:
    """Token-length statistics of the claims per label, labels in sorted order.

    In SNLI, neutral hypotheses were longer and entailed ones shorter, which made
    length alone a give-away; a fair release has similar lengths across labels.
    """
    lengths: dict[str, list[int]] = {}
    for text, label in examples:
        lengths.setdefault(label, []).append(len(tokenizer(text)))
    return {
        label: LengthStats(
            claims=len(values),
            mean=statistics.fmean(values),
            median=float(statistics.median(values)),
            stdev=statistics.stdev(values) if len(values) > 1 else 0.0,
            minimum=min(values),
            maximum=max(values),
            histogram=dict(sorted(Counter(values).items())),
        )
        for label, values in sorted(lengths.items())
    }
