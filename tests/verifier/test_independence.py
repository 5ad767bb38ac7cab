"""Model points and verified data need confirmation from people independent of the author
(issue 36, item 5; docs/verifier.md): a ring of fresh accounts, accounts made from the author's
address, held accounts and fresh checkers confirm nothing; voters with their own history and
checkers with a record that counts do."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from foolgame.claims.models import Claim
from foolgame.moderation.models import PlayerHold
from foolgame.players.models import LedgerEntry, SignupOrigin
from foolgame.players.services import address_digest, player_create
from foolgame.verifier import services
from foolgame.verifier.models import VerifierVersion, WrittenAgainst
from foolgame.voting.models import Round, Vote
from tests.factories import UserFactory
from tests.verifier.conftest import confirm_by_checkers, learnable_claims

pytestmark = pytest.mark.django_db


def _vote(voter, left: Claim, right: Claim, *, correct: bool = True) -> None:
    now = timezone.now()
    round_ = Round.objects.create(
        player=voter, left_claim=left, right_claim=right, state=Round.State.VOTED, started_at=now - timedelta(seconds=60),
        deadline=now + timedelta(seconds=120), false_claim_index=0 if left.label == Claim.Label.REFUTES else 1,
    )
    Vote.objects.create(round=round_, false_claim_index=round_.false_claim_index, correct=correct, points=60, remaining=60.0, created=now)


@pytest.fixture
def fooling_claim():
    """A game claim the model got wrong at the save, by its author, with partners on its page
    and a pool of other authors' claims for voters' own histories."""
    claims = learnable_claims(pages=6, imported=False)
    claim = claims[0]
    version = VerifierVersion.objects.create(number=1, kind="head", name="v1", status="active", fingerprint="v1", blob=b"")
    WrittenAgainst.objects.create(claim=claim, version=version, label="REFUTES" if claim.label == "SUPPORTS" else "SUPPORTS", supports=0.5)
    partners = [c for c in claims[1:6] if c.label != claim.label]
    other_author = UserFactory()
    others = claims[6:]
    Claim.objects.filter(pk__in=[c.pk for c in others]).update(author=other_author)
    others = list(Claim.objects.filter(pk__in=[c.pk for c in others]))
    return claim, partners, others


def _history(voter, others: list[Claim], n: int = 6) -> None:
    """``n`` settled votes of the voter's own on other authors' pairs."""
    supports = [c for c in others if c.label == "SUPPORTS"]
    refutes = [c for c in others if c.label == "REFUTES"]
    for i in range(n):
        _vote(voter, supports[i % len(supports)], refutes[i % len(refutes)])


def _five_votes(claim: Claim, partners: list[Claim], voters: list) -> None:
    for voter, partner in zip(voters, partners * 5):
        _vote(voter, claim, partner)


def test_a_ring_of_fresh_accounts_earns_no_model_points_and_its_claim_is_not_trained_on(fooling_claim) -> None:
    """Five accounts whose only votes are on the author's claim: it is not settled by them,
    pays its author nothing, and stays out of the training data."""
    claim, partners, _ = fooling_claim
    _five_votes(claim, partners, [UserFactory() for _ in range(5)])
    assert claim.pk not in services.settled_by_game_votes()
    assert services.model_points_award() == 0
    assert not LedgerEntry.objects.filter(kind=LedgerEntry.Kind.MODEL).exists()
    assert claim.pk not in set(services.verified_claims().values_list("pk", flat=True))


def test_voters_with_their_own_history_confirm_and_the_author_is_paid(fooling_claim) -> None:
    claim, partners, others = fooling_claim
    voters = [UserFactory() for _ in range(5)]
    for voter in voters:
        _history(voter, others)
    _five_votes(claim, partners, voters)
    assert claim.pk in services.settled_by_game_votes()
    assert services.model_points_award() == 1
    assert claim.pk in set(services.verified_claims().values_list("pk", flat=True))


def test_accounts_made_from_the_authors_address_within_the_window_do_not_confirm(fooling_claim) -> None:
    claim, partners, others = fooling_claim
    SignupOrigin.objects.create(player=claim.author, address=address_digest("198.18.0.7"), created=timezone.now())
    voters = [player_create(username=f"ringer{i}", password="a long enough password 1", ip="198.18.0.7") for i in range(5)]
    for voter in voters:
        _history(voter, others)
    _five_votes(claim, partners, voters)
    assert claim.pk not in services.settled_by_game_votes()
    # The same accounts, their address another than the author's: independent.
    SignupOrigin.objects.filter(player__in=voters).update(address=address_digest("198.18.0.8"))
    assert claim.pk in services.settled_by_game_votes()
    # Linked only within the window: the author's account made long before is no link.
    SignupOrigin.objects.filter(player__in=voters).update(address=address_digest("198.18.0.7"))
    SignupOrigin.objects.filter(player=claim.author).update(created=timezone.now() - timedelta(days=30))
    assert claim.pk in services.settled_by_game_votes()


def test_the_address_is_kept_as_a_keyed_digest_never_in_clear() -> None:
    player = player_create(username="newcomer", password="a long enough password 1", ip="198.18.0.7")
    origin = SignupOrigin.objects.get(player=player)
    assert origin.address == address_digest("198.18.0.7") != address_digest("198.18.0.8")
    assert "198.18" not in origin.address and len(origin.address) == 64


def test_a_held_voter_and_one_voting_mostly_on_the_authors_claims_do_not_confirm(fooling_claim) -> None:
    claim, partners, others = fooling_claim
    voters = [UserFactory() for _ in range(5)]
    for voter in voters[:4]:
        _history(voter, others)
    _history(voters[4], others, n=2)  # 2 votes elsewhere, then 4 on the author's claims: mostly the author's
    for partner in partners[:3]:
        _vote(voters[4], claim, partner)
    _five_votes(claim, partners, voters[:4])
    assert claim.pk not in services.settled_by_game_votes()  # four independent votes: under five
    _history(voters[4], others, n=6)  # now 8 elsewhere and 3 on the author's
    assert claim.pk in services.settled_by_game_votes()
    PlayerHold.objects.create(player=voters[4], p_value=1e-9, held_at=timezone.now())  # held: their three votes go
    assert claim.pk not in services.settled_by_game_votes()


def test_fresh_checkers_confirm_nothing_but_checkers_whose_record_counts_do(fooling_claim) -> None:
    from foolgame.checks.models import Check, ClaimValidation

    claim, _, _ = fooling_claim
    now = timezone.now()
    for _ in range(4):  # four fresh accounts check it as its author says: their weight is 1, no record
        Check.objects.create(player=UserFactory(), claim=claim, dealt_at=now, expires_at=now, answered_at=now, label=claim.label)
    ClaimValidation.objects.create(claim=claim, labels=4, gold_label=claim.label)
    assert claim.pk not in services.confirmed_by_checks()
    assert services.model_points_award() == 0
    checkers = confirm_by_checkers(claim, n=3)
    assert claim.pk in services.confirmed_by_checks()
    PlayerHold.objects.create(player=checkers[0], p_value=1e-9, held_at=timezone.now())
    assert claim.pk not in services.confirmed_by_checks()
