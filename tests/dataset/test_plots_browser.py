"""The research page's plots in Chromium: drawn from the latest export's stats.json on a phone
and a laptop, within the screen, readable without JavaScript, and clean under axe.

Screenshots go to the test's temporary folder, or to ``FM2_SCREENSHOTS`` when it names a
folder, to be looked at."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import Browser, expect

from foolgame.dataset import plots
from foolgame.dataset.exporter import ExportOptions
from foolgame.dataset.models import Export
from foolgame.dataset.services import dataset_export
from tests.dataset.test_certify import check_claims
from tests.factories import PASSWORD, UserFactory
from tests.frontend.test_accessibility_browser import AXE, LAPTOP, PHONE, Scanner

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("exports_dir")]

PLOT_TITLES = ("Claims and votes per day", "Labels per split", "Accuracy by clues bought", "Agreement (Fleiss' kappa)",
               "The model's error per collection round", "Difficulty against votes")


@pytest.fixture
def finished_export(world) -> Export:
    """A done export of the test world, some of its claims checked by four players."""
    check_claims([world.claims[key] for key in ("t0", "f0", "t1", "f1", "t2", "f2")], labels=4)
    export = Export.objects.create(options={"seed": 0, "splits": "0.4,0.3,0.3"}, status=Export.Status.DONE)
    result = dataset_export(out_dir=export.directory, options=ExportOptions(splits=(0.4, 0.3, 0.3)), salt=b"0" * 32)
    export.files = [{"name": name, "size": (export.directory / name).stat().st_size} for name in result.files]
    export.save(update_fields=["files"])
    UserFactory(username="rita")
    call_command("createresearcher", "rita", stdout=None)
    return export


def research_page(browser: Browser, base: str, *, viewport: dict, javascript: bool = True):
    context = browser.new_context(viewport=viewport, java_script_enabled=javascript)
    page = context.new_page()
    page.goto(f"{base}/accounts/login/?next=/research/")
    page.get_by_label("User name").fill("rita")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/research/$"))
    page.wait_for_load_state("load")
    return context, page


def shots_dir(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("FM2_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_the_plots_of_the_latest_export_fit_the_screen_and_pass_axe(finished_export, live_server, browser: Browser, viewport, tmp_path) -> None:
    context, page = research_page(browser, live_server.url, viewport=viewport)
    try:
        expect(page.get_by_role("heading", name="What the latest export shows")).to_be_visible()
        expect(page.locator(".plots")).to_contain_text(f"Export {finished_export.pk}")
        for title in PLOT_TITLES:
            expect(page.get_by_role("heading", name=title)).to_be_visible()
        images = page.locator(".plots svg[role=img]")
        expect(images).to_have_count(4)  # no model version, no rating: those two say why instead
        expect(page.get_by_role("img", name=re.compile("^Labels per split"))).to_be_visible()
        expect(page.locator("#plot-rounds figcaption")).to_have_text("No exported claim was written against a model version.")
        expect(page.locator("#plot-kappa figcaption")).to_contain_text("overall 1.00 (95% interval 1.00 to 1.00) over 6 claims")
        for index in range(images.count()):
            box = images.nth(index).bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"] + 0.5
            # The SVG's text stays at least 10 px high on the phone's width.
            assert box["width"] / plots.WIDTH * plots.FONT >= 10
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.get_by_text("Data: labels per split").click()
        expect(page.locator("#plot-labels table")).to_be_visible()
        name = "phone" if viewport is PHONE else "laptop"
        page.locator(".plots").screenshot(path=str(shots_dir(tmp_path) / f"research-plots-{name}.png"))
        if not AXE.is_file():
            pytest.skip("axe-core is not installed: run `npm ci`")
        scanner = Scanner(AXE)
        scanner.scan(page, f"/research/ ({name})")
        scanner.assert_clean()
    finally:
        context.close()


def test_the_plots_read_without_javascript(finished_export, live_server, browser: Browser) -> None:
    context, page = research_page(browser, live_server.url, viewport=LAPTOP, javascript=False)
    try:
        expect(page.locator(".plots svg[role=img]")).to_have_count(4)
        expect(page.get_by_role("img", name=re.compile("^Claims and votes per day"))).to_be_visible()
        expect(page.locator("#plot-labels figcaption")).to_contain_text("SUPPORTS")
    finally:
        context.close()


def test_without_a_finished_export_the_page_says_what_will_show(world, live_server, browser: Browser) -> None:
    UserFactory(username="rita")
    call_command("createresearcher", "rita", stdout=None)
    context, page = research_page(browser, live_server.url, viewport=LAPTOP)
    try:
        expect(page.locator(".plots")).to_contain_text("No finished export with statistics yet")
        expect(page.locator(".plots svg")).to_have_count(0)
    finally:
        context.close()
