"""The research page's form of a new study and a participant's way back to their study, in a
real browser: a researcher fills the form, sees the server's message beside the field it is
about, corrects it and lands on the study's page with its entry URL; anyone else gets the 403
page; a participant follows the banner on the writing page back to their study; a plain
player sees no banner."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from playwright.sync_api import Page, expect

from foolgame.studies import services
from foolgame.studies.apps import _ensure_researchers_run_studies
from foolgame.studies.models import Study
from tests.factories import CategoryFactory, PageFactory, UserFactory
from tests.frontend.test_accessibility_browser import Scanner, axe_source  # noqa: F401 - axe_source is a fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def log_in(page: Page, base_url: str, user) -> None:
    """A session cookie for ``user``, without going through the login form."""
    client = Client()
    client.force_login(user)
    page.context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": base_url}])


def researcher():
    user = UserFactory(username="rita")
    _ensure_researchers_run_studies()
    Group.objects.get(name="researchers").user_set.add(user)
    return user


def test_a_researcher_defines_a_study_corrects_a_field_the_server_refused_and_lands_on_its_page(asgi_live_server: str, page: Page) -> None:
    CategoryFactory(name="Astronomy", slug="astronomy")
    PageFactory(title="Saturn")
    log_in(page, asgi_live_server, researcher())
    page.goto(f"{asgi_live_server}/")
    page.get_by_role("link", name="Studies", exact=True).click()
    page.get_by_role("link", name="Define a new study").click()
    expect(page.get_by_role("heading", name="A new study")).to_be_visible()

    page.get_by_label("Name of the study").fill("Clue cost")
    page.get_by_label("Consent text").fill("You will spot false claims for ten minutes.")
    page.get_by_label("vote: spot the false claim").fill("2")
    page.get_by_label("check: check a claim").fill("1")
    page.get_by_role("button", name="Move check up").click()  # the order: write, check, vote
    page.get_by_label("Astronomy").check()
    page.get_by_label("Pages (hold Ctrl").select_option(label="Saturn")
    first = page.locator("#study-arms .study-arm").nth(0)
    first.get_by_label("Name").fill("ten")
    first.locator("[data-setting=clue_seconds]").fill("10")
    page.get_by_role("button", name="Add an arm").click()
    second = page.locator("#study-arms .study-arm").nth(1)
    expect(second.locator("legend")).to_have_text("Arm 2")
    second.get_by_label("Name").fill("Ten")  # the first arm's name again: the server refuses it beside this arm
    second.locator("[data-setting=clue_seconds]").fill("20")
    second.locator("[data-setting=model_verdict]").select_option("false")
    page.get_by_label("Participants wanted in each arm").fill("4")
    page.get_by_label("Completion code").fill("C0MPLETE")
    page.get_by_label("Block size").fill("3")  # not a multiple of the 2 arms: the server refuses it
    page.get_by_label("Per vote that found the false claim").fill("0.05")
    page.get_by_role("button", name="Define the study").click()

    expect(page.locator('[data-errors-for="block_size"]')).to_have_text("a multiple of the number of arms (2)")
    expect(second.locator(".study-arm-errors")).to_have_text("name: 'Ten' names two arms; arm names are unique")
    expect(first.locator(".study-arm-errors")).to_be_empty()
    expect(page.locator("#study-new-error")).to_contain_text("2 thing(s) to correct")
    expect(page.get_by_label("Name of the study")).to_have_value("Clue cost")  # what was typed is kept
    expect(second.locator("[data-setting=clue_seconds]")).to_have_value("20")
    assert not Study.objects.exists()

    page.get_by_label("Block size").fill("4")
    second.get_by_label("Name").fill("twenty")
    page.get_by_role("button", name="Define the study").click()
    expect(page).to_have_url(f"{asgi_live_server}/research/studies/clue-cost/")
    expect(page.locator("#study-entry-url")).to_have_text(f"{asgi_live_server}/s/clue-cost/")
    expect(page.locator("#study-prolific-url")).to_contain_text("/s/clue-cost/?PROLIFIC_PID={{%PROLIFIC_PID%}}")
    study = Study.objects.get()
    assert study.tasks == [{"kind": "check", "count": 1}, {"kind": "vote", "count": 2}]
    assert study.categories == ["astronomy"] and len(study.page_ids) == 1 and study.block_size == 4 and study.per_arm == 4
    assert [(arm.name, arm.settings) for arm in study.arms.order_by("position")] == [
        ("ten", {"clue_seconds": 10}), ("twenty", {"clue_seconds": 20, "model_verdict": False})]
    assert study.bonus == {"per_right_vote": "0.05"}


def test_a_player_gets_the_403_page_instead_of_the_form(asgi_live_server: str, page: Page) -> None:
    log_in(page, asgi_live_server, UserFactory(username="pia"))
    response = page.goto(f"{asgi_live_server}/research/studies/new")
    assert response is not None and response.status == 403
    expect(page.get_by_role("heading", name="Study owners only")).to_be_visible()
    expect(page.locator("#study-new-form")).to_have_count(0)


def test_a_participant_follows_the_banner_on_the_writing_page_back_to_their_study(asgi_live_server: str, page: Page) -> None:
    spec = {"name": "Clue cost", "consent": "You will write and spot false claims.", "tasks": {"write": 1, "vote": 2},
            "arms": [{"name": "hidden", "settings": {"points_shown": False}}], "participants": 2, "completion_code": "C0MPLETE"}
    slug = services.study_create(owner=UserFactory(username="rita", is_staff=True), spec=spec).slug
    page.goto(f"{asgi_live_server}/s/{slug}/?pid=student-7")
    page.get_by_label("I have read the above and agree to take part.").check()
    page.get_by_role("button", name="I consent: start").click()
    expect(page.locator("#study-step")).to_be_visible()

    page.goto(f"{asgi_live_server}/write/")
    banner = page.locator("#study-banner")
    expect(banner).to_have_text(re.compile(r"Study: 0 of 3 done · back to your study"))
    banner.get_by_role("link", name="back to your study").click()
    expect(page).to_have_url(f"{asgi_live_server}/s/{slug}/")
    expect(page.locator("#study-step")).to_have_text("1 of 3: write a claim")
    expect(page.locator("#study-banner")).to_have_count(0)


def test_a_plain_player_sees_no_banner(asgi_live_server: str, page: Page) -> None:
    log_in(page, asgi_live_server, UserFactory(username="pia"))
    page.goto(f"{asgi_live_server}/write/")
    expect(page.get_by_role("link", name="pia")).to_be_visible()
    expect(page.locator("#study-banner")).to_have_count(0)


def test_the_form_with_the_servers_messages_and_the_banner_have_no_serious_accessibility_violation(asgi_live_server: str, page: Page, axe_source) -> None:
    scanner = Scanner(axe_source)
    log_in(page, asgi_live_server, researcher())
    scanner.visit(page, asgi_live_server, "/research/studies/new")
    page.get_by_label("Name of the study").fill("Clue cost")
    page.get_by_label("Consent text").fill("You will spot false claims.")
    page.get_by_label("vote: spot the false claim").fill("2")
    page.locator("#study-arms [data-arm=name]").fill("ten")
    page.get_by_label("Participants wanted in each arm").fill("3")  # not a multiple of the block's 2 per arm
    page.get_by_label("Completion code").fill("C0MPLETE")
    page.get_by_role("button", name="Define the study").click()
    expect(page.locator('[data-errors-for="participants"] .field-error')).to_be_visible()
    scanner.scan(page, "/research/studies/new (the server's messages shown)")

    spec = {"name": "Banner", "consent": "You will write.", "tasks": {"write": 1},
            "arms": [{"name": "a"}], "participants": 2, "completion_code": "C0MPLETE"}
    slug = services.study_create(owner=UserFactory(username="sam", is_staff=True), spec=spec).slug
    page.context.clear_cookies()
    page.goto(f"{asgi_live_server}/s/{slug}/?pid=student-8")
    page.get_by_label("I have read the above and agree to take part.").check()
    page.get_by_role("button", name="I consent: start").click()
    expect(page.locator("#study-step")).to_be_visible()
    scanner.visit(page, asgi_live_server, "/write/", "/write/ (a participant: the banner)")
    scanner.assert_clean()
