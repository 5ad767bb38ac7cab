"""The game's main interactions with the keyboard alone, in Chromium: each control is reached
with Tab (from wherever the focus is, as a player would), and Enter or Space acts on it.
Every control the Tab key stops at on the way shows a focus ring of 3:1 or more against what
is behind it.

Covered here: a solo round (start, buy a clue, vote), a room (join by code, vote, the host's
start, end, next and skip), a fact check (start, answer) and the moderation queue (a reason,
Remove, the confirmation). Elsewhere, with the control focused directly rather than tabbed to:
the host's end and skip by Enter (tests/rooms/test_classroom_browser.py), a guest's nickname
and vote (tests/rooms/test_guest_browser.py), the check page's answer keys 1, 2 and 3 and its
focus on each new claim (tests/checks/test_browser.py), writing a claim and ticking its gold
sentence with Space (tests/authoring/test_browser.py)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from foolgame.checks.models import Check
from foolgame.claims.models import Claim
from foolgame.moderation.actions import moderator_set
from foolgame.moderation.quality import quality_refresh
from foolgame.rooms.models import RoomQuestion
from foolgame.voting.models import Report, Round
from tests.checks.conftest import open_claim
from tests.factories import UserFactory
from tests.moderation.conftest import claim_pair
from tests.rooms.conftest import claim_pool
from tests.rooms.test_classroom_browser import LAPTOP, PHONE, host_a_room
from tests.voting.test_browser import log_in
from tests.voting.test_play_browser import make_pairs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The focused element: a name for messages, its outline, and the first opaque background
# behind it (the outline is drawn outside the element, on its parent's background).
FOCUSED = r"""() => {
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return null;
  const style = getComputedStyle(el);
  let node = el.parentElement, background = 'rgb(255, 255, 255)';
  while (node) {
    const bg = getComputedStyle(node).backgroundColor;
    if (bg && bg !== 'transparent' && !/^rgba\(.*,\s*0\)$/.test(bg)) { background = bg; break; }
    node = node.parentElement;
  }
  const name = (el.getAttribute('aria-label') || el.innerText || el.value || el.name || el.id || '').trim().replace(/\s+/g, ' ').slice(0, 40);
  return {name: el.tagName.toLowerCase() + ' "' + name + '"', outline: style.outlineStyle, width: parseFloat(style.outlineWidth) || 0,
          color: style.outlineColor, background: background};
}"""


def luminance(css: str) -> float:
    red, green, blue = (int(part) / 255 for part in re.findall(r"[\d.]+", css)[:3])

    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(red) + 0.7152 * channel(green) + 0.0722 * channel(blue)


def contrast(one: str, other: str) -> float:
    light, dark = sorted((luminance(one), luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


class Keyboard:
    """Tabs through a page to a control, checking the focus ring of each stop on the way."""

    def __init__(self) -> None:
        self.faint_rings: list[str] = []

    def tab_to(self, page: Page, target: Locator, *, presses: int = 120) -> None:
        expect(target).to_be_visible()
        stops: list[str] = []
        for _ in range(presses):
            page.keyboard.press("Tab")
            focused = page.evaluate(FOCUSED)
            if focused is None:
                continue
            stops.append(focused["name"])
            ratio = contrast(focused["color"], focused["background"])
            if focused["outline"] == "none" or focused["width"] < 2 or ratio < 3:
                self.faint_rings.append(f"{page.url} {focused['name']}: outline {focused['outline']} {focused['width']}px "
                                        f"{focused['color']} on {focused['background']} ({ratio:.2f}:1)")
            if target.evaluate("(el) => el === document.activeElement"):
                return
        raise AssertionError(f"Tab never reached {target}; it stopped at: {stops}")

    def press(self, page: Page, target: Locator, key: str) -> None:
        self.tab_to(page, target)
        page.keyboard.press(key)

    def assert_rings_visible(self) -> None:
        assert not self.faint_rings, "focus rings too faint:\n" + "\n".join(dict.fromkeys(self.faint_rings))


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_a_solo_round_by_keyboard(asgi_live_server: str, page: Page, viewport: dict) -> None:
    page.set_viewport_size(viewport)
    make_pairs(1)
    voter = UserFactory(username="keys")
    keys = Keyboard()
    log_in(page, asgi_live_server, "keys")
    page.wait_for_url(re.compile(r"/play/$"))
    expect(page.get_by_role("button", name="Start a round")).to_be_enabled()
    keys.press(page, page.get_by_role("button", name="Start a round"), "Enter")
    left = page.locator(".claim-card").nth(0)
    expect(left.locator(".vote")).to_be_enabled()
    keys.press(page, left.get_by_role("button", name=re.compile("Get a clue")), "Space")
    expect(left.locator(".clues li")).to_have_count(1)
    round_ = Round.objects.get(player=voter)
    keys.press(page, page.locator(".claim-card").nth(round_.false_index).get_by_role("button", name="Mark as false"), "Enter")
    expect(page.locator("#result-title")).to_have_text("You found the fib!")
    keys.press(page, page.get_by_role("button", name="Left", exact=True), "Space")
    expect(page.locator("#like-done")).to_be_visible()
    keys.assert_rings_visible()


def test_giving_up_in_the_last_seconds_by_keyboard_shows_the_ring_on_the_red_bar(asgi_live_server: str, page: Page, settings) -> None:
    """The status bar turns red in a round's last 30 s; the blue focus ring was 1.3:1 on it."""
    settings.FM2 = {**settings.FM2, "ROUND_SECONDS": 28}
    make_pairs(1)
    UserFactory(username="quitter")
    keys = Keyboard()
    log_in(page, asgi_live_server, "quitter")
    expect(page.get_by_role("button", name="Start a round")).to_be_enabled()
    keys.press(page, page.get_by_role("button", name="Start a round"), "Enter")
    expect(page.locator("#play")).to_have_class(re.compile(r"\bhurry\b"))
    keys.press(page, page.get_by_role("button", name="Give up this round"), "Enter")
    expect(page.locator("#result-title")).to_have_text("You gave up this round.")
    keys.assert_rings_visible()


def test_a_room_by_keyboard(asgi_live_server: str, browser: Browser) -> None:
    claim_pool(pages=3)
    keys = Keyboard()
    UserFactory(username="hana")
    UserFactory(username="pia")
    host = browser.new_context(viewport=LAPTOP).new_page()
    log_in(host, asgi_live_server, "hana")
    link = host_a_room(host, asgi_live_server, 2)
    code = link.rstrip("/").rsplit("/", 1)[1]
    member = browser.new_context(viewport=PHONE).new_page()
    log_in(member, asgi_live_server, "pia")
    member.goto(asgi_live_server + "/rooms/")
    keys.tab_to(member, member.get_by_label("Room code"))
    member.keyboard.type(code)
    member.keyboard.press("Enter")
    expect(member).to_have_url(link)
    expect(host.locator("#scoreboard tbody tr")).to_have_count(2)

    keys.press(host, host.get_by_role("button", name="Start the first question"), "Enter")
    expect(member.locator(".claim-card .vote").first).to_be_enabled()
    false_index = RoomQuestion.objects.get(number=1).false_claim_index
    keys.press(member, member.locator(".claim-card").nth(false_index).get_by_role("button", name="Mark as false"), "Space")
    expect(host.locator("#answers-in")).to_have_text("1/2")
    keys.press(host, host.get_by_role("button", name="End the question now"), "Enter")
    expect(member.locator("#answer-title")).to_have_text(f"The false claim was the {('left', 'right')[false_index]} one")
    keys.press(host, host.get_by_role("button", name="Next question"), "Enter")
    expect(member.locator(".claim-card .vote").first).to_be_enabled()
    keys.press(host, host.get_by_role("button", name="Skip this question"), "Space")
    expect(member.locator("#room-status")).to_contain_text("The room has ended")
    assert RoomQuestion.objects.get(number=2).skipped
    keys.press(host, host.get_by_role("button", name="Play again with everyone"), "Enter")
    expect(host).not_to_have_url(link)
    expect(member).not_to_have_url(link, timeout=15_000)
    for page in (host, member):
        page.context.close()
    keys.assert_rings_visible()


def test_a_fact_check_by_keyboard(asgi_live_server: str, page: Page) -> None:
    open_claim("Vega")
    open_claim("Deneb")
    player = UserFactory(username="checker")
    keys = Keyboard()
    log_in(page, asgi_live_server, "checker")
    page.goto(asgi_live_server + "/checks/")
    keys.press(page, page.get_by_role("button", name="Start checking"), "Enter")
    expect(page.locator("#check-claim")).to_be_focused()
    first = Check.objects.get(player=player, answered_at__isnull=True)
    keys.press(page, page.get_by_role("button", name="Supported", exact=True), "Space")
    expect(page.locator("#check-feedback")).to_have_text("Answer recorded. 19 answers to your next tally.")
    first.refresh_from_db()
    assert first.label == "SUPPORTS"
    expect(page.locator("#check-claim")).to_be_focused()  # the next claim
    keys.press(page, page.get_by_role("button", name="Not enough info", exact=True), "Enter")
    expect(page.get_by_role("heading", name="Nothing left to check")).to_be_focused()
    assert Check.objects.filter(player=player, answered_at__isnull=False).count() == 2
    keys.assert_rings_visible()


def test_the_moderation_queue_by_keyboard(live_server, page: Page) -> None:
    moderator_set(username=UserFactory(username="mona").username)
    spam, _ = claim_pair(title="Saturn")
    for n in range(3):
        Report.objects.create(claim=spam, reporter=UserFactory(username=f"reporter{n}"), reason="spam", note=f"spam {n}")
    quality_refresh(claim_ids=[spam.pk])
    keys = Keyboard()
    log_in(page, live_server.url, "mona")
    page.goto(live_server.url + "/moderation/")
    card = page.locator(".mod-card").nth(0)
    expect(card.get_by_role("button", name="Remove")).to_be_enabled()
    keys.tab_to(page, card.get_by_label("Why (recorded in the audit log)"))
    page.keyboard.type("Advertising, not a claim.")
    keys.press(page, card.get_by_role("button", name="Remove"), "Enter")
    dialog = page.get_by_role("dialog", name="Remove this claim?")
    expect(dialog.get_by_role("button", name="Keep it for now")).to_be_focused()  # the safe choice first
    keys.press(page, dialog.get_by_role("button", name="Remove the claim"), "Enter")
    expect(card.locator(".mod-status")).to_have_text("Removed: Advertising, not a claim. (recorded in the audit log).")
    assert Claim.objects.get(pk=spam.pk).status == "removed"
    keys.assert_rings_visible()
