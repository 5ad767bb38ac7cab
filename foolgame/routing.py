"""WebSocket routes; each app that plays over a socket adds its patterns here."""

from django.urls import URLPattern, path, re_path

from foolgame.rooms.consumers import RoomConsumer
from foolgame.voting.consumers import RoundConsumer

websocket_urlpatterns: list[URLPattern] = [
    path("ws/rounds/<int:round_id>/", RoundConsumer.as_asgi()),
    re_path(r"^ws/rooms/(?P<code>[A-Za-z0-9]{4,12})/$", RoomConsumer.as_asgi()),
]
