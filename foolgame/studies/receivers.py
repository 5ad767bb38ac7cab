"""How studies changes the game of its participants from above: the ``player_settings``
provider (an arm's settings, the boards without participants, the study's pages) and the
``check_answered`` receiver that records attention checks. Connected in
``StudiesConfig.ready()``."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from django.core.signals import request_finished, request_started
from django.db.models import Q

from foolgame.core import arms
from foolgame.core.queries import compiled_instance
from foolgame.core.hooks import PlayerSettings
from foolgame.pages.models import Page
from foolgame.studies.models import Participant
from foolgame.studies.services import attention_check_record, settled_checks_owed


_asked: ContextVar[dict[int, Participant | None] | None] = ContextVar("fm2_study_participants", default=None)
"""The participant rows read in this request, by player id; None outside a request."""


def _request_started(**kwargs: Any) -> None:
    _asked.set({})


def _request_finished(**kwargs: Any) -> None:
    _asked.set(None)


# Every request starts with nothing remembered and forgets it all when it ends (Django's
# request signals, sent by the WSGI and ASGI handlers and the test client alike).
request_started.connect(_request_started, dispatch_uid="fm2-studies-participants-begin")
request_finished.connect(_request_finished, dispatch_uid="fm2-studies-participants-end")


def _read(player_id: int) -> Participant | None:
    """The player's participant row with its arm and study, or None (most players): asked by
    nearly every request and socket frame that plays, so its SQL is compiled once."""
    return compiled_instance("study_participant", lambda: Participant.objects.select_related("arm", "study"), player_id, by="user_id")


class StudyPlayerSettings(PlayerSettings):
    """A participant plays with their arm's settings, off the public boards, on their study's
    pages; everyone else with the defaults, on every page.

    One query per player per request: the participant row with its arm and study (by the
    unique user index) is remembered for the request, by player id, so the two or three asks
    of one save cost one query, the next request reads afresh, and no player is ever given
    another's row. Outside a request (a socket frame, a task, a shell) every ask reads.
    ``settled_checks_owed`` always reads: a participant's status may change within a request
    (an attention check failed)."""

    def _participant(self, player_id: int) -> Participant | None:
        held = _asked.get()
        if held is None:
            return _read(player_id)
        if player_id not in held:
            held[player_id] = _read(player_id)
        return held[player_id]

    def settings_for(self, *, player_id: int) -> dict[str, Any]:
        participant = self._participant(player_id)
        return arms.effective(participant.arm.settings) if participant is not None else arms.defaults()

    def players_off_boards(self, prefix: str = "") -> Q | None:
        return Q(**{f"{prefix}pk__in": Participant.objects.values("user_id")})

    def page_ids_for(self, *, player_id: int) -> list[int] | None:
        participant = self._participant(player_id)
        if participant is None:
            return None
        study = participant.study
        if not study.page_ids and not study.categories:
            return None
        pages = set(study.page_ids)
        if study.categories:
            pages.update(Page.objects.filter(category__slug__in=study.categories).values_list("pk", flat=True))
        return sorted(pages)

    def settled_checks_owed(self, *, player_id: int) -> int:
        participant = _read(player_id)
        return settled_checks_owed(participant) if participant is not None else 0


def on_check_answered(*, check_id: int, claim_id: int) -> None:
    attention_check_record(check_id=check_id)
