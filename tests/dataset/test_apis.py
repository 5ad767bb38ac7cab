"""POST /api/exports, GET /api/exports/<id> and the file downloads: researchers only."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from foolgame.dataset.models import Export
from foolgame.dataset.services import export_job_run
from tests.dataset.conftest import client_for
from tests.factories import UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("exports_dir")]


@pytest.fixture
def researcher(db):
    user = UserFactory(username="rita")
    user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    return user


@pytest.mark.parametrize("who", ["anonymous", "player"])
def test_non_researchers_get_403_everywhere(world, who: str) -> None:
    client = client_for(None if who == "anonymous" else UserFactory(username="plain"))
    export = Export.objects.create()
    for method, url in (
        ("post", reverse("exports")),
        ("get", reverse("export-detail", args=[export.pk])),
        ("get", reverse("export-file", args=[export.pk, "train.jsonl"])),
    ):
        response = getattr(client, method)(url, {}, format="json")
        assert response.status_code == 403, url
        assert "error" in response.json()
    assert Export.objects.count() == 1


def test_researcher_runs_an_export_and_downloads_its_files(world, researcher, django_capture_on_commit_callbacks) -> None:
    client = client_for(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("exports"), {"seed": 4, "splits": "0.5,0.25,0.25"}, format="json")
    assert response.status_code == 201
    export_id = response.json()["id"]
    detail = client.get(reverse("export-detail", args=[export_id])).json()
    assert (detail["status"], detail["progress"], detail["stage"]) == ("done", 1.0, "done")
    names = {f["name"]: f for f in detail["files"]}
    assert {"train.jsonl", "votes.csv", "stats.md", "README.md"} <= set(names)
    download = client.get(names["stats.json"]["url"])
    assert download.status_code == 200
    stats = json.loads(b"".join(download.streaming_content))
    assert stats["seed"] == 4 and stats["table1"]["total"]["claims"] == 14
    assert names["stats.json"]["size"] == len(json.dumps(stats, ensure_ascii=False, indent=2)) + 1


def test_staff_are_researchers_too(world) -> None:
    staff = UserFactory(username="sam", is_staff=True)
    assert client_for(staff).post(reverse("exports"), {}, format="json").status_code == 201


def test_only_the_export_files_can_be_downloaded(world, researcher, django_capture_on_commit_callbacks) -> None:
    client = client_for(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        export_id = client.post(reverse("exports"), {}, format="json").json()["id"]
    for name in ("secret.txt", "..", "%2e%2e%2fsettings.py"):
        assert client.get(reverse("export-file", args=[export_id, name])).status_code == 404


def test_pending_export_reports_no_files_and_a_second_run_does_nothing(world, researcher) -> None:
    client = client_for(researcher)
    export_id = client.post(reverse("exports"), {}, format="json").json()["id"]  # no commit callbacks run
    detail = client.get(reverse("export-detail", args=[export_id])).json()
    assert (detail["status"], detail["files"]) == ("pending", [])
    assert client.get(reverse("export-file", args=[export_id, "train.jsonl"])).status_code == 404
    assert export_job_run(export_id=export_id) is True
    assert export_job_run(export_id=export_id) is False


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"splits": "1,2"}, "invalid_options"),
        ({"formats": ["parquet"]}, "invalid"),
        ({"seed": "x"}, "invalid"),
        ({"baseline_max_claims": 5}, "invalid"),
        ({"resplit_release": "sometimes"}, "invalid"),
        ({"resplit_release": None}, "invalid"),
    ],
)
def test_bad_requests_are_refused_and_write_nothing(world, researcher, body: dict, code: str) -> None:
    response = client_for(researcher).post(reverse("exports"), body, format="json")
    assert response.status_code == 400 and response.json()["error"]["code"] == code
    if code == "invalid":
        assert set(response.json()["error"]["details"]) == set(body)  # the message names the field
    assert not Export.objects.exists()


def run(client, body: dict, capture) -> dict:
    with capture(execute=True):
        response = client.post(reverse("exports"), body, format="json")
    assert response.status_code == 201
    return client.get(reverse("export-detail", args=[response.json()["id"]])).json()


def test_the_detail_says_how_the_pages_were_split_and_which_option_fills_an_empty_split(
    demo, researcher, django_capture_on_commit_callbacks
) -> None:
    client = client_for(researcher)
    kept = run(client, {}, django_capture_on_commit_callbacks)
    assert kept["options"]["resplit_release"] is False
    assert kept["split_summary"]["rules"] == [
        {"rule": "release", "description": "release page, kept its release split",
         "pages": {"train": 0, "dev": 20, "test": 0}, "claims": {"train": 0, "dev": 216, "test": 0}}
    ]
    assert [(e["split"], e["option"]) for e in kept["split_summary"]["empty_splits"]] == [
        ("train", "resplit_release"), ("test", "resplit_release")
    ]
    resplit = run(client, {"resplit_release": True, "seed": 2}, django_capture_on_commit_callbacks)
    summary = resplit["split_summary"]
    assert summary["resplit_release"] is True and summary["empty_splits"] == []
    assert all(summary["rules"][0]["claims"][split] for split in ("train", "dev", "test"))
    listed = client.get(reverse("exports")).json()["exports"]
    assert [e["split_summary"] for e in listed] == [summary, kept["split_summary"]]


def test_a_pending_export_has_no_split_summary(world, researcher) -> None:
    client = client_for(researcher)
    export_id = client.post(reverse("exports"), {"resplit_release": True}, format="json").json()["id"]
    detail = client.get(reverse("export-detail", args=[export_id])).json()
    assert (detail["split_summary"], detail["options"]["resplit_release"]) == (None, True)


def test_unknown_author_fails_the_job_with_a_message(world, researcher, django_capture_on_commit_callbacks) -> None:
    client = client_for(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        export_id = client.post(reverse("exports"), {"exclusive_test_authors": ["ghost"]}, format="json").json()["id"]
    detail = client.get(reverse("export-detail", args=[export_id])).json()
    assert detail["status"] == "failed" and "ghost" in detail["error"]


def test_schema_describes_the_export_endpoints() -> None:
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    paths = schema["paths"]
    assert {"/api/exports", "/api/exports/{export_id}", "/api/exports/{export_id}/files/{name}"} <= set(paths)
    components = schema["components"]["schemas"]
    assert "resplit_release" in components["ExportRequestRequest"]["properties"]
    assert "split_summary" in components["ExportStatus"]["properties"]
    assert {"resplit_release", "rules", "empty_splits"} <= set(components["SplitSummary"]["properties"])
