from django import forms
from django.contrib import admin
from django.contrib.auth import admin as auth_admin
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm

from foolgame.players.models import LedgerEntry, Notification, PlayerName
from foolgame.players.services import CONFUSABLE, username_confusable_in_use
from foolgame.players.tr39 import skeleton_digest, username_skeleton


@admin.register(LedgerEntry)
class LedgerEntryAdmin(admin.ModelAdmin):
    """Ledger rows are the record of every award: readable here, never editable."""

    list_display = ["created", "player", "kind", "amount", "cause", "claim"]
    list_filter = ["kind"]
    search_fields = ["player__username", "cause"]
    raw_id_fields = ["player", "claim"]

    def has_add_permission(self, request):  # noqa: ANN001
        return False

    def has_change_permission(self, request, obj=None):  # noqa: ANN001
        return False

    def has_delete_permission(self, request, obj=None):  # noqa: ANN001
        return False


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    """Authors' news, for support questions ("why did I get this?"): read-only."""

    list_display = ["created", "player", "kind", "detail", "points", "claim", "read_at"]
    list_filter = ["kind", ("read_at", admin.EmptyFieldListFilter)]
    search_fields = ["player__username"]
    raw_id_fields = ["player", "claim", "actor"]

    def has_add_permission(self, request):  # noqa: ANN001
        return False

    def has_change_permission(self, request, obj=None):  # noqa: ANN001
        return False



# --- accounts: a name (new or renamed) that looks like another account's is refused --------


def clean_confusable_username(form: forms.ModelForm) -> str:
    username = form.cleaned_data["username"]
    user_id = form.instance.pk
    if user_id and PlayerName.objects.filter(user_id=user_id, digest=skeleton_digest(username_skeleton(username))).exists():
        return username  # same look as before (a grandfathered twin keeps its name)
    if username_confusable_in_use(username, exclude_user_id=user_id):
        raise forms.ValidationError(CONFUSABLE[1], code=CONFUSABLE[0])
    return username


class PlayerCreationForm(AdminUserCreationForm):
    def clean_username(self) -> str:
        super().clean_username()
        return clean_confusable_username(self)


class PlayerChangeForm(UserChangeForm):
    def clean_username(self) -> str:
        return clean_confusable_username(self)


class PlayerAdmin(auth_admin.UserAdmin):
    """Django's user admin, with names compared by their TR39 skeleton (foolgame.players.tr39)."""

    form = PlayerChangeForm
    add_form = PlayerCreationForm


admin.site.unregister(get_user_model())
admin.site.register(get_user_model(), PlayerAdmin)
