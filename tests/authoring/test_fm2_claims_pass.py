"""Every real claim of the FM2 dev split passes the junk rules and is no near-duplicate;
nearly every one reads as a sentence, nearly none of their shuffles do.

The rules of issue 12 (real words, names its page, near-duplicates refused) must refuse
what a cheap bot writes and nothing a person wrote: the 1,169 dev claims, each against the
pool of its page (gold plus retrieved evidence, as ``import_fm2`` builds it). Skipped when
``../shared`` (the data) is not beside the checkout.
"""

from __future__ import annotations

import os
import random
from collections import defaultdict
from itertools import combinations
from pathlib import Path

import pytest
from django.conf import settings

from foolgame.authoring import rules
from retrieval.fm2 import load_fm2

# FM2_DEV names another copy (a worktree has no ../shared beside it).
DEV = Path(os.environ.get("FM2_DEV") or Path(__file__).resolve().parents[2].parent / "shared" / "data" / "fm2" / "dev.jsonl")


@pytest.fixture(scope="module")
def dev():
    if not DEV.exists():
        pytest.skip(f"the FM2 dev split is not at {DEV}")
    return load_fm2(DEV)


def test_every_fm2_dev_claim_has_real_words(dev) -> None:
    refused = [
        claim.text
        for claim in dev.claims
        if not rules.has_real_words(
            claim.text,
            min_words=settings.FM2["CLAIM_MIN_REAL_WORDS"],
            min_real_share=settings.FM2["CLAIM_MIN_REAL_WORD_SHARE"],
            min_letter_share=settings.FM2["CLAIM_MIN_LETTER_SHARE"],
        )
    ]
    assert len(dev.claims) == 1169
    assert refused == []


def test_every_fm2_dev_claim_names_something_of_its_page(dev) -> None:
    prefix = settings.FM2["CLAIM_PAGE_WORD_PREFIX"]
    words = {title: rules.page_words(title, [doc.text for doc in pool], prefix=prefix) for title, pool in dev.pools.items()}
    refused = [claim.text for claim in dev.claims if not rules.names_page(claim.text, words[claim.page_title], prefix=prefix)]
    assert refused == []


def test_no_two_fm2_dev_claims_of_one_page_are_near_duplicates(dev) -> None:
    by_page: dict[str, list[str]] = defaultdict(list)
    for claim in dev.claims:
        by_page[claim.page_title].append(claim.text)
    threshold = settings.FM2["NEAR_DUPLICATE_SIMILARITY"]
    pairs = [(a, b) for texts in by_page.values() for a, b in combinations(texts, 2)]
    assert len(pairs) > 3000
    assert [(a, b) for a, b in pairs if rules.duplicate_key(a) == rules.duplicate_key(b)] == []
    assert [(a, b) for a, b in pairs if rules.similarity(a, b) >= threshold] == []
    # One word apart (issue 36, refused now): one pair among the 3,400, and it is the meaning
    # flip the rule is for, one player's claim and another's with one word changed.
    assert [(a, b) for a, b in pairs if rules.one_word_edit(a, [b])] == [
        ("Woodrow Wilson had roots from Scotland.", "Woodrow Wilson had roots from England.")
    ]


def test_fm2_dev_claims_read_as_sentences_and_their_shuffles_do_not(dev) -> None:
    """Issue 24: at most 1% of real claims refused, at least 95% of their shuffles (the words,
    punctuation attached, in another order). The shipped table was built from the FM2 test
    split, whose pages are none of these."""
    rng = random.Random(24)
    refused = [claim.text for claim in dev.claims if not rules.reads_as_sentence(claim.text)]
    twins = []
    for claim in dev.claims:
        words = claim.text.split()
        while True:
            shuffled = rng.sample(words, len(words))
            if shuffled != words:
                break
        twins.append(" ".join(shuffled))
    passed = [text for text in twins if rules.reads_as_sentence(text)]
    assert len(refused) <= 0.01 * len(dev.claims), refused
    assert len(passed) <= 0.05 * len(twins), passed[:20]


def test_fm2_dev_claims_read_as_claims(dev) -> None:
    """Issue 36: the template rule (no dangling end, no broken phrase) refuses at most 1% of
    real claims (3 of 1,169, each with a typo). Nothing in it was fitted to this split."""
    refused = [claim.text for claim in dev.claims if rules.fluency_problem(claim.text) is not None]
    assert len(refused) <= 0.01 * len(dev.claims), refused
