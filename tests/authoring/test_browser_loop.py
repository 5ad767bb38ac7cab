"""The writing page while typing and saving, and the game loop around it, in real Chromium."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from playwright.sync_api import Page, Route, expect

from foolgame.authoring.models import WriteTask
from foolgame.claims.models import Claim
from foolgame.pages.models import Page as Article
from foolgame.pages.models import Sentence
from tests.authoring.conftest import GOOD_CLAIM
from tests.factories import CategoryFactory, PageFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def log_in(page: Page, base_url: str, username: str = "writer") -> None:
    """A session cookie for a new player, without going through the signup form."""
    client = Client()
    client.force_login(UserFactory(username=username))
    page.context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": base_url}])


def sign_up_and_take_a_task(page: Page, base_url: str, category: str = "Geography (1 page)") -> None:
    """A new player through the signup form, then the next write task of ``category`` from
    the writing page, as a first visit goes."""
    page.goto(base_url + "/accounts/signup/")
    page.get_by_label("User name").fill("writer")
    page.get_by_label("Password").fill("a long enough passphrase")
    page.get_by_role("button", name="Sign up").click()
    page.goto(base_url + "/write/")
    page.get_by_label("Category").select_option(label=category)
    page.get_by_role("button", name="Take the next task").click()


def start_task(page: Page, base_url: str, article: Article) -> None:
    page.goto(f"{base_url}/write/?page={article.pk}")
    page.get_by_role("button", name=f"Start writing about {article.title}").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(article.title)
    expect(page.locator("#write")).to_have_attribute("data-ready", "1")  # write.js is listening


def test_a_junk_draft_is_named_while_typing_before_any_save(live_server, page: Page, eiffel_live: Article) -> None:
    log_in(page, live_server.url)
    start_task(page, live_server.url, eiffel_live)
    box = page.get_by_label("Your claim")
    box.focus()
    page.keyboard.type("asdf qwer zxcv uiop hjkl")
    problem = page.locator('#draft-problems [data-code="text_no_words"]')
    expect(problem).to_be_visible()
    expect(problem).to_have_text("Write the claim in words: a sentence a reader can read.")
    assert Claim.objects.count() == 0

    # A real claim clears it, and the words it shares with the page are marked in the page itself.
    box.fill("")
    page.keyboard.type(GOOD_CLAIM)
    expect(page.locator("#draft-problems li")).to_have_count(0)
    expect(page.locator("#draft-checks")).to_be_hidden()
    tallest = Sentence.objects.get(page=eiffel_live, position=0)
    expect(page.locator(f"#s{tallest.pk} .gold-text mark").first).to_have_text("Eiffel Tower")
    expect(page.locator(f"#s{tallest.pk} .gold-text")).to_have_text(tallest.text)  # marks, not new words

    # A draft opening with a pronoun gets the save's warning while typing.
    box.fill("")
    page.keyboard.type("It was higher than anything humans had built for four decades.")
    expect(page.locator('#draft-warnings [data-code="not_standalone"]')).to_be_visible()
    assert Claim.objects.count() == 0 and WriteTask.objects.get().used_at is None


def test_draft_text_with_markup_is_marked_as_text(live_server, page: Page, eiffel_live: Article) -> None:
    log_in(page, live_server.url)
    start_task(page, live_server.url, eiffel_live)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.get_by_label("Your claim").fill("The Eiffel <img src=x onerror=alert(1)> tower in Paris")
    expect(page.locator("#hints li").first).to_be_visible()
    expect(page.locator(".write-article mark").first).to_be_visible()
    assert page.locator(".write-article img, #hints img, #draft-checks img").count() == 0 and dialogs == []


def test_saving_shows_and_a_second_submit_sends_nothing(live_server, page: Page, eiffel_live: Article) -> None:
    log_in(page, live_server.url)
    start_task(page, live_server.url, eiffel_live)
    held: list[Route] = []
    page.route("**/api/claims", lambda route: held.append(route))
    page.get_by_label("Your claim").fill(GOOD_CLAIM)
    page.locator('input[name="gold"]').nth(3).check()
    submit = page.locator("#claim-submit")
    submit.click()
    expect(submit).to_have_text("Saving...")
    expect(submit).to_be_disabled()
    # Enter again, and a script-driven submit, while the first save is on its way.
    page.evaluate("document.getElementById('claim-form').requestSubmit()")
    page.get_by_label("Your claim").press("Control+Enter")
    page.wait_for_timeout(300)
    assert len(held) == 1
    held[0].continue_()
    # The first save in a process loads the sentence encoder for the clue list: seconds.
    expect(page.locator("#write-done")).to_be_visible(timeout=30_000)
    expect(page.locator("#earned-points")).to_have_text("100")
    assert len(held) == 1 and Claim.objects.count() == 1
    # After writing, the player is offered the other half of the game.
    expect(page.get_by_role("link", name="Play a round")).to_have_attribute("href", "/play/")


@pytest.mark.parametrize("viewport", [{"width": 390, "height": 844}, {"width": 1366, "height": 900}], ids=["phone", "laptop"])
def test_the_timer_stays_in_sight_while_writing(live_server, page: Page, viewport: dict) -> None:
    long_page = PageFactory(title="Long page", category=CategoryFactory(name="History", slug="history"))
    for position in range(60):
        Sentence.objects.create(
            page=long_page, position=position, section_header=f"Part {position // 10}", text=f"Long page sentence {position} about the old harbour and its ships."
        )
    page.set_viewport_size(viewport)
    log_in(page, live_server.url)
    start_task(page, live_server.url, long_page)
    timer = page.locator("#timer")
    expect(timer).to_have_text(re.compile(r"^[78]:[0-5][0-9]$"))
    assert page.evaluate("document.documentElement.scrollHeight > window.innerHeight + 500")
    for target in ("document.documentElement.scrollHeight / 2", "document.documentElement.scrollHeight"):
        page.evaluate(f"window.scrollTo(0, {target})")
        page.wait_for_function("window.scrollY > 300", timeout=5_000)
        box = timer.bounding_box()
        assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= viewport["height"], box
        # Nothing of the page is drawn over it.
        middle = page.evaluate(
            "(() => { const r = document.getElementById('timer').getBoundingClientRect();"
            " const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);"
            " return hit && hit.id; })()"
        )
        assert middle == "timer"


def test_choosing_a_page_from_its_view_starts_a_write_task_on_it(live_server, page: Page, eiffel_live: Article) -> None:
    # A priority page is what the server would hand out; the player picks another one.
    louvre = PageFactory(title="Louvre", priority=True, category=eiffel_live.category)
    for position in range(3):
        Sentence.objects.create(page=louvre, position=position, text=f"The Louvre sentence {position}.")
    log_in(page, live_server.url)
    page.goto(live_server.url + "/")
    expect(page.get_by_role("link", name="Play a round")).to_have_attribute("href", "/play/")
    expect(page.get_by_role("link", name="Write a claim")).to_have_attribute("href", "/write/")
    page.goto(f"{live_server.url}/pages/{eiffel_live.pk}/")
    expect(page.get_by_role("link", name="Play a round")).to_be_visible()
    page.get_by_role("link", name="Write a claim about this page").click()
    expect(page).to_have_url(f"{live_server.url}/write/?page={eiffel_live.pk}")
    page.get_by_role("button", name="Start writing about Eiffel Tower").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Eiffel Tower")
    task = WriteTask.objects.get()
    assert task.page_id == eiffel_live.pk
    expect(page).to_have_url(f"{live_server.url}/write/{task.pk}/")

    # The topic menu by page: the other page, from the start page's page list.
    page.goto(live_server.url + "/write/")
    page.get_by_label("Page", exact=True).select_option(label="Louvre")
    page.get_by_role("button", name="Write about this page").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Louvre")
    assert WriteTask.objects.filter(page=louvre).count() == 1
