"""Every account's name keeps its TR39 skeleton, whatever path names it (signup, the admin,
``createsuperuser``, a shell): receivers of ``auth.User``'s saves, connected in ``PlayersConfig.ready``."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

from foolgame.players.models import PlayerName
from foolgame.players.services import CONFUSABLE, player_name_record, username_confusable_in_use
from foolgame.players.tr39 import skeleton_digest, username_skeleton


def _names_it(update_fields: Any) -> bool:
    return update_fields is None or "username" in update_fields  # not a save of last_login alone


def refuse_confusable_name(sender: Any, instance: Any, raw: bool = False, update_fields: Any = None, **kwargs: Any) -> None:
    """Before the account row is written: a name that looks like another account's is refused,
    so a path outside a transaction (``createsuperuser``) leaves no account without a
    skeleton. An account whose name keeps its skeleton (a grandfathered twin edited in the
    admin) passes."""
    if raw or not _names_it(update_fields):
        return
    name = instance.get_username()
    if not username_confusable_in_use(name, exclude_user_id=instance.pk):
        return
    if instance.pk and PlayerName.objects.filter(user_id=instance.pk, digest=skeleton_digest(username_skeleton(name))).exists():
        return
    raise ValidationError(CONFUSABLE[1], code=CONFUSABLE[0])


def record_name_skeleton(sender: Any, instance: Any, raw: bool = False, update_fields: Any = None, **kwargs: Any) -> None:
    if _names_it(update_fields):
        player_name_record(user=instance)
