"""The export's record files: the claims of each split and the votes, each in JSON Lines
and CSV, written as they are read, chunk by chunk.

Memory is bounded by the chunk size and the number of pages (the split plan), never by the
number of claims or votes: claims and rounds are read with ``.iterator(chunk_size=...)``
in id order, each chunk's gold evidence, vote counts, clue counts, likes and flags come
from one query each over that chunk's ids, and every record is written at once to the
JSON Lines and CSV files of its split. :mod:`foolgame.dataset.exporter` plans the splits,
opens the files and calls these writers.
"""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from datetime import datetime, timezone as dt_timezone
from itertools import islice
from pathlib import Path
from typing import Any, TypeVar

from django.conf import settings
from django.db import connection
from django.db.models import Count, F, Q
from django.db.models.functions import Collate

from foolgame.claims.models import Claim, ClaimGold
from foolgame.dataset.flags import claim_flags, id_lookup
from foolgame.dataset.model_fields import ClaimModels
from foolgame.dataset.privacy import Fragments
from foolgame.dataset.records import ExportOptions, Progress, WriteSummary
from foolgame.dataset.splits import SplitPlan
from foolgame.dataset.study_fields import StudyMarks
from foolgame.dataset.validation import ClaimChecks
from foolgame.moderation.models import PlayerHold, Sighting
from foolgame.voting.models import ClueReveal, Like, Round
from scoring import filters

T = TypeVar("T")

CLAIM_FIELDS = (
    "id",
    "text",
    "label",
    "gold_evidence",
    "retrieved_evidence",
    "wikipedia_page",
    "category",
    "total_votes",
    "correct_votes",
    "total_likes",
    "smoothed_correctness",
    "difficulty",
    "difficulty_deviation",
    "flags",
    "author",
    "created",
    "mean_clues_revealed",
    "model_verdicts",
    "model_version",
    "model_fooled",
    "tries",
    "hard_for",
    "validation_labels",
    "gold_label",
    "study",
    "arm",
)
VOTE_FIELDS = (
    "voter",
    "true_claim",
    "false_claim",
    "true_claim_split",
    "false_claim_split",
    "false_claim_side",
    "true_claim_public",
    "false_claim_public",
    "outcome",
    "correct",
    "remaining_bucket",
    "clues_revealed_true",
    "clues_revealed_false",
    "timed_out",
    "reported",
    "voided_by",
    "voter_saw_answer",
    "voter_held",
    "day",
    "study",
    "arm",
)
LABEL_FIELDS = ("claim", "split", "position", "label", "checker", "study", "arm")
"""``validation_labels.*``: a claim's ``validation_labels`` one a row (``position`` their order on
the claim, from 0), for tools that read flat tables (Croissant, a ``datasets`` configuration)."""
ENDED_STATES = (Round.State.VOTED, Round.State.TIMED_OUT, Round.State.REPORTED, Round.State.VOIDED, Round.State.FORFEITED)
GAME_ID_PREFIX = "game-"
PK_CHUNK = 2000
"""Release ids looked up in one query (an IN list any database takes)."""
REMAINING_BUCKET_SECONDS = 30
"""A vote's time left is exported rounded down to a multiple of this."""


def smoothed_correctness(correct: int, votes: int) -> float:
    """docs/rules.md's ``(correct + a) / (votes + a + b)`` under the moderation's prior (4, 1)."""
    moderation = getattr(settings, "FM2_MODERATION", {})
    return filters.smoothed_rate(correct, votes, float(moderation.get("PRIOR_A", 4.0)), float(moderation.get("PRIOR_B", 1.0)))


def export_claim_id(pk: int, external_id: str | None) -> str:
    """The release's id for imported claims, ``game-<pk>`` for the game's own."""
    return external_id or f"{GAME_ID_PREFIX}{pk}"


def claim_pks(export_ids: Sequence[str]) -> dict[str, int]:
    """The database id of each written claim id (``game-<pk>``, or a release's own id), for
    the reports that read the written files and need the rows behind them."""
    found: dict[str, int] = {}
    release = []
    for export_id in export_ids:
        number = export_id.removeprefix(GAME_ID_PREFIX)
        if export_id.startswith(GAME_ID_PREFIX) and number.isdigit():
            found[export_id] = int(number)
        else:
            release.append(export_id)
    for chunk in chunks(release, PK_CHUNK):
        found.update(Claim.objects.filter(external_id__in=chunk).values_list("external_id", "pk"))
    return found


def _claim_chunks(passes: Iterable[tuple[Any, bool]], size: int) -> Iterator[tuple[list[dict[str, Any]], tuple[int, int] | None]]:
    """Chunks of claim rows, each with its (first, last) id when the pass is in id order."""
    for rows, in_id_order in passes:
        for chunk in chunks(rows.iterator(chunk_size=size), size):
            yield chunk, ((chunk[0]["id"], chunk[-1]["id"]) if in_id_order else None)


def chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """``items`` in lists of ``size`` (the last shorter), read lazily: the export's one chunker."""
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _day(moment: datetime | None) -> str | None:
    """The UTC day only: exact times could be joined to public traces."""
    return moment.astimezone(dt_timezone.utc).date().isoformat() if moment else None


def remaining_bucket(remaining: float) -> int:
    """Seconds left, rounded down to a multiple of REMAINING_BUCKET_SECONDS."""
    return int(max(0.0, remaining) // REMAINING_BUCKET_SECONDS) * REMAINING_BUCKET_SECONDS


def _least_voter_points(remaining: float) -> int:
    """The fewest points a correct vote in ``remaining``'s bucket can have paid."""
    return min(int(settings.FM2["ROUND_POT"]), remaining_bucket(remaining))


def _least_author_share(remaining: float, *, false_claim: bool) -> int:
    """The fewest fool points a correct vote in ``remaining``'s bucket paid one claim's
    author (the most the voter can have won leaves the least; see scoring.rounds)."""
    pot = int(settings.FM2["ROUND_POT"])
    left = pot - min(pot, remaining_bucket(remaining) + REMAINING_BUCKET_SECONDS - 1)
    return left - left // 2 if false_claim else left // 2


def _evidence(items: Sequence[dict[str, Any]] | None) -> list[dict[str, str]]:
    return [{"text": item["text"], "section_header": item.get("section_header") or ""} for item in items or ()]


def exported_claims(options: ExportOptions):  # type: ignore[no-untyped-def]
    """The claims the export covers (the split plan counts the same ones)."""
    claims = Claim.objects.all()
    if not options.include_removed:
        claims = claims.filter(status=Claim.Status.ACTIVE)
    return claims


def _release_order() -> tuple[Any, ...]:
    """Release claims first, in the release's own order, then the game's claims by age.

    The FM2 files are sorted by id (byte order), and the order matters beyond looks: the
    LMI ranking breaks ties by first appearance, which is how the paper's appendix list
    comes out (``mary ,`` and ``queen of`` tie with ``the only``). The import itself
    groups claims by page, so the primary key does not keep that order; the id does.
    """
    key: Any = F("external_id")
    if connection.vendor == "postgresql":
        key = Collate("external_id", "C")  # byte order, whatever the database's locale
    return (key.asc(nulls_last=True),)


def _per_claim_counts(ids: list[int], id_range: tuple[int, int] | None) -> tuple[Counter[int], Counter[int], Counter[int], Counter[int]]:
    """The game's own votes, correct votes, clues revealed in voted rounds and likes.

    ``id_range`` replaces the ``IN`` list when the chunk is in id order (see claim_flags).
    """
    votes: Counter[int] = Counter()
    correct: Counter[int] = Counter()
    clues: Counter[int] = Counter()
    for side in ("left", "right"):
        column = f"{side}_claim_id"
        lookup = id_lookup(column, ids, id_range)
        rows = (
            Round.objects.filter(**lookup, vote__isnull=False)
            .order_by()
            .values(column)
            .annotate(n=Count("id"), c=Count("id", filter=Q(vote__correct=True)))
            .values_list(column, "n", "c")
        )
        for claim_id, n, c in rows:
            votes[claim_id] += n
            correct[claim_id] += c
        reveals = (
            ClueReveal.objects.filter(
                **{f"round__{key}": value for key, value in lookup.items()},
                round__vote__isnull=False,
                claim_index=0 if side == "left" else 1,
            )
            .order_by()
            .values(f"round__{column}")
            .annotate(n=Count("id"))
            .values_list(f"round__{column}", "n")
        )
        for claim_id, n in reveals:
            clues[claim_id] += n
    like_lookup = id_lookup("claim_id", ids, id_range)
    likes = Counter(
        dict(Like.objects.filter(**like_lookup).order_by().values("claim_id").annotate(n=Count("id")).values_list("claim_id", "n"))
    )
    return votes, correct, clues, likes


def _least_fool_points(ids: list[int], id_range: tuple[int, int] | None) -> Counter[int]:
    """Per claim, the fewest fool points its author can be seen to have earned from the
    exported votes on it (each correct vote's time bucket bounds the share)."""
    least: Counter[int] = Counter()
    for index, side in enumerate(("left", "right")):
        column = f"{side}_claim_id"
        rows = Round.objects.filter(**id_lookup(column, ids, id_range), vote__correct=True).values_list(column, "false_claim_index", "vote__remaining")
        for claim_id, false_index, remaining in rows.order_by().iterator(chunk_size=2000):
            least[claim_id] += _least_author_share(remaining, false_claim=false_index == index)
    return least


class RecordFiles:
    """The open files of one kind of record (claims per split, or votes)."""

    def __init__(self, *, stack: ExitStack, out_dir: Path, names: Iterable[str], fields: Sequence[str], formats: Sequence[str]) -> None:
        self.jsonl: dict[str, Any] = {}
        self.csv: dict[str, Any] = {}
        self.fields = fields
        self.paths: list[Path] = []
        for name in names:
            if "jsonl" in formats:
                path = out_dir / f"{name}.jsonl"
                self.jsonl[name] = stack.enter_context(path.open("w", encoding="utf-8"))
                self.paths.append(path)
            if "csv" in formats:
                path = out_dir / f"{name}.csv"
                handle = stack.enter_context(path.open("w", encoding="utf-8", newline=""))
                writer = csv.writer(handle)
                writer.writerow(fields)
                self.csv[name] = writer
                self.paths.append(path)

    def write(self, name: str, record: dict[str, Any]) -> None:
        if name in self.jsonl:
            self.jsonl[name].write(json.dumps(record, ensure_ascii=False) + "\n")
        if name in self.csv:
            self.csv[name].writerow([_csv_cell(record[key]) for key in self.fields])


def _csv_cell(value: Any) -> Any:
    """Lists and objects as JSON text; true/false as in JSON; null as an empty cell."""
    kind = type(value)
    if kind is str or kind is int or kind is float:
        return value
    if kind is bool:
        return "true" if value else "false"
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


def write_claims(
    *,
    files: RecordFiles,
    label_files: RecordFiles | None = None,
    options: ExportOptions,
    plan: SplitPlan,
    page_info: dict[int, tuple[str, str]],
    exclusive_ids: set[int],
    authors: Fragments,
    claim_checks: ClaimChecks,
    claim_models: ClaimModels,
    summary: WriteSummary,
    progress: Progress,
    marks: StudyMarks | None = None,
) -> None:
    """The claims' files, one per split (``train``, ``dev``, ``test``), and their validation
    labels one a row in ``label_files``; the counts go to ``summary``."""
    fields = (
        "id", "text", "label", "page_id", "author_id", "created", "status", "external_id", "clues",
        "release_retrieved", "release_total_votes", "release_correct_votes", "release_total_likes",
        "rating", "rating_deviation",
    )
    claims = exported_claims(options)
    # Release claims first in the release's order, then the game's own in id order: those
    # chunks are id ranges, and a range filter is far cheaper than a long IN list.
    passes = (
        (claims.filter(external_id__isnull=False).order_by(*_release_order(), "id").values(*fields), False),
        (claims.filter(external_id__isnull=True).order_by("id").values(*fields), True),
    )
    total = claims.count()
    done = 0
    progress("claims", 0, total)
    for chunk, id_range in _claim_chunks(passes, options.chunk_size):
        ids = [row["id"] for row in chunk]
        gold: dict[int, list[dict[str, str]]] = defaultdict(list)
        gold_lookup = id_lookup("claim_id", ids, id_range)
        for claim_id, text, header in (
            ClaimGold.objects.filter(**gold_lookup).order_by("claim_id", "position").values_list("claim_id", "sentence__text", "sentence__section_header")
        ):
            gold[claim_id].append({"text": text, "section_header": header})
        votes, correct, clues, likes = _per_claim_counts(ids, id_range)
        least_fool = _least_fool_points(ids, id_range)
        flags = claim_flags(((row["id"], row["status"]) for row in chunk), id_range=id_range)
        checks = claim_checks.read(ids, id_range)
        models = claim_models.read(ids)
        for row in chunk:
            split = plan.page_split[row["page_id"]]
            if row["author_id"] in exclusive_ids and split != "test":
                continue  # withheld: see foolgame.dataset.splits, rule 2
            claim_id = row["id"]
            title, category = page_info[row["page_id"]]
            total_votes = row["release_total_votes"] + votes[claim_id]
            correct_votes = row["release_correct_votes"] + correct[claim_id]
            retrieved = row["release_retrieved"] if row["release_retrieved"] is not None else row["clues"]
            # What this claim shows of its author's public points (release claims earned none).
            shown = {
                "write": 0 if row["external_id"] else int(settings.FM2["WRITE_POINTS"]),
                "like": int(settings.FM2["LIKE_POINTS"]) * likes[claim_id],
                "fool": least_fool[claim_id],
                "model": claim_models.points_shown(models, claim_id),
            }
            shown["total"] = sum(shown.values())
            smoothed = round(smoothed_correctness(correct_votes, total_votes), 4)
            export_id = export_claim_id(claim_id, row["external_id"])
            labels = claim_checks.named(checks[claim_id][0])
            model_fields = claim_models.fields(models, claim_id, label=row["label"], votes=total_votes, smoothed_correctness=smoothed)
            if marks:
                marks.claim(row["author_id"], claim_id, model_fields["model_fooled"])
            files.write(
                split,
                {
                    "id": export_id,
                    "text": row["text"],
                    "label": row["label"],
                    "gold_evidence": gold[claim_id],
                    "retrieved_evidence": _evidence(retrieved),
                    "wikipedia_page": title,
                    "category": category,
                    "total_votes": total_votes,
                    "correct_votes": correct_votes,
                    "total_likes": row["release_total_likes"] + likes[claim_id],
                    "smoothed_correctness": smoothed,
                    "difficulty": round(row["rating"]) if row["rating"] is not None else None,
                    "difficulty_deviation": round(row["rating_deviation"]) if row["rating"] is not None else None,
                    "flags": flags[claim_id],
                    "author": authors(row["author_id"], shown),
                    "created": _day(row["created"]),
                    "mean_clues_revealed": round(clues[claim_id] / votes[claim_id], 3) if votes[claim_id] else None,
                    **model_fields,
                    "validation_labels": labels,
                    "gold_label": checks[claim_id][1],
                    # A study's participant's claim: its study and arm (study_fields); null for everyone else.
                    **(marks.fields(row["author_id"]) if marks else {"study": None, "arm": None}),
                },
            )
            if label_files is not None:
                for position, item in enumerate(labels):
                    label_files.write("validation_labels", {"claim": export_id, "split": split, "position": position, **item})
            summary.claims[split] += 1
        done += len(chunk)
        progress("claims", done, total)


def write_votes(
    *,
    files: RecordFiles,
    options: ExportOptions,
    plan: SplitPlan,
    exclusive_ids: set[int],
    voters: Fragments,
    summary: WriteSummary,
    progress: Progress,
    marks: StudyMarks | None = None,
) -> None:
    """The votes' file: every ended round whose two claims are both exported."""
    rounds = Round.objects.filter(state__in=ENDED_STATES).order_by("id")
    total = rounds.count()
    rows = rounds.values(
        "id", "player_id", "state", "started_at", "ended_at", "void_action",
        "left_claim_id", "left_claim__label", "left_claim__page_id", "left_claim__status", "left_claim__author_id", "left_claim__external_id",
        "right_claim_id", "right_claim__label", "right_claim__page_id", "right_claim__status", "right_claim__author_id", "right_claim__external_id",
        "vote__correct", "vote__remaining", "false_claim_index",
        # A room's round keeps its clock's origin up to 150 s before the question's instant
        # (rooms shorten the 180 s clock): its day is the question's own.
        "room_play__question__started_at",
    )
    any_sightings = Sighting.objects.exists()
    held = set(PlayerHold.objects.filter(held=True).values_list("player_id", flat=True))
    done = 0
    progress("votes", 0, total)
    for chunk in chunks(rows.iterator(chunk_size=options.chunk_size), options.chunk_size):
        reveals = Counter(
            {
                (round_id, index): n
                for round_id, index, n in ClueReveal.objects.filter(round_id__gte=chunk[0]["id"], round_id__lte=chunk[-1]["id"])
                .order_by()
                .values("round_id", "claim_index")
                .annotate(n=Count("id"))
                .values_list("round_id", "claim_index", "n")
            }
        )
        sightings = _sightings(chunk) if any_sightings else {}
        for row in chunk:
            sides = []
            for index, side in enumerate(("left", "right")):
                page_id = row[f"{side}_claim__page_id"]
                split = plan.page_split.get(page_id)
                excluded = (
                    split is None
                    or (row[f"{side}_claim__status"] == Claim.Status.REMOVED and not options.include_removed)
                    or (row[f"{side}_claim__author_id"] in exclusive_ids and split != "test")
                )
                sides.append((index, side, split, excluded))
            if any(excluded for *_, excluded in sides):
                summary.rounds_left_out["a claim not exported"] += 1
                continue
            # The answer stored when the round was dealt (what the player was judged against);
            # rounds older than that column fall back to the current labels.
            false_index = row["false_claim_index"]
            voided = row["state"] == Round.State.VOIDED
            if false_index is None or not voided:
                # A voided round keeps its dealt answer: a relabel that voided it leaves both
                # claims with one label, and researchers need to see which round it was.
                if row["left_claim__label"] == row["right_claim__label"]:
                    summary.rounds_left_out["both claims now have the same label"] += 1
                    continue
            if false_index is None:
                false_index = 0 if row["left_claim__label"] == Claim.Label.REFUTES else 1
            true_index = 1 - false_index
            ids = [
                export_claim_id(row[f"{side}_claim_id"], row[f"{side}_claim__external_id"]) for _, side, _, _ in sides
            ]
            public = [row[f"{side}_claim__external_id"] is not None for side in ("left", "right")]
            voted = row["state"] == Round.State.VOTED
            correct = row["vote__correct"] if voted else None
            least = _least_voter_points(row["vote__remaining"]) if correct else 0
            seen = [sightings.get((row["player_id"], row[f"{side}_claim_id"])) for side in ("left", "right")]
            # A room's round has no voter: its room's results are public (privacy.py).
            room_round = row["room_play__question__started_at"] is not None
            clues_true, clues_false = reveals[(row["id"], true_index)], reveals[(row["id"], false_index)]
            mark = marks.fields(row["player_id"]) if marks and not room_round else {"study": None, "arm": None}
            if marks and not room_round:
                marks.vote(row["player_id"], correct=correct, clues=clues_true + clues_false)
            files.write(
                "votes",
                {
                    "voter": None if room_round else voters(row["player_id"], {"verify": least, "total": least}),
                    "true_claim": ids[true_index],
                    "false_claim": ids[false_index],
                    "true_claim_split": sides[true_index][2],
                    "false_claim_split": sides[false_index][2],
                    "false_claim_side": ("left", "right")[false_index],
                    "true_claim_public": public[true_index],
                    "false_claim_public": public[false_index],
                    "outcome": row["state"],
                    "correct": correct,
                    "remaining_bucket": remaining_bucket(row["vote__remaining"]) if voted and row["vote__remaining"] is not None else None,
                    "clues_revealed_true": clues_true,
                    "clues_revealed_false": clues_false,
                    "timed_out": row["state"] == Round.State.TIMED_OUT,
                    "reported": row["state"] == Round.State.REPORTED,
                    "voided_by": (row["void_action"] or "moderation") if voided else None,
                    "voter_saw_answer": any(moment is not None and moment <= row["ended_at"] for moment in seen),
                    "voter_held": row["player_id"] in held,
                    # A round given up before its start has no clock: its day is the forfeit's.
                    "day": _day(row["room_play__question__started_at"] or row["started_at"] or row["ended_at"]),
                    **mark,
                },
            )
            summary.votes += 1
            if voided:
                summary.voided_rounds += 1
        done += len(chunk)
        progress("votes", done, total)


def _sightings(chunk: list[dict[str, Any]]) -> dict[tuple[int, int], datetime]:
    """When each of the chunk's players first saw its claims in the moderation tools."""
    players = {row["player_id"] for row in chunk}
    claims = {row[f"{side}_claim_id"] for row in chunk for side in ("left", "right")}
    rows = Sighting.objects.filter(moderator_id__in=players, claim_id__in=claims).values_list("moderator_id", "claim_id", "first_seen")
    return {(moderator, claim): moment for moderator, claim, moment in rows}
