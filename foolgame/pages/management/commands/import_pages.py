from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from foolgame.pages.importing import BadInput, import_files, import_pages_file
from foolgame.pages.models import Page, Sentence
from foolgame.pages.progress import progress


class Command(BaseCommand):
    help = (
        "Import articles: a KILT knowledge-source JSONL file, a .txt article, or a folder of them "
        "(title = first line, '## Header' lines start sections). One transaction per file; re-running "
        "changes nothing, and a re-imported page keeps the ids of its unchanged sentences."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--category", help="category of every page imported (created if new)")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, path: Path, category: str | None, no_progress: bool, **options) -> None:
        try:
            files = import_files(path)
            created = changed = 0
            for file, kind in progress(files, desc="importing", unit="file", enabled=not no_progress):
                result = import_pages_file(file, kind, category_name=category)
                created += result.created
                changed += result.moved + result.retired + result.deleted
        except BadInput as error:
            raise CommandError(str(error)) from None
        self.stderr.write(f"{len(files)} files: {created} sentences added, {changed} moved or removed")
        self.stdout.write(f"pages={Page.objects.count()} sentences={Sentence.objects.count()}")
