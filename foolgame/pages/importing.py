"""Reading page corpora (KILT JSONL, folders of .txt articles, category lists) and storing them.

Parsing is separate from writing: a file is parsed and checked completely first, so a bad
line stops the import before anything is written, and the error names the file and line.
Writing is idempotent: importing the same file again changes nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils.text import slugify

from foolgame.core import hooks
from foolgame.pages.models import Category, Page, PageListing, Sentence
from foolgame.pages.sentences import split_sentences

SECTION_SEPARATOR = " | "
NO_CATEGORY = "NOCAT"


class BadInput(Exception):
    """A line of an input file that cannot be imported. ``str()`` names file and line."""

    def __init__(self, path: Path | str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path = str(path)
        self.line = line
        self.message = message


@dataclass(frozen=True)
class ParsedSentence:
    section_header: str
    text: str
    line: int = field(default=0, compare=False)


@dataclass
class ParsedPage:
    title: str
    sentences: list[ParsedSentence] = field(default_factory=list)
    line: int = 1


@dataclass
class SyncResult:
    created: int = 0
    moved: int = 0
    retired: int = 0
    deleted: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.created or self.moved or self.retired or self.deleted)


# --- Reading and checking input --------------------------------------------------------
#
# Every file is read in binary with a bound on each line, so a line of a gigabyte is refused
# after reading the limit, not loaded; bytes that are not UTF-8, NUL and other control
# characters (PostgreSQL refuses NUL in text), lone surrogates from JSON escapes, and texts
# longer than their limit (settings.FM2_IMPORT) are refused with FILE:LINE before anything
# is written.

_COLUMN_LIMITS = {"TITLE_MAX_CHARS": 300, "SECTION_HEADER_MAX_CHARS": 500, "CATEGORY_MAX_CHARS": 100, "CLAIM_ID_MAX_CHARS": 64}
_FORBIDDEN = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


def parse_json_object(path: Path | str, line: int, raw: str) -> dict[str, Any]:
    """One line of a JSON-lines file as an object, or BadInput naming FILE:LINE."""
    try:
        row = json.loads(raw)
    except json.JSONDecodeError as error:
        raise BadInput(path, line, f"not valid JSON ({error.msg})") from None
    except (ValueError, RecursionError) as error:  # a number of thousands of digits, deep nesting
        raise BadInput(path, line, f"not valid JSON ({error.__class__.__name__}: {str(error)[:80]})") from None
    if not isinstance(row, dict):
        raise BadInput(path, line, "each line must be a JSON object")
    return row


def import_limit(key: str) -> int:
    """A limit of ``settings.FM2_IMPORT``; never above the database column it guards."""
    value = int(settings.FM2_IMPORT[key])
    return min(value, _COLUMN_LIMITS[key]) if key in _COLUMN_LIMITS else value


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line of a UTF-8 file; a leading BOM is dropped.

    A line longer than FM2_IMPORT["LINE_MAX_BYTES"] is refused after reading that many bytes."""
    limit = import_limit("LINE_MAX_BYTES")
    try:
        handle = path.open("rb")
    except OSError as error:
        raise BadInput(path, 0, f"cannot read ({error.strerror or error})") from None
    number = 0
    with handle:
        while True:
            try:
                raw = handle.readline(limit + 1)
            except OSError as error:
                raise BadInput(path, number + 1, f"cannot read ({error.strerror or error})") from None
            if not raw:
                return
            number += 1
            if len(raw) > limit and not raw.endswith(b"\n"):
                raise BadInput(path, number, f"line longer than {limit} bytes (FM2_IMPORT['LINE_MAX_BYTES'])")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise BadInput(path, number, f"not UTF-8 text (byte {error.start + 1} of the line: {error.reason})") from None
            if number == 1 and text.startswith("\ufeff"):
                text = text[1:]
            yield number, text


def count_lines(path: Path) -> int:
    """Lines of a file, counted in bounded binary chunks (for a progress bar's total)."""
    lines, last = 0, b"\n"
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                lines += chunk.count(b"\n")
                last = chunk[-1:]
    except OSError as error:
        raise BadInput(path, 0, f"cannot read ({error.strerror or error})") from None
    return lines + (last != b"\n")


def check_text(path: Path | str, line: int, value: str, *, what: str, limit: str) -> str:
    """``value`` when it holds no control character or lone surrogate and fits its limit."""
    bad = _FORBIDDEN.search(value)
    if bad:
        char = bad.group()
        kind = "a lone surrogate" if "\ud800" <= char <= "\udfff" else "a control character"
        raise BadInput(path, line, f"{what} contains {kind} (U+{ord(char):04X}) at character {bad.start() + 1}")
    maximum = import_limit(limit)
    if len(value) > maximum:
        raise BadInput(path, line, f"{what} is {len(value)} characters long, more than the limit of {maximum} (FM2_IMPORT['{limit}'])")
    return value


def check_title(path: Path | str, line: int, raw: object, *, what: str = "title") -> str:
    """A page title from input: a non-empty string, normalised, checked."""
    if not isinstance(raw, str):
        raise BadInput(path, line, f"{what} must be a string")
    title = normalise_title(check_text(path, line, raw, what=what, limit="LINE_MAX_BYTES"))
    if not title:
        raise BadInput(path, line, f"{what} is empty")
    return check_text(path, line, title, what=what, limit="TITLE_MAX_CHARS")


def check_page(path: Path, page: ParsedPage) -> ParsedPage:
    """Every sentence and header of a parsed page within its limits; not too many sentences."""
    maximum = import_limit("SENTENCES_PER_PAGE_MAX")
    if len(page.sentences) > maximum:
        raise BadInput(path, page.line, f"{len(page.sentences)} sentences, more than the limit of {maximum} (FM2_IMPORT['SENTENCES_PER_PAGE_MAX'])")
    for sentence in page.sentences:
        line = sentence.line or page.line
        check_text(path, line, sentence.text, what="a sentence", limit="SENTENCE_MAX_CHARS")
        check_text(path, line, sentence.section_header, what="a section header", limit="SECTION_HEADER_MAX_CHARS")
    return page


def normalise_title(title: str) -> str:
    return " ".join(title.replace("_", " ").split())


def category_for_name(name: str | None) -> Category | None:
    """The category called ``name``, created on first use; None for no category."""
    if not name or name.strip().upper() == NO_CATEGORY:
        return None
    name = " ".join(name.split())
    slug = slugify(name)[:100]
    # "Pop Culture" and "Pop-Culture!" share a slug, so they are one category (the slug is
    # unique); a name with no ASCII letters or digits gets a numbered slug.
    category = Category.objects.filter(name=name).first() or (slug and Category.objects.filter(slug=slug).first())
    if category:
        return category
    number = 1
    while not slug or Category.objects.filter(slug=slug).exists():
        number += 1
        slug = f"category-{number}"
    return Category.objects.create(name=name, slug=slug)


# --- Category lists ---------------------------------------------------------------------


def parse_category_list(path: Path) -> tuple[str, list[tuple[str, bool, int]]]:
    """``categories-Popular-Culture.txt`` -> ("Popular Culture", [(title, priority, line), ...])."""
    match = re.fullmatch(r"categories-(.+)\.txt", path.name)
    if not match:
        raise BadInput(path, 0, "a category list is named categories-<Category>.txt")
    category = match.group(1).replace("-", " ").replace("_", " ").strip()
    check_text(path, 0, category, what="the category name in the file name", limit="CATEGORY_MAX_CHARS")
    if not category:
        raise BadInput(path, 0, "a category list is named categories-<Category>.txt")
    entries: list[tuple[str, bool, int]] = []
    for number, raw in read_lines(path):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        priority = line.startswith("*")
        if priority and not normalise_title(line.lstrip("*")):
            raise BadInput(path, number, "a '*' with no page title")
        entries.append((check_title(path, number, line.lstrip("*")), priority, number))
    return category, entries


def listings_store(category_name: str, entries: Iterable[tuple[str, bool, int]]) -> int:
    """Store a category list and apply it to pages already imported. Returns rows changed."""
    category = category_for_name(category_name)
    assert category is not None
    changed = 0
    for title, priority, _line in entries:
        listing, created = PageListing.objects.get_or_create(
            title=title, defaults={"category": category, "priority": priority}
        )
        # A title listed in several categories keeps the first (lists load in name order)
        # and is a priority page when any list marks it so: loading again changes nothing.
        if not created and priority and not listing.priority:
            listing.priority = True
            listing.save(update_fields=["priority"])
            changed += 1
        changed += created
        page = Page.objects.filter(title=title).first()
        if page is not None:
            changed += page_apply_listing(page=page, listing=listing)
    return changed


def page_apply_listing(*, page: Page, listing: PageListing | None = None) -> int:
    """Give a page its listed priority, and its listed category when it has none."""
    listing = listing or PageListing.objects.filter(title=page.title).first()
    if listing is None:
        return 0
    fields = []
    if page.priority != listing.priority:
        page.priority = listing.priority
        fields.append("priority")
    if page.category_id is None:
        page.category_id = listing.category_id
        fields.append("category")
    if fields:
        page.save(update_fields=fields + ["updated"])
    return int(bool(fields))


# --- Pages and their sentences ----------------------------------------------------------


def page_get_or_create(*, title: str, source: str, category: Category | None) -> tuple[Page, bool]:
    page, created = Page.objects.get_or_create(title=title, defaults={"source": source, "category": category})
    if created:
        page_apply_listing(page=page)
    elif category is not None and page.category_id != category.pk:
        page.category = category
        page.save(update_fields=["category", "updated"])
    return page, created


def page_append_sentences(*, page: Page, sentences: Iterable[ParsedSentence]) -> int:
    """Add the sentences a page does not have yet (by text), after the ones it has.

    For the FM2 release, whose pages are only the evidence seen so far: a later file can
    add sentences, never reorder or drop the ones claims already point at.
    """
    known = set(page.sentences.values_list("text", flat=True))
    next_position = (page.sentences.aggregate(top=Max("position"))["top"] or -1) + 1
    new = []
    for sentence in sentences:
        if sentence.text in known:
            continue
        known.add(sentence.text)
        new.append(Sentence(page=page, position=next_position, section_header=sentence.section_header, text=sentence.text))
        next_position += 1
    Sentence.objects.bulk_create(new)
    return len(new)


def page_sync_sentences(*, page: Page, sentences: list[ParsedSentence]) -> SyncResult:
    """Make a page's sentences exactly ``sentences``, in order, keeping ids where text is unchanged.

    A sentence that disappears is deleted unless a claim cites it as gold; then it is kept,
    retired, after the article, so gold evidence never dangles (clue lists are snapshots).
    """
    result = SyncResult()
    existing: dict[str, Sentence] = {}
    for sentence in page.sentences.all():
        existing.setdefault(sentence.text, sentence)
    seen: set[str] = set()
    position = 0
    to_create, to_update = [], []
    for parsed in sentences:
        if parsed.text in seen:
            continue
        seen.add(parsed.text)
        current = existing.get(parsed.text)
        if current is None:
            to_create.append(Sentence(page=page, position=position, section_header=parsed.section_header, text=parsed.text))
            result.created += 1
        elif (current.position, current.section_header, current.retired) != (position, parsed.section_header, False):
            current.position, current.section_header, current.retired = position, parsed.section_header, False
            to_update.append(current)
            result.moved += 1
        position += 1
    gone = [s for text, s in existing.items() if text not in seen]
    cited: set[int] = set().union(*hooks.sentences_cited.send(sentence_ids=[s.pk for s in gone]))
    for sentence in gone:
        if sentence.pk in cited:
            if not sentence.retired or sentence.position != position:
                sentence.retired, sentence.position = True, position
                to_update.append(sentence)
                result.retired += 1
            position += 1
        else:
            sentence.delete()
            result.deleted += 1
    Sentence.objects.bulk_update(to_update, ["position", "section_header", "retired"])
    Sentence.objects.bulk_create(to_create)
    return result


def pages_store(pages: list[ParsedPage], *, source: str, category: Category | None) -> SyncResult:
    total = SyncResult()
    for parsed in pages:
        page, created = page_get_or_create(title=parsed.title, source=source, category=category)
        result = page_sync_sentences(page=page, sentences=parsed.sentences)
        if result.created:
            hooks.sentences_added.send(page_ids=[page.pk])
        total.created += result.created
        total.moved += result.moved
        total.retired += result.retired
        total.deleted += result.deleted
    return total


# --- KILT knowledge source ---------------------------------------------------------------

_KILT_SECTION = re.compile(r"^Section::::(.*?)\.?\s*$")
_KILT_MARKUP = re.compile(r"^(BULLET|NUMBER|DL|DT|DD)::::-?\s*")


def parse_kilt_jsonl(path: Path) -> Iterator[ParsedPage]:
    """Pages of a KILT knowledge-source file: one article a line, paragraphs in ``text``.

    ``Section::::A:B.`` paragraphs start the section "A | B"; the first paragraph repeats
    the title and is skipped; list markers are dropped.
    """
    articles = 0
    for number, raw in read_lines(path):
        if not raw.strip():
            continue
        articles += 1
        row = parse_json_object(path, number, raw)
        if "wikipedia_title" not in row:
            raise BadInput(path, number, "missing 'wikipedia_title'")
        title = check_title(path, number, row["wikipedia_title"], what="'wikipedia_title'")
        paragraphs = row.get("text")
        if not isinstance(paragraphs, list) or not all(isinstance(p, str) for p in paragraphs):
            raise BadInput(path, number, "'text' must be a list of paragraph strings")
        for paragraph in paragraphs:
            check_text(path, number, paragraph, what="a paragraph of 'text'", limit="LINE_MAX_BYTES")
        page = ParsedPage(title=title, line=number)
        header = ""
        for index, paragraph in enumerate(paragraphs):
            paragraph = paragraph.strip()
            if not paragraph or (index == 0 and normalise_title(paragraph) == page.title):
                continue
            section = _KILT_SECTION.match(paragraph)
            if section:
                header = SECTION_SEPARATOR.join(part.strip() for part in section.group(1).split(":") if part.strip())
                continue
            paragraph = _KILT_MARKUP.sub("", paragraph)
            page.sentences.extend(ParsedSentence(header, text, number) for text in split_sentences(paragraph))
        yield check_page(path, page)
    if not articles:
        raise BadInput(path, 1, "empty file: no articles")


# --- Folders of plain-text articles --------------------------------------------------------

_HEADER = re.compile(r"^(#{2,6})\s+(.+?)\s*#*\s*$")


def parse_text_article(path: Path) -> ParsedPage:
    """A .txt article: the first non-blank line is the title; ``## Header`` lines start
    sections (``### Sub`` a subsection, stored as "Header | Sub"); blank lines end paragraphs."""
    maximum = import_limit("ARTICLE_MAX_BYTES")
    try:
        size = path.stat().st_size
    except OSError as error:
        raise BadInput(path, 0, f"cannot read ({error.strerror or error})") from None
    if size > maximum:
        raise BadInput(path, 1, f"{size} bytes, more than the limit of {maximum} (FM2_IMPORT['ARTICLE_MAX_BYTES'])")
    lines: list[tuple[int, str]] = []
    for number, line in read_lines(path):
        line = line.rstrip("\r\n")
        check_text(path, number, line.replace("\t", " "), what="the line", limit="LINE_MAX_BYTES")
        lines.append((number, line))
    title_at = next((i for i, (_, line) in enumerate(lines) if line.strip()), None)
    if title_at is None:
        raise BadInput(path, 1, "empty article: the first line must be its title")
    title_line, title_text = lines[title_at]
    page = ParsedPage(title=check_title(path, title_line, title_text.lstrip("#")), line=title_line)
    headers: list[str] = []
    paragraph: list[str] = []
    paragraph_line = 0

    def flush() -> None:
        if paragraph:
            header = SECTION_SEPARATOR.join(headers)
            page.sentences.extend(ParsedSentence(header, t, paragraph_line) for t in split_sentences(" ".join(paragraph)))
            paragraph.clear()

    for number, line in lines[title_at + 1 :]:
        match = _HEADER.match(line.strip())
        if match:
            flush()
            depth = len(match.group(1)) - 2
            headers[:] = headers[:depth] + [match.group(2)]
        elif not line.strip():
            flush()
        else:
            if not paragraph:
                paragraph_line = number
            paragraph.append(line.strip())
    flush()
    return check_page(path, page)


def import_files(path: Path) -> list[tuple[Path, str]]:
    """The files an ``import_pages PATH`` covers, each with its format: kilt or text."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in (".txt", ".jsonl"))
        if not files:
            raise BadInput(path, 0, "no .txt or .jsonl files in this folder")
        return [(p, "kilt" if p.suffix == ".jsonl" else "text") for p in files]
    if not path.is_file():
        raise BadInput(path, 0, "no such file or folder")
    return [(path, "kilt" if path.suffix in (".jsonl", ".json") else "text")]


def parse_pages_file(path: Path, kind: str) -> list[ParsedPage]:
    """All pages of one file, parsed and checked; nothing is written."""
    return list(parse_kilt_jsonl(path)) if kind == "kilt" else [parse_text_article(path)]


def check_category_name(name: str | None) -> str | None:
    """A --category given on the command line, checked like one read from a file."""
    if name is not None:
        check_text("--category", 0, name, what="the category name", limit="CATEGORY_MAX_CHARS")
    return name


@transaction.atomic
def pages_files_store(parsed: list[tuple[str, list[ParsedPage]]], *, category_name: str | None) -> SyncResult:
    """Write the parsed pages of several files in one transaction (all or nothing)."""
    category = category_for_name(category_name) if category_name else None
    total = SyncResult()
    for kind, pages in parsed:
        result = pages_store(pages, source=Page.Source.KILT if kind == "kilt" else Page.Source.TEXT, category=category)
        total.created += result.created
        total.moved += result.moved
        total.retired += result.retired
        total.deleted += result.deleted
    return total


def import_pages_file(path: Path, kind: str, *, category_name: str | None) -> SyncResult:
    """Import one file in one transaction: a bad line leaves the database as it was."""
    check_category_name(category_name)
    return pages_files_store([(kind, parse_pages_file(path, kind))], category_name=category_name)
