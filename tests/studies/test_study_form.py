"""The research page's form of a new study (/research/studies/new): who may open it, what it
offers (the real categories and pages, an arm's fields rendered from ``ARM_SETTINGS``), and
the participant's way back to their study from the game's pages (the banner)."""

from __future__ import annotations

import re
from unittest import mock

import pytest
from django.test import Client

from foolgame.core.arms import ARM_SETTINGS, ArmSetting
from foolgame.studies import services
from tests.checks.conftest import settled_claim
from tests.factories import CategoryFactory, PageFactory, UserFactory
from tests.studies.conftest import create_study, participant_client, researcher_client, study_spec
from tests.studies.test_work import answer_a_check

pytestmark = pytest.mark.django_db

BANNER = re.compile(r'<p class="message study-banner" id="study-banner">.*?</p>', re.S)


def browser(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def test_a_researcher_gets_the_form_with_the_real_categories_and_pages(researcher) -> None:
    CategoryFactory(name="Astronomy", slug="astronomy")
    PageFactory(title="Saturn")
    response = researcher.get("/research/studies/new")
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="study-new-form"' in page and 'data-create-url="/api/studies"' in page
    assert 'value="astronomy"> Astronomy' in page and ">Saturn</option>" in page
    assert "study_research_new.js" in page


def test_staff_get_the_form(db) -> None:
    assert browser(UserFactory(username="sam", is_staff=True)).get("/research/studies/new").status_code == 200


def test_an_arm_offers_every_setting_of_the_contract_with_its_bounds(researcher) -> None:
    page = researcher.get("/research/studies/new").content.decode()
    for key, spec in ARM_SETTINGS.items():
        if spec.kind is int:
            assert f'data-setting="{key}" data-kind="int" min="{spec.low}" max="{spec.high}"' in page
        else:
            assert f'data-setting="{key}" data-kind="bool"' in page
    # Once in the first arm's row and once in the template the "Add an arm" button copies.
    assert page.count('data-setting="clue_seconds"') == 2


def test_a_setting_added_to_the_contract_appears_on_the_form_by_itself(researcher) -> None:
    extra = ArmSetting(int, None, "seconds between two hints", low=5, high=50, default=10)
    with mock.patch.dict(ARM_SETTINGS, {"hint_gap_seconds": extra}):
        page = researcher.get("/research/studies/new").content.decode()
    assert 'data-setting="hint_gap_seconds" data-kind="int" min="5" max="50"' in page
    assert "seconds between two hints (5 to 50)" in page and 'placeholder="game\'s default: 10"' in page


@pytest.mark.parametrize("who", ["player", "anonymous", "participant"])
def test_anyone_but_researchers_and_staff_gets_the_403_page(researcher, who: str) -> None:
    if who == "participant":
        slug = create_study(researcher)["slug"]
        client = participant_client(slug, "pp-1")
    else:
        client = browser(UserFactory(username="pia") if who == "player" else None)
    response = client.get("/research/studies/new")
    assert response.status_code == 403
    page = response.content.decode()
    # A participant account is stopped before the view (research pages are closed to it).
    assert ("Not part of the study" if who == "participant" else "Study owners only") in page
    assert "study-new-form" not in page


def test_the_list_links_to_the_form_and_the_nav_to_the_list(researcher) -> None:
    page = researcher.get("/research/studies/").content.decode()
    assert 'href="/research/studies/new"' in page
    assert '<a href="/research/studies/">Studies</a>' in page
    assert '<a href="/research/studies/">Studies</a>' not in browser(UserFactory(username="pia")).get("/").content.decode()


def test_a_study_named_new_keeps_its_own_page(researcher) -> None:
    slug = create_study(researcher, name="New")["slug"]
    assert slug == "new"
    page = researcher.get("/research/studies/new/").content.decode()
    assert 'id="study-entry-url"' in page and "/s/new/" in page


def test_the_study_page_shows_the_entry_url_and_the_prolific_url_to_copy(researcher) -> None:
    slug = create_study(researcher)["slug"]
    page = researcher.get(f"/research/studies/{slug}/").content.decode()
    assert f'<code id="study-entry-url">http://testserver/s/{slug}/</code>' in page
    assert f'<code id="study-prolific-url">http://testserver/s/{slug}/?PROLIFIC_PID=' in page
    assert page.count("data-copy=") == 2


# --- The way back to the study from the game's pages ---------------------------------------


@pytest.mark.parametrize("path", ["/write/", "/play/", "/checks/", "/"])
def test_a_participant_sees_the_way_back_to_their_study_on_the_games_pages(researcher, path: str) -> None:
    slug = create_study(researcher, tasks={"write": 1, "vote": 2, "check": 1})["slug"]
    client = participant_client(slug, "pp-1")
    response = client.get(path)
    assert response.status_code == 200
    banner = BANNER.search(response.content.decode())
    assert banner, "no banner"
    assert "Study: 0 of 4 done" in banner.group() and f'href="/s/{slug}/"' in banner.group()


def test_the_banner_counts_the_servers_count_of_the_work(researcher) -> None:
    slug = create_study(researcher, tasks={"check": 2})["slug"]
    settled_claim("Neptune", label="REFUTES")
    client = participant_client(slug, "pp-1")
    answer_a_check(client, "REFUTES")
    assert "Study: 1 of 2 done" in BANNER.search(client.get("/checks/").content.decode()).group()


def test_the_study_page_itself_has_no_banner(researcher) -> None:
    slug = create_study(researcher)["slug"]
    client = participant_client(slug, "pp-1")
    assert 'id="study-banner"' not in client.get(f"/s/{slug}/").content.decode()


@pytest.mark.parametrize("who", ["player", "anonymous", "researcher"])
def test_nobody_else_sees_a_banner(researcher, who: str) -> None:
    create_study(researcher)
    client = {"player": browser(UserFactory(username="pia")), "anonymous": Client(), "researcher": researcher}[who]
    for path in ("/write/", "/play/", "/checks/", "/"):
        response = client.get(path)
        assert 'id="study-banner"' not in response.content.decode(), path


def _banner_after_a_check(label: str) -> str:
    owner = researcher_client("rita")
    slug = create_study(owner, tasks={"check": 3}, attention_checks=1, attention_max_failures=0,
                        arms=[{"name": "hidden", "settings": {"points_shown": False}}], participants=2)["slug"]
    settled_claim("Neptune", label="REFUTES")
    client = participant_client(slug, "pp-1")
    answer_a_check(client, label)
    return BANNER.search(client.get("/write/").content.decode()).group()


def test_the_banner_says_nothing_of_an_attention_checks_outcome_or_points(db) -> None:
    """Two worlds that differ only in whether the participant's answer on a settled claim
    (an unannounced attention check) was right: the second is screened out, and the banner
    on the game's pages is the same bytes in both."""
    from django.db import transaction

    with transaction.atomic():
        passed = _banner_after_a_check("REFUTES")
        transaction.set_rollback(True)
    failed = _banner_after_a_check("SUPPORTS")
    assert services.Participant.objects.get().status == "screened_out"
    assert passed == failed
    assert "point" not in passed.lower() and "REFUTES" not in passed and "screen" not in passed.lower()


def test_the_form_posts_the_same_body_the_api_takes(researcher) -> None:
    """What the page sends (fields gathered by study_research_new.js) is a body the API knows:
    every key the form can fill is a field of the spec."""
    page = researcher.get("/research/studies/new").content.decode()
    names = set(re.findall(r'<(?:input|select|textarea)[^>]* name="(\w+)"', page)) - {"csrfmiddlewaretoken"}
    assert names <= services.SPEC_FIELDS, names - services.SPEC_FIELDS
    bonus = set(re.findall(r'data-bonus="(\w+)"', page))
    assert bonus == {"currency", *services.BONUS_AMOUNTS}
    assert study_spec()  # the shared spec the API tests post stays a valid body
