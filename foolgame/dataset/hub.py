"""The export as researchers' tools read a dataset folder: the card's Hugging Face header,
the licence and the citation.

``datasets.load_dataset("<export folder>")`` reads the YAML header of ``README.md``: its
``configs`` name the data files of each configuration (claims, votes, validation labels) and
``dataset_info`` types every column, so nothing is left to type inference (a column that is
null throughout a file, such as ``difficulty`` in a release-only export, would otherwise be
typed ``null``). An empty file holds no data for ``datasets`` (its JSON reader stops with a
bare ``StopIteration``), so only non-empty files are listed: an export of one release split
offers that split only. The header is written by ``huggingface_hub``'s ``DatasetCardData``,
the Hub's own serializer, from plain dicts: ``datasets`` itself is only needed to read it.

The licence is stated here once and read by the card, ``croissant.json`` and the docs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from huggingface_hub import DatasetCardData

from foolgame.dataset.splits import SPLITS
from foolgame.dataset.writers import CLAIM_FIELDS, LABEL_FIELDS, VOTE_FIELDS

LICENSE_ID = "cc-by-sa-4.0"
"""The Hub's identifier of the licence."""
LICENSE_NAME = "CC BY-SA 4.0"
LICENSE_URL = "https://creativecommons.org/licenses/by-sa/4.0/"
LICENSE_SOURCES = (
    (
        "Wikipedia's Terms of Use, section 7 (Licensing of Content): Wikipedia's text is under CC BY-SA 4.0, "
        "text contributed before June 2023 under CC BY-SA 3.0, whose section 4(b) lets an adaptation be "
        "licensed under a later version with the same elements",
        "https://foundation.wikimedia.org/wiki/Policy:Terms_of_Use",
    ),
    (
        "the FM2 release's own terms: its repository's only licence is the Apache License 2.0 (LICENSE), which "
        "covers the released files (dataset/*.jsonl) and allows them in a work under another licence, "
        "the notice kept by citing the release",
        "https://github.com/google-research/fool-me-twice/blob/main/LICENSE",
    ),
)
"""Why the export is CC BY-SA 4.0: its evidence sentences and page titles are Wikipedia's text
(share-alike: what is made from them stays CC BY-SA), and the release's claims are Apache 2.0."""
SOURCE_URL = "https://github.com/google-research/fool-me-twice"
CITATION = """@inproceedings{eisenschlos-etal-2021-fool,
    title = "Fool Me Twice: Entailment from {W}ikipedia Gamification",
    author = "Eisenschlos, Julian Martin and Dhingra, Bhuwan and Bulian, Jannis and B{\\"o}rschinger, Benjamin and Boyd-Graber, Jordan",
    booktitle = "Proceedings of the 2021 Conference of the North {A}merican Chapter of the Association for Computational Linguistics: Human Language Technologies",
    year = "2021",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/2021.naacl-main.32",
}"""

HF_SPLITS = {"train": "train", "dev": "validation", "test": "test"}
"""The Hub's split names for the export's claim files (``dev.jsonl`` is ``validation``)."""
SIZE_CATEGORIES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"))


RECORD_STEMS = (*SPLITS, "votes", "validation_labels")
"""The record files' names without their suffix: what an export's id is made from."""


def export_id(out_dir: Path, files: Sequence[str]) -> str:
    """A name for this export's records: 16 hex digits of the sha256 of its record files'
    names and sha256s, so the same records give the same name whatever else changes."""
    digest = hashlib.sha256()
    for name in sorted(name for name in files if Path(name).stem in RECORD_STEMS):
        content = hashlib.sha256()
        with (out_dir / name).open("rb") as handle:
            while block := handle.read(1 << 20):
                content.update(block)
        digest.update(f"{name}\0{content.hexdigest()}\n".encode())
    return digest.hexdigest()[:16]


def export_citation(name: str) -> str:
    """The BibTeX entries of an export named ``name`` (:func:`export_id`) and of FM2."""
    return (
        f"@misc{{fm2-export-{name},\n    title = \"Fool Me Twice: dataset export {name}\",\n"
        f"    note = \"Records {name}: the sha256 of its record files (manifest.json); derived from the FM2 release, {SOURCE_URL}\",\n"
        f"    url = \"urn:fm2-export:{name}\",\n}}\n{CITATION}"
    )


def _feature(name: str, kind: Any) -> dict[str, Any]:
    """One column in ``dataset_info``'s form: a dtype, a list of a dtype or of a struct, or a struct."""
    if isinstance(kind, str):
        return {"name": name, "dtype": kind}
    if isinstance(kind, list):
        (item,) = kind
        return {"name": name, "list": item if isinstance(item, str) else [_feature(k, v) for k, v in item.items()]}
    return {"name": name, "struct": [_feature(k, v) for k, v in kind.items()]}


EVIDENCE = [{"text": "string", "section_header": "string"}]
CLAIM_TYPES: dict[str, Any] = {
    "id": "string", "text": "string", "label": "string", "gold_evidence": EVIDENCE, "retrieved_evidence": EVIDENCE,
    "wikipedia_page": "string", "category": "string", "total_votes": "int64", "correct_votes": "int64",
    "total_likes": "int64", "smoothed_correctness": "float64", "difficulty": "int64", "difficulty_deviation": "int64",
    "flags": ["string"], "author": "string", "created": "string", "mean_clues_revealed": "float64",
    "model_verdicts": {},  # a key per verifier version: claim_types() fills it
    "model_version": "string", "model_fooled": "bool", "tries": "int64", "hard_for": "string",
    "validation_labels": [{"label": "string", "checker": "string", "study": "string", "arm": "string"}], "gold_label": "string",
    "study": "string", "arm": "string",
}
VOTE_TYPES: dict[str, Any] = {
    "voter": "string", "true_claim": "string", "false_claim": "string", "true_claim_split": "string",
    "false_claim_split": "string", "false_claim_side": "string", "true_claim_public": "bool",
    "false_claim_public": "bool", "outcome": "string", "correct": "bool", "remaining_bucket": "int64",
    "clues_revealed_true": "int64", "clues_revealed_false": "int64", "timed_out": "bool", "reported": "bool",
    "voided_by": "string", "voter_saw_answer": "bool", "voter_held": "bool", "day": "string",
    "study": "string", "arm": "string",
}
LABEL_TYPES: dict[str, Any] = {
    "claim": "string", "split": "string", "position": "int64", "label": "string", "checker": "string", "study": "string", "arm": "string",
}


def claim_types(verdict_versions: Iterable[str]) -> dict[str, Any]:
    """The claim columns' types, ``model_verdicts`` with a ``{label, supports}`` per version."""
    types = dict(CLAIM_TYPES)
    types["model_verdicts"] = {name: {"label": "string", "supports": "float64"} for name in verdict_versions}
    return types


def _nonempty(out_dir: Path, files: Sequence[str], stem: str) -> str | None:
    """The JSON Lines file of ``stem`` when it holds a record, else its CSV twin when that does."""
    for suffix in (".jsonl", ".csv"):
        name = f"{stem}{suffix}"
        if name in files and (out_dir / name).exists():
            # A CSV file always has its header line: it holds a record when it has a second line.
            with (out_dir / name).open("rb") as handle:
                lines = 0 if suffix == ".jsonl" else 1
                if sum(1 for _ in zip(range(lines + 1), handle)) > lines:
                    return name
    return None


def configs(out_dir: Path, files: Sequence[str]) -> list[dict[str, Any]]:
    """The card's ``configs``: claims (the default) with its non-empty splits, then votes and
    validation labels when they hold a record. CSV is listed only for an export without JSON Lines."""
    out: list[dict[str, Any]] = []
    claim_files = [(HF_SPLITS[split], _nonempty(out_dir, files, split)) for split in SPLITS]
    splits = [{"split": name, "path": path} for name, path in claim_files if path]
    if splits:
        out.append({"config_name": "claims", "default": True, "data_files": splits})
    for stem in ("votes", "validation_labels"):
        path = _nonempty(out_dir, files, stem)
        if path:
            out.append({"config_name": stem, "data_files": [{"split": "train", "path": path}]})
    return out


def _as_read(kind: Any, *, csv: bool) -> Any:
    """A CSV cell holds a list or an object as JSON text: typed ``string`` there."""
    return "string" if csv and not isinstance(kind, str) else kind


def _size_category(claims: int) -> str:
    return next((name for bound, name in SIZE_CATEGORIES if claims < bound), "1M<n<10M")


def card_header(*, out_dir: Path, files: Sequence[str], stats: Mapping[str, Any]) -> str:
    """The YAML block (between ``---`` lines) that starts the dataset card."""
    listed = configs(out_dir, files)
    types = {
        "claims": claim_types(stats.get("model_in_the_loop", {}).get("verdict_versions") or ()),
        "votes": VOTE_TYPES,
        "validation_labels": LABEL_TYPES,
    }
    fields = {"claims": CLAIM_FIELDS, "votes": VOTE_FIELDS, "validation_labels": LABEL_FIELDS}
    data = DatasetCardData(
        pretty_name="Fool Me Twice (fm2) export",
        language=["en"],
        license=LICENSE_ID,
        annotations_creators=["crowdsourced"],
        language_creators=["crowdsourced", "found"],
        multilinguality=["monolingual"],
        size_categories=[_size_category(int(stats["table1"]["total"]["claims"]))],
        source_datasets=["extended|other-fool-me-twice"],
        task_categories=["text-classification"],
        task_ids=["fact-checking", "natural-language-inference"],
        configs=listed,
        dataset_info=[
            {
                "config_name": config["config_name"],
                "features": [
                    _feature(name, _as_read(types[config["config_name"]][name], csv=config["data_files"][0]["path"].endswith(".csv")))
                    for name in fields[config["config_name"]]
                ],
            }
            for config in listed
        ],
    )
    return f"---\n{data.to_yaml()}\n---\n"
