"""The researcher's pages: /research/studies/ and /research/studies/<slug>/, for the owner
(figures, plots, entry URL, buttons, bonus links) and staff (figures only); 403 for anyone else."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from django.test import Client

from foolgame.studies.research import study_figures
from foolgame.studies.research_views import study_plots
from tests.studies.test_research_world import PLATFORM_IDS, study_world  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


def browser(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def test_the_owner_sees_figures_plots_the_prolific_url_the_buttons_and_the_bonus_links(study_world) -> None:
    response = browser(study_world.owner).get("/research/studies/clue-cost/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "/s/clue-cost/?PROLIFIC_PID={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}&amp;SESSION_ID={{%SESSION_ID%}}" in page
    assert "DONE123" in page and "https://app.prolific.com/submissions/complete?cc=DONE123" in page
    assert 'data-action="pause"' in page and 'data-action="close"' in page
    assert "/api/studies/clue-cost/bonuses.csv?format=prolific" in page and "format=mturk" in page
    assert page.count('<svg class="plot"') == 4
    assert "<td>2 / 0 / 1</td>" in page  # arm clue10, task 1: reached by 2, none working, 1 stopped there
    assert not any(pid in page for pid in PLATFORM_IDS)


def test_staff_see_the_figures_without_the_buttons_or_the_bonus_file(study_world) -> None:
    page = browser(study_world.staff).get("/research/studies/clue-cost/").content.decode()
    assert "Per arm" in page and 'data-action="pause"' not in page and "bonuses.csv" not in page


@pytest.mark.parametrize("who", ["other_researcher", "player", "participant", "anonymous"])
def test_anyone_else_gets_403_on_the_study_page(study_world, who: str) -> None:
    user = {"participant": study_world.participants[PLATFORM_IDS[0]].user, "anonymous": None}.get(who) or getattr(study_world, who, None)
    response = browser(user).get("/research/studies/clue-cost/")
    assert response.status_code == 403 and b"DONE123" not in response.content


def test_the_list_names_only_the_researchers_own_studies(study_world) -> None:
    assert b"clue-cost" in browser(study_world.owner).get("/research/studies/").content
    assert b"clue-cost" not in browser(study_world.other_researcher).get("/research/studies/").content
    assert browser(study_world.player).get("/research/studies/").status_code == 403


def test_an_unknown_study_page_is_404(study_world) -> None:
    assert browser(study_world.owner).get("/research/studies/nope/").status_code == 404


def test_the_plots_are_valid_svg_described_by_their_figures(study_world) -> None:
    plots = study_plots(study_figures(study_world.study))
    assert [p.id for p in plots] == ["plot-study-arms", "plot-study-drop-off", "plot-study-collected", "plot-study-accuracy"]
    for plot in plots:
        ET.fromstring(plot.svg)
    assert plots[0].summary.startswith("clue10: 2 started, 1 finished, 1 screened out")
    assert plots[3].rows == [["clue10", "50.0%"], ["clue20", "100.0%"]]
