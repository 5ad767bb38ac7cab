"""What an export says about itself: Table 1 statistics, the artifact analysis, the card.

Everything here reads the claim files the exporter has just written (JSON Lines, or CSV
when only CSV was asked for), so it sees exactly what researchers get. The statistics
stream; the artifact analysis keeps one ``(id, text, label, page)`` tuple per claim,
which the claim-only classifier needs in memory anyway.
"""

from __future__ import annotations

import csv
import hashlib
import heapq
import json
import math
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict
from itertools import chain
from pathlib import Path
from typing import Any

from foolgame.dataset import hub
from foolgame.dataset.lean import sklearn_import_lean
from foolgame.dataset.model_loop import model_markdown, model_statistics
from foolgame.dataset.records import Progress
from foolgame.dataset.splits import RESPLIT_OPTION, SPLITS, SPLITS_OPTION, split_summary_lines
from foolgame.dataset.study_fields import studies_markdown
from foolgame.dataset.validation import RUN_CHECKS, validation_markdown, validation_statistics
from foolgame.dataset.writers import chunks
from scoring import filters
from scoring.artifacts import (  # the same classifier, fitted once and applied in batches
    ScoredTerm,
    claim_only_pipeline,
    claim_length_by_label,
    claim_only_baseline,
    table1_stats,
    top_bigrams_by_lmi_per_label,
    top_words_by_pmi,
)

LABELS = ("SUPPORTS", "REFUTES")
SPLIT_FIXES = {
    RESPLIT_OPTION: "To fill: re-split release pages (`--resplit-release`; `resplit_release` in the API).",
    SPLITS_OPTION: "To fill: ask for a larger share in the requested proportions.",
}
TOKENIZER = (
    "scoring.artifacts.tokenize: lowercased text cut into words (runs of letters, digits and _) "
    "and punctuation marks, each mark a token of its own (\"Mad, Mad\" -> mad , mad)"
)
FOLDS = 5
BASELINE_MAX_CLAIMS = 8_000


def read_claims(out_dir: Path, split: str) -> Iterator[dict[str, Any]]:
    """The records of one split as written, from the JSON Lines file or else the CSV one."""
    jsonl = out_dir / f"{split}.jsonl"
    if jsonl.exists():
        with jsonl.open(encoding="utf-8") as handle:
            for line in handle:
                yield json.loads(line)
        return
    with (out_dir / f"{split}.csv").open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            yield _from_csv(row)


CSV_JSON_FIELDS = ("gold_evidence", "retrieved_evidence", "model_verdicts", "validation_labels")
CSV_NULLABLE_FIELDS: dict[str, Callable[[str], Any]] = {"model_version": str, "model_fooled": lambda cell: cell == "true", "tries": int, "hard_for": str}


def _from_csv(row: dict[str, str]) -> dict[str, Any]:
    """A CSV row with the fields the reports read as in the JSON Lines file (the other
    numbers and flags stay text); an empty cell is null."""
    record: dict[str, Any] = dict(row)
    for key in CSV_JSON_FIELDS:
        record[key] = json.loads(row[key])
    for key, parse in CSV_NULLABLE_FIELDS.items():
        record[key] = parse(row[key]) if row[key] else None
    return record


def _table1(records: Iterator[dict[str, Any]]) -> dict[str, Any]:
    row = asdict(table1_stats(records))
    row["claim_tokens"] = round(row["claim_tokens"], 2)
    row["evidence_tokens"] = round(row["evidence_tokens"], 2)
    return row


def read_votes(out_dir: Path) -> Iterator[dict[str, str | None]]:
    """The votes as written, the fields the plots read (``day``, ``outcome``, ``correct`` and
    the clues), from the JSON Lines file or else the CSV one (there as text)."""
    jsonl = out_dir / "votes.jsonl"
    if jsonl.exists():
        with jsonl.open(encoding="utf-8") as handle:
            yield from map(json.loads, handle)
        return
    if (out_dir / "votes.csv").exists():
        with (out_dir / "votes.csv").open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                yield {**row, "correct": {"true": True, "false": False}.get(row["correct"]),
                       "clues_revealed_true": int(row["clues_revealed_true"]), "clues_revealed_false": int(row["clues_revealed_false"])}


DIFFICULTY_POINTS = 400
"""Claims drawn in ``stats.json``'s ``difficulty_votes`` (the research page's scatter)."""


def record_figures(out_dir: Path) -> dict[str, Any]:
    """What the research page plots beyond Table 1, in one pass over the claims and one over
    the votes as written:

    - ``per_day``: claims written and rounds played per UTC day (``created``, ``day``), oldest first;
    - ``accuracy_by_clues``: FM2's figure, the share of votes that found the false claim by the
      clues bought in the round (both claims' together), with its count and 95% Wilson interval;
    - ``difficulty_votes``: ``{"rated", "points"}``, how many claims have a difficulty rating and
      up to DIFFICULTY_POINTS of them (the smallest hashes of their ids, so the same files give
      the same points) as ``[total_votes, difficulty]``.
    """
    days: dict[str, Counter[str]] = {}
    chosen: list[tuple[bytes, int, int]] = []
    rated = 0
    for split in SPLITS:
        for record in read_claims(out_dir, split):
            if record.get("created"):
                days.setdefault(record["created"], Counter())["claims"] += 1
            if record.get("difficulty") in (None, ""):
                continue
            rated += 1
            item = (_negate(hashlib.sha256(record["id"].encode()).digest()[:8]), int(record["total_votes"]), int(record["difficulty"]))
            if len(chosen) < DIFFICULTY_POINTS:
                heapq.heappush(chosen, item)
            elif item[0] > chosen[0][0]:
                heapq.heapreplace(chosen, item)
    tally: dict[int, list[int]] = {}
    for vote in read_votes(out_dir):
        if vote["day"]:
            days.setdefault(str(vote["day"]), Counter())["votes"] += 1
        if vote["outcome"] != "voted" or vote["correct"] is None:
            continue
        row = tally.setdefault(int(vote["clues_revealed_true"] or 0) + int(vote["clues_revealed_false"] or 0), [0, 0])
        row[0] += 1
        row[1] += bool(vote["correct"])
    by_clues = []
    for clues in sorted(tally):
        votes, correct = tally[clues]
        low, high = filters.wilson(correct, votes)
        by_clues.append({"clues": clues, "votes": votes, "correct": correct, "accuracy": round(correct / votes, 4),
                         "ci95": [round(low, 4), round(high, 4)]})
    return {
        "per_day": {day: {"claims": days[day]["claims"], "votes": days[day]["votes"]} for day in sorted(days)},
        "accuracy_by_clues": by_clues,
        "difficulty_votes": {"rated": rated, "points": sorted([votes, difficulty] for _, votes, difficulty in chosen)},
    }


def statistics(out_dir: Path, *, extra: Mapping[str, Any]) -> dict[str, Any]:
    """Table 1 of the FM2 paper per split and in total, the validation statistics, the
    records per day and the accuracy by clues bought, and the export's bookkeeping."""
    rows = {split: _table1(read_claims(out_dir, split)) for split in SPLITS}
    rows["total"] = _table1(chain.from_iterable(read_claims(out_dir, split) for split in SPLITS))
    validation = validation_statistics((split, record) for split in SPLITS for record in read_claims(out_dir, split))
    return {
        "tokenizer": TOKENIZER, "table1": rows, "validation": validation, **record_figures(out_dir), **extra,
    }


def model_in_the_loop(out_dir: Path, *, active: Any, seed: int, max_claims: int, progress: Progress) -> dict[str, Any]:
    """``stats.json``'s ``model_in_the_loop`` from the files written (``model_loop``); the
    claim-only baseline learns from the same sample of train as the artifacts' one."""

    def train_sample() -> list[tuple[str, str]]:
        rows, _ = claim_sample(out_dir, "train", max_claims=max_claims, seed=seed)
        return [(text, label) for _, text, label, _ in rows]

    return model_statistics(lambda split: read_claims(out_dir, split), active=active, train_sample=train_sample, progress=progress)


def statistics_markdown(stats: Mapping[str, Any]) -> str:
    lines = [
        "# Statistics",
        "",
        "The FM2 paper's Table 1 for this export. Tokens are counted with " + stats["tokenizer"] + ".",
        "Evidence tokens are averaged over gold evidence sentences.",
        "",
        "| split | claims | % SUPPORTS | pages | tokens per claim | tokens per evidence sentence |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for split, row in stats["table1"].items():
        lines.append(
            f"| {split} | {row['claims']:,} | {row['supports_percent']:.1f}% | {row['pages']:,} "
            f"| {row['claim_tokens']:.1f} | {row['evidence_tokens']:.1f} |"
        )
    lines += [
        "",
        f"Votes (ended rounds): {stats['votes']:,}.",
        f"Seed {stats['seed']}, requested proportions train/dev/test "
        + "/".join(f"{p:.3g}" for p in stats["proportions"])
        + ".",
        "Pages placed by rule: "
        + ", ".join(f"{rule} {n:,}" for rule, n in sorted(stats["pages_by_rule"].items()))
        + ".",
        f"Removed claims left out: {stats['removed_left_out']:,}. "
        f"Test-exclusive authors' claims withheld (on release pages of train/dev): {stats['withheld_exclusive_claims']:,}. "
        f"Release claims outvoted on a page of two release splits: {stats['release_conflict_claims']:,}.",
    ]
    if stats["rounds_left_out"]:
        lines.append(
            "Rounds left out: " + ", ".join(f"{why} {n:,}" for why, n in sorted(stats["rounds_left_out"].items())) + "."
        )
    if "split_summary" in stats:
        lines += ["", "How the pages were split:", ""]
        lines += [f"- {line}" for line in split_summary_lines(stats["split_summary"], fixes=SPLIT_FIXES)]
    if "validation" in stats:
        lines += ["", *validation_markdown(stats["validation"])]
    if "model_in_the_loop" in stats:
        lines += ["", *model_markdown(stats["model_in_the_loop"])]
    if stats.get("studies"):
        lines += ["", *studies_markdown(stats["studies"])]
    return "\n".join(lines) + "\n"


def _terms(terms: Sequence[ScoredTerm]) -> list[dict[str, Any]]:
    return [
        {
            "term": t.term,
            "score": round(t.score, 6),
            "count_with_label": t.count_with_label,
            "count": t.count,
            "label_example_share": round(t.label_example_share, 4),
        }
        for t in terms
    ]


def _nan_to_none(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 4)


def _cv_folds(labels: Sequence[str], groups: Sequence[str]) -> int:
    smallest = min(Counter(labels).values()) if labels else 0
    return min(FOLDS, len(set(groups)), smallest if len(set(labels)) > 1 else 0)


def _partition(labels: Sequence[str], correct: Sequence[bool]) -> dict[str, Any]:
    easy = Counter(label for label, hit in zip(labels, correct) if hit)
    hard = Counter(label for label, hit in zip(labels, correct) if not hit)
    return {
        "easy": sum(easy.values()),
        "hard": sum(hard.values()),
        "easy_by_label": dict(sorted(easy.items())),
        "hard_by_label": dict(sorted(hard.items())),
    }


Tag = Callable[[str, str, bool], None]
"""``tag(claim id, split, easy)``: where the easy/hard partition goes, claim by claim."""


def artifacts(out_dir: Path, *, seed: int, tag: Tag, max_claims: int = BASELINE_MAX_CLAIMS) -> dict[str, Any]:
    """The artifact analysis per split; the easy/hard partition goes to ``tag``.

    One split's ``(text, label)`` pairs are in memory at a time for the counts; the
    claim-only classifier learns from at most ``max_claims`` claims (see :func:`_baseline`).
    """
    report: dict[str, Any] = {"tokenizer": TOKENIZER, "splits": {}}
    for split in SPLITS:
        examples = [(r["text"], r["label"]) for r in read_claims(out_dir, split)]
        report["splits"][split] = {
            "claims": len(examples),
            "lmi_bigrams": {label: _terms(terms) for label, terms in top_bigrams_by_lmi_per_label(examples, LABELS, 10).items()},
            "pmi_words": {label: _terms(top_words_by_pmi(examples, label, 10)) for label in LABELS},
            "claim_length": {label: asdict(stats) for label, stats in claim_length_by_label(examples).items()},
        }
        del examples
    report["claim_only_baseline"] = _baseline(out_dir, seed=seed, tag=tag, max_claims=max_claims)
    return report


Row = tuple[str, str, str, str]
"""A claim's id, text, label and page."""


def claim_sample(out_dir: Path, split: str, *, max_claims: int, seed: int) -> tuple[list[Row], int]:
    """Up to ``max_claims`` claims of a split chosen by a hash of their id (all when fewer),
    in file order, and the split's size; two streaming passes, memory O(max_claims)."""
    def key(claim_id: str) -> bytes:
        return hashlib.sha256(f"{seed}\x00{claim_id}".encode()).digest()[:8]

    total = 0
    chosen: list[tuple[bytes, int]] = []
    for index, record in enumerate(read_claims(out_dir, split)):
        total += 1
        item = (key(record["id"]), index)
        if len(chosen) < max_claims:
            heapq.heappush(chosen, (_negate(item[0]), index))
        elif _negate(item[0]) > chosen[0][0]:
            heapq.heapreplace(chosen, (_negate(item[0]), index))
    keep = {index for _, index in chosen}
    rows = [
        (r["id"], r["text"], r["label"], r["wikipedia_page"])
        for index, r in enumerate(read_claims(out_dir, split))
        if index in keep
    ]
    return rows, total


def _negate(digest: bytes) -> bytes:
    """A max-heap on digests out of heapq's min-heap: keep the ``max_claims`` smallest."""
    return bytes(255 - b for b in digest)


def _baseline(out_dir: Path, *, seed: int, tag: Tag, max_claims: int) -> dict[str, Any]:
    """Trained on train and tested on dev and test; with no usable train, cross-validated
    within each split with every page kept in one fold (see scoring.artifacts).

    The classifier learns from at most ``max_claims`` claims, a sample by hash of the claim
    id: its character n-grams take about 10 MB per thousand claims, and the export must stay
    in bounded memory however many claims there are. Dev and test are predicted in
    batches, every claim of them; the cross-validation covers the sample only.
    """
    sklearn_import_lean()
    train, train_total = claim_sample(out_dir, "train", max_claims=max_claims, seed=seed)
    out: dict[str, Any] = {
        "model": "logistic regression over TF-IDF word 1-2-grams and character 2-5-grams of the claim alone",
        "max_claims": max_claims,
        "splits": {},
    }
    if len({label for _, _, label, _ in train}) > 1:
        out["method"] = "trained on train, tested on dev and test"
        out["train_claims_used"] = len(train)
        out["train_claims"] = train_total
        model = claim_only_pipeline(seed)
        model.fit([text for _, text, _, _ in train], [label for _, _, label, _ in train])
        del train
        for split in ("dev", "test"):
            labels: list[str] = []
            hits: list[bool] = []
            for batch in chunks(read_claims(out_dir, split), 2000):
                predicted = model.predict([r["text"] for r in batch])
                for record, guess in zip(batch, predicted):
                    hit = str(guess) == record["label"]
                    labels.append(record["label"])
                    hits.append(hit)
                    tag(record["id"], split, hit)
            out["splits"][split] = {
                "accuracy": round(sum(hits) / len(hits), 4) if hits else None,
                "majority_label_share": _majority(labels),
                **_partition(labels, hits),
            }
        return out
    out["method"] = (
        f"train is empty or has one label: {FOLDS}-fold cross-validation within each split, "
        "each page kept in one fold (accuracy_ungrouped lets pages cross folds, for comparison)"
    )
    for split in SPLITS:
        rows, total = claim_sample(out_dir, split, max_claims=max_claims, seed=seed)
        labels = [label for _, _, label, _ in rows]
        pages = [page for *_, page in rows]
        folds = _cv_folds(labels, pages)
        if folds < 2:
            out["splits"][split] = {"accuracy": None, "skipped": "too few claims, pages or labels to cross-validate"}
            continue
        examples = [(text, label) for _, text, label, _ in rows]
        try:
            grouped = claim_only_baseline([], {split: examples}, folds=folds, seed=seed, groups={split: pages})
            ungrouped = claim_only_baseline([], {split: examples}, folds=min(FOLDS, min(Counter(labels).values())), seed=seed)
        except ValueError as error:  # a fold with one label only, on tiny splits
            out["splits"][split] = {"accuracy": None, "skipped": "cannot cross-validate: " + str(error).split(".")[0]}
            continue
        out["splits"][split] = {
            "accuracy": _nan_to_none(grouped.accuracy[split]),
            "accuracy_ungrouped": _nan_to_none(ungrouped.accuracy[split]),
            "folds": folds,
            "claims_used": len(rows),
            "claims": total,
            "majority_label_share": _majority(labels),
            **_partition(labels, grouped.correct[split]),
        }
        for row, hit in zip(rows, grouped.correct[split]):
            tag(row[0], split, hit)
    return out


def _majority(labels: Sequence[str]) -> float | None:
    return round(max(Counter(labels).values()) / len(labels), 4) if labels else None


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def artifacts_markdown(report: Mapping[str, Any]) -> str:
    lines = [
        "# Annotation artifacts",
        "",
        "Measures of how far the claims alone give their labels away (Gururangan et al. 2018;",
        "FM2 paper, section 5.2, Table 3 and appendix C). Tokens: " + report["tokenizer"] + ".",
        "",
        "## Claim-only baseline",
        "",
        f"{report['claim_only_baseline']['model']}; {report['claim_only_baseline']['method']}"
        + (
            f" (trained on {report['claim_only_baseline']['train_claims_used']:,} of the "
            f"{report['claim_only_baseline']['train_claims']:,} train claims, a sample by hash of the id)."
            if report["claim_only_baseline"].get("train_claims_used", 0) < report["claim_only_baseline"].get("train_claims", 0)
            else "."
        ),
        "Easy claims are those the claim-only model gets right, hard the others (`easy_hard.jsonl`).",
        "",
        "| split | accuracy | ungrouped CV | majority label | easy | hard |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for split, row in report["claim_only_baseline"]["splits"].items():
        if row.get("accuracy") is None and "skipped" in row:
            lines.append(f"| {split} | n/a ({row['skipped']}) | | | | |")
            continue
        ungrouped = _pct(row["accuracy_ungrouped"]) if "accuracy_ungrouped" in row else ""
        lines.append(
            f"| {split} | {_pct(row['accuracy'])} | {ungrouped} | {_pct(row['majority_label_share'])} "
            f"| {row['easy']:,} | {row['hard']:,} |"
        )
    for split, section in report["splits"].items():
        lines += ["", f"## {split} ({section['claims']:,} claims)", ""]
        if not section["claims"]:
            lines.append("No claims.")
            continue
        lines += ["### Top 10 bigrams by LMI", "", "| rank | " + " | ".join(LABELS) + " |", "| ---: |" + " --- |" * len(LABELS)]
        for rank in range(10):
            cells = [
                f"`{terms[rank]['term']}`" if rank < len(terms) else ""
                for terms in (section["lmi_bigrams"][label] for label in LABELS)
            ]
            lines.append(f"| {rank + 1} | " + " | ".join(cells) + " |")
        lines += ["", "### Top 10 words by PMI (add-100 smoothing)", "", "| rank | " + " | ".join(LABELS) + " |", "| ---: |" + " --- |" * len(LABELS)]
        for rank in range(10):
            cells = [
                f"`{terms[rank]['term']}` ({100 * terms[rank]['label_example_share']:.0f}%)" if rank < len(terms) else ""
                for terms in (section["pmi_words"][label] for label in LABELS)
            ]
            lines.append(f"| {rank + 1} | " + " | ".join(cells) + " |")
        lines += ["", "(%: share of the label's claims containing the word.)", "", "### Claim length by label (tokens)", ""]
        lines += ["| label | claims | mean | median | sd | min | max |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for label, stats in section["claim_length"].items():
            lines.append(
                f"| {label} | {stats['claims']:,} | {stats['mean']:.1f} | {stats['median']:.1f} | {stats['stdev']:.1f} "
                f"| {stats['minimum']} | {stats['maximum']} |"
            )
    return "\n".join(lines) + "\n"


LOADING_CODE = """from datasets import load_dataset

folder = "path/to/this/folder"
claims = load_dataset(folder)  # train, validation (dev.jsonl), test: those with claims
votes = load_dataset(folder, "votes", split="train")  # when the export has votes
labels = load_dataset(folder, "validation_labels", split="train")  # when claims were checked
"""
"""The card's loading code: its YAML header types every column (``foolgame.dataset.hub``)."""

EXAMPLE_EVIDENCE = 2
"""Evidence sentences of each list shown in the card's example record."""


def _example_record(out_dir: Path) -> str:
    """The first claim of the first split with one, as JSON (evidence lists cut short)."""
    for split in SPLITS:
        record = next(read_claims(out_dir, split), None) if (out_dir / f"{split}.jsonl").exists() or (out_dir / f"{split}.csv").exists() else None
        if record is not None:
            shown = dict(record)
            notes = []
            for key in ("gold_evidence", "retrieved_evidence"):
                if len(shown[key]) > EXAMPLE_EVIDENCE:
                    notes.append(f"{key}: first {EXAMPLE_EVIDENCE} of {len(shown[key])} sentences shown")
                    shown[key] = shown[key][:EXAMPLE_EVIDENCE]
            note = f"The first claim of `{split}`" + (f" ({'; '.join(notes)})" if notes else "") + ":"
            return f"{note}\n\n```json\n{json.dumps(shown, ensure_ascii=False, indent=2)}\n```"
    return "This export has no claim."


def _splits_paragraph(stats: Mapping[str, Any]) -> str:
    if stats.get("resplit_release"):
        return """No page is in two splits. This export re-split the release: pages with claims from a
published release were shared out with the game's own pages, so a release claim may be in
another split here than in its release. Claims by test-exclusive authors (if any were
named) go only to test, and so do their pages. The other pages are ordered by a hash of
the seed and the page title and cut in the requested proportions of claims."""
    return """No page is in two splits. Claims from a published release keep their release split, and
so does every other claim on those pages. Claims by test-exclusive authors (if any were
named) go only to test; their other pages go to test, and their claims on release pages of
train or dev are withheld (counted below). The remaining pages are ordered by a hash of
the seed and the page title and cut in the requested proportions of claims."""


def dataset_card(stats: Mapping[str, Any], files: Sequence[str], *, out_dir: Path) -> str:
    """``README.md``: the Hugging Face header (``hub.card_header``), then the card for people."""
    table = statistics_markdown(stats).split("\n", 2)[2]
    header = hub.card_header(out_dir=out_dir, files=files, stats=stats)
    offered = hub.configs(out_dir, files)
    offered_text = "; ".join(
        f"`{config['config_name']}`: " + ", ".join(f"`{item['split']}` (`{item['path']}`)" for item in config["data_files"])
        for config in offered
    ) or "none: this export has no record"
    sources = "\n".join(f"- {text} ({url})" for text, url in hub.LICENSE_SOURCES)
    name = hub.export_id(out_dir, files)
    return header + f"""# Fool Me Twice: dataset export

Claims and votes collected by **Fool Me Twice** (fm2), a game in which players write claims
about Wikipedia pages that are true or false and hard to check, and other players race a
clock to spot the false one of two claims, paying time for evidence clues (Eisenschlos et
al., NAACL 2021). Claims imported from the published FM2 release are included with their
release ids, splits and vote counts.

## How the data was collected

- **Claims.** An author is given a page and a veracity (balanced to keep the labels near
  50/50), writes one claim and marks 1 or 2 gold sentences of the page that support or
  refute it. The server refuses a claim whose gold sentence is the lexical retriever's
  top hit for it, and warns about claims that cannot stand alone or copy a gold sentence.
- **Votes.** A voter sees two claims of the same page or category, one true and one false,
  and has 180 s on the server's clock to mark the false one; each clue (a retrieved
  sentence of the page, gold sentences last) costs 10 s. A correct vote earns the time
  left as points, shared with the authors so that the round always pays 120.
- **Moderation.** Claims removed by moderators are left out (unless the export was run
  with `--include-removed`; they then carry the flag `removed`).

## Splits

{_splits_paragraph(stats)}

{table}
## Files

{chr(10).join(f"- `{name}`" for name in files)}

`*.csv` files are twins of the `*.jsonl` files; list fields are JSON text in their cell.
`SHA256SUMS` holds every other file's checksum: `sha256sum -c SHA256SUMS` in this folder checks
them (`manifest.json` holds the same with sizes).

This card's header (above, in YAML) is read by Hugging Face `datasets`: it lists the
configurations and splits that hold records and types every column, so one call loads the
folder. Configurations here: {offered_text}. Labels are strings (`SUPPORTS`, `REFUTES`; a
checker's also `NOT ENOUGH INFO`; `gold_label` `-` when there is none), evidence a list of
`{{text, section_header}}`; an empty file (a split without claims, no votes) is not listed,
since `datasets` cannot read one. With `datasets` installed:

```python
{LOADING_CODE}```

`croissant.json` describes the same records for MLCommons Croissant (`mlcroissant`), record
sets `claims`, `votes` and `validation_labels`.

### Example

{_example_record(out_dir)}

### Claims: `train`, `dev`, `test`

| field | meaning |
| --- | --- |
| `id` | the FM2 release id for imported claims, `game-<n>` for the game's own |
| `text` | the claim |
| `label` | `SUPPORTS` (true: the page supports it) or `REFUTES` (false) |
| `gold_evidence` | the 1 or 2 sentences the author marked, `[{{text, section_header}}]` |
| `retrieved_evidence` | the release's retrieved evidence; for game claims the clue list shown to voters, gold last, `[{{text, section_header}}]` |
| `wikipedia_page` | the page title |
| `category` | the page's category (`NOCAT` when it has none, as in the FM2 release) |
| `total_votes`, `correct_votes` | votes on the claim in the original game (release claims) plus the game's own; a vote is correct when the voter found the false claim of the pair |
| `total_likes` | likes, the same way |
| `smoothed_correctness` | `(correct_votes + 4) / (total_votes + 5)`: the share of correct votes under a Beta(4, 1) prior; low values mark claims that fool players |
| `difficulty`, `difficulty_deviation` | the claim's difficulty rating from the game's own votes and its uncertainty (one standard deviation), on the chess-like 1500 scale: each vote is a game the voter wins by finding the false claim, and both claims of the pair are rated (Glicko-2 per vote, refitted in batch by a Rasch model), so unlike `smoothed_correctness` it accounts for who voted; 1500 is a newcomer's, higher fools more voters; null for a claim without a vote in this game (the release's votes have no voters to rate against) |
| `flags` | moderation and player signals, e.g. `removed`, `reported:wrong_label`, `too_hard` |
| `author` | the pseudonym of a run of at most 2 of one author's claims (see Privacy) |
| `created` | the UTC day the claim was written (for release claims: imported), `YYYY-MM-DD` |
| `mean_clues_revealed` | clues bought on this claim per game vote on it; null without game votes |
| `model_verdicts` | each verifier version's verdict on the claim with its gold evidence, `{{"v3": {{label, supports}}}}`: `label` `SUPPORTS` or `REFUTES`, `supports` its probability of SUPPORTS; `{{}}` when no version judged it (see The model in the loop) |
| `model_version` | the version the claim was written against (`v3`): its author saw that version's verdict on each draft and was paid when it was wrong; null for a claim written while no version was active, and for release claims |
| `model_fooled` | that version's verdict at the save was not the claim's label; null without a version, or when its verdict was never given |
| `tries` | drafts that version judged while the claim was written, the saved one included; null without a version |
| `hard_for` | `people` (`smoothed_correctness` under 0.5: most voters missed it), `model` (the active version's verdict in `model_verdicts` is not the label), `both` or `neither`; null for a claim without votes or without that verdict, and for every claim when no version was active |
| `validation_labels` | independent checkers' labels, in the order they were answered, `[{{label, checker}}]`: `label` is `SUPPORTS`, `REFUTES` or `NOT ENOUGH INFO`, judged against the gold evidence without seeing the author's label or anyone else's; `checker` the pseudonym of a run of at most {RUN_CHECKS} of one checker's labels (see Privacy). Only labels that count are here: reports that a claim is flawed are not labels, and a checker too often wrong on claims whose label was settled counts for nothing. `[]` for a claim nobody checked |
| `gold_label` | the label holding at least 3/5 of the weight of the author's label and the checkers' labels: MultiNLI's "3 of 5" when every weight is 1; the author weighs 1, a checker by their record on claims whose label was settled (the weights are not exported: they would tie a checker's runs together); `-` while the claim has fewer labels than validation needs (see Validation) or no such majority |
| `study`, `arm` | the study (its slug) and arm of the participant who wrote the claim, when a study's participant did; null for everyone else. Each item of `validation_labels` carries its checker's `study` and `arm` the same way |

### Validation labels: `validation_labels`

Every claim's `validation_labels` again, one a row, for tools that read flat tables: `claim`
(its id), `split`, `position` (the label's place in the claim's list, from 0), `label` and
`checker` as in the claims' field, and the checker's `study` and `arm` (null outside a study).

### Votes: `votes`

One ended round a line, in the order the rounds were dealt:

| field | meaning |
| --- | --- |
| `voter` | the pseudonym of a run of at most 10 of one voter's rounds (see Privacy); null for a round of a live room |
| `true_claim`, `false_claim` | claim ids; `true_claim_split`, `false_claim_split` their splits |
| `false_claim_side` | where the false claim was on screen, `left` or `right` |
| `true_claim_public`, `false_claim_public` | the claim comes from the published FM2 release, replayed in the game: **its label and evidence are public**, so anyone holding the release could answer it; keep these votes apart from votes on the game's own claims |
| `outcome` | `voted`, `timeout`, `reported`, `voided` or `forfeited` (the player gave up: no vote, no points; a round given up before its start showed them nothing; never counted as a timeout) |
| `correct` | for votes: whether the voter marked the false claim |
| `remaining_bucket` | for votes: seconds left on the 180 s clock, rounded down to a multiple of 30 (0, 30, ... 150); the voter's points are `min(120, seconds left)` |
| `clues_revealed_true`, `clues_revealed_false` | clues bought on each claim (10 s each) |
| `timed_out`, `reported` | the round ran out of time, or ended with a report (no vote) |
| `voided_by` | a moderator changed one of the round's claims while it was being played (`relabel`, `remove`, `edit_evidence`; `moderation` for rounds voided before this was kept): the round ended without a vote and without points, and the answer it was dealt with (`false_claim`) may no longer be the claim's label; null otherwise |
| `voter_saw_answer` | the voter had seen one of the two claims with its answer in the moderation queue (as a moderator) before the round ended: the vote is no evidence of how hard the pair is. Moderators are not dealt claims they have seen, so this marks rounds dealt before the moderator saw the claim |
| `voter_held` | the voter is held by moderation as improbable (right far more often than a person at that speed and clue use, or on pairs another account had just given up) and not cleared: the vote is likely not a person's judgement |
| `day` | the UTC day the round started, `YYYY-MM-DD` |
| `study`, `arm` | the study (its slug) and arm of the voter, when a study's participant voted; null for everyone else and for a live room's round |

Rounds with a claim that is not in the export are left out, and so are rounds whose two
claims now carry the same label (unless voided: a voided round keeps the answer it was
dealt with).

### Analysis: `stats.*`, `artifacts.*`, `easy_hard.jsonl`

`stats.json`/`stats.md`: the tables above (`validation` in `stats.json`: per group its
`counts`, `shares`, `kappa` with its 95% bootstrap interval `kappa_ci95`, `kappa_method` and
`raters_per_claim`; `per_day`, `accuracy_by_clues` and `difficulty_votes`, which the research
page plots; `model_in_the_loop`: the
active version's figures on test, the collection rounds and the hardness counts). Claims
written against a version were rewritten until it was fooled or their author gave up, so a
version's accuracy on the claims written against it is biased low (as in ANLI): compare
versions on claims written against none of them, or against an earlier one. `artifacts.json`/`artifacts.md`: per split the
10 bigrams with the highest local mutual information with each label, the top words per
label by PMI with add-100 smoothing, claim length by label, and a claim-only classifier's
accuracy; `easy_hard.jsonl` tags each evaluated claim easy (the claim-only classifier got
it right) or hard.

## Privacy

No username, e-mail address, IP address or account id is in these files. Authors,
voters and checkers appear as pseudonyms: `p` and the first 16 hex digits of HMAC-SHA256 of the
account id (and a run number) under a random secret salt that is not part of the export; a
new export draws a new salt (so pseudonyms differ) unless its maker reuses a salt file on
purpose.

**Linkage to public data.** The game publishes leaderboards: every player's points of each
kind (write: 100 a claim; verify: the voter's points; fool: the authors' share; like: 10 a
like; check: points for checks of claims whose label was settled, answered right; model: points
for a claim the model in the loop got wrong, once people confirmed its label), and a skill table with each regular voter's rating and number of votes. With one
pseudonym per person and exact points in the votes, summing an export by
pseudonym reproduces those sums: on a simulated game of 240 players that join named every
one of the 238 players on the leaderboards. So this export is coarsened:

- **Points and time are not exported.** Each vote has `correct`, the clues bought and the
  time left rounded down to 30 s (`remaining_bucket`), which is what research on the game
  needs; its exact points and seconds are left out. Times are days (`day`, `created`).
- **A pseudonym names a run, not a person.** An author's claims (in the files' order) are
  cut into runs of at most 2, a voter's rounds (in the order they were dealt) into runs of
  at most 10, a checker's labels (in the files' order) into runs of at most {RUN_CHECKS}, each
  with its own pseudonym, and a person's author, voting and checking runs are not tied to
  each other. A run also ends before the fewest points it shows (claims, likes, the
  authors' least share of the votes on them, the model points paid for the claims, the
  voters' least points, the check points the labels earned) would pass the 5th best player's on any leaderboard, so at least 5
  players could own it.
- **A live room's rounds have no voter** (`voter` null). A room shows its members who found
  each question, with their points, and who voted; with the pair's claim ids that would pin
  those rows, and the runs holding them, on named players.
- On the simulated 240-player game the same join (the points and the skill table's vote
  counts), reading each pseudonym both as a whole person and as part of one, names nobody
  (`tests/dataset/test_linkage.py`). It does not try the ratings themselves: a run's 10
  votes say little of a rating made from all of a player's votes, and that game has no
  checks: checker runs are cut by the same rule as voters' runs, without a measured attack.

What this costs: a skill or annotator-bias model sees runs, not people (within a run the
person is the same and the records are in order). What remains: the claim texts are public
to every voter who was dealt them, and an author knows their own claims, so an author (or
anyone who saw which claims an author wrote) can find those claims and their runs; runs of
one person follow each other in the files' order, so someone who can tell which run
continues which (by day and order) can chain them back into longer runs; and a single claim or vote that alone shows more than the 5th best player's points of a kind
(a claim with very many likes) is a run of its own, but it narrows its owner down to fewer
than 5 players.

## Limitations

- **Written to fool.** Authors were paid for claims that fool voters (and, with a model in
  the loop, the model): the claims are adversarial by design, their labels were assigned to
  authors to keep them near 50/50, and they are not a sample of how people state facts.
- **Labels are the authors'.** Each claim's label is its author's, backed by the evidence
  they marked; only the claims in `validation_labels` were labelled again, and `gold_label`
  is `-` for the others. The certification gates (`quality.json`, when present) say how many.
- **Public release claims.** Claims imported from the FM2 release have public labels and
  evidence: votes on them are marked (`true_claim_public`, `false_claim_public`).
- **Runs, not people.** Pseudonyms name runs of records (see Privacy): models of skill or
  annotator bias see runs.
- **Wikipedia as it was.** Evidence sentences are the page text when the page was imported;
  pages change, and English Wikipedia is the only source (English only).
- **Scans are heuristics.** The personal-data and offensive-language gates are regular
  expressions and a word list: they catch the common forms, not every one.

## Licence

This export is released under **{hub.LICENSE_NAME}** ({hub.LICENSE_URL}): its evidence
sentences and page titles are Wikipedia's text, which is share-alike, and the claims imported
from the FM2 release may be relicensed with it. The sources of that statement:

{sources}

Credit Wikipedia's contributors and the FM2 authors when you use it.

## Citation

Cite this export by its id, `{name}` (the sha256 of its record files; `croissant.json`'s `url`
is `urn:fm2-export:{name}`), and the FM2 paper:

```bibtex
{hub.export_citation(name)}
```
"""


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
