from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from foolgame.moderation.quality import flags_under_prior, quality_refresh_all
from foolgame.pages.progress import progress


class Command(BaseCommand):
    help = (
        "Recompute every claim's quality flags (too hard, too easy, reports) from the release's "
        "counts and the game's votes. With --fit-prior, first fit the Beta prior to the data "
        "(empirical Bayes) and store the fit; the flags use it only when FM2_USE_FITTED_PRIOR is on. "
        "Prints the prior, and how many claims are too hard under the default and the fitted prior."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--fit-prior", action="store_true", help="fit the prior to every active claim's votes first")
        parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    def handle(self, *args, fit_prior: bool, no_progress: bool, **options) -> None:
        def bar(chunks, total):
            return progress(chunks, desc="refreshing claims", total=len(chunks), unit="chunk", enabled=not no_progress)

        summary = quality_refresh_all(fit=fit_prior, progress=bar)
        config = settings.FM2_MODERATION
        a, b = summary.prior
        self.stdout.write(f"claims: {summary.claims}; flags use the prior a={a:.3f} b={b:.3f} (mean {a / (a + b):.3f}), threshold {config['TOO_HARD_THRESHOLD']}")
        if summary.fit is not None:
            fit = summary.fit
            pooled = fit.pooled_correct / fit.pooled_votes if fit.pooled_votes else float("nan")
            self.stdout.write(
                f"fitted prior: a={fit.a:.3f} b={fit.b:.3f} mean={fit.mean:.4f} over {fit.n_claims} claims with votes "
                f"(pooled accuracy {fit.pooled_correct}/{fit.pooled_votes} = {pooled:.4f}); converged: {fit.converged}"
            )
            default_hard, _ = flags_under_prior(a=config["PRIOR_A"], b=config["PRIOR_B"])
            fitted_hard, _ = flags_under_prior(a=fit.a, b=fit.b)
            self.stdout.write(
                f"too hard under the default prior ({config['PRIOR_A']:g}, {config['PRIOR_B']:g}): {default_hard}; "
                f"under the fitted prior: {fitted_hard}"
            )
        self.stdout.write(
            f"flagged now: too hard {summary.too_hard}, too easy {summary.too_easy}, "
            f"hidden by reports {summary.hidden}, out of play {summary.out_of_play}"
        )
