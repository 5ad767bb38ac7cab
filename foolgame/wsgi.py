"""WSGI entry point, for tools that want one; the game itself is served over ASGI."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foolgame.settings")
application = get_wsgi_application()
