"""The REST floor's settings (bench/rest_floor.py): the project's, every one of them (the
database and its pool, the cache, the session engine and its cookie), with the floor's URLconf
and no middleware but the session's.

``foolgame/settings.py`` is run from its file rather than imported: importing it imports the
``foolgame`` package, whose Celery app reads the settings, which are this module, not yet
loaded (the game's own settings module has no such loop: Django imports it after the package)."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("fm2_rest_floor_game_settings", Path(__file__).resolve().parents[1] / "foolgame" / "settings.py")
_game = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_game)
globals().update({name: value for name, value in vars(_game).items() if name.isupper()})

ROOT_URLCONF = "bench.rest_floor"
MIDDLEWARE = ["django.contrib.sessions.middleware.SessionMiddleware"]
