"""A researcher exports from the browser: starts an export, watches it finish, downloads its files."""

from __future__ import annotations

import json
import re

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect

from foolgame.dataset.models import Export
from foolgame.dataset.exporter import ExportOptions
from foolgame.dataset.services import export_job_run, export_options_from
from tests.factories import PASSWORD, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("exports_dir")]


def log_in(page: Page, base_url: str, username: str, next_path: str) -> None:
    page.goto(f"{base_url}/accounts/login/?next={next_path}")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()


def test_researcher_exports_from_the_browser_and_downloads_the_files(world, live_server, page: Page, tmp_path) -> None:
    UserFactory(username="rita")
    call_command("createresearcher", "rita", stdout=None)
    log_in(page, live_server.url, "rita", "/")
    page.get_by_role("link", name="Research").click()
    expect(page.get_by_role("heading", name="Dataset exports")).to_be_visible()
    expect(page.locator("#exports-count")).to_have_text("No exports yet.")

    page.get_by_label("Seed").fill("7")
    page.get_by_label("Splits (train,dev,test)").fill("0.5,0.25,0.25")
    page.get_by_label("csv").uncheck()
    page.get_by_label("Baseline training claims at most").fill("500")
    page.get_by_role("button", name="Start export").click()
    expect(page.locator("#export-status")).to_have_text(re.compile(r"Export \d+ started\."))
    export = Export.objects.get()
    expect(page.locator("#export-status")).to_have_text(f"Export {export.pk} started.")
    card = page.locator(f"#export-{export.pk}")
    expect(card.locator(".export-state")).to_have_text("Done", timeout=60_000)
    expect(card).to_contain_text("Asked for by rita")
    expect(card).to_contain_text("seed 7 · splits 0.5,0.25,0.25 · jsonl")
    assert export_options_from(export.options) == ExportOptions(seed=7, splits=(0.5, 0.25, 0.25), formats=("jsonl",), baseline_max_claims=500)

    with page.expect_download() as caught:
        card.get_by_role("link", name="stats.json").click()
    download = caught.value
    assert download.suggested_filename == "stats.json"
    saved = tmp_path / "stats.json"
    download.save_as(saved)
    assert json.loads(saved.read_text())["seed"] == 7
    with page.expect_download() as caught:
        card.get_by_role("link", name="train.jsonl").click()
    assert caught.value.suggested_filename == "train.jsonl"
    expect(card.get_by_role("link", name="train.csv")).to_have_count(0)

    page.reload()  # the list survives a reload, from the server's own JSON
    expect(page.locator(f"#export-{export.pk} .export-state")).to_have_text("Done")
    expect(page.locator("#exports-count")).to_have_text("1 export.")


def test_the_page_follows_an_export_a_worker_runs_later(world, live_server, page: Page) -> None:
    """Without a reload: the page polls GET /api/exports while an export is pending or running."""
    UserFactory(username="rita")
    call_command("createresearcher", "rita", stdout=None)
    export = Export.objects.create(options={"seed": 0, "splits": "0.8,0.1,0.1", "formats": ["jsonl", "csv"]})
    log_in(page, live_server.url, "rita", "/research/")
    card = page.locator(f"#export-{export.pk}")
    expect(card.locator(".export-state")).to_have_text("Waiting for a worker: 0%")
    Export.objects.filter(pk=export.pk).update(status="running", stage="claims", progress=0.3)
    expect(card.locator(".export-state")).to_have_text("Running: 30% (claims)")
    expect(card.get_by_role("progressbar")).to_be_visible()
    Export.objects.filter(pk=export.pk).update(status="pending", progress=0)
    assert export_job_run(export_id=export.pk)
    expect(card.locator(".export-state")).to_have_text("Done")
    expect(card.get_by_role("link", name="votes.csv")).to_be_visible()


def test_a_bad_option_is_refused_on_the_page_and_starts_nothing(world, live_server, page: Page) -> None:
    UserFactory(username="rita")
    call_command("createresearcher", "rita", stdout=None)
    log_in(page, live_server.url, "rita", "/research/")
    page.get_by_label("Splits (train,dev,test)").fill("1,2")
    page.get_by_role("button", name="Start export").click()
    expect(page.locator("#export-status")).to_contain_text("train,dev,test")
    assert not Export.objects.exists()


def test_the_page_says_how_the_demo_pages_were_split_and_the_checkbox_resplits_them(demo, live_server, page: Page) -> None:
    """The demo's pages all come from the FM2 release: without the checkbox they keep their
    split (dev) and the page says train and test are empty and how to fill them; with it,
    every split gets pages."""
    UserFactory(username="rita")
    call_command("createresearcher", "rita", stdout=None)
    log_in(page, live_server.url, "rita", "/research/")
    page.get_by_label("csv").uncheck()
    page.get_by_label("Baseline training claims at most").fill("100")
    page.get_by_role("button", name="Start export").click()
    expect(page.locator("#export-status")).to_have_text(re.compile(r"Export \d+ started\."))
    kept = page.locator(f"#export-{Export.objects.get().pk}")
    expect(kept.locator(".export-state")).to_have_text("Done", timeout=60_000)
    summary = kept.get_by_role("region", name="How the pages were split")
    expect(summary.get_by_role("listitem")).to_have_text(["release page, kept its release split: dev 20 pages (216 claims)"])
    expect(summary.locator(".export-empty-split")).to_have_text(
        "train and test are empty: 20 release page(s) kept their release split (20 in dev). "
        "To fill: tick “Re-split release pages by the proportions above” and start a new export."
    )

    page.get_by_label("Re-split release pages by the proportions above").check()
    page.get_by_role("button", name="Start export").click()
    expect(page.locator(".export-card")).to_have_count(2)
    resplit = Export.objects.order_by("-pk").first()
    assert resplit.options["resplit_release"] is True
    card = page.locator(f"#export-{resplit.pk}")
    expect(card.locator(".export-state")).to_have_text("Done", timeout=60_000)
    expect(card).to_contain_text("release pages re-split")
    rule = card.get_by_role("region", name="How the pages were split").get_by_role("listitem")
    expect(rule).to_have_text(re.compile(r"^release page, re-split by the requested proportions: train \d+ pages .*, dev \d+ pages? .*, test \d+ pages? .*"))
    expect(card.locator(".export-empty-split")).to_have_count(0)

    page.reload()  # the summary comes with the server's own JSON too
    expect(page.locator(f"#export-{resplit.pk} .export-split-summary li")).to_have_count(1)
    expect(page.locator(".export-empty-split")).to_have_count(1)


def test_a_certified_export_shows_its_quality_gates(world, live_server, page: Page) -> None:
    UserFactory(username="rita")
    call_command("createresearcher", "rita", stdout=None)
    log_in(page, live_server.url, "rita", "/research/")
    page.get_by_label("Certify this release").check()
    page.get_by_role("button", name="Start export").click()
    expect(page.locator("#export-status")).to_have_text(re.compile(r"Export \d+ started\."))
    export = Export.objects.get()
    assert export.options["certify"] is True
    card = page.locator(f"#export-{export.pk}")
    expect(card.locator(".export-state")).to_have_text("Done", timeout=60_000)
    expect(card).to_contain_text("certified")
    gates = card.locator(".export-quality li")
    expect(gates).to_have_count(8)
    expect(card.locator(".export-quality")).to_contain_text("Failed: checked_share, kappa, artifacts, lmi.")
    expect(card.locator('[data-gate="kappa"]')).to_have_text(
        "fail · kappa: n/a (threshold 0.6), not enough validated claims (0, 30 needed)"
    )
    expect(card.locator('[data-gate="page_disjoint"]')).to_have_text("pass · page_disjoint: 0 (threshold 0)")
    expect(card.get_by_role("link", name="quality.json")).to_have_count(1)


def test_players_get_403_from_the_research_page(live_server, page: Page) -> None:
    UserFactory(username="plain")
    log_in(page, live_server.url, "plain", "/")
    expect(page.get_by_role("link", name="Research")).to_have_count(0)
    response = page.goto(live_server.url + "/research/")
    assert response is not None and response.status == 403
    expect(page.get_by_role("heading", name="Researchers only")).to_be_visible()


def test_start_export_waits_for_the_page_script(world, live_server, page: Page) -> None:
    """Submitted before exports.js has put its handler on, the form would only reload the page:
    Start export is disabled in the HTML until the script enables it."""
    UserFactory(username="rita")
    call_command("createresearcher", "rita", stdout=None)
    script = re.compile(r".*/fm2/exports\.js.*")
    page.route(script, lambda route: route.abort())
    log_in(page, live_server.url, "rita", "/research/")
    expect(page.get_by_role("button", name="Start export")).to_be_disabled()
    page.unroute(script)
    page.reload()
    expect(page.get_by_role("button", name="Start export")).to_be_enabled()
