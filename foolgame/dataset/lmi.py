"""``scoring.artifacts.top_bigrams_by_lmi`` in bounded memory, for exports of any size.

The reference function counts bigrams in dicts keyed by strings: about 270 MB for 76,000
claims of a wide vocabulary (a million distinct bigrams). Here each bigram occurrence is
one int64 (two token ids) in a NumPy array, about 8 bytes per occurrence, and the counts
come from ``np.unique``. Same formula, same counts and the same tie order (first
appearance in the label's claims, in input order), so the same list: a test checks it
against the reference on tables and on the FM2 dev file. Plain Python and NumPy, no
Django: it belongs in ``scoring/`` next to the reference.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from scoring.artifacts import Example, ScoredTerm, tokenize


def top_bigrams_by_lmi_lean(examples: Iterable[Example], labels: Iterable[str], n: int = 10) -> dict[str, list[ScoredTerm]]:
    """The ``n`` bigrams of highest LMI for each of ``labels``, in one pass over ``examples``."""
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
            label_ids.append(np.array(pending_labels, dtype=np.int8))
            claim_ids.append(np.array(pending_claims, dtype=np.int32))
            pending_keys, pending_labels, pending_claims = [], [], []
    keys.append(np.array(pending_keys, dtype=np.int64))
    label_ids.append(np.array(pending_labels, dtype=np.int8))
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
        code = label_index.get(label)
        if code is None or total == 0:
            result[label] = []
            continue
        mask = all_labels == code
        label_keys = all_keys[mask]
        if len(label_keys) == 0:
            result[label] = []
            continue
        p_label = len(label_keys) / total
        joint_keys, first_seen, joint = np.unique(label_keys, return_index=True, return_counts=True)
        gram_totals = totals[np.searchsorted(unique_keys, joint_keys)]
        # Vectorised scores pick the candidates; the reference's own Python-float formula,
        # count / total * math.log(count / totals / p_label), then scores them exactly, so
        # the values are the reference's bit for bit and ties fall back on first appearance.
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
        label_examples = claims_per_label[code]
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


__all__ = ["top_bigrams_by_lmi_lean"]
