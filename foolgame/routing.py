"""WebSocket routes; each app that plays over a socket adds its patterns here."""

from django.urls import URLPattern, path

from foolgame.voting.consumers import RoundConsumer

websocket_urlpatterns: list[URLPattern] = [
    path("ws/rounds/<int:round_id>/", RoundConsumer.as_asgi()),
]
