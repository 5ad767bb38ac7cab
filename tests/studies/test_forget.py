"""manage.py study forget SLUG PID: a participant's account and everything it made go, and
what went is printed; other participants and players keep theirs."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from foolgame.checks.models import Check
from foolgame.claims.models import Claim
from foolgame.players.models import LedgerEntry
from foolgame.studies.models import Participant
from foolgame.voting.models import Round, Vote
from tests.authoring.conftest import api_client, eiffel, post  # noqa: F401  (eiffel is a fixture)
from tests.checks.conftest import open_claim
from tests.studies.conftest import create_study, participant_client
from tests.studies.test_work import answer_a_check, pair, vote_a_round, write_a_claim  # noqa: F401  (pair is a fixture)

pytestmark = pytest.mark.django_db


def test_forget_deletes_the_participant_and_all_their_data(researcher, eiffel, pair, capsys) -> None:
    slug = create_study(researcher, tasks={"write": 1, "vote": 1, "check": 1})["slug"]
    open_claim("Jupiter")
    client = participant_client(slug, "gdpr-1")
    write_a_claim(client, eiffel)
    vote_a_round(client)
    answer_a_check(client)
    keeper = participant_client(slug, "keeps-2", address="198.51.100.3")
    vote_a_round(keeper)
    user_id = Participant.objects.get(platform_id="gdpr-1").user_id
    own_claim = Claim.objects.get(author_id=user_id)
    assert LedgerEntry.objects.filter(player_id=user_id).exists()

    call_command("study", "forget", slug, "gdpr-1")

    out = capsys.readouterr().out
    assert "Forgot participant gdpr-1" in out and "claims.Claim: 1" in out and "voting.Vote: 1" in out
    assert not get_user_model().objects.filter(pk=user_id).exists()
    assert not Participant.objects.filter(platform_id="gdpr-1").exists()
    assert not Claim.objects.filter(pk=own_claim.pk).exists()
    assert not Round.objects.filter(player_id=user_id).exists()
    assert not Check.objects.filter(player_id=user_id).exists()
    assert not LedgerEntry.objects.filter(player_id=user_id).exists()
    # The other participant keeps their account and their vote.
    kept = Participant.objects.get(platform_id="keeps-2")
    assert Vote.objects.filter(round__player_id=kept.user_id).count() == 1


def test_a_round_of_another_player_on_a_forgotten_claim_goes_with_it(researcher, eiffel) -> None:
    slug = create_study(researcher, tasks={"write": 2})["slug"]
    client = participant_client(slug, "gdpr-1")
    write_a_claim(client, eiffel)
    user_id = Participant.objects.get().user_id
    claim = Claim.objects.get(author_id=user_id)
    from tests.voting.conftest import make_claim
    from tests.factories import UserFactory

    other = make_claim(eiffel, label="SUPPORTS" if claim.label == "REFUTES" else "REFUTES", author=UserFactory(), text="The tower has a lift to its top level.")
    voter = api_client("vera")
    round_id = post(voter, "/api/rounds").json()["id"]
    dealt = Round.objects.get(pk=round_id)
    assert claim.pk in (dealt.left_claim_id, dealt.right_claim_id) and other.pk in (dealt.left_claim_id, dealt.right_claim_id)
    call_command("study", "forget", slug, "gdpr-1")
    assert not Round.objects.filter(pk=round_id).exists()
    assert Claim.objects.filter(pk=other.pk).exists()
    assert get_user_model().objects.filter(username="vera").exists()


def test_forget_of_an_unknown_id_says_so_and_deletes_nothing(researcher) -> None:
    slug = create_study(researcher)["slug"]
    participant_client(slug, "someone")
    with pytest.raises(CommandError, match="no participant"):
        call_command("study", "forget", slug, "nobody")
    assert Participant.objects.count() == 1
