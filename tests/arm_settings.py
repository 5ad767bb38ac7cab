"""A ``player_settings`` provider for the arm tests (``tests/**/test_arm_*.py``): it gives
chosen players overrides of ``core.arms.ARM_SETTINGS``, keeps chosen players off the boards and
limits chosen players to some pages, as a study's arm does; everyone else plays by the
defaults. The ``arm`` fixture sets it on the slot and puts the default back after."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db.models import Q

from foolgame.core import arms, hooks


class ArmProvider(hooks.PlayerSettings):
    def __init__(self) -> None:
        self.overrides: dict[int, dict[str, Any]] = {}
        self.off_boards: set[int] = set()
        self.pages: dict[int, list[int]] = {}

    def give(self, player: Any, **overrides: Any) -> None:
        """``player`` plays by ``overrides`` (checked as a study's arm is)."""
        assert arms.validate_arm_settings(overrides) == []
        self.overrides[player.pk] = overrides

    def settings_for(self, *, player_id: int) -> dict[str, Any]:
        return arms.effective(self.overrides.get(player_id, {}))

    def players_off_boards(self, prefix: str = "") -> Q | None:
        return Q(**{f"{prefix}pk__in": sorted(self.off_boards)}) if self.off_boards else None

    def page_ids_for(self, *, player_id: int) -> list[int] | None:
        return self.pages.get(player_id)


@pytest.fixture
def arm() -> Iterator[ArmProvider]:
    default = hooks.player_settings.get()
    provider = ArmProvider()
    hooks.player_settings.set(provider)
    try:
        yield provider
    finally:
        hooks.player_settings.set(default)
