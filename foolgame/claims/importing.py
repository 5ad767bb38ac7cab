"""Importing the FM2 release (JSON Lines, one claim a line) into pages, sentences and claims.

A page's sentences are the union, in first-seen order, of the gold and retrieved evidence
of all its claims. Each row becomes a claim by the system player ``fm2-release`` with its
label, gold sentences, historical counts and split. The whole file is parsed and checked
before anything is written, and written in one transaction, so a bad line changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from foolgame.claims.models import Claim, ClaimGold
from foolgame.evidence.services import page_indexes_build_on_commit
from foolgame.pages.importing import (
    NO_CATEGORY,
    BadInput,
    ParsedSentence,
    category_for_name,
    check_text,
    check_title,
    import_limit,
    page_append_sentences,
    page_get_or_create,
    parse_json_object,
    read_lines,
)
from foolgame.pages.models import Page, Sentence

LABELS = {choice.value for choice in Claim.Label}
SPLITS = {"train", "dev", "test"}


@dataclass(frozen=True)
class Fm2Row:
    line: int
    id: str
    text: str
    label: str
    page_title: str
    category: str
    gold: tuple[ParsedSentence, ...]
    retrieved: tuple[ParsedSentence, ...]
    total_votes: int
    correct_votes: int
    total_likes: int


def split_from_filename(path: Path) -> str:
    """``train.jsonl``, ``fm2-dev.jsonl`` -> train, dev; "" when the name says no split."""
    match = re.search(r"(?:^|[^a-z])(train|dev|test)(?:[^a-z]|$)", path.stem.lower())
    return match.group(1) if match else ""


def _evidence(path: Path, line: int, row: dict, key: str, *, required: bool) -> tuple[ParsedSentence, ...]:
    value = row.get(key, [] if not required else None)
    if not isinstance(value, list):
        raise BadInput(path, line, f"'{key}' must be a list of {{text, section_header}}")
    maximum = import_limit("EVIDENCE_PER_CLAIM_MAX")
    if len(value) > maximum:
        raise BadInput(path, line, f"'{key}' holds {len(value)} sentences, more than the limit of {maximum} (FM2_IMPORT['EVIDENCE_PER_CLAIM_MAX'])")
    items = []
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not item["text"].strip():
            raise BadInput(path, line, f"every '{key}' item needs a non-empty 'text'")
        header = item.get("section_header") or ""
        if not isinstance(header, str):
            raise BadInput(path, line, f"'{key}' section_header must be a string")
        header = check_text(path, line, header.strip(), what=f"a '{key}' section_header", limit="SECTION_HEADER_MAX_CHARS")
        text = check_text(path, line, " ".join(item["text"].split()), what=f"a '{key}' text", limit="SENTENCE_MAX_CHARS")
        items.append(ParsedSentence(header, text, line))
    if required and not 1 <= len(items) <= 2:
        raise BadInput(path, line, f"'{key}' must hold 1 or 2 sentences, not {len(items)}")
    return tuple(items)


def _count(path: Path, line: int, row: dict, key: str) -> int:
    value = row.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadInput(path, line, f"'{key}' must be a whole number >= 0")
    maximum = import_limit("VOTES_MAX")
    if value > maximum:
        raise BadInput(path, line, f"'{key}' is more than the limit of {maximum} (FM2_IMPORT['VOTES_MAX'])")
    return value


def parse_fm2_line(path: Path, line: int, raw: str) -> Fm2Row:
    row = parse_json_object(path, line, raw)
    for key in ("id", "text", "label", "wikipedia_page"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise BadInput(path, line, f"missing '{key}'")
    claim_id = check_text(path, line, row["id"].strip(), what="'id'", limit="CLAIM_ID_MAX_CHARS")
    text = check_text(path, line, " ".join(row["text"].split()), what="the claim 'text'", limit="CLAIM_MAX_CHARS")
    label = row["label"].strip().upper()  # "supports" is SUPPORTS; anything else is refused
    if label not in LABELS:
        raise BadInput(path, line, f"label must be SUPPORTS or REFUTES, not {row['label'][:40]!r}")
    title = check_title(path, line, row["wikipedia_page"], what="'wikipedia_page'")
    category = row.get("category") or NO_CATEGORY
    if not isinstance(category, str):
        raise BadInput(path, line, "'category' must be a string")
    category = check_text(path, line, " ".join(category.split()) or NO_CATEGORY, what="'category'", limit="CATEGORY_MAX_CHARS")
    total, correct = _count(path, line, row, "total_votes"), _count(path, line, row, "correct_votes")
    if correct > total:
        raise BadInput(path, line, "'correct_votes' is larger than 'total_votes'")
    return Fm2Row(
        line=line,
        id=claim_id,
        text=text,
        label=label,
        page_title=title,
        category=category,
        gold=_evidence(path, line, row, "gold_evidence", required=True),
        retrieved=_evidence(path, line, row, "retrieved_evidence", required=False),
        total_votes=total,
        correct_votes=correct,
        total_likes=_count(path, line, row, "total_likes"),
    )


def parse_fm2_file(path: Path, progress: Callable[[Iterable[tuple[int, str]]], Iterable[tuple[int, str]]] = iter) -> list[Fm2Row]:
    """Every row of a release file, parsed and checked; nothing is written."""
    rows, seen = [], {}
    for number, raw in progress(read_lines(path)):
        if not raw.strip():
            continue
        parsed = parse_fm2_line(path, number, raw)
        if parsed.id in seen:
            raise BadInput(path, number, f"claim id {parsed.id!r} already on line {seen[parsed.id]}")
        seen[parsed.id] = number
        rows.append(parsed)
    if not rows:
        raise BadInput(path, 1, "empty file: no claims")
    return rows


def release_author() -> AbstractBaseUser:
    """The system player that authored every imported claim; it cannot log in."""
    user, created = get_user_model().objects.get_or_create(username=settings.FM2["RELEASE_AUTHOR"])
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def _clue(sentence: Sentence) -> dict:
    return {"sentence_id": sentence.pk, "text": sentence.text, "section_header": sentence.section_header}


@transaction.atomic
def import_fm2_rows(rows: list[Fm2Row], *, split: str) -> int:
    """Store parsed rows; returns how many claims were new. Existing claim ids are left as they are.

    The new claims' quality flags are computed in the same transaction, from the release's
    vote counts: the moderation queue lists the release's too-hard claims as soon as the
    import commits, without waiting for the hourly refresh."""
    from foolgame.moderation.quality import quality_refresh_chunked  # moderation imports claims

    author = release_author()
    created_ids: list[int] = []
    by_page: dict[str, list[Fm2Row]] = {}
    for row in rows:
        by_page.setdefault(row.page_title, []).append(row)
    known_ids = set(Claim.objects.filter(external_id__in=[r.id for r in rows]).values_list("external_id", flat=True))
    for title, page_rows in by_page.items():
        category_name = next((r.category for r in page_rows if r.category.upper() != NO_CATEGORY), None)
        page, _ = page_get_or_create(title=title, source=Page.Source.FM2, category=category_for_name(category_name))
        if page_append_sentences(page=page, sentences=(s for r in page_rows for s in (*r.gold, *r.retrieved))):
            page_indexes_build_on_commit(page_ids=[page.pk])
        sentence_by_text = {s.text: s for s in page.sentences.all()}
        for row in page_rows:
            if row.id in known_ids:
                continue
            gold = [sentence_by_text[s.text] for s in row.gold]
            gold_ids = {s.pk for s in gold}
            retrieved = [sentence_by_text[s.text] for s in row.retrieved]
            # The game reveals retrieved evidence first and the gold sentences last; the
            # release's own order is kept apart for a faithful export.
            clues = [_clue(s) for s in retrieved if s.pk not in gold_ids] + [_clue(s) for s in gold]
            claim = Claim.objects.create(
                page=page,
                text=row.text,
                label=row.label,
                author=author,
                clues=clues,
                release_retrieved=[_clue(s) for s in retrieved],
                external_id=row.id,
                release_split=split,
                release_total_votes=row.total_votes,
                release_correct_votes=row.correct_votes,
                release_total_likes=row.total_likes,
            )
            ClaimGold.objects.bulk_create(
                ClaimGold(claim=claim, sentence=s, position=i) for i, s in enumerate(dict.fromkeys(gold))
            )
            created_ids.append(claim.pk)
    quality_refresh_chunked(claim_ids=created_ids)
    return len(created_ids)


def database_totals() -> str:
    """The one summary line the import prints: totals over the whole database."""
    claims = Claim.objects.all()
    return (
        f"pages={Page.objects.count()} claims={claims.count()} "
        f"supports={claims.filter(label=Claim.Label.SUPPORTS).count()} "
        f"refutes={claims.filter(label=Claim.Label.REFUTES).count()} "
        f"sentences={Sentence.objects.count()}"
    )
