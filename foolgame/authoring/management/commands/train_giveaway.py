"""Train the giveaway detector on the active claims now, whether or not it is due."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from foolgame.authoring.services import giveaway_train_now


class Command(BaseCommand):
    help = "Train the giveaway detector on the active claims and store it."

    def handle(self, *args: Any, **options: Any) -> None:
        model = giveaway_train_now(force=True)
        if model is None:
            raise CommandError("Not enough claims: the detector needs at least two claims of each label.")
        by_page = f"{model.cv_accuracy_by_page:.1%}" if model.cv_accuracy_by_page is not None else "n/a"
        self.stdout.write(
            f"giveaway detector #{model.pk}: {model.examples} claims, CV accuracy {model.cv_accuracy:.1%} "
            f"({by_page} with pages kept apart), warns from p >= {model.threshold:.3f} "
            f"({model.confident_share:.1%} of claims, {model.confident_precision:.1%} right)"
        )
