from django.urls import path

from foolgame.rooms import views

app_name = "rooms"

urlpatterns = [
    path("", views.lobby, name="lobby"),
    path("<str:code>/", views.room, name="room"),
    path("<str:code>/projector/", views.projector, name="projector"),
]
