"""Train the learnt fluency check on this instance's pages (docs/authoring.md, Templates)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from foolgame.authoring.fluency import fluency_train_if_due, report_line


class Command(BaseCommand):
    help = (
        "Fine-tune the MiniLM encoder to tell the pages' sentences and claims from the same texts with "
        "words of the page put in, and store it where every claim's save then asks it. Minutes on 2 cores; "
        "re-running replaces the model whole."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--examples", type=int, default=None, help=f"texts trained on (default {settings.FM2_FLUENCY['EXAMPLES']})")
        parser.add_argument("--epochs", type=int, default=None, help=f"epochs (default {settings.FM2_FLUENCY['EPOCHS']})")
        parser.add_argument(
            "--if-due", action="store_true",
            help="train only when the trainer would (no model yet and FM2_FLUENCY_MIN_PAGES writable pages, or the pages grew); "
            "say so and stop otherwise",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from tqdm import tqdm

        bar = tqdm(total=0, unit="step", desc="training", disable=options["verbosity"] == 0)

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        try:
            report = fluency_train_if_due(
                force=not options["if_due"], examples=options["examples"], epochs=options["epochs"], progress=progress
            )
            if report is None and options["if_due"]:
                self.stdout.write("fluency model: nothing due (see FM2_FLUENCY's MIN_PAGES, RETRAIN_GROWTH and AUTO_TRAIN), "
                                  "or another process is training it now")
                return
            if report is None:
                raise CommandError("another process (the trainer, or this command elsewhere) is training the fluency model now; "
                                   "try again when it is done")
        except ValueError as refused:
            raise CommandError(str(refused)) from refused
        finally:
            bar.close()
        self.stdout.write(report_line(report) + f"; stored in {settings.FM2_FLUENCY['MODEL_DIR']}")
