from django.urls import path

from foolgame.players import views

app_name = "players"

urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("login/", views.PlayerLoginView.as_view(), name="login"),
    path("logout/", views.PlayerLogoutView.as_view(), name="logout"),
    path("me/", views.me, name="me"),
    path("claim/", views.claim, name="claim"),
]
