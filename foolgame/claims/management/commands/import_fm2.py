from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from foolgame.claims.importing import SPLITS, database_totals, import_fm2_rows, parse_fm2_file, split_from_filename
from foolgame.pages.importing import BadInput, count_lines
from foolgame.pages.progress import progress


class Command(BaseCommand):
    help = (
        "Import FM2 release files (JSON Lines). Every file is checked completely before any is written, "
        "and all are written in one transaction; importing a file again changes nothing. Ends with one line of database totals."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="+", type=Path)
        parser.add_argument("--split", choices=sorted(SPLITS), help="the release split, when the file name does not say it")
        parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    def handle(self, *args, files: list[Path], split: str | None, no_progress: bool, **options) -> None:
        # Every file is read and checked before any is written; then all are written in one
        # transaction, so a bad line in the last file leaves the database as it was.
        parsed = []
        for path in files:
            if not path.is_file():
                raise CommandError(f"{path}:0: no such file")
            try:
                lines = count_lines(path) if not no_progress else None
                rows = parse_fm2_file(
                    path, lambda it: progress(it, desc=f"reading {path.name}", total=lines, unit="line", enabled=not no_progress)
                )
            except BadInput as error:
                raise CommandError(str(error)) from None
            parsed.append((path, rows))
        with transaction.atomic():
            for path, rows in parsed:
                created = import_fm2_rows(rows, split=split or split_from_filename(path))
                self.stderr.write(f"{path}: {len(rows)} rows, {created} new claims")
        self.stdout.write(database_totals())
