from __future__ import annotations

import sys
import time

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from foolgame.evidence.services import encoder_get, pages_index_build
from foolgame.pages.models import Page


class Command(BaseCommand):
    help = (
        "Encode and store the sentence embeddings of pages (all of them with --all or no ids). "
        "Only sentences with no stored vector for the configured model are encoded: a re-run encodes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("page_ids", nargs="*", type=int, metavar="PAGE_ID")
        parser.add_argument("--all", action="store_true", help="every page (the default when no PAGE_ID is given)")
        parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    def handle(self, *args, page_ids: list[int], all: bool, no_progress: bool, **options) -> None:
        if all and page_ids:
            raise CommandError("give PAGE_IDs or --all, not both")
        pages = None
        if page_ids:
            pages = list(Page.objects.filter(pk__in=page_ids))
            unknown = sorted(set(page_ids) - {p.pk for p in pages})
            if unknown:
                raise CommandError(f"no page with id {', '.join(map(str, unknown))}")
        bar: tqdm | None = None

        def progress(done: int, total: int) -> None:
            nonlocal bar
            if bar is None and total and not no_progress:
                bar = tqdm(total=total, desc="encoding", unit="sentence", file=sys.stderr, dynamic_ncols=True, leave=False)
            if bar is not None:
                bar.update(done - bar.n)

        started = time.perf_counter()
        try:
            result = pages_index_build(pages=pages, progress=progress)
        finally:
            if bar is not None:
                bar.close()
        self.stdout.write(
            f"encoded={result.encoded} reused={result.reused} model={encoder_get().model_name} "
            f"seconds={time.perf_counter() - started:.1f}"
        )
