"""The learnt fluency score (retrieval.fluency): its negatives, its training and its bar, on a
tiny BERT built here (the real MiniLM is measured by bench/bench_fluency.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from retrieval.fluency import (
    META_FILE,
    FluencyScorer,
    PageTexts,
    TrainOptions,
    conformal_bar,
    corrupt,
    corruptions,
    page_words,
    train_fluency,
)

pytest.importorskip("torch")

NOUNS = "king queen army river city temple poet ship farmer bridge".split()
VERBS = "built ruled crossed praised burned founded".split()
PLACES = "Zulu Paris Rome Delhi Lima Oslo".split()
FILLERS = "the of in by and a was".split()
WORDS = sorted({*(w.lower() for w in NOUNS + VERBS + PLACES + FILLERS), ".", ","})


def _sentence(rng: random.Random, place: str) -> str:
    return f"The {rng.choice(NOUNS)} of {place} {rng.choice(VERBS)} the {rng.choice(NOUNS)} by the {rng.choice(NOUNS)}."


def _pages(count: int, per_page: int = 12, seed: int = 1) -> dict[str, PageTexts]:
    rng = random.Random(seed)
    pages = {}
    for index in range(count):
        place = PLACES[index % len(PLACES)]
        sentences = [_sentence(rng, place) for _ in range(per_page)]
        pages[f"{place} {index}"] = PageTexts(sentences=sentences, claims=[_sentence(rng, place) for _ in range(4)])
    return pages


def _tiny_encoder(folder: Path) -> Path:
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder.mkdir(parents=True)
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab=str(vocab), do_lower_case=True, model_max_length=64)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(WORDS) + 5, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64, initializer_range=0.2)
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_a_corruption_puts_words_of_the_page_in_and_keeps_the_punctuation() -> None:
    text = "The king of Zulu built the temple by the river."
    words = page_words(["Lima farmer crossed", "Oslo poet, praised."], content=False)
    assert words == ["Lima", "farmer", "crossed", "Oslo", "poet", "praised"]
    seen = set()
    for seed in range(40):
        changed = corrupt(text, any_words=words, content_words=words, rng=random.Random(seed))
        assert changed is not None and changed != text
        old, new = text.split(), changed.split()
        assert len(new) == len(old) and new[-1].endswith(".")
        swapped = [b.strip(".,") for a, b in zip(old, new) if a != b]
        assert swapped and set(swapped) <= set(words)
        seen.add(changed)
    assert len(seen) > 20  # many different corruptions, not one
    assert corrupt("Too short.", any_words=words, content_words=words, rng=random.Random(0)) is None


def test_every_real_text_is_a_positive_and_each_has_one_corruption() -> None:
    pages = _pages(3)
    examples = corruptions(pages, rng=random.Random(0))
    real = [text for text, label in examples if label == 0]
    assert sorted(real) == sorted(t for p in pages.values() for t in [*p.claims, *p.sentences])
    # One corruption a text, unless the words drawn were the ones already there (small pages).
    assert 0.9 * len(real) <= sum(label for _, label in examples) <= len(real)
    assert examples != corruptions(pages, rng=random.Random(1))  # shuffled by the seed


def test_training_writes_a_model_whose_bar_refuses_the_stated_share_of_held_out_claims(tmp_path: Path) -> None:
    base = _tiny_encoder(tmp_path / "base")
    pages = _pages(30)
    options = TrainOptions(examples=480, epochs=3, batch_size=16, learning_rate=3e-3, real_share=0.1, held_out_share=0.2, seed=3)
    steps = []
    report = train_fluency(pages, base_model=base, out_dir=tmp_path / "fluency", options=options,
                           progress=lambda done, total: steps.append((done, total)))
    assert steps[-1] == (90, 90) and [d for d, _ in steps] == list(range(1, 91))  # 30 steps an epoch, all reported
    assert report.trained_pages == 24 and report.held_out_pages == 6 and report.held_out_texts == 6 * 16
    meta = json.loads((tmp_path / "fluency" / META_FILE).read_text())
    assert meta["threshold"] == report.threshold and meta["base_model"] == "base"

    scorer = FluencyScorer(tmp_path / "fluency")
    # The bar refuses at most a tenth: the 9th highest of the 96 held-out texts (floor(0.1 x 97)).
    assert report.bar_rank == 9 and len(meta["held_out_scores"]) == 96
    assert sorted(meta["held_out_scores"], reverse=True)[8] == pytest.approx(report.threshold, abs=1e-4)
    held = [title for title in pages if title not in set(_trained_titles(pages, options))]
    held_texts = [t for title in held for t in [*pages[title].claims, *pages[title].sentences]]
    above = float(np.mean(scorer.scores(held_texts) > scorer.threshold))
    assert 0.05 <= above <= 0.15
    # It learnt something: on pages it never saw, corruptions score above the texts they came from.
    fresh = _pages(6, seed=99)
    rng = random.Random(5)
    originals, changed = [], []
    for page in fresh.values():
        words = page_words(page.sentences, content=False)
        for text in page.sentences:
            other = corrupt(text, any_words=words, content_words=words, rng=rng)
            if other is not None:
                originals.append(text)
                changed.append(other)
    assert scorer.scores(changed).mean() > scorer.scores(originals).mean()
    assert scorer.refuses(changed[0]) == bool(scorer.scores([changed[0]])[0] > scorer.threshold)


@pytest.mark.parametrize(
    ("count", "share", "rank"),
    [(199, 0.005, 1), (399, 0.005, 2), (1000, 0.005, 5), (100, 0.1, 10), (50, 0.005, 1), (3, 0.5, 2)],
)
def test_the_conformal_bar_is_the_kth_highest_score(count: int, share: float, rank: int) -> None:
    scores = [float(i) for i in range(count)]
    random.Random(count).shuffle(scores)
    bar, got = conformal_bar(scores, share)
    assert got == rank and bar == count - rank  # the rank-th highest
    assert sum(s > bar for s in scores) == rank - 1


def test_the_conformal_bar_refuses_at_most_its_share_of_new_claims() -> None:
    """Drawn again and again from one distribution, held-out and new claims alike: the share of
    new claims above the bar averages at most ``share`` (an empirical 99.5% quantile of 200
    texts refuses about twice that)."""
    rng = np.random.default_rng(7)
    refused, quantile_refused = [], []
    for _ in range(2000):
        held, new = rng.normal(size=200), rng.normal(size=200)
        bar, _ = conformal_bar(held.tolist(), 0.005)
        refused.append(np.mean(new > bar))
        quantile_refused.append(np.mean(new > np.quantile(held, 0.995)))
    assert np.mean(refused) <= 0.0055
    assert np.mean(quantile_refused) > 0.008


def test_a_bar_needs_scores() -> None:
    with pytest.raises(ValueError):
        conformal_bar([], 0.005)


def _trained_titles(pages: dict[str, PageTexts], options: TrainOptions) -> list[str]:
    from retrieval.fluency import _split_pages

    return _split_pages(list(pages), options.held_out_share, options.seed)[0]


def test_training_again_replaces_the_model_whole(tmp_path: Path) -> None:
    base = _tiny_encoder(tmp_path / "base")
    out = tmp_path / "fluency"
    options = TrainOptions(examples=32, epochs=1, batch_size=16, seed=0)
    first = train_fluency(_pages(5), base_model=base, out_dir=out, options=options)
    second = train_fluency(_pages(5, seed=2), base_model=base, out_dir=out, options=options)
    assert json.loads((out / META_FILE).read_text())["threshold"] == second.threshold != first.threshold
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base", "fluency"]  # no scratch folder left behind
