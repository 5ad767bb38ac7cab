"""Arriving in a study: consent, the account, returning, the address cap, paused and closed
studies, blocked randomisation, and what a participant account may not reach."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings as hypothesis_settings, strategies as st

from foolgame.core import arms, hooks
from foolgame.studies.models import Participant, Study
from foolgame.studies.services import arm_position_for
from foolgame.voting.models import Round
from tests.authoring.conftest import post
from tests.factories import CategoryFactory, PageFactory, UserFactory
from tests.studies.conftest import create_study, enter, participant_client, visitor

pytestmark = pytest.mark.django_db


def test_a_newcomer_gets_201_an_account_without_password_and_a_signed_in_session(researcher) -> None:
    slug = create_study(researcher)["slug"]
    browser = visitor()
    response = enter(browser, slug, "5f0c9a1e", extra={"STUDY_ID": "s1", "SESSION_ID": "x9", "other": "dropped"})
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["arm"] in ("ten", "twenty") and body["completion_code"] is None and body["status"] == "active"
    assert [item["kind"] for item in body["progress"]] == ["write", "vote", "check"]
    participant = Participant.objects.get()
    assert participant.platform_extra == {"STUDY_ID": "s1", "SESSION_ID": "x9"}
    assert not participant.user.has_usable_password()
    assert "5f0c9a1e" not in participant.user.username
    assert "5f0c9a1e" not in response.content.decode()  # the platform id goes back to nobody
    me = browser.get(f"/api/studies/{slug}/me")
    assert me.status_code == 200 and me.json()["arm"] == body["arm"]


def test_a_returning_participant_gets_200_the_same_account_and_arm_from_another_device(researcher) -> None:
    slug = create_study(researcher)["slug"]
    first = enter(visitor("203.0.113.7"), slug, "abc").json()
    for device in ("203.0.113.7", "198.51.100.9"):
        again = enter(visitor(device), slug, "abc")
        assert again.status_code == 200
        assert again.json()["arm"] == first["arm"]
    assert Participant.objects.count() == 1
    assert Study.objects.get(slug=slug).arrivals == 1


def test_without_consent_nothing_is_stored(researcher) -> None:
    slug = create_study(researcher)["slug"]
    for consent in (False, "true", None, 1):
        response = enter(visitor(), slug, "abc", consent=consent)
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "consent_required"
    assert not Participant.objects.exists()
    assert Study.objects.get(slug=slug).arrivals == 0


@pytest.mark.parametrize("body", [{"participant": "", "platform": "prolific"}, {"participant": "a", "platform": "myspace"}])
def test_a_bad_arrival_is_refused_with_its_field(researcher, body) -> None:
    slug = create_study(researcher)["slug"]
    response = post(visitor(), f"/api/studies/{slug}/enter", {**body, "consent": True})
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid"
    assert not Participant.objects.exists()


def test_an_unknown_study_is_404(db) -> None:
    response = enter(visitor(), "no-such-study", "abc")
    assert response.status_code == 404 and response.json()["error"]["code"] == "study_not_found"


def test_the_address_cap_refuses_a_newcomer_but_never_a_returning_participant(researcher) -> None:
    slug = create_study(researcher, address_cap=2)["slug"]
    assert enter(visitor("192.0.2.1"), slug, "one").status_code == 201
    assert enter(visitor("192.0.2.1"), slug, "two").status_code == 201
    refused = enter(visitor("192.0.2.1"), slug, "three")
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "study_address_cap"
    assert enter(visitor("192.0.2.1"), slug, "one").status_code == 200
    assert enter(visitor("192.0.2.2"), slug, "three").status_code == 201
    assert Participant.objects.count() == 3


@pytest.mark.parametrize(("status", "code"), [(Study.Status.PAUSED, "study_paused"), (Study.Status.CLOSED, "study_closed")])
def test_a_paused_or_closed_study_refuses_newcomers_and_lets_returning_participants_finish(researcher, status, code) -> None:
    slug = create_study(researcher)["slug"]
    assert enter(visitor(), slug, "early").status_code == 201
    Study.objects.filter(slug=slug).update(status=status)
    refused = enter(visitor(), slug, "late")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == code
    assert enter(visitor(), slug, "early").status_code == 200
    assert Participant.objects.count() == 1


def test_the_study_closes_itself_when_every_arm_is_full(researcher) -> None:
    slug = create_study(researcher, participants=2)["slug"]
    for pid in ("a", "b", "c", "d"):
        assert enter(visitor(), slug, pid).status_code == 201
    study = Study.objects.get(slug=slug)
    assert study.status == Study.Status.CLOSED and study.closed is not None
    assert Counter(Participant.objects.values_list("arm__name", flat=True)) == {"ten": 2, "twenty": 2}
    assert enter(visitor(), slug, "e").json()["error"]["code"] == "study_closed"


def test_a_participant_screened_out_frees_their_place_and_the_study_closes_when_every_arm_is_full(researcher) -> None:
    from tests.checks.conftest import settled_claim

    slug = create_study(
        researcher, participants=1, block_size=2, tasks={"check": 1}, attention_checks=1, attention_max_failures=0
    )["slug"]
    settled_claim("Neptune", label="REFUTES")
    first = participant_client(slug, "first")
    check = post(first, "/api/checks").json()
    assert post(first, f"/api/checks/{check['id']}", {"label": "SUPPORTS"}).status_code == 200  # the attention check failed
    assert Participant.objects.get(platform_id="first").status == Participant.Status.SCREENED_OUT
    arrivals = ["first"]
    for number in range(8):
        pid = f"p{number}"
        assert enter(visitor(), slug, pid).status_code == 201
        arrivals.append(pid)
        study = Study.objects.get(slug=slug)
        filled = Counter(Participant.objects.exclude(status=Participant.Status.SCREENED_OUT).values_list("arm__name", flat=True))
        full = all(filled[name] >= 1 for name in ("ten", "twenty"))
        assert (study.status == Study.Status.CLOSED) == full
        if full:
            break
    assert len(arrivals) >= 3  # the screened-out participant's place was taken by a later arrival
    assert enter(visitor(), slug, "late").json()["error"]["code"] == "study_closed"


def test_arrivals_fill_the_arms_block_by_block(researcher) -> None:
    arms_spec = [{"name": name} for name in ("a", "b", "c")]
    slug = create_study(researcher, arms=arms_spec, participants=6, block_size=6)["slug"]
    counts: Counter = Counter()
    for number in range(18):
        counts[enter(visitor(), slug, f"p{number}").json()["arm"]] += 1
        assert max(counts.values()) - min(counts[name] for name in "abc") <= 2  # one block's share
        if (number + 1) % 6 == 0:
            assert set(counts.values()) == {(number + 1) // 3}
    assert list(Participant.objects.order_by("sequence").values_list("sequence", flat=True)) == list(range(18))


@hypothesis_settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**62),
    arm_count=st.integers(1, 5),
    per_arm_in_block=st.integers(1, 4),
    arrivals=st.integers(0, 200),
)
def test_after_any_number_of_arrivals_no_two_arms_differ_by_more_than_one_block(seed, arm_count, per_arm_in_block, arrivals) -> None:
    block_size = arm_count * per_arm_in_block
    counts = Counter(arm_position_for(seed=seed, block_size=block_size, arm_count=arm_count, sequence=n) for n in range(arrivals))
    sizes = [counts[position] for position in range(arm_count)]
    assert max(sizes) - min(sizes) <= per_arm_in_block


def test_the_order_within_blocks_follows_the_seed() -> None:
    order = [arm_position_for(seed=7, block_size=4, arm_count=2, sequence=n) for n in range(40)]
    assert order == [arm_position_for(seed=7, block_size=4, arm_count=2, sequence=n) for n in range(40)]
    assert order != [arm_position_for(seed=8, block_size=4, arm_count=2, sequence=n) for n in range(40)]


def test_a_participant_plays_with_the_arms_settings_off_the_boards_on_the_studys_pages(researcher) -> None:
    science = CategoryFactory(name="Science", slug="science")
    saturn, mars = PageFactory(title="Saturn"), PageFactory(title="Mars", category=science)
    slug = create_study(researcher, pages=[saturn.pk], categories=["science"])["slug"]
    enter(visitor(), slug, "abc")
    participant = Participant.objects.get()
    provider = hooks.player_settings.get()
    settings_for = provider.settings_for(player_id=participant.user_id)
    assert settings_for == arms.effective(participant.arm.settings)
    assert settings_for["clue_seconds"] == {"ten": 10, "twenty": 20}[participant.arm.name]
    someone = UserFactory()
    assert provider.settings_for(player_id=someone.pk) == arms.defaults()
    assert sorted(provider.page_ids_for(player_id=participant.user_id)) == sorted([saturn.pk, mars.pk])
    assert provider.page_ids_for(player_id=someone.pk) is None
    from django.contrib.auth import get_user_model

    off = get_user_model().objects.filter(provider.players_off_boards())
    assert list(off.values_list("pk", flat=True)) == [participant.user_id]
    assert Round.objects.filter(provider.players_off_boards("player__")).count() == 0


@pytest.mark.parametrize("path", ["/api/rooms", "/api/moderation/queue", "/api/exports"])
def test_a_participant_may_not_use_rooms_moderation_or_exports(researcher, path) -> None:
    slug = create_study(researcher)["slug"]
    client = participant_client(slug, "abc")
    response = client.get(path)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "participant_not_allowed"


def test_a_participant_gets_a_page_saying_so_for_the_rooms_page(researcher) -> None:
    slug = create_study(researcher)["slug"]
    response = participant_client(slug, "abc").get("/rooms/")
    assert response.status_code == 403
    assert f"/s/{slug}/" in response.content.decode()


def test_another_account_reads_no_participants_progress(researcher) -> None:
    slug = create_study(researcher)["slug"]
    participant_client(slug, "abc")
    response = researcher.get(f"/api/studies/{slug}/me")
    assert response.status_code == 403 and response.json()["error"]["code"] == "not_a_participant"
    other_slug = create_study(researcher, name="Other")["slug"]
    assert participant_client(slug, "abc").get(f"/api/studies/{other_slug}/me").status_code == 403


def test_the_admin_shows_participants_without_their_platform_ids(researcher, admin_client) -> None:
    slug = create_study(researcher)["slug"]
    enter(visitor(), slug, "secret-pid-77", extra={"STUDY_ID": "secret-study-88"})
    participant = Participant.objects.get()
    for url in ("/admin/studies/participant/", f"/admin/studies/participant/{participant.pk}/change/", f"/admin/studies/study/{participant.study_id}/change/"):
        response = admin_client.get(url)
        assert response.status_code == 200
        page = response.content.decode()
        assert "secret-pid-77" not in page and "secret-study-88" not in page


def test_someone_signed_in_as_another_account_is_told_that_consent_switches_the_browser(researcher) -> None:
    """The researcher trying their own link, or a student with a player account: the consent
    page says that taking part signs the browser in as a new participant account; a plain
    visitor is told nothing of the kind."""
    from django.test import Client

    slug = create_study(researcher)["slug"]
    player = UserFactory(username="wendy")
    signed_in = Client()
    signed_in.force_login(player)
    page = signed_in.get(f"/s/{slug}/?pid=abc").content.decode()
    assert "You are signed in as wendy" in page and "private window" in page
    assert "You are signed in as" not in visitor().get(f"/s/{slug}/?pid=abc").content.decode()
    # Taking part does what the page said: the browser is now the participant's.
    assert enter(signed_in, slug, "abc").status_code == 201
    assert signed_in.get(f"/api/studies/{slug}/me").status_code == 200
    assert Participant.objects.get().user != player
