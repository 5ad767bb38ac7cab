"""The model in the loop's versions: when one is trained, what it is measured on, when it is
promoted, and how an operator moves between them."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from foolgame.claims.models import Claim
from foolgame.core.errors import ServiceError
from foolgame.verifier import services
from foolgame.verifier.models import Activation, EvaluationSlice, VerifierVersion
from tests.verifier.conftest import learnable_claims

pytestmark = pytest.mark.django_db


def test_the_first_version_waits_for_min_claims_then_trains_and_is_promoted() -> None:
    learnable_claims(pages=6)  # 36 verified claims: under MIN_CLAIMS (40)
    assert not services.retrain_due()
    assert services.verifier_train_now() is None
    learnable_claims(pages=6, first=6, seed=1)  # 72
    version = services.verifier_train_now()
    assert version is not None and version.number == 1
    assert version.status == VerifierVersion.Status.ACTIVE and version.promoted
    assert Activation.objects.filter(version=version, action="promote").count() == 1
    # Measured on the frozen slice, never on a page it was trained on.
    frozen = EvaluationSlice.objects.get()
    assert frozen.page_ids and not set(frozen.page_ids) & set(version.trained_page_ids)
    figures = version.figures["slice"]
    assert figures["n"] == len(frozen.claim_ids) > 0
    assert figures["accuracy"] >= 0.9  # the rule is learnable: evidence sharing the claim's words supports it
    assert figures["claim_only"]["n"] == figures["n"]
    assert version.claims_trained == 72 - figures["n"]


def test_the_next_version_waits_for_retrain_every_newly_verified_claims() -> None:
    learnable_claims(pages=8)
    first = services.verifier_train_now()
    assert first is not None
    learnable_claims(pages=3, first=8, seed=2)  # 18 new: under RETRAIN_EVERY (20)
    assert services.verifier_train_now() is None
    learnable_claims(pages=1, first=11, seed=3)  # 24
    second = services.verifier_train_now()
    assert second is not None and second.number == 2
    # The slice stays frozen: new pages are trained on, the slice's claims are the same.
    assert EvaluationSlice.objects.count() == 1
    assert second.figures["slice"]["n"] == first.figures["slice"]["n"]


def test_a_version_worse_on_the_frozen_slice_is_kept_but_not_promoted(monkeypatch) -> None:
    learnable_claims(pages=8)
    first = services.verifier_train_now()
    learnable_claims(pages=4, first=8, seed=4)
    from retrieval.verifier import Verdict

    class Contrary:
        name = "contrary"

        def verdicts(self, items, *, show_progress=False):
            return [Verdict(supports=0.1, refutes=0.9) for _ in items]

        def dumps(self) -> bytes:
            return b"contrary"

    monkeypatch.setattr("retrieval.verifier.train_head_verifier", lambda *args, **kwargs: Contrary())
    worse = services.verifier_train_now()
    assert worse is not None and worse.status == VerifierVersion.Status.CANDIDATE and not worse.promoted
    assert "Not promoted" in worse.decision
    first.refresh_from_db()
    assert first.status == VerifierVersion.Status.ACTIVE


def test_a_trainer_holding_the_lock_makes_a_second_delivery_do_nothing() -> None:
    learnable_claims(pages=8)
    cache.add(services.TRAIN_LOCK, "another worker", timeout=60)
    try:
        assert services.verifier_train_now(force=True) is None
        assert not VerifierVersion.objects.exists()
    finally:
        cache.delete(services.TRAIN_LOCK)
    assert services.verifier_train_now(force=True) is not None


def test_an_operator_activates_an_older_version_and_rolls_back() -> None:
    learnable_claims(pages=8)
    v1 = services.verifier_train_now()
    learnable_claims(pages=4, first=8, seed=5)
    v2 = services.verifier_train_now()
    assert v2.status == VerifierVersion.Status.ACTIVE
    back = services.version_rollback()
    assert back.pk == v1.pk and services.active_version().pk == v1.pk
    v2.refresh_from_db()
    assert v2.status == VerifierVersion.Status.RETIRED
    services.version_activate(number=2)
    assert services.active_version().number == 2
    with pytest.raises(ServiceError) as missing:
        services.version_activate(number=9)
    assert missing.value.status_code == 404
    with pytest.raises(ServiceError) as again:
        services.version_activate(number=2)
    assert again.value.code == "already_active"
    assert [a.action for a in Activation.objects.order_by("at", "id")] == ["promote", "promote", "rollback", "activate"]


def test_a_rollback_with_nothing_before_says_so() -> None:
    with pytest.raises(ServiceError) as none:
        services.version_rollback()
    assert none.value.code == "nothing_active"
    learnable_claims(pages=8)
    services.verifier_train_now()
    with pytest.raises(ServiceError) as first:
        services.version_rollback()
    assert first.value.code == "nothing_to_roll_back_to"


def test_claims_whose_checks_dispute_their_label_are_not_trained_on() -> None:
    from foolgame.checks.models import ClaimValidation

    claims = learnable_claims(pages=8)
    disputed = claims[0]
    ClaimValidation.objects.create(claim=disputed, labels=4, gold_label=Claim.Label.REFUTES)  # its author said SUPPORTS
    agreed = claims[1]
    ClaimValidation.objects.create(claim=agreed, labels=4, gold_label=agreed.label)
    verified = set(services.verified_claims().values_list("pk", flat=True))
    assert disputed.pk not in verified and agreed.pk in verified
    removed = claims[2]
    Claim.objects.filter(pk=removed.pk).update(status=Claim.Status.REMOVED)
    assert removed.pk not in set(services.verified_claims().values_list("pk", flat=True))


@pytest.mark.parametrize(
    ("people", "model", "expected"),
    [(0.6, True, "both"), (0.6, False, "people"), (0.2, True, "model"), (0.2, False, "neither"), (None, True, None), (0.6, None, None)],
)
def test_hardness_names_who_found_the_claim_hard(people, model, expected) -> None:
    assert services.hard_for(people_wrong_share=people, model_wrong=model) == expected


def test_figures_give_accuracy_its_interval_and_macro_f1() -> None:
    result = services.figures(["SUPPORTS", "SUPPORTS", "REFUTES", "REFUTES"], ["SUPPORTS", "REFUTES", "REFUTES", "REFUTES"])
    assert result["n"] == 4 and result["accuracy"] == 0.75
    low, high = result["ci95"]
    assert low < 0.75 < high
    assert result["macro_f1"] == pytest.approx((2 / 3 + 0.8) / 2)
