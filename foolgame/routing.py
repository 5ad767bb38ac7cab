"""WebSocket routes; each app that plays over a socket adds its patterns here."""

from django.urls import URLPattern

websocket_urlpatterns: list[URLPattern] = []
