from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from foolgame.pages.importing import BadInput, check_category_name, import_files, pages_files_store, parse_pages_file
from foolgame.pages.models import Page, Sentence
from foolgame.pages.progress import progress


class Command(BaseCommand):
    help = (
        "Import articles: a KILT knowledge-source JSONL file, a .txt article, or a folder of them "
        "(title = first line, '## Header' lines start sections). Every file is checked before anything is "
        "written, then all are written in one transaction; re-running changes nothing, and a re-imported page keeps the ids of its unchanged sentences."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--category", help="category of every page imported (created if new)")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, path: Path, category: str | None, no_progress: bool, **options) -> None:
        try:
            check_category_name(category)
            files = import_files(path)
            # Every file is parsed and checked first; then all are written in one transaction,
            # so a bad article anywhere in a folder leaves the database as it was.
            parsed = [
                (kind, parse_pages_file(file, kind))
                for file, kind in progress(files, desc="checking", unit="file", enabled=not no_progress)
            ]
            result = pages_files_store(parsed, category_name=category)
        except BadInput as error:
            raise CommandError(str(error)) from None
        created, changed = result.created, result.moved + result.retired + result.deleted
        self.stderr.write(f"{len(files)} files: {created} sentences added, {changed} moved or removed")
        self.stdout.write(f"pages={Page.objects.count()} sentences={Sentence.objects.count()}")
