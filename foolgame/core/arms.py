"""The game settings a study's arm may change for its participants, and how a lower app asks
for the ones that apply to a player.

A study (``foolgame.studies``) compares versions of the game: a 10 s clue against a 20 s clue,
the model's verdict shown or hidden. Each arm names overrides of the settings listed in
``ARM_SETTINGS``, nothing else; the server applies them to every round, write task and check
of that arm's participants (``player_settings``, a ``Slot`` in ``core.hooks``), exactly as it
applies the defaults to everyone else, so the browser never decides a clock or a payout.

``validate_arm_settings`` is what a study's definition is checked against (a clear message
for each bad key or value); ``effective`` is a player's settings: the defaults with their
arm's overrides.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings


@dataclass(frozen=True, slots=True)
class ArmSetting:
    """One setting an arm may change: its type, its bounds, where its default lives, and what it does."""

    kind: type
    default_from: tuple[str, str] | None  # (settings dict, key) holding the default, or None for ``default``
    meaning: str
    low: int | None = None
    high: int | None = None
    default: Any = None

    def default_value(self) -> Any:
        if self.default_from is None:
            return self.default
        group, key = self.default_from
        return getattr(settings, group)[key]


ARM_SETTINGS: dict[str, ArmSetting] = {
    "round_seconds": ArmSetting(int, ("FM2", "ROUND_SECONDS"), "a round's clock, in seconds", low=30, high=600),
    "clue_seconds": ArmSetting(int, ("FM2", "CLUE_COST_SECONDS"), "what each clue costs on the round's clock, in seconds", low=0, high=120),
    "hints": ArmSetting(bool, None, "clues in rounds and hints while writing are offered", default=True),
    "model_verdict": ArmSetting(bool, None, "the model's verdict is shown while writing", default=True),
    "model_points": ArmSetting(int, ("FM2_VERIFIER", "MODEL_POINTS"), "model points for a verified claim that fooled the model (at most 500, the default daily cap)", low=0, high=500),
    "points_shown": ArmSetting(bool, None, "points are shown to the player (in rounds, checks and writing)", default=True),
}


def validate_arm_settings(overrides: Any) -> list[str]:
    """What is wrong with ``overrides`` as an arm's settings, one message each (empty: fine)."""
    if not isinstance(overrides, Mapping):
        return ["an arm's settings are an object of setting names and values"]
    problems = []
    for key, value in overrides.items():
        spec = ARM_SETTINGS.get(key)
        if spec is None:
            problems.append(f"{key!r} is not a setting an arm may change (it may change: {', '.join(ARM_SETTINGS)})")
        elif spec.kind is bool and not isinstance(value, bool):
            problems.append(f"{key} is true or false")
        elif spec.kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            problems.append(f"{key} is a whole number")
        elif spec.kind is int and not (spec.low <= value <= spec.high):  # type: ignore[operator]
            problems.append(f"{key} is from {spec.low} to {spec.high}")
    return problems


def defaults() -> dict[str, Any]:
    """Every arm setting at the game's default."""
    return {key: spec.default_value() for key, spec in ARM_SETTINGS.items()}


def effective(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The defaults with ``overrides`` (already validated) applied."""
    values = defaults()
    values.update({key: value for key, value in overrides.items() if key in ARM_SETTINGS})
    return values
