from django.urls import path

from foolgame.moderation import views

app_name = "moderation"

urlpatterns = [
    path("", views.queue, name="queue"),
    path("audit/", views.audit_log, name="audit"),
    path("players/", views.players, name="players"),
]
