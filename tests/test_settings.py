"""The embedded default needs no server; production refuses to start without a secret and passes check --deploy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings

REPO = Path(__file__).resolve().parents[1]


def run_manage(*args: str, env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess:
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "FM2_DATA_DIR": str(tmp_path)}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env={**base, **env}, capture_output=True, text=True, timeout=300)


def test_embedded_default_uses_sqlite_in_memory_layer_and_eager_tasks(tmp_path: Path) -> None:
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='foolgame.settings'; django.setup();"
        "from django.conf import settings as s;"
        "print(s.DATABASES['default']['ENGINE'], s.CHANNEL_LAYERS['default']['BACKEND'], s.CELERY_TASK_ALWAYS_EAGER)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120,
                            env={"PATH": os.environ.get("PATH", ""), "FM2_DATA_DIR": str(tmp_path)})
    assert result.stdout.split() == ["django.db.backends.sqlite3", "channels.layers.InMemoryChannelLayer", "True"], result.stderr


def test_production_without_secret_key_refuses_to_start(tmp_path: Path) -> None:
    result = run_manage("check", env={"DJANGO_ENV": "production", "ALLOWED_HOSTS": "fm2.example.org"}, tmp_path=tmp_path)
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def test_production_passes_check_deploy_with_no_warnings(tmp_path: Path) -> None:
    env = {
        "DJANGO_ENV": "production",
        "SECRET_KEY": "k3Y-" + "x7Qz!9pL#2mV$8nB&4cR*6tW^1yH(5uJ)0iK" * 2,
        "ALLOWED_HOSTS": "fm2.example.org",
    }
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", env=env, tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_channel_layer_read_timeout_outlasts_the_blocking_receive() -> None:
    """channels_redis#422: the socket timeout must be longer than BZPOPMIN's 5 s block."""
    from channels_redis.core import RedisChannelLayer

    assert settings.CHANNEL_REDIS_SOCKET_TIMEOUT > RedisChannelLayer.brpop_timeout


def _production_settings() -> list[str]:
    """The names the ``if PRODUCTION:`` hardening block of settings.py assigns."""
    import ast

    tree = ast.parse((REPO / "foolgame" / "settings.py").read_text(encoding="utf-8"))
    blocks = [node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "PRODUCTION"]
    names = [n.targets[0].id for block in blocks for n in block.body if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)]
    return [name for name in names if name != "SECRET_KEY"]  # a secret: required, never defaulted


def test_every_production_security_setting_is_a_documented_variable() -> None:
    source = (REPO / "foolgame" / "settings.py").read_text(encoding="utf-8")
    readme = (REPO / "docs" / "operations.md").read_text(encoding="utf-8")  # the Configuration table
    names = _production_settings()
    assert {"SECURE_PROXY_SSL_HEADER", "SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE", "SECURE_HSTS_SECONDS"} <= set(names)
    not_variables = [n for n in names if f'env.str("{n}"' not in source and f'env.bool("{n}"' not in source
                     and f'env.int("{n}"' not in source and f'env.list("{n}"' not in source]
    assert not_variables == []
    table_rows = [line.split(" | ")[0] for line in readme.splitlines() if line.startswith("| `")]  # each row's variables
    undocumented = [n for n in names if not any(f"`{n}`" in row for row in table_rows)]
    assert undocumented == []


def test_production_settings_follow_their_variables(tmp_path: Path) -> None:
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='foolgame.settings'; django.setup();"
        "from django.conf import settings as s;"
        "print(s.SECURE_PROXY_SSL_HEADER, s.SECURE_HSTS_PRELOAD, s.X_FRAME_OPTIONS, s.SESSION_COOKIE_SECURE)"
    )
    env = {"PATH": os.environ.get("PATH", ""), "FM2_DATA_DIR": str(tmp_path), "DJANGO_ENV": "production", "SECRET_KEY": "x" * 60}

    def run(extra: dict[str, str]) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, env={**env, **extra})

    # No forwarded scheme is believed by Django itself: uvicorn sets it, from named proxies only.
    assert run({}).stdout.split() == ["None", "True", "DENY", "True"]
    changed = run({"SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO,https", "SECURE_HSTS_PRELOAD": "false", "X_FRAME_OPTIONS": "SAMEORIGIN"})
    assert changed.stdout.split() == ["('HTTP_X_FORWARDED_PROTO',", "'https')", "False", "SAMEORIGIN", "True"], changed.stderr
