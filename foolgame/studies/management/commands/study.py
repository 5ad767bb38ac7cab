"""python manage.py study create FILE --owner USERNAME | forget SLUG PID [--platform P]."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from foolgame.core.errors import ServiceError
from foolgame.studies import services
from foolgame.studies.models import Participant


class Command(BaseCommand):
    help = "Define a study from a JSON file (the body of POST /api/studies), or forget a participant and all their data."

    def add_arguments(self, parser: CommandParser) -> None:
        commands = parser.add_subparsers(dest="command", required=True)
        create = commands.add_parser("create", help="define a study from a JSON file")
        create.add_argument("file", help="the study as JSON: name, consent, tasks, arms, participants, completion_code, ...")
        create.add_argument("--owner", required=True, help="the researcher who runs it (a player with the researchers role, or staff)")
        forget = commands.add_parser("forget", help="delete a participant's account and everything it made (a data-protection request)")
        forget.add_argument("slug")
        forget.add_argument("pid", help="the participant's platform id (PROLIFIC_PID, workerId or pid)")
        forget.add_argument("--platform", choices=Participant.Platform.values, help="when the same id arrived from two platforms")

    def handle(self, *args: Any, command: str, **options: Any) -> None:
        try:
            if command == "create":
                self._create(options["file"], options["owner"])
            else:
                self._forget(options["slug"], options["pid"], options.get("platform"))
        except ServiceError as error:
            details = f"\n{json.dumps(error.details, indent=2)}" if isinstance(error.details, dict) else ""
            raise CommandError(f"{error.message}{details}") from None

    def _create(self, file: str, owner_name: str) -> None:
        try:
            spec = json.loads(Path(file).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise CommandError(f"Cannot read {file} as JSON: {error}") from None
        owner = get_user_model().objects.filter(username__iexact=owner_name).first()
        if owner is None:
            raise CommandError(f"No player is named {owner_name}.")
        study = services.study_create(owner=owner, spec=spec)
        arms = ", ".join(arm.name for arm in study.arms.order_by("position"))
        self.stdout.write(f"Study {study.slug} is open: {study.per_arm} participants in each arm ({arms}).")
        self.stdout.write(f"Its address: {services.study_entry_path(study)} on this server.")

    def _forget(self, slug: str, pid: str, platform: str | None) -> None:
        gone = services.participant_forget(slug=slug, participant_id=pid, platform=platform)
        self.stdout.write(f"Forgot participant {pid} of study {slug}:")
        for label, count in sorted(gone.items()):
            self.stdout.write(f"  {label}: {count}")
