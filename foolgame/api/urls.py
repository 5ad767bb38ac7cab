"""The REST API under /api/ (see API.md)."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView

from foolgame.pages import apis as pages
from foolgame.players import apis as players

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("auth/signup", players.SignupApi.as_view(), name="auth-signup"),
    path("auth/login", players.LoginApi.as_view(), name="auth-login"),
    path("auth/logout", players.LogoutApi.as_view(), name="auth-logout"),
    path("auth/csrf", players.CsrfApi.as_view(), name="auth-csrf"),
    path("me", players.MeApi.as_view(), name="me"),
    path("categories", pages.CategoryListApi.as_view(), name="categories"),
    path("pages", pages.PageListApi.as_view(), name="pages"),
    path("pages/<int:page_id>", pages.PageDetailApi.as_view(), name="page-detail"),
]
