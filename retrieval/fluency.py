"""Does a text read as a claim, or as grammar with a page's words in its slots? A learnt score.

The save's word rules (``scoring.word_order``) refuse a template whose slots break a phrase
("Shaka was the sometime of between in figure."), but not one whose slots get words of the
right kind ("Gandhi was the Gujarati of Telegraph in Minister."): that needs knowing what the
words mean. Class n-grams and linear probes on frozen MiniLM vectors did not get there
(docs/authoring.md). This module fine-tunes the MiniLM encoder the game already carries (its
mean-pooled vector and one logistic output) to tell a page's own sentences and claims from
the same texts with words of the page put in at random, and sets its bar at a quantile of the
scores of real claims of pages it never trained on.

Nothing here knows any benchmark's template families: the negatives are real texts with page
words swapped in (:func:`corruptions`), two ways: a few words of any kind, or most of the
content words. ``bench/bench_fluency.py`` measures the result on templates of pages the model
never saw.

Training runs in a command or the worker (minutes on 2 cores for a few thousand examples),
never in a request; it reports progress through a callback. Plain Python and torch, no Django.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import shutil
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from retrieval.text import STOP_WORDS

META_FILE = "fluency.json"
HEAD_FILE = "head.json"
_EDGE = ".,;:!?\"()[]“”"
_WORD = re.compile(r"^[^\W_]+(?:[-'’][^\W_]+)*$")
_TAIL = re.compile(r"[.,;:!?)\"”]+$")


@dataclass(frozen=True, slots=True)
class PageTexts:
    """One page's texts: its sentences (the words templates are made of), its claims, and its
    title (kept as it stands when a corruption fills a text's other words, as a claim about the
    page keeps its subject)."""

    sentences: Sequence[str]
    claims: Sequence[str] = ()
    title: str = ""


def page_words(sentences: Sequence[str], *, content: bool) -> list[str]:
    """The words of ``sentences`` as written (punctuation trimmed); stop words out when ``content``."""
    found = []
    for sentence in sentences:
        for raw in sentence.split():
            word = raw.strip(_EDGE)
            if word and _WORD.match(word) and not (content and word.casefold() in STOP_WORDS):
                found.append(word)
    return found


def _put(token: str, word: str) -> str:
    """``word`` in ``token``'s place, keeping the punctuation that ended it."""
    tail = _TAIL.search(token)
    return word + (tail.group(0) if tail else "")


def corrupt(
    text: str, *, any_words: Sequence[str], content_words: Sequence[str], rng: random.Random, keep: frozenset[str] = frozenset()
) -> str | None:
    """``text`` with words of its page put in, one of three ways drawn at random:

    - a few (a fifth of the time): 1 to 4 words of any kind replaced by words of any kind;
    - content (three tenths): about 70% of its content words (one at least) replaced by
      content words;
    - frame (half): every word that is neither a stop word nor in ``keep`` (the title's words)
      replaced by a word of the page, of any kind or content only: the text's grammar kept
      as a frame, its subject kept, its slots filled at random.

    None when the text is too short to corrupt, or when the words drawn were the ones
    already there."""
    tokens = text.split()
    if len(tokens) < 3 or not any_words:
        return None
    changed = list(tokens)
    content = [
        i for i, token in enumerate(tokens) if (core := token.strip(_EDGE)) and core.casefold() not in STOP_WORDS
    ]
    way = rng.random()
    if way < 0.2 or not content_words or not content:
        for position in rng.sample(range(len(tokens)), min(rng.randint(1, 4), max(1, len(tokens) // 2))):
            changed[position] = _put(tokens[position], rng.choice(any_words))
    elif way < 0.5:
        chosen = [i for i in content if rng.random() < 0.7] or [rng.choice(content)]
        for position in chosen:
            changed[position] = _put(tokens[position], rng.choice(content_words))
    else:
        pool = any_words if rng.random() < 0.5 else content_words
        for position in content:
            if tokens[position].strip(_EDGE).casefold() not in keep:
                changed[position] = _put(tokens[position], rng.choice(pool))
    return None if changed == tokens else " ".join(changed)


def corruptions(pages: Mapping[str, PageTexts], *, rng: random.Random, limit: int | None = None) -> list[tuple[str, int]]:
    """Real texts of ``pages`` (label 0) and one corruption of each (label 1), shuffled: every
    claim first (claims are what the model judges), then sentences drawn at random to fill
    ``limit`` examples (all of them when None)."""
    claims: list[tuple[str, int]] = []
    sentences: list[tuple[str, int]] = []
    for title in sorted(pages):
        page = pages[title]
        any_words = page_words(page.sentences, content=False)
        content_words = page_words(page.sentences, content=True)
        keep = frozenset(word.casefold() for word in page_words([page.title], content=True))
        for texts, into in ((page.claims, claims), (page.sentences, sentences)):
            for text in texts:
                into.append((text, 0))
                changed = corrupt(text, any_words=any_words, content_words=content_words, rng=rng, keep=keep)
                if changed is not None:
                    into.append((changed, 1))
    rng.shuffle(sentences)
    examples = claims + sentences
    if limit is not None:
        examples = examples[:limit]
    rng.shuffle(examples)
    return examples


@dataclass(frozen=True, slots=True)
class TrainOptions:
    examples: int = 8000  # at most this many (text, label) pairs are trained on (claims first)
    epochs: int = 2
    batch_size: int = 32
    learning_rate: float = 5e-5
    max_length: int = 64
    # The share of real claims the bar may refuse (conformal_bar): 0.75%, what the 1%
    # leaves beside the typo rule's 0.26% of the FM2 dev claims ("the of the").
    real_share: float = 0.0075
    vouch_share: float = 0.1  # above the gate: the share of real claims the model does not vouch for (FluencyScorer.vouches_for)
    held_out_share: float = 0.3  # pages kept out of training to set the bar on
    seed: int = 0


@dataclass(slots=True)
class FluencyReport:
    """What a training run did, kept beside the model (``fluency.json``)."""

    base_model: str
    threshold: float
    real_share: float
    trained_pages: int
    held_out_pages: int
    held_out_texts: int
    examples: int
    epochs: int
    seconds: float
    losses: list[float] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    held_out_scores: list[float] = field(default_factory=list)  # the bar's texts' scores, sorted: a new bar needs no training
    bar_rank: int = 1  # the bar is the bar_rank-th highest of held_out_scores
    gate: float | None = None  # the model vouches for a text scoring at most this (FluencyScorer.vouches_for)


def conformal_bar(scores: Sequence[float], share: float) -> tuple[float, int]:
    """The bar, and its rank from the top, that refuses at most ``share`` of new real claims.

    The bar is the k-th highest of the held-out scores with k = floor(share * (n + 1)): a new
    claim exchangeable with the n held out ranks among the k highest of the n + 1 with
    probability k / (n + 1) <= share, and only then scores above the bar (split conformal
    prediction). An empirical quantile of n texts (what this used before) refuses about
    twice ``share`` when n is a few hundred: its bar sits between the two highest scores.
    With fewer than 1 / share - 1 texts k would be 0; the bar is then the highest score,
    which refuses 1 / (n + 1) of new claims, more than ``share``."""
    ordered = sorted(scores, reverse=True)
    if not ordered:
        raise ValueError("no held-out scores to set a bar on")
    rank = min(len(ordered), max(1, math.floor(share * (len(ordered) + 1))))
    return float(ordered[rank - 1]), rank


def _split_pages(titles: Sequence[str], share: float, seed: int) -> tuple[list[str], list[str]]:
    ordered = sorted(titles)
    random.Random(seed).shuffle(ordered)
    cut = max(1, round(len(ordered) * share)) if len(ordered) > 1 else 0
    return ordered[cut:], ordered[:cut]


class _Classifier:
    """The encoder with mean pooling and one logistic output (torch)."""

    def __init__(self, encoder: Any, head: Any) -> None:
        self.encoder = encoder
        self.head = head

    def logits(self, batch: Mapping[str, Any]) -> Any:
        hidden = self.encoder(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.head(pooled).squeeze(-1)


def _torch() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    return torch


def _scores(classifier: _Classifier, tokenizer: Any, texts: Sequence[str], *, max_length: int, batch_size: int = 64) -> np.ndarray:
    torch = _torch()
    out = np.zeros(len(texts), dtype=np.float64)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            batch = tokenizer([texts[i] for i in chunk], truncation=True, max_length=max_length, padding=True, return_tensors="pt")
            batch.pop("token_type_ids", None)
            out[chunk] = classifier.logits(batch).double().numpy()
    return out


def _batches(examples: Sequence[tuple[str, int]], size: int, rng: random.Random) -> list[list[int]]:
    """The examples' indices in batches of ``size``: shuffled, then sorted by length within
    runs of 16 batches so that a batch pads little, the batches themselves in random order."""
    order = list(range(len(examples)))
    rng.shuffle(order)
    run = size * 16
    batches = []
    for start in range(0, len(order), run):
        part = sorted(order[start : start + run], key=lambda i: len(examples[i][0]))
        batches += [part[i : i + size] for i in range(0, len(part), size)]
    rng.shuffle(batches)
    return batches


def train_fluency(
    pages: Mapping[str, PageTexts],
    *,
    base_model: str | Path,
    out_dir: str | Path,
    options: TrainOptions = TrainOptions(),
    progress: Callable[[int, int], None] | None = None,
) -> FluencyReport:
    """Fine-tune ``base_model`` (a local sentence-transformers or Hugging Face folder) on the
    corruptions of ``pages`` and write the model, its head and its bar to ``out_dir``.

    The pages are split: ``held_out_share`` of them (by title, seeded) never reach training,
    and the bar is set on their claims' scores (their sentences too when they have fewer
    than 100 claims) so that it refuses at most ``real_share`` of real claims
    (:func:`conformal_bar`). ``progress(done, total)`` is called after each
    step. The folder is written under a temporary name and renamed, so a reader never sees
    half a model; re-running replaces it.
    """
    torch = _torch()
    from transformers import AutoModel, AutoTokenizer

    started = time.monotonic()
    torch.manual_seed(options.seed)
    rng = random.Random(options.seed)
    trained_titles, held_titles = _split_pages(list(pages), options.held_out_share, options.seed)
    examples = corruptions({title: pages[title] for title in trained_titles}, rng=rng, limit=options.examples)
    if not examples:
        raise ValueError("no text to train on: the pages have no sentences")
    tokenizer = AutoTokenizer.from_pretrained(str(base_model), local_files_only=True)
    encoder = AutoModel.from_pretrained(str(base_model), local_files_only=True)
    head = torch.nn.Linear(encoder.config.hidden_size, 1)
    classifier = _Classifier(encoder, head)
    # The word vectors stay as they are (half of MiniLM's weights): the model learns how
    # words sit together, not new meanings for the few thousand words of these pages, and each
    # step costs less.
    encoder.get_input_embeddings().weight.requires_grad_(False)
    parameters = [p for p in [*encoder.parameters(), *head.parameters()] if p.requires_grad]
    optimiser = torch.optim.AdamW(parameters, lr=options.learning_rate)
    per_epoch = math.ceil(len(examples) / options.batch_size)
    total = per_epoch * options.epochs
    warmup = max(1, total // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: min(1.0, (step + 1) / warmup) * max(0.0, 1 - step / total))
    losses: list[float] = []
    encoder.train()
    done = 0
    for epoch in range(options.epochs):
        running = []
        for batch_indices in _batches(examples, options.batch_size, random.Random(options.seed + epoch)):
            chunk = [examples[i] for i in batch_indices]
            batch = tokenizer([text for text, _ in chunk], truncation=True, max_length=options.max_length, padding=True, return_tensors="pt")
            batch.pop("token_type_ids", None)
            target = torch.tensor([float(label) for _, label in chunk])
            loss = torch.nn.functional.binary_cross_entropy_with_logits(classifier.logits(batch), target)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            running.append(loss.item())
            done += 1
            if progress is not None:
                progress(done, total)
        losses.append(round(sum(running) / len(running), 4))
    encoder.eval()
    held_claims = [claim for title in held_titles for claim in pages[title].claims]
    held_texts = held_claims if len(held_claims) >= 100 else held_claims + [s for title in held_titles for s in pages[title].sentences]
    # One page only: nothing held out, the bar is the training texts' own.
    bar_texts = held_texts or [text for text, label in examples if label == 0]
    held_scores = _scores(classifier, tokenizer, bar_texts, max_length=options.max_length)
    threshold, rank = conformal_bar(held_scores.tolist(), options.real_share)
    gate, _ = conformal_bar(held_scores.tolist(), options.vouch_share)
    report = FluencyReport(
        base_model=Path(base_model).name,
        threshold=threshold,
        real_share=options.real_share,
        trained_pages=len(trained_titles),
        held_out_pages=len(held_titles),
        held_out_texts=len(held_texts),
        examples=len(examples),
        epochs=options.epochs,
        seconds=round(time.monotonic() - started, 1),
        losses=losses,
        options=asdict(options),
        held_out_scores=sorted(round(float(score), 5) for score in held_scores),
        bar_rank=rank,
        gate=gate,
    )
    out = Path(out_dir)
    scratch = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    scratch.mkdir(parents=True, exist_ok=True)
    encoder.save_pretrained(str(scratch))
    tokenizer.save_pretrained(str(scratch))
    (scratch / HEAD_FILE).write_text(json.dumps({"weight": head.weight.detach().double().numpy()[0].tolist(), "bias": float(head.bias.detach())}))
    (scratch / META_FILE).write_text(json.dumps(asdict(report), indent=1))
    if out.exists():
        old = out.with_name(f".{out.name}.{os.getpid()}.old")
        os.replace(out, old)
        os.replace(scratch, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(scratch, out)
    return report


class FluencyScorer:
    """A trained model folder: ``scores`` (higher reads less like a claim), ``refuses`` (above
    the bar) and ``vouches_for`` (at or below the gate: reads as a claim as plainly as nine
    real claims in ten)."""

    def __init__(self, folder: str | Path) -> None:
        torch = _torch()
        from transformers import AutoModel, AutoTokenizer

        self.folder = Path(folder)
        self.meta = json.loads((self.folder / META_FILE).read_text())
        self.threshold = float(self.meta["threshold"])
        gate = self.meta.get("gate")
        self.gate = float(gate) if gate is not None else -math.inf  # a model from before the gate vouches for nothing
        self.max_length = int(self.meta.get("options", {}).get("max_length", 64))
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.folder), local_files_only=True)
        encoder = AutoModel.from_pretrained(str(self.folder), local_files_only=True).eval()
        weights = json.loads((self.folder / HEAD_FILE).read_text())
        head = torch.nn.Linear(encoder.config.hidden_size, 1)
        with torch.no_grad():
            head.weight.copy_(torch.tensor([weights["weight"]], dtype=head.weight.dtype))
            head.bias.fill_(weights["bias"])
        self._classifier = _Classifier(encoder, head)
        self._recent: dict[str, float] = {}
        self._recent_lock = threading.Lock()

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        return _scores(self._classifier, self.tokenizer, list(texts), max_length=self.max_length)

    def score(self, text: str) -> float:
        """One text's score; the last few are kept, as a save asks about its text twice."""
        with self._recent_lock:
            cached = self._recent.get(text)
        if cached is None:
            cached = float(self.scores([text])[0])
            with self._recent_lock:
                if len(self._recent) >= 64:
                    self._recent.pop(next(iter(self._recent)))
                self._recent[text] = cached
        return cached

    def refuses(self, text: str) -> bool:
        """Does ``text`` score above the bar, as page words in a template rather than a claim?"""
        return self.score(text) > self.threshold

    def vouches_for(self, text: str) -> bool:
        """Does ``text`` read as a claim as plainly as nine real claims in ten (at or below the
        gate)? The save's word-order rule then defers to the model: a short plain claim
        ("Dafoe is married.") can score no better than its own shuffles, and the model, which
        knows what the words mean, reads it as the claim it is."""
        return self.score(text) <= self.gate
