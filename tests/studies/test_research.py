"""The researcher's view of a study: the list, the figures per arm, pause, resume and close;
only the owner (and staff, for reading) may see a study."""

from __future__ import annotations

import pytest
from django.urls import reverse

from foolgame.studies.models import Study
from foolgame.studies.research import Work, current_task
from tests.dataset.conftest import client_for
from tests.studies.test_research_world import PLATFORM_IDS, researcher, study_world  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


def test_figures_per_arm_count_what_each_arm_did(study_world) -> None:
    response = client_for(study_world.owner).get(reverse("study-figures", args=["clue-cost"]))
    assert response.status_code == 200
    body = response.json()
    first, second = body["by_arm"]
    assert (first["arm"], second["arm"]) == ("clue10", "clue20")
    assert (first["started"], first["finished"], first["screened_out"], first["timed_out"], first["active"]) == (2, 1, 1, 0, 0)
    assert (second["started"], second["finished"], second["active"]) == (2, 1, 1)
    # Participant 0 took 10 minutes (consented 30 minutes ago, ended 20 minutes ago); participant 1, 20.
    assert first["median_seconds_to_finish"] == pytest.approx(600, abs=2)
    assert second["median_seconds_to_finish"] == pytest.approx(1200, abs=2)
    assert first["collected"] == {"claims": 4, "verified_fooling_claims": 2, "votes": 6, "checks": 4}
    assert second["collected"] == {"claims": 3, "verified_fooling_claims": 1, "votes": 4, "checks": 1}
    assert first["vote_accuracy"] == 0.5  # 3 right of participant 0's 4, 0 of participant 2's 2
    assert second["vote_accuracy"] == 1.0
    assert (first["model_judged_claims"], first["model_error_rate"]) == (4, 0.75)
    assert (second["model_judged_claims"], second["model_error_rate"]) == (3, pytest.approx(0.6667))
    assert first["attention"] == {"answered": 1, "failed": 1, "participants_failing": 1}
    assert first["bonus_total"] == "1.50" and second["bonus_total"] == "1.20"
    # Drop-off: participant 2 stopped in the first task (no claim), participant 3 works on the
    # first (1 claim of 2); participants 0 and 1 finished.
    assert [(t["kind"], t["reached"], t["stopped"], t["working"]) for t in first["drop_off"]] == [
        ("write", 2, 1, 0), ("vote", 1, 0, 0), ("check", 1, 0, 0)
    ]
    assert [(t["reached"], t["stopped"], t["working"]) for t in second["drop_off"]] == [(2, 0, 1), (1, 0, 0), (1, 0, 0)]


def test_the_figures_never_show_a_platform_id(study_world) -> None:
    for user in (study_world.owner, study_world.staff):
        content = client_for(user).get(reverse("study-figures", args=["clue-cost"])).content
        assert not any(pid.encode() in content for pid in PLATFORM_IDS)


@pytest.mark.parametrize(
    "tasks, done, expected",
    [
        ([{"kind": "write", "count": 2}, {"kind": "vote", "count": 1}], Work(write=1, vote=5), 0),
        ([{"kind": "write", "count": 2}, {"kind": "vote", "count": 1}], Work(write=2), 1),
        ([{"kind": "write", "count": 2}, {"kind": "vote", "count": 1}], Work(write=3, vote=1), None),
        ([{"kind": "vote", "count": 1}, {"kind": "check", "count": 2}, {"kind": "vote", "count": 1}], Work(vote=1, check=2), 2),
        ([], Work(), None),
    ],
)
def test_current_task(tasks, done, expected) -> None:
    assert current_task(tasks, done) == expected


def test_the_list_shows_a_researcher_their_own_studies_and_staff_every_study(study_world) -> None:
    mine = client_for(study_world.owner).get(reverse("studies"))
    assert mine.status_code == 200
    assert [s["slug"] for s in mine.json()["studies"]] == ["clue-cost"]
    listed = mine.json()["studies"][0]
    assert listed["arms"] == [
        {"name": "clue10", "settings": {"clue_seconds": 10}, "participants": 2, "filled": 1},  # one of them screened out
        {"name": "clue20", "settings": {"clue_seconds": 20}, "participants": 2, "filled": 2},
    ]
    # The one summary of a study: the list shows it as POST /api/studies answered it.
    assert (listed["per_arm"], listed["participants"], listed["tasks"], listed["arrivals"]) == (10, 10, {"write": 2, "vote": 4, "check": 2}, 4)
    assert client_for(study_world.other_researcher).get(reverse("studies")).json() == {"studies": []}
    assert [s["slug"] for s in client_for(study_world.staff).get(reverse("studies")).json()["studies"]] == ["clue-cost"]


@pytest.mark.parametrize("who", ["player", "anonymous"])
def test_the_list_is_for_researchers_only(study_world, who: str) -> None:
    response = client_for(None if who == "anonymous" else study_world.player).get(reverse("studies"))
    assert response.status_code == 403 and b"clue-cost" not in response.content


@pytest.mark.parametrize("who", ["other_researcher", "player", "participant", "anonymous"])
def test_another_account_gets_403_and_changes_nothing(study_world, who: str) -> None:
    user = {"participant": study_world.participants[PLATFORM_IDS[0]].user, "anonymous": None}.get(who) or getattr(study_world, who, None)
    client = client_for(user)
    figures = client.get(reverse("study-figures", args=["clue-cost"]))
    assert figures.status_code == 403 and b"by_arm" not in figures.content
    for action in ("pause", "resume", "close"):
        response = client.post(reverse(f"study-{action}", args=["clue-cost"]))
        assert response.status_code == 403, action
    assert Study.objects.get().status == Study.Status.OPEN


def test_staff_read_the_figures_but_cannot_run_anothers_study(study_world) -> None:
    client = client_for(study_world.staff)
    assert client.get(reverse("study-figures", args=["clue-cost"])).status_code == 200
    response = client.post(reverse("study-close", args=["clue-cost"]))
    assert response.status_code == 403 and response.json()["error"]["code"] == "not_study_owner"
    assert Study.objects.get().status == Study.Status.OPEN


def test_an_unknown_study_is_404(study_world) -> None:
    response = client_for(study_world.owner).get(reverse("study-figures", args=["no-such-study"]))
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_the_owner_pauses_resumes_and_closes_for_good(study_world) -> None:
    client = client_for(study_world.owner)
    paused = client.post(reverse("study-pause", args=["clue-cost"]))
    assert paused.status_code == 200 and paused.json()["status"] == "paused"
    assert client.post(reverse("study-pause", args=["clue-cost"])).json()["status"] == "paused"
    assert client.post(reverse("study-resume", args=["clue-cost"])).json()["status"] == "open"
    closed = client.post(reverse("study-close", args=["clue-cost"]))
    assert closed.status_code == 200 and closed.json()["status"] == "closed" and closed.json()["closed"]
    for action in ("resume", "pause", "close"):
        again = client.post(reverse(f"study-{action}", args=["clue-cost"]))
        assert again.status_code == 409 and again.json()["error"]["code"] == "study_already_closed"
    assert Study.objects.get().status == Study.Status.CLOSED


def test_a_check_answered_through_the_game_api_counts_for_its_participants_arm(study_world) -> None:
    from decimal import Decimal

    from django.test import Client

    from foolgame.checks.models import Check

    participant = study_world.participants[PLATFORM_IDS[3]]
    before = client_for(study_world.owner).get(reverse("study-figures", args=["clue-cost"])).json()["by_arm"][1]
    browser = Client()
    browser.force_login(participant.user)
    dealt = browser.post("/api/checks", content_type="application/json")
    assert dealt.status_code == 201
    check = Check.objects.get(pk=dealt.json()["id"])
    answered = browser.post(f"/api/checks/{check.pk}", {"label": check.claim.label}, content_type="application/json")
    assert answered.status_code == 200
    after = client_for(study_world.owner).get(reverse("study-figures", args=["clue-cost"])).json()["by_arm"][1]
    assert after["collected"]["checks"] == before["collected"]["checks"] + 1
    check.refresh_from_db()
    # Right on a claim settled at the deal pays 0.02 more; on any other claim, nothing.
    paid = Decimal("0.02") if check.correct else Decimal("0")
    assert Decimal(after["bonus_total"]) == Decimal(before["bonus_total"]) + paid


def test_studies_and_exports_refuse_a_plain_player_with_the_one_researchers_permission(study_world) -> None:
    from foolgame.dataset import apis as dataset_apis
    from foolgame.players.apis import IsResearcher
    from foolgame.studies import research_apis

    assert research_apis.IsResearcher is IsResearcher is dataset_apis.IsResearcher
    refused = client_for(study_world.player).get(reverse("studies"))
    assert refused.status_code == 403
    assert refused.json()["error"]["message"] == "Only researchers (staff or the researchers group) may run studies."
