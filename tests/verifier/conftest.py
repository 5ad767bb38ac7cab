"""A world the model in the loop can learn from in a second, and a small encoder for it.

Tests build their own tiny model (the brief: no download, fast): a bag-of-words hashing
encoder stands in for MiniLM, and the claims are written so that evidence sharing the claim's
words means SUPPORTS. The default verifier's head then learns the rule from the game's own
verified claims, exactly as it would from MiniLM vectors.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence

import numpy as np
import pytest

from foolgame.claims.models import Claim, ClaimGold
from foolgame.pages.models import Sentence
from foolgame.verifier import runtime
from tests.factories import CategoryFactory, PageFactory, UserFactory

WORDS = (
    "river castle bridge violin planet harbour empire glacier novel engine temple desert opera "
    "island comet vessel garden fortress canal painter library museum volcano orchestra railway"
).split()
OTHER = "banana purple quantum velvet cactus marble thunder pepper saffron walnut".split()


class HashingEncoder:
    """Words hashed into 64 buckets, L2-normalised: similar word sets, similar vectors."""

    model_name = "test-hashing"
    dimension = 64

    def encode(self, texts: Sequence[str], *, show_progress: bool = False) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, int(hashlib.md5(word.strip(".,").encode()).hexdigest(), 16) % self.dimension] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)


@pytest.fixture(autouse=True)
def hashing_encoder(monkeypatch, settings) -> HashingEncoder:
    """Every verifier of these tests encodes with the hashing encoder, loads in the caller,
    and no version loaded by an earlier test is reused."""
    encoder = HashingEncoder()
    monkeypatch.setattr("foolgame.verifier.services.encoder_get", lambda: encoder)
    monkeypatch.setattr("foolgame.verifier.runtime.encoder_get", lambda: encoder)
    settings.FM2_VERIFIER = {**settings.FM2_VERIFIER, "BLOCKING_LOAD": True, "MIN_CLAIMS": 40, "RETRAIN_EVERY": 20, "MODEL_PATH": None}
    runtime.forget()
    yield encoder
    runtime.forget()


def learnable_claims(pages: int = 12, per_page: int = 6, *, seed: int = 0, first: int = 0, imported: bool = True) -> list[Claim]:
    """``pages`` pages of ``per_page`` claims each, half SUPPORTS (the claim repeats its gold
    sentence's words) and half REFUTES (the claim's words are not in its gold sentence)."""
    rng = random.Random(seed)
    author = UserFactory()
    category = CategoryFactory()
    claims = []
    for p in range(first, first + pages):
        page = PageFactory(title=f"Topic {p}", category=category)
        for c in range(per_page):
            words = rng.sample(WORDS, 6)
            sentence = Sentence.objects.create(page=page, position=c, section_header="History", text=" ".join(words) + ".")
            supports = c % 2 == 0
            text = " ".join(rng.sample(words, 4) if supports else rng.sample(OTHER, 4)) + f" topic {p}."
            claim = Claim.objects.create(
                page=page,
                text=text,
                label=Claim.Label.SUPPORTS if supports else Claim.Label.REFUTES,
                author=author,
                external_id=f"ext-{p}-{c}" if imported else None,
            )
            ClaimGold.objects.create(claim=claim, sentence=sentence, position=0)
            claims.append(claim)
    return claims


def confirm_by_checkers(claim: Claim, n: int = 3, *, label: str | None = None) -> list:
    """``n`` checkers with a tallied record that counts (10 settled claims, 9 right), each of
    whom checked ``claim`` as ``label`` (its author's by default); the checks' gold label set
    as the refresh would. Accounts independent of the author, as docs/verifier.md asks."""
    from django.utils import timezone

    from foolgame.checks.models import Check, CheckTally, ClaimValidation

    label = label or claim.label
    now = timezone.now()
    checkers = []
    for _ in range(n):
        checker = UserFactory()
        tally = CheckTally.objects.create(
            player=checker, number=1, closed_at=now, answered=20, gold=10, right=9, record_right=9, record_seen=10, paid=True, points=90, counting=True
        )
        Check.objects.create(player=checker, claim=claim, dealt_at=now, expires_at=now, answered_at=now, label=label, tally=tally)
        checkers.append(checker)
    ClaimValidation.objects.update_or_create(claim=claim, defaults={"labels": 4, "gold_label": label})
    return checkers
