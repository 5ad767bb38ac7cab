"""The fact-check mode's REST endpoints: transport only (``checks.services``)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from foolgame.checks import services
from foolgame.checks.models import Check
from foolgame.core.schema import errors
from foolgame.core.views import ApiView, validated_body


class CheckPageSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()


class CheckClaimSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    text = serializers.CharField()
    page = CheckPageSerializer()


class CheckEvidenceSerializer(serializers.Serializer):
    text = serializers.CharField()
    section_header = serializers.CharField(allow_blank=True)


class CheckSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    claim = CheckClaimSerializer(help_text="the claim to check: its text and page, never its label")
    evidence = CheckEvidenceSerializer(many=True, help_text="the claim's gold evidence sentences, in the order its page reads")
    expires_at = serializers.DateTimeField(help_text="the answer must arrive before this (FM2_CHECK_SECONDS after the deal)")


class CheckAnswerSerializer(serializers.Serializer):
    label = serializers.ChoiceField(choices=Check.Label.values, help_text="FLAWED: the claim cannot be judged as written (a report)")


class CheckTallySerializer(serializers.Serializer):
    number = serializers.IntegerField(help_text="1 for your first tally, and so on")
    answered = serializers.IntegerField(help_text="answers this tally counted")
    gold = serializers.IntegerField(help_text="of those, answers on claims whose label was settled (never which)")
    right = serializers.IntegerField(help_text="of those, answered with the settled label")
    paid = serializers.BooleanField(help_text="whether your record showed reading, so the right answers paid")
    points = serializers.IntegerField(required=False, help_text="what the tally paid; left out when the player's game hides points (a study's arm)")
    counting = serializers.BooleanField(help_text="whether your labels count from this tally on")


class CheckTallyProgressSerializer(serializers.Serializer):
    answered = serializers.IntegerField(help_text="your answers since your last tally")
    size = serializers.IntegerField(help_text="answers a tally counts at once (FM2_CHECK_TALLY_SIZE)")
    last = CheckTallySerializer(allow_null=True, help_text="your last tally; null before the first")


class CheckResultSerializer(serializers.Serializer):
    points = serializers.IntegerField(required=False, help_text="points a tally closed by this answer paid; 0 for every other answer; left out when the player's game hides points (a study's arm)")
    streak = serializers.IntegerField(help_text="checks answered in a row before their clock ran out (says nothing of labels)")
    counting = serializers.BooleanField(help_text="whether your labels count towards claims' gold labels, as your last tally left it")
    message = serializers.CharField(allow_null=True, help_text="when your labels stopped counting: why")
    tally = CheckTallyProgressSerializer(help_text="where your answers stand towards the next tally, and the last one")
    next = CheckSerializer(allow_null=True, help_text="your next check, dealt now; null when none is left")


class CheckDealApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        operation_id="checks_deal",
        request=None,
        responses={
            201: CheckSerializer,
            **errors(
                post=True,
                reads_body=False,
                e409="nothing_to_check: no claim is left that you may check (none you wrote, met in a round, saw as a moderator or checked)",
                e429="check_rate_limited: too many checks dealt to you in the last hour (FM2_CHECKS_PER_HOUR)",
            ),
        },
        summary="Deal the next claim to check (fact-check mode)",
        description="One claim with its gold evidence, to answer SUPPORTS, REFUTES, NOT ENOUGH INFO or FLAWED before "
        "`expires_at`. A check still open is given back rather than a new one. Claims that need labels come least-checked "
        "first, with some drawn from every claim you may check; the deal never looks at whether a claim's label is settled. "
        "Answers on settled claims pay only in tallies of many answers at once. A claim you check is "
        "never dealt to you in a round. docs/checks.md has the rules.",
    )
    def post(self, request: Request) -> Response:
        return Response(services.check_deal(player=request.user), status=status.HTTP_201_CREATED)


class CheckAnswerApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        operation_id="checks_answer",
        request=CheckAnswerSerializer,
        responses={
            200: CheckResultSerializer,
            **errors(
                post=True,
                e400=["invalid_label: label is not SUPPORTS, REFUTES, NOT ENOUGH INFO or FLAWED"],
                e404="not_found: no check of yours has this id",
                e409=["check_answered: this check has its answer already", "check_expired: its clock ran out; deal the next one"],
            ),
        },
        summary="Answer a check, once, before it expires",
        description="Your label is in before you see anything of anyone else's. Nothing the answer returns depends on "
        "whether this claim's label was settled or what it is: your streak counts answers in time, and points come only "
        "when an answer closes a tally of FM2_CHECK_TALLY_SIZE answers, which says how many of them matched a settled "
        "label, never which.",
    )
    def post(self, request: Request, check_id: int) -> Response:
        data = validated_body(CheckAnswerSerializer, request)
        return Response(services.check_answer(check_id=check_id, player=request.user, label=data["label"]))
