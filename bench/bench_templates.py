"""Templates of a page's words with grammar, against the save's text rules: refused or paid?

    python bench/bench_templates.py [--fm2 ../shared/data/fm2/dev.jsonl] [--seed 36] [--per-page 5]

The attack of issue 36: "Shaka was the sometime of between in figure." is the template
``<Title> was the <word> of <word> in <word>.`` with words of the page; 12 of 12 saved and paid.
A template's own words stand far above their shuffles, so the word-order rule
(``not_a_sentence``) lets most through. This bench writes templates as an attacker would, from
eight families (``FAMILIES``) with each slot filled by a word drawn at random from the page's
sentences, in two kinds:

- **any words**: every word of the page may fill a slot ("the", "between" and "figure" alike),
  as the issue's example did;
- **content words**: stop words left out of the draw, so each slot gets a word with meaning
  ("Gandhi was the Gujarati of Telegraph in Minister."); often grammatical, for information.

and prints, with 95% Wilson intervals, the share refused by the word-order rule
(``not_a_sentence``), by the template rule (``not_fluent``: ``scoring.word_order.fluency_problem``,
no ending on "the", "of"..., no phrase a determiner or a preposition opens and breaks off) and
by either (what a save does), beside the share of the split's **real claims** each refuses.
Both rules are hand-written and shipped: nothing in them was fitted to this split (the
word-order table was built from the FM2 test split, none of these pages).

For information, a fluency score learnt from the page corpus: SLOR under a class trigram model
(``scoring.word_order.fluency``), measured on pages the model never saw. The split's pages go
into five page-disjoint folds; for each fold a model is built from the other folds' claims and
evidence sentences, its SLOR bar is the ``--real-share`` quantile of the real claims of the
*other* folds (each scored by its own fold's model), and the fold's claims and templates are
judged with both. The save does not use it (see ``fluency``'s docstring for why).
Last, the time per check of the save's template rule.

Pure computation: no database, no Redis. With --record (or FM2_BENCH_RECORD) the shares and
the time per check go to the record.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from retrieval.fluency import page_words  # noqa: E402
from scoring.filters import wilson  # noqa: E402
from scoring.word_order import (  # noqa: E402
    broken_phrase,
    OrderModel,
    dangling_end,
    fluency_problem,
    fluency,
    order_model_build,
    order_model_load,
    reads_as_sentence,
)

DEFAULT_FM2 = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "fm2" / "dev.jsonl"
FOLDS = 5
REAL_QUANTILE = 0.003  # the share of real claims of unseen pages the SLOR bar may refuse

# The attacker's templates: a subject (the page title), grammar, and slots ({w}) for page words.
FAMILIES = (
    "{T} was the {w} of {w} in {w}.",
    "{T} is a {w} {w} that {w} the {w}.",
    "In {w}, {T} {w} the {w} of {w}.",
    "The {w} of {T} was {w} by {w} in {w}.",
    "{T} {w} {w} and {w} the {w}.",
    "{T} has {w} {w} with {w} {w}.",
    "{T} was {w} in {w} by the {w}.",
    "The {w} {w} of {T} is {w}.",
)


@dataclass
class Page:
    title: str
    claims: list[str] = field(default_factory=list)
    sentences: list[str] = field(default_factory=list)


def pages_of(rows: list[dict]) -> dict[str, Page]:
    """Each page's claims and distinct sentences (gold and retrieved evidence), as import_fm2 pools them."""
    pages: dict[str, Page] = {}
    for row in rows:
        page = pages.setdefault(row["wikipedia_page"], Page(row["wikipedia_page"]))
        page.claims.append(row["text"])
        for evidence in [*row.get("gold_evidence", []), *row.get("retrieved_evidence", [])]:
            if evidence["text"] not in page.sentences:
                page.sentences.append(evidence["text"])
    return pages


def template(title: str, words: list[str], rng: random.Random) -> str:
    """One template of a random family, each slot a random word of ``words``, the title its subject."""
    text = rng.choice(FAMILIES)
    while "{w}" in text:
        text = text.replace("{w}", rng.choice(words), 1)
    return text.replace("{T}", re.sub(r"\s*\([^)]*\)", "", title).strip())


def templates_of(page: Page, *, content: bool, count: int, rng: random.Random) -> list[str]:
    words = page_words(page.sentences, content=content)
    return [template(page.title, words, rng) for _ in range(count)] if words else []


def fm2_folds(path: Path, seed: int) -> tuple[list[dict], dict[str, Page], list[str], dict[str, int]]:
    """An FM2 file's rows, its pages, their titles in the seed's order, and each page's fold
    (``FOLDS`` page-disjoint folds): what this bench and ``bench_fluency.py`` share."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    pages = pages_of(rows)
    titles = sorted(pages)
    random.Random(seed).shuffle(titles)
    return rows, pages, titles, {title: index % FOLDS for index, title in enumerate(titles)}


def quantile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fm2", type=Path, default=DEFAULT_FM2)
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument("--per-page", type=int, default=5, help="templates of each kind per page")
    parser.add_argument("--real-share", type=float, default=REAL_QUANTILE,
                        help="the quantile of real claims (of the other folds) that sets each fold's SLOR bar")
    parser.add_argument("--show", type=int, default=5, help="print this many examples of each kind of error")
    harness.add_service_args(parser, database=False, redis=False)
    args = parser.parse_args()
    record = harness.Record("bench_templates", args.record)
    if not args.fm2.is_file():
        print(f"skipped: {args.fm2} not found")
        return
    rows, pages, titles, fold_of = fm2_folds(args.fm2, args.seed)
    rng = random.Random(args.seed)
    kinds = ("real claims", "templates, any words", "templates, content words")
    texts: dict[str, list[tuple[int, str]]] = {kind: [] for kind in kinds}
    for title in titles:
        page, fold = pages[title], fold_of[title]
        texts["real claims"] += [(fold, claim) for claim in page.claims]
        texts["templates, any words"] += [(fold, t) for t in templates_of(page, content=False, count=args.per_page, rng=rng)]
        texts["templates, content words"] += [(fold, t) for t in templates_of(page, content=True, count=args.per_page, rng=rng)]

    # Each fold's model, from the other folds' claims and evidence sentences.
    models: list[OrderModel] = []
    for fold in range(FOLDS):
        training: list[str] = []
        for title in titles:
            if fold_of[title] != fold:
                training += pages[title].claims + pages[title].sentences
        models.append(order_model_build(training))
    scores = {kind: [fluency(text, model=models[fold]) for fold, text in items] for kind, items in texts.items()}
    real_by_fold = defaultdict(list)
    for (fold, _), score in zip(texts["real claims"], scores["real claims"]):
        real_by_fold[fold].append(score)
    # Each fold's bar from the other folds' real claims only.
    bars = [quantile([s for other, values in real_by_fold.items() if other != fold for s in values], args.real_share) for fold in range(FOLDS)]

    word_order = order_model_load()
    columns = ("word order", "template rule", "either", "SLOR bar (information)")
    refused: dict[str, dict[str, list[str]]] = {}
    for kind, items in texts.items():
        refused[kind] = {name: [] for name in columns}
        for (fold, text), score in zip(items, scores[kind]):
            by_order = not reads_as_sentence(text, model=word_order)
            by_template = fluency_problem(text) is not None
            hits = (by_order, by_template, by_order or by_template, score < bars[fold])
            for name, hit in zip(columns, hits):
                if hit:
                    refused[kind][name].append(text)

    print(f"{args.fm2.name}: {len(rows)} claims on {len(pages)} pages in {FOLDS} page-disjoint folds; "
          f"{args.per_page} templates of each kind a page from {len(FAMILIES)} families; seed {args.seed}")
    for kind in kinds:
        total = len(texts[kind])
        for name in columns:
            hits = len(refused[kind][name])
            low, high = wilson(hits, total)
            print(f"  {kind:26s} refused by {name:22s} {hits:4d}/{total} = {hits / total:6.1%}  (95% CI {low:.1%} to {high:.1%})")
            record.add(f"{args.fm2.name}, seed {args.seed}", f"{kind} refused by {name}", round(100 * hits / total, 1),
                       f"% (95% CI {100 * low:.1f}-{100 * high:.1f}, n {total})")
    print(f"SLOR bar per fold ({args.real_share:.1%} quantile of the other folds' real claims): {', '.join(f'{b:.3f}' for b in bars)}; "
          f"templates refused by the template rule or the SLOR bar: "
          + ", ".join(f"{kind} {len(set(refused[kind]['template rule']) | set(refused[kind]['SLOR bar (information)'])) / len(texts[kind]):.1%}" for kind in kinds))
    ends = [text for _, text in texts["real claims"] if dangling_end(text)]
    broken = [text for _, text in texts["real claims"] if broken_phrase(text)]
    print(f"real claims ending on a word that leads into more: {len(ends)}; with a broken phrase: {len(broken)}")
    for text in (ends + broken)[: args.show]:
        print(f"  {broken_phrase(text) or 'ends'}: {text}")

    timings = []
    cpu_started = time.process_time()
    for kind in kinds:
        for _, text in texts[kind]:
            begin = time.perf_counter()
            fluency_problem(text)
            timings.append((time.perf_counter() - begin) * 1000)
    cpu_ms = (time.process_time() - cpu_started) * 1000 / len(timings)
    timings.sort()
    print(f"time per template check: CPU {cpu_ms:.3f} ms; wall median {timings[len(timings) // 2]:.3f} ms, max {timings[-1]:.2f} ms")
    record.add(f"{args.fm2.name}, seed {args.seed}", "CPU per template check", round(cpu_ms, 3), "ms CPU/check")
    if args.show:
        for kind in kinds[1:]:
            passed = [text for _, text in texts[kind] if text not in set(refused[kind]["either"])]
            print(f"{kind} let through:", *passed[: args.show], sep="\n  ")
    print(f"mean SLOR: real {statistics.fmean(scores['real claims']):.2f}, "
          f"any-word templates {statistics.fmean(scores['templates, any words']):.2f}, "
          f"content-word templates {statistics.fmean(scores['templates, content words']):.2f}")


if __name__ == "__main__":
    main()
