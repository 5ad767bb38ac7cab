from __future__ import annotations

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from foolgame.pages.models import Page


class Command(BaseCommand):
    help = "Load the demo data (a sample of the FM2 dev split and the category lists) into an empty database."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--force", action="store_true", help="load even when pages exist (still idempotent)")

    def handle(self, *args, force: bool, **options) -> None:
        if Page.objects.exists() and not force:
            self.stdout.write("pages already imported: demo data not loaded")
            return
        call_command("load_categories", str(settings.FM2_DEMO_CATEGORIES), no_progress=True, stdout=self.stdout)
        call_command("import_fm2", str(settings.FM2_DEMO_FIXTURE), split="dev", no_progress=True, stdout=self.stdout)
