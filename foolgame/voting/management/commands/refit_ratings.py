from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError, CommandParser

from foolgame.voting.ratings import METHODS, ratings_refit


class Command(BaseCommand):
    help = (
        "Rebuild every player's skill and every claim's difficulty rating from the vote table. "
        "--method rasch (the default) fits the Rasch model to all votes at once and stores it as "
        "the ratings the per-vote Glicko-2 updates go on from; --method glicko2 replays the per-vote "
        "updates in the order the votes were cast. Safe to re-run: the same votes give the same numbers. "
        "Votes cast while it writes may be overwritten, so run it when the game is quiet."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--method", default="rasch", help=f"one of {', '.join(METHODS)} (default rasch)")
        parser.add_argument("--no-progress", action="store_true", help="print only the summary")

    def handle(self, *args, method: str, no_progress: bool, **options) -> None:
        if method not in METHODS:
            raise CommandError(f"--method must be one of {', '.join(METHODS)}, not {method!r}")
        started = time.monotonic()

        def progress(stage: str, done: int, total: int) -> None:
            if not no_progress:
                self.stdout.write(f"{stage} {done}/{total}")

        summary = ratings_refit(method=method, progress=progress)
        self.stdout.write(
            f"{summary.method}: {summary.votes} votes rated {summary.players} players and {summary.claims} claims "
            f"in {time.monotonic() - started:.1f} s" + ("" if summary.converged else " (the fit did not converge; see the log)")
        )
