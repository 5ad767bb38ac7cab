from django.urls import path

from foolgame.voting import views

app_name = "voting"

urlpatterns = [
    path("play/", views.play, name="play"),
    path("leaderboard/", views.leaderboard_page, name="leaderboard"),
    path("accounts/notifications/", views.notifications, name="notifications"),
]
