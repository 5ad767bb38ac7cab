"""The REST API under /api/ (the OpenAPI schema at /api/schema/ describes it)."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from foolgame.checks import apis as checks
from foolgame.claims import apis as claims
from foolgame.dataset import apis as dataset
from foolgame.moderation import apis as moderation
from foolgame.authoring import apis as authoring
from foolgame.pages import apis as pages
from foolgame.players import apis as players
from foolgame.rooms import apis as rooms
from foolgame.studies import apis as studies
from foolgame.studies import research_apis as studies_research
from foolgame.voting import apis as voting

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("auth/signup", players.SignupApi.as_view(), name="auth-signup"),
    path("auth/login", players.LoginApi.as_view(), name="auth-login"),
    path("auth/logout", players.LogoutApi.as_view(), name="auth-logout"),
    path("auth/csrf", players.CsrfApi.as_view(), name="auth-csrf"),
    path("me", players.MeApi.as_view(), name="me"),
    path("me/claim", players.GuestClaimApi.as_view(), name="me-claim"),
    path("me/tutorial", players.TutorialApi.as_view(), name="me-tutorial"),
    path("categories", claims.CategoryListApi.as_view(), name="categories"),
    path("pages", claims.PageListApi.as_view(), name="pages"),
    path("pages/<int:page_id>", pages.PageDetailApi.as_view(), name="page-detail"),
    path("pages/<int:page_id>/hints", authoring.PageHintsApi.as_view(), name="page-hints"),
    path("checks", checks.CheckDealApi.as_view(), name="checks"),
    path("checks/<int:check_id>", checks.CheckAnswerApi.as_view(), name="check-answer"),
    path("rounds", voting.RoundCreateApi.as_view(), name="rounds"),
    path("rounds/<int:round_id>", voting.RoundDetailApi.as_view(), name="round-detail"),
    path("rounds/<int:round_id>/start", voting.RoundStartApi.as_view(), name="round-start"),
    path("rounds/<int:round_id>/reveal", voting.RoundRevealApi.as_view(), name="round-reveal"),
    path("rounds/<int:round_id>/vote", voting.RoundVoteApi.as_view(), name="round-vote"),
    path("rounds/<int:round_id>/like", voting.RoundLikeApi.as_view(), name="round-like"),
    path("rounds/<int:round_id>/report", voting.RoundReportApi.as_view(), name="round-report"),
    path("rounds/<int:round_id>/forfeit", voting.RoundForfeitApi.as_view(), name="round-forfeit"),
    path("rooms", rooms.RoomCreateApi.as_view(), name="rooms"),
    path("rooms/<str:code>", rooms.RoomDetailApi.as_view(), name="room-detail"),
    path("rooms/<str:code>/join", rooms.RoomJoinApi.as_view(), name="room-join"),
    path("rooms/<str:code>/start", rooms.RoomStartApi.as_view(), name="room-start"),
    path("rooms/<str:code>/leave", rooms.RoomLeaveApi.as_view(), name="room-leave"),
    path("rooms/<str:code>/end-question", rooms.RoomEndQuestionApi.as_view(), name="room-end-question"),
    path("rooms/<str:code>/skip-question", rooms.RoomSkipQuestionApi.as_view(), name="room-skip-question"),
    path("rooms/<str:code>/again", rooms.RoomPlayAgainApi.as_view(), name="room-again"),
    path("rooms/<str:code>/guest", rooms.RoomGuestJoinApi.as_view(), name="room-guest-join"),
    path("leaderboard", voting.LeaderboardApi.as_view(), name="leaderboard"),
    path("me/rounds", voting.RoundHistoryApi.as_view(), name="me-rounds"),
    path("me/notifications", voting.NotificationsApi.as_view(), name="notifications"),
    path("me/notifications/read", voting.NotificationsReadApi.as_view(), name="notifications-read"),
    path("write-tasks", authoring.WriteTaskCreateApi.as_view(), name="write-tasks"),
    path("claims", authoring.ClaimCreateApi.as_view(), name="claims"),
    path("claims/check", authoring.ClaimDraftCheckApi.as_view(), name="claims-check"),
    path("moderation/queue", moderation.ModerationQueueApi.as_view(), name="moderation-queue"),
    path("moderation/claims/<int:claim_id>/actions", moderation.ClaimActionApi.as_view(), name="moderation-claim-actions"),
    path("moderation/audit", moderation.AuditLogApi.as_view(), name="moderation-audit"),
    path("moderation/players", moderation.PlayerQueueApi.as_view(), name="moderation-players"),
    path("moderation/players/<int:player_id>/actions", moderation.PlayerActionApi.as_view(), name="moderation-player-actions"),
    path("studies", studies_research.StudiesApi.as_view(), name="studies"),
    path("studies/<slug:slug>/enter", studies.StudyEnterApi.as_view(), name="study-enter"),
    path("studies/<slug:slug>/me", studies.StudyMeApi.as_view(), name="study-me"),
    path("exports", dataset.ExportListCreateApi.as_view(), name="exports"),
    path("exports/<int:export_id>", dataset.ExportDetailApi.as_view(), name="export-detail"),
    path("exports/<int:export_id>/files/<str:name>", dataset.ExportFileApi.as_view(), name="export-file"),
    # Studies, the researcher's view (foolgame/studies/research_apis.py).
    path("studies/<slug:slug>", studies_research.StudyFiguresApi.as_view(), name="study-figures"),
    path("studies/<slug:slug>/pause", studies_research.StudyPauseApi.as_view(), name="study-pause"),
    path("studies/<slug:slug>/resume", studies_research.StudyResumeApi.as_view(), name="study-resume"),
    path("studies/<slug:slug>/close", studies_research.StudyCloseApi.as_view(), name="study-close"),
    path("studies/<slug:slug>/participants", studies_research.StudyParticipantsApi.as_view(), name="study-participants"),
    path("studies/<slug:slug>/bonuses.csv", studies_research.StudyBonusFileApi.as_view(), name="study-bonuses"),
]
