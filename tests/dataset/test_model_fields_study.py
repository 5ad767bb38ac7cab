"""The export's model points of a claim (``ClaimModels.points_shown``, what its record shows of
its author's public points) are what the ledger paid for it: a study's arm that pays 120 model
points shows 120, not the setting ``MODEL_POINTS``; an arm that pays none shows none."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.utils import timezone

from foolgame.dataset.model_fields import ClaimModels
from foolgame.studies.models import Participant, Study
from foolgame.verifier import services
from tests.studies.conftest import create_study, researcher  # noqa: F401  (fixture)
from tests.verifier.conftest import confirm_by_checkers, hashing_encoder  # noqa: F401  (autouse fixture: the verifier tests' encoder)
from tests.verifier.test_writing import _fooling_claim, model  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


def into_arm(user, *, model_points: int, client) -> None:
    """``user`` becomes a participant of a study whose only arm pays ``model_points``."""
    slug = create_study(client, arms=[{"name": "paid", "settings": {"model_points": model_points}}], participants=2, block_size=1)["slug"]
    study = Study.objects.get(slug=slug)
    Participant.objects.create(
        study=study, arm=study.arms.get(), user=user, platform="link", platform_id=f"pid-{model_points}",
        address="test", sequence=0, consented=timezone.now(),
    )


def test_the_export_shows_the_model_points_the_authors_arm_paid(model, researcher) -> None:
    assert settings.FM2_VERIFIER["MODEL_POINTS"] != 120
    claim = _fooling_claim(model)
    into_arm(claim.author, model_points=120, client=researcher)
    confirm_by_checkers(claim)
    assert services.model_points_award() == 1
    models = ClaimModels()
    assert models.points_shown(models.read([claim.pk]), claim.pk) == 120


def test_an_arm_that_pays_no_model_points_shows_none(model, researcher) -> None:
    claim = _fooling_claim(model)
    into_arm(claim.author, model_points=0, client=researcher)
    confirm_by_checkers(claim)
    assert services.model_points_award() == 1
    models = ClaimModels()
    assert models.points_shown(models.read([claim.pk]), claim.pk) == 0


def test_everyone_else_shows_the_default_model_points_once_paid(model) -> None:
    claim = _fooling_claim(model)
    models = ClaimModels()
    assert models.points_shown(models.read([claim.pk]), claim.pk) == 0  # not paid yet
    confirm_by_checkers(claim)
    assert services.model_points_award() == 1
    assert models.points_shown(models.read([claim.pk]), claim.pk) == settings.FM2_VERIFIER["MODEL_POINTS"]
