"""The studies' REST endpoints: defining a study (researchers), arriving in one and reading
one's own progress (participants). Transport only (``studies.services``)."""

from __future__ import annotations

from django.contrib.auth import login
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from foolgame.core.arms import ARM_SETTINGS
from foolgame.core.errors import ServiceError
from foolgame.core.schema import errors
from foolgame.core.views import ApiView
from foolgame.studies import services
from foolgame.studies.models import Participant, Study


class StudyTasksSerializer(serializers.Serializer):
    write = serializers.IntegerField(required=False, min_value=0, help_text="claims to write")
    vote = serializers.IntegerField(required=False, min_value=0, help_text="rounds to vote in (spot the false claim)")
    check = serializers.IntegerField(required=False, min_value=0, help_text="claims to check (attention checks among them)")


class ArmSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=64, help_text="unique in the study")
    settings = serializers.DictField(
        required=False, help_text="overrides of the game's settings for this arm: " + "; ".join(f"{key}: {spec.meaning}" for key, spec in ARM_SETTINGS.items())
    )


class BonusSerializer(serializers.Serializer):
    currency = serializers.CharField(required=False, help_text="three letters, e.g. GBP")
    per_verified_fooling_claim = serializers.CharField(required=False, help_text='e.g. "1.00": per claim that fooled the model and was then verified')
    per_right_vote = serializers.CharField(required=False, help_text="per vote that picked the false claim")
    per_right_check = serializers.CharField(required=False, help_text="per check whose label agrees with the settled label")
    cap = serializers.CharField(required=False, help_text="at most this much per participant")


class StudySpecSerializer(serializers.Serializer):
    """Documentation of the body: ``services.study_spec_check`` checks it, field by field."""

    name = serializers.CharField(max_length=200)
    consent = serializers.CharField(help_text="the consent text, shown before anything else")
    tasks = StudyTasksSerializer(help_text='the work, in the order given: {"write": 2, "vote": 4, "check": 2}')
    pages = serializers.ListField(child=serializers.IntegerField(), required=False, help_text="page ids the work draws from")
    categories = serializers.ListField(child=serializers.CharField(), required=False, help_text="or category slugs or names")
    arms = ArmSerializer(many=True, help_text="one or more versions of the game")
    participants = serializers.IntegerField(min_value=1, help_text="participants wanted in each arm; the study closes itself when every arm is full")
    completion_code = serializers.CharField(help_text="given back once the server has counted the work done")
    screen_out_code = serializers.CharField(required=False, help_text="given to a participant who fails the attention checks")
    attention_checks = serializers.IntegerField(required=False, min_value=0, help_text="settled claims expected among the checks")
    attention_max_failures = serializers.IntegerField(required=False, min_value=0, help_text="more failures than this screen a participant out")
    time_limit_minutes = serializers.IntegerField(required=False, allow_null=True, help_text="after it, a participant without the work done is timed out")
    bonus = BonusSerializer(required=False)
    block_size = serializers.IntegerField(required=False, help_text="blocked randomisation: a multiple of the number of arms (default twice it)")
    address_cap = serializers.IntegerField(required=False, help_text="participants from one address (default FM2_STUDIES_ADDRESS_CAP)")
    seed = serializers.IntegerField(required=False, help_text="seeds the order of arms in each block (default random)")


class StudyArmOutSerializer(serializers.Serializer):
    name = serializers.CharField()
    settings = serializers.DictField()


class StudyCreatedSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=Study.Status.values)
    entry_url = serializers.CharField(help_text="the study's address: give it to Prolific, Mechanical Turk or a class")
    prolific_url = serializers.CharField(help_text="the address to paste into Prolific, with its placeholders for the ids")
    tasks = serializers.DictField(child=serializers.IntegerField())
    arms = StudyArmOutSerializer(many=True)
    participants = serializers.IntegerField()
    block_size = serializers.IntegerField()
    address_cap = serializers.IntegerField()
    attention_checks = serializers.IntegerField()
    attention_max_failures = serializers.IntegerField()
    time_limit_minutes = serializers.IntegerField(allow_null=True)
    bonus = serializers.DictField()
    arrivals = serializers.IntegerField()


class StudyEnterSerializer(serializers.Serializer):
    participant = serializers.CharField(help_text="PROLIFIC_PID, workerId or pid")
    platform = serializers.ChoiceField(choices=Participant.Platform.values)
    consent = serializers.BooleanField(help_text="must be true: nothing is stored otherwise")
    extra = serializers.DictField(required=False, help_text="STUDY_ID and SESSION_ID (Prolific); assignmentId and hitId (Mechanical Turk)")


class TaskProgressSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=list(services.TASK_KINDS))
    done = serializers.IntegerField(help_text="counted by the server")
    needed = serializers.IntegerField()


class ParticipantStateSerializer(serializers.Serializer):
    study = serializers.CharField(help_text="the study's slug")
    name = serializers.CharField()
    arm = serializers.CharField(help_text="the participant's arm")
    status = serializers.ChoiceField(choices=Participant.Status.values)
    progress = TaskProgressSerializer(many=True, help_text="the work by kind, in the study's order")
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    next = serializers.ChoiceField(choices=list(services.TASK_KINDS), allow_null=True, help_text="the next kind of work; null when none is left")
    next_title = serializers.CharField(allow_null=True)
    completion_code = serializers.CharField(allow_null=True, help_text="null until the server has counted the work done")
    screen_out_code = serializers.CharField(allow_null=True, help_text="only for a participant screened out by the attention checks")
    deadline = serializers.DateTimeField(allow_null=True, help_text="when the study has a time limit")
    return_url = serializers.CharField(allow_null=True, help_text="Prolific: the address back to it with the code")


def _prolific_url(entry_url: str) -> str:
    return f"{entry_url}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}&SESSION_ID={{{{%SESSION_ID%}}}}"


class StudyCreateApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        operation_id="studies_create",
        request=StudySpecSerializer,
        responses={
            201: StudyCreatedSerializer,
            **errors(
                post=True,
                e400="invalid: a field of the study is wrong (details gives each field's messages)",
                e403="not_a_study_runner",
            ),
        },
        summary="Define a study (researchers only)",
        description="A name, the consent text, the work, the pages or categories, one or more arms (overrides of the "
        "game's settings), participants per arm, the codes, attention checks, a time limit and bonus rules. Answers the "
        "study's slug and its entry address. docs/studies.md walks through a study.",
    )
    def post(self, request: Request) -> Response:
        study = services.study_create(owner=request.user, spec=request.data)
        entry_url = request.build_absolute_uri(services.study_entry_path(study))
        body = {**services.study_summary(study), "entry_url": entry_url, "prolific_url": _prolific_url(entry_url)}
        return Response(body, status=status.HTTP_201_CREATED)


class StudyEnterApi(ApiView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        operation_id="studies_enter",
        request=StudyEnterSerializer,
        responses={
            200: ParticipantStateSerializer,
            201: ParticipantStateSerializer,
            **errors(
                post=True,
                login=False,
                e400=[
                    "invalid: participant, platform or extra is wrong (details names each field)",
                    "consent_required: consent is not true; nothing was stored",
                ],
                e403=["study_paused", "study_closed"],
                e404="study_not_found",
                e429="study_address_cap",
            ),
        },
        summary="Arrive in a study: consent, get an account, resume",
        description="201 for a new participant: an account of their own with no password, an arm by blocked "
        "randomisation; 200 for a returning one (the same arm and progress). Either way the answer signs the browser in "
        "as the participant (the session cookie). Newcomers are refused while the study is paused or closed, and past its "
        "cap of participants from one address; a returning participant never is.",
    )
    def post(self, request: Request, slug: str) -> Response:
        data = request.data if isinstance(request.data, dict) else None
        if data is None:
            raise ServiceError("invalid", "Send a JSON object.")
        participant, created = services.participant_enter(
            slug=slug,
            platform=data.get("platform"),
            participant_id=data.get("participant"),
            consent=data.get("consent"),
            extra=data.get("extra"),
            ip=request.META.get("REMOTE_ADDR"),
        )
        login(request._request, participant.user, backend="django.contrib.auth.backends.ModelBackend")
        state = services.participant_state(participant=participant)
        return Response(state, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class StudyMeApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        operation_id="studies_me",
        responses={
            200: ParticipantStateSerializer,
            **errors(e403="not_a_participant: this account is not a participant of the study", e404="study_not_found"),
        },
        summary="A participant's arm, progress and code",
        description="The work by kind as the server counts it (claims saved, rounds voted, checks answered), the status, "
        "and `completion_code`, null until that count says the work is done. A participant screened out by the "
        "attention checks gets `screen_out_code`; past the time limit without the work, neither.",
    )
    def get(self, request: Request, slug: str) -> Response:
        return Response(services.participant_state(participant=services.participant_in(user=request.user, slug=slug)))
