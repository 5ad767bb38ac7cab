"""Defining a study: POST /api/studies and manage.py study create, checked field by field."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from foolgame.studies.models import Arm, Study
from tests.authoring.conftest import api_client, post
from tests.factories import CategoryFactory, PageFactory
from tests.studies.conftest import create_study, researcher_client, study_spec

pytestmark = pytest.mark.django_db


def test_a_researcher_defines_a_study_and_gets_its_slug_and_entry_url(researcher) -> None:
    body = create_study(researcher, tasks={"vote": 4, "write": 2, "check": 2})
    assert body["slug"] == "clue-cost"
    assert body["entry_url"] == "http://testserver/s/clue-cost/"
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}" in body["prolific_url"]
    study = Study.objects.get(slug="clue-cost")
    # The work in the order given, kinds with count 0 left out.
    assert study.tasks == [{"kind": "vote", "count": 4}, {"kind": "write", "count": 2}, {"kind": "check", "count": 2}]
    assert [(arm.name, arm.settings) for arm in Arm.objects.filter(study=study)] == [
        ("ten", {"clue_seconds": 10}),
        ("twenty", {"clue_seconds": 20}),
    ]
    assert study.block_size == 4 and study.per_arm == 4 and study.status == Study.Status.OPEN
    assert study.owner.username == "rita"


def test_a_second_study_of_the_same_name_gets_its_own_slug(researcher) -> None:
    assert create_study(researcher)["slug"] == "clue-cost"
    assert create_study(researcher)["slug"] == "clue-cost-2"


def test_a_player_without_the_researchers_role_may_not_define_a_study(db) -> None:
    player = api_client("pat")
    response = post(player, "/api/studies", study_spec())
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "not_a_study_runner"
    assert not Study.objects.exists()


def test_staff_may_define_a_study(db) -> None:
    client = api_client("stella")
    from django.contrib.auth import get_user_model

    get_user_model().objects.filter(username="stella").update(is_staff=True)
    assert post(client, "/api/studies", study_spec()).status_code == 201


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"name": ""}, "name"),
        ({"consent": "   "}, "consent"),
        ({"tasks": {"write": 0}}, "tasks"),
        ({"tasks": {"read": 2}}, "tasks"),
        ({"tasks": {"write": -1}}, "tasks"),
        ({"arms": []}, "arms"),
        ({"arms": [{"name": "a"}, {"name": "A"}]}, "arms"),
        ({"arms": [{"name": "a", "settings": {"clue_seconds": 500}}]}, "arms"),
        ({"arms": [{"name": "a", "settings": {"colour": "red"}}]}, "arms"),
        ({"participants": 0}, "participants"),
        ({"participants": 3}, "participants"),  # 2 arms in blocks of 4: a multiple of 2
        ({"block_size": 3}, "block_size"),
        ({"completion_code": "has space"}, "completion_code"),
        ({"attention_checks": 2}, "attention_checks"),  # more than the 1 check of the work
        ({"attention_checks": 1, "attention_max_failures": 1}, "attention_max_failures"),
        ({"attention_checks": 1, "screen_out_code": ""}, "screen_out_code"),
        ({"screen_out_code": "C0MPLETE"}, "screen_out_code"),
        ({"time_limit_minutes": 0}, "time_limit_minutes"),
        ({"bonus": {"per_right_vote": "0.001"}}, "bonus"),
        ({"bonus": {"per_right_vote": "-1"}}, "bonus"),
        ({"bonus": {"tip": "1.00"}}, "bonus"),
        ({"bonus": {"currency": "pounds"}}, "bonus"),
        ({"pages": [999999]}, "pages"),
        ({"categories": ["no-such-category"]}, "categories"),
        ({"address_cap": 0}, "address_cap"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_a_wrong_field_is_refused_with_its_message_and_nothing_is_stored(researcher, overrides, field) -> None:
    response = post(researcher, "/api/studies", study_spec(**overrides))
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert field in error["details"] and error["details"][field]
    assert not Study.objects.exists()


def test_pages_and_categories_that_exist_are_kept(researcher) -> None:
    page = PageFactory(title="Saturn")
    CategoryFactory(name="Science", slug="science")
    body = create_study(researcher, pages=[page.pk], categories=["Science"], bonus={"currency": "GBP", "per_right_vote": "0.05", "cap": 5})
    study = Study.objects.get(slug=body["slug"])
    assert study.page_ids == [page.pk] and study.categories == ["science"]
    assert study.bonus == {"currency": "GBP", "per_right_vote": "0.05", "cap": "5.00"}


def test_the_command_defines_a_study_from_a_json_file(db, tmp_path, capsys) -> None:
    researcher_client("rita")
    file = tmp_path / "study.json"
    file.write_text(json.dumps(study_spec(name="Class experiment")), encoding="utf-8")
    call_command("study", "create", str(file), "--owner", "rita")
    assert "/s/class-experiment/" in capsys.readouterr().out
    assert Study.objects.get(slug="class-experiment").arms.count() == 2


def test_the_command_prints_each_wrong_field(db, tmp_path) -> None:
    researcher_client("rita")
    file = tmp_path / "study.json"
    file.write_text(json.dumps(study_spec(participants=0, arms=[])), encoding="utf-8")
    with pytest.raises(CommandError) as refused:
        call_command("study", "create", str(file), "--owner", "rita")
    assert "participants" in str(refused.value) and "arms" in str(refused.value)
    assert not Study.objects.exists()
