from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from foolgame.pages.importing import BadInput, listings_store, parse_category_list
from foolgame.pages.models import PageListing
from foolgame.pages.progress import progress


class Command(BaseCommand):
    help = "Load the original game's category lists (categories-<Category>.txt; a leading * marks a priority page)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", type=Path)
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, directory: Path, no_progress: bool, **options) -> None:
        files = sorted(directory.glob("categories-*.txt")) if directory.is_dir() else []
        if not files:
            raise CommandError(f"{directory}:0: no categories-*.txt files here")
        try:
            # Every list is read and checked first, then all are stored in one transaction.
            parsed = [parse_category_list(path) for path in progress(files, desc="categories", unit="file", enabled=not no_progress)]
        except BadInput as error:
            raise CommandError(str(error)) from None
        with transaction.atomic():
            changed = sum(listings_store(category, entries) for category, entries in parsed)
        self.stdout.write(f"listings={PageListing.objects.count()} changed={changed}")
