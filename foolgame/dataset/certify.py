"""A release that certifies itself: quality gates, a manifest of checksums, a Croissant file.

The gates read what the export wrote (the claim files, the statistics and the artifact
report computed from them) and, for the test-exclusive authors, the database rows behind the
written claim ids; each gate has its figure, its threshold (``settings.FM2_CERTIFY``) and pass or fail, in
``quality.json``. docs/dataset.md says what each gate proves.

``croissant.json`` describes the release in MLCommons Croissant 1.0 and ``manifest.json``
lists every file with its sha256 and size. Neither holds a time: the same database, seed
and salt give byte-identical files.
"""

from __future__ import annotations

import hashlib
from datetime import date
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model

from foolgame.claims.models import Claim
from foolgame.dataset import hub
from foolgame.dataset.records import ExportOptions
from foolgame.dataset.reports import read_claims, write_json
from foolgame.dataset.splits import SPLITS
from foolgame.dataset.writers import CLAIM_FIELDS, LABEL_FIELDS, VOTE_FIELDS, chunks, claim_pks
from scoring.textscan import OFFENSIVE, PERSONAL_DATA, QUOTED_FIELDS, WRITTEN_FIELDS, load_word_list, record_findings

GATES = (
    "checked_share",
    "kappa",
    "artifacts",
    "lmi",
    "page_disjoint",
    "exclusive_test_authors",
    "personal_data",
    "offensive_language",
)
EXAMPLES = 5
"""Claim ids given per kind of finding, so a maintainer can read the records."""
CHUNK = 2000
MANIFEST = "manifest.json"
CROISSANT = "croissant.json"
QUALITY = "quality.json"
SHA256SUMS = "SHA256SUMS"


def _config() -> dict[str, Any]:
    return settings.FM2_CERTIFY


def _gate(name: str, *, value: Any, threshold: Any, passed: bool, reason: str = "", **details: Any) -> dict[str, Any]:
    gate = {"name": name, "passed": passed, "value": value, "threshold": threshold, **details}
    if reason:
        gate["reason"] = reason
    return gate


# --- The gates ---------------------------------------------------------------------------


def _checked_share(validation: Mapping[str, Any], exported: int) -> dict[str, Any]:
    """The share of the exported claims that carry at least ``labels_needed`` validation labels
    in the files written (the stats' validated claims)."""
    checked = int(validation["overall"]["counts"]["claims"])
    threshold = float(_config()["MIN_CHECKED_SHARE"])
    share = checked / exported if exported else 0.0
    return _gate(
        "checked_share", value=round(share, 4), threshold=threshold, passed=bool(exported) and share >= threshold,
        reason="" if exported else "no claims exported", claims=exported, checked_claims=checked,
        min_labels=validation["labels_needed"],
    )


def _kappa(validation: Mapping[str, Any]) -> dict[str, Any]:
    """Fleiss' kappa of the validated claims as the stats computed it from the files written
    (each claim's author and its counted checks as raters)."""
    config = _config()
    threshold, needed = float(config["MIN_KAPPA"]), int(config["MIN_KAPPA_CLAIMS"])
    overall = validation["overall"]
    checked, kappa = int(overall["counts"]["claims"]), overall["kappa"]
    if checked < needed:
        return _gate("kappa", value=None, threshold=threshold, passed=False, claims=checked, min_claims=needed,
                     reason=f"not enough validated claims ({checked}, {needed} needed)")
    if kappa is None:
        return _gate("kappa", value=None, threshold=threshold, passed=False, claims=checked, min_claims=needed,
                     reason="every label is the same: chance agreement is certain and kappa undefined")
    return _gate("kappa", value=round(kappa, 4), threshold=threshold, passed=kappa >= threshold, claims=checked, min_claims=needed)


def _artifacts(report: Mapping[str, Any]) -> dict[str, Any]:
    margin = float(_config()["ARTIFACT_MARGIN"])
    above = {
        split: round(row["accuracy"] - row["majority_label_share"], 4)
        for split, row in report["claim_only_baseline"]["splits"].items()
        if row.get("accuracy") is not None and row.get("majority_label_share") is not None
    }
    if not above:
        return _gate("artifacts", value=None, threshold=margin, passed=False, above_majority_by_split={},
                     reason="the claim-only baseline could not be evaluated on any split")
    worst = max(above.values())
    return _gate("artifacts", value=worst, threshold=margin, passed=worst <= margin, above_majority_by_split=above)


def _lmi(report: Mapping[str, Any]) -> dict[str, Any]:
    cap = float(_config()["MAX_LMI"])
    best: tuple[float, str, str] | None = None
    for split, section in report["splits"].items():
        for label, terms in section["lmi_bigrams"].items():
            for term in terms:
                if best is None or term["score"] > best[0]:
                    best = (term["score"], split, label)
    if best is None:
        return _gate("lmi", value=None, threshold=cap, passed=True, reason="no bigram in any split")
    return _gate("lmi", value=best[0], threshold=cap, passed=best[0] <= cap, split=best[1], label=best[2])


def _page_disjoint(pages: Mapping[str, set[str]]) -> dict[str, Any]:
    shared = sorted(title for title, splits in pages.items() if len(splits) > 1)
    by_split = Counter(split for splits in pages.values() for split in splits)
    return _gate(
        "page_disjoint", value=len(shared), threshold=0, passed=not shared,
        pages=len(pages), pages_by_split={split: by_split[split] for split in SPLITS}, shared_pages=len(shared),
    )


def _exclusive_authors(options: ExportOptions, claims_by_split: Mapping[str, list[str]], pks: Mapping[str, int]) -> dict[str, Any]:
    """No claim of a test-exclusive author is in train or dev, read from the written ids."""
    authors = set(get_user_model().objects.filter(username__in=options.exclusive_test_authors).values_list("pk", flat=True))
    found: Counter[str] = Counter()
    if authors:
        for split, ids in claims_by_split.items():
            split_pks = [pks[i] for i in ids if i in pks]
            for chunk in chunks(split_pks, CHUNK):
                found[split] += Claim.objects.filter(pk__in=chunk, author_id__in=authors).count()
    outside = found["train"] + found["dev"]
    return _gate(
        "exclusive_test_authors", value=outside, threshold=0, passed=outside == 0,
        authors=len(authors), claims_by_split={split: found[split] for split in SPLITS},
    )


class _Scans:
    """The personal-data and offensive-word scans of each record (``scoring.textscan``): the
    gates count what people wrote in the game (the claim) and report, without counting, what
    is quoted from Wikipedia (evidence, titles, categories), which no player can change."""

    def __init__(self) -> None:
        self.words = load_word_list()
        self.personal: dict[str, dict[str, Any]] = {kind: self._tally() for kind in PERSONAL_DATA}
        self.offensive: dict[str, Any] = self._tally()
        self.quoted: dict[str, dict[str, Any]] = {kind: {"matches": 0, "claims": 0, "examples": []} for kind in (*PERSONAL_DATA, OFFENSIVE)}

    @staticmethod
    def _tally() -> dict[str, Any]:
        return {"matches": 0, "claims": 0, "examples": []}

    def add(self, record: Mapping[str, Any]) -> None:
        found = record_findings(record, self.words)
        for kind, matches in found["written"].items():
            self._count(self.offensive if kind == OFFENSIVE else self.personal[kind], matches, record["id"])
        for kind, matches in found["quoted"].items():
            self._count(self.quoted[kind], matches, record["id"])

    @staticmethod
    def _count(tally: dict[str, Any], matches: int, claim_id: str) -> None:
        tally["matches"] += matches
        tally["claims"] += 1
        if len(tally["examples"]) < EXAMPLES:
            tally["examples"].append(claim_id)

    def gates(self) -> list[dict[str, Any]]:
        personal = sum(kind["matches"] for kind in self.personal.values())
        personal_cap = int(_config()["MAX_PERSONAL_DATA"])
        offensive_cap = int(_config()["MAX_OFFENSIVE_WORDS"])
        quoted = {"fields": list(QUOTED_FIELDS)}
        return [
            _gate("personal_data", value=personal, threshold=personal_cap, passed=personal <= personal_cap,
                  fields=list(WRITTEN_FIELDS), kinds=self.personal,
                  quoted={**quoted, "kinds": {kind: self.quoted[kind] for kind in PERSONAL_DATA}}),
            _gate("offensive_language", value=self.offensive["matches"], threshold=offensive_cap,
                  passed=self.offensive["matches"] <= offensive_cap, fields=list(WRITTEN_FIELDS),
                  word_list="scoring/data/offensive_words.txt", words_listed=len(self.words), **self.offensive,
                  quoted={**quoted, **self.quoted[OFFENSIVE]}),
        ]


def release_quality(*, out_dir: Path, options: ExportOptions, stats: Mapping[str, Any], artifacts: Mapping[str, Any]) -> dict[str, Any]:
    """Every gate, in :data:`GATES` order, over the export written in ``out_dir`` and the
    statistics and artifact report computed from it."""
    claims_by_split: dict[str, list[str]] = defaultdict(list)
    pages: dict[str, set[str]] = defaultdict(set)
    scans = _Scans()
    for split in SPLITS:
        for record in read_claims(out_dir, split):
            claims_by_split[split].append(record["id"])
            pages[record["wikipedia_page"]].add(split)
            scans.add(record)
    pks = claim_pks([i for split in SPLITS for i in claims_by_split[split]])
    gates = [
        _checked_share(stats["validation"], sum(len(ids) for ids in claims_by_split.values())),
        _kappa(stats["validation"]),
        _artifacts(artifacts),
        _lmi(artifacts),
        _page_disjoint(pages),
        _exclusive_authors(options, claims_by_split, pks),
        *scans.gates(),
    ]
    failed = [gate["name"] for gate in gates if not gate["passed"]]
    return {"passed": not failed, "failed": failed, "gates": gates}


def quality_summary(quality: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What the export's row keeps of each gate: name, figure, threshold, pass, reason."""
    return [
        {key: gate[key] for key in ("name", "passed", "value", "threshold", "reason") if key in gate}
        for gate in quality["gates"]
    ]


# --- Manifest and Croissant --------------------------------------------------------------


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def write_manifest(out_dir: Path, files: Sequence[str]) -> None:
    """``manifest.json``: every other file of the export with its sha256 and size."""
    entries = [{"name": name, "size": (out_dir / name).stat().st_size, "sha256": file_digest(out_dir / name)} for name in files]
    write_json(out_dir / MANIFEST, {"algorithm": "sha256", "files": entries})


ENCODINGS = {".jsonl": "application/jsonlines", ".csv": "text/csv", ".json": "application/json", ".md": "text/markdown"}
VERSION = "1.0.0"
"""``croissant.json``'s ``version``: of the export's format (its files and fields), raised when they change."""
DATA_TYPES = {"string": "sc:Text", "int64": "sc:Integer", "float64": "sc:Float", "bool": "sc:Boolean"}
CLAIM_DESCRIPTIONS = {
    "id": "the FM2 release id for imported claims, game-<n> for the game's own",
    "text": "the claim",
    "label": "SUPPORTS (the page supports it) or REFUTES",
    "gold_evidence": "the 1 or 2 sentences the author marked, [{text, section_header}]",
    "retrieved_evidence": "retrieved evidence sentences, [{text, section_header}]",
    "wikipedia_page": "the page title",
    "category": "the page's category (NOCAT without one)",
    "author": "the pseudonym of a run of at most 2 of one author's claims",
    "model_verdicts": "each verifier version's verdict, <version>_label and <version>_supports",
    "validation_labels": "independent checkers' labels, [{label, checker, study, arm}]",
    "study": "the study (its slug) whose participant wrote the claim; null for everyone else",
    "arm": "that participant's arm in the study; null for everyone else",
}
CROISSANT_CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
"""Croissant 1.0's own ``@context`` (as its reference library writes it), so validators find nothing non-standard."""


def _leaf(record_set: str, name: str, kind: str, source: dict[str, Any], *, transform: str = "", repeated: bool = False,
          description: str = "") -> dict[str, Any]:
    field: dict[str, Any] = {
        "@type": "cr:Field",
        "@id": f"{record_set}/{name}",
        "name": name,
        "dataType": DATA_TYPES[kind],
        "source": {**source},
    }
    if description:
        field["description"] = description
    if transform:
        field["source"]["transform"] = {"jsonPath": transform}
    if repeated:
        field["repeated"] = True
    return field


def _fields(record_set: str, types: Mapping[str, Any], names: Sequence[str], source: dict[str, Any], *, csv: bool,
            descriptions: Mapping[str, str]) -> list[dict[str, Any]]:
    """Every column as a field read by ``column``: a list of structs (evidence, labels) as a
    repeated field whose sub-fields pick their key from each item; an object of objects
    (``model_verdicts``) as one sub-field per inner key. In a CSV file lists are JSON text."""
    fields = []
    for name in names:
        kind = types[name]
        column = {**source, "extract": {"column": name}}
        description = descriptions.get(name, f"see the dataset card's table of fields ({name})")
        if isinstance(kind, str) or csv:
            fields.append(_leaf(record_set, name, kind if isinstance(kind, str) else "string", column, description=description))
        elif isinstance(kind, list) and isinstance(kind[0], str):
            fields.append(_leaf(record_set, name, kind[0], column, repeated=True, description=description))
        elif isinstance(kind, list):
            fields.append({
                "@type": "cr:Field", "@id": f"{record_set}/{name}", "name": name, "description": description, "repeated": True,
                "subField": [_leaf(f"{record_set}/{name}", key, sub, column, transform=key) for key, sub in kind[0].items()],
            })
        elif kind:  # model_verdicts: {version: {label, supports}}
            fields.append({
                "@type": "cr:Field", "@id": f"{record_set}/{name}", "name": name, "description": description,
                "subField": [
                    _leaf(f"{record_set}/{name}", f"{version}_{key}", sub, column, transform=f"{version}.{key}")
                    for version, inner in kind.items() for key, sub in inner.items()
                ],
            })
        # else: an object with no key in this export (no verifier version judged a claim): nothing to read
    return fields


def _distribution(out_dir: Path, files: Sequence[str]) -> list[dict[str, Any]]:
    return [
        {
            "@type": "cr:FileObject",
            "@id": name,
            "name": name,
            "contentUrl": name,
            "contentSize": f"{(out_dir / name).stat().st_size} B",
            "encodingFormat": ENCODINGS.get(Path(name).suffix, "application/octet-stream"),
            "sha256": file_digest(out_dir / name),
        }
        for name in files
    ]


def _date_published(stats: Mapping[str, Any]) -> str:
    """The newest record's day (a claim written or a round played): a date the data itself
    holds, so the file stays the same for the same database; today for an empty export."""
    days = list(stats.get("per_day", {}))
    return max(days) if days else date.today().isoformat()


def write_croissant(out_dir: Path, files: Sequence[str], stats: Mapping[str, Any]) -> None:
    """``croissant.json``: the release in MLCommons Croissant 1.0, every listed file a
    ``cr:FileObject`` with its sha256, and a record set for each kind of record that the
    export holds (claims, votes, validation labels), each read by ``mlcroissant`` record by
    record (``tests/dataset/test_formats.py``). Files without a record are listed but read by
    no record set: a reader has nothing to read in them."""
    distribution = _distribution(out_dir, files)
    name = hub.export_id(out_dir, files)
    configs = {config["config_name"]: config for config in hub.configs(out_dir, files)}
    types = {
        "claims": hub.claim_types(stats.get("model_in_the_loop", {}).get("verdict_versions") or ()),
        "votes": hub.VOTE_TYPES,
        "validation_labels": hub.LABEL_TYPES,
    }
    names = {"claims": CLAIM_FIELDS, "votes": VOTE_FIELDS, "validation_labels": LABEL_FIELDS}
    descriptions = {
        "claims": "one claim per record, from the claim files of the splits that have claims",
        "votes": "one ended round per record",
        "validation_labels": "one checker's label on a claim per record",
    }
    record_sets = []
    for record_set, config in configs.items():
        paths = [item["path"] for item in config["data_files"]]
        if record_set == "claims":
            distribution.append({
                "@type": "cr:FileSet", "@id": "claim-files", "name": "claim-files",
                "description": "the claim files with claims (" + ", ".join(paths) + ")",
                "encodingFormat": ENCODINGS[Path(paths[0]).suffix], "includes": paths,
            })
            source: dict[str, Any] = {"fileSet": {"@id": "claim-files"}}
        else:
            source = {"fileObject": {"@id": paths[0]}}
        record_sets.append({
            "@type": "cr:RecordSet", "@id": record_set, "name": record_set, "description": descriptions[record_set],
            "field": _fields(record_set, types[record_set], names[record_set], source, csv=paths[0].endswith(".csv"),
                             descriptions=CLAIM_DESCRIPTIONS if record_set == "claims" else {}),
        })
    table = stats["table1"]["total"]
    croissant = {
        "@context": CROISSANT_CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "name": f"fool-me-twice-export-{name}",
        "description": (
            "Claims about Wikipedia pages written in the Fool Me Twice game, true or false, with the gold "
            f"evidence sentences their authors marked and the votes of other players: {table['claims']} claims "
            f"on {table['pages']} pages in page-disjoint train, dev and test splits, and {stats['votes']} votes. "
            "README.md is the dataset card."
        ),
        "version": VERSION,
        "datePublished": _date_published(stats),
        "license": hub.LICENSE_URL,
        "citeAs": hub.export_citation(name),
        "url": f"urn:fm2-export:{name}",
        "isBasedOn": hub.SOURCE_URL,
        "isLiveDataset": False,
        "distribution": distribution,
        "recordSet": record_sets,
    }
    write_json(out_dir / CROISSANT, croissant)


def write_sha256sums(out_dir: Path, files: Sequence[str]) -> None:
    """``SHA256SUMS``: every listed file in ``sha256sum``'s own format (digest, two spaces,
    name), so ``sha256sum -c SHA256SUMS`` in the folder checks the export."""
    lines = [f"{file_digest(out_dir / name)}  {name}\n" for name in files]
    (out_dir / SHA256SUMS).write_text("".join(lines), encoding="utf-8", newline="\n")
