"""The host's projector view: the join code, link and a QR code drawn on the server (no CDN),
for the host alone; in Chromium it follows the room: who is in, how many have answered, the
answer with who found it first, and the podium at the end."""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest
from django.test import Client
from playwright.sync_api import Browser, expect

from foolgame.rooms import services
from foolgame.rooms.models import RoomQuestion
from foolgame.rooms.qr import qr_svg
from tests.factories import UserFactory
from tests.rooms.conftest import claim_pool
from tests.rooms.test_classroom_browser import LAPTOP, PHONE, host_a_room, player, shot


def test_the_qr_code_is_an_svg_drawn_here() -> None:
    svg = qr_svg("https://fm2.example/rooms/ABCDEF/")
    tree = ET.fromstring(svg)
    assert tree.tag.endswith("svg") and tree.get("viewBox") and tree.find("{http://www.w3.org/2000/svg}path") is not None
    assert "http" not in svg.replace("http://www.w3.org/2000/svg", ""), "nothing to fetch, and no link text to escape"
    assert qr_svg("https://fm2.example/rooms/ABCDEF/") == svg != qr_svg("https://fm2.example/rooms/ABCDEG/")


@pytest.mark.django_db
def test_only_the_host_gets_the_projector_page(client: Client) -> None:
    host, pia = UserFactory(username="hana"), UserFactory(username="pia")
    room = services.room_create(host=host)
    services.room_join(code=room.code, player=pia)
    url = f"/rooms/{room.code.lower()}/projector/"
    assert client.get(url).status_code == 302  # log in first
    client.force_login(pia)
    assert client.get(url).status_code == 403
    client.force_login(host)
    page = client.get(url, HTTP_HOST="testserver")
    body = page.content.decode()
    assert page.status_code == 200 and room.code in body and f"http://testserver/rooms/{room.code}/" in body
    assert "<svg" in body and 'role="img"' in body
    assert not re.search(r"""(src|href)=["']https?://(?!testserver)""", body), "nothing from another site"
    assert client.get("/rooms/NOPE99/projector/").status_code == 404


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_projector_follows_the_room(asgi_live_server: str, browser: Browser, tmp_path) -> None:
    claim_pool(pages=3)
    host = player(browser, asgi_live_server, "hana", LAPTOP)
    link = host_a_room(host, asgi_live_server, 1)
    code = link.rstrip("/").rsplit("/", 1)[1]
    expect(host.get_by_role("link", name="Projector view")).to_be_visible()
    screen = host.context.new_page()
    screen.set_viewport_size(LAPTOP)
    screen.goto(asgi_live_server + f"/rooms/{code}/projector/")
    expect(screen.locator("#join-code")).to_have_text(code)
    expect(screen.locator(".join-link")).to_have_text(link.split("://", 1)[1])
    expect(screen.get_by_role("img", name=re.compile("QR code"))).to_be_visible()
    if shutil.which("zbarimg"):  # Debian's zbar-tools reads it back, where installed
        image = tmp_path / "qr.png"
        screen.get_by_role("img", name=re.compile("QR code")).screenshot(path=str(image))
        read = subprocess.run(["zbarimg", "-q", "--raw", str(image)], capture_output=True, text=True, timeout=30, check=False)
        assert read.stdout.strip() == link
    expect(screen.locator("#members li")).to_have_count(1)
    pia = player(browser, asgi_live_server, "pia", PHONE)
    pia.goto(link)
    expect(screen.locator("#members li")).to_have_count(2)
    expect(screen.locator("#members")).to_contain_text("pia")
    shot(screen, "laptop-5-projector-lobby")

    host.get_by_role("button", name="Start the first question").click()
    expect(screen.locator("#stage-answers")).to_have_text("0/2")
    expect(screen.locator(".stage-claim .stage-text").first).not_to_be_empty()
    false_index = RoomQuestion.objects.get().false_claim_index
    pia.locator(".claim-card").nth(false_index).get_by_role("button", name="Mark as false").click()
    expect(screen.locator("#stage-answers")).to_have_text("1/2")
    expect(screen.locator(".stage-claim.is-false")).to_have_count(0)  # no answer before it is out
    shot(screen, "laptop-6-projector-question")
    host.get_by_role("button", name="End the question now").click()
    expect(screen.locator(".stage-claim.is-false")).to_have_attribute("data-index", str(false_index))
    expect(screen.locator("#stage-first")).to_have_text("First to find it: pia")
    expect(screen.locator("#stage-podium li")).to_have_count(1)
    expect(screen.locator("#stage-podium")).to_contain_text("pia")
    expect(screen.locator("#stage-winners li")).to_have_text("Question 1: pia")
    expect(screen.get_by_role("img", name=re.compile("QR code"))).to_be_hidden()  # nobody joins an ended room
    shot(screen, "laptop-7-projector-end")
    screen.set_viewport_size(PHONE)
    shot(screen, "phone-4-projector-end")
