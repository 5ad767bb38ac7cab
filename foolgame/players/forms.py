from __future__ import annotations

from django import forms
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.models import AbstractBaseUser

from foolgame.core.errors import ServiceError
from foolgame.players.services import player_authenticate, player_create


class SignupForm(forms.Form):
    username = forms.CharField(max_length=150, widget=forms.TextInput(attrs={"autocomplete": "username", "autofocus": True}))
    password = forms.CharField(widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}), help_text="At least 8 characters, not all digits, not a common password.")

    user: AbstractBaseUser | None = None

    def __init__(self, *args, ip: str | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.ip = ip

    def clean(self) -> dict:
        data = super().clean()
        if self.errors:
            return data
        try:
            self.user = player_create(username=data["username"], password=data["password"], ip=self.ip)
        except ServiceError as error:
            field = "password" if error.code == "weak_password" else "username"
            self.add_error(field, error.message)
        return data


class ThrottledAuthenticationForm(AuthenticationForm):
    """Django's login form, through the same throttled service as the API."""

    def clean(self) -> dict:
        username, password = self.cleaned_data.get("username"), self.cleaned_data.get("password")
        if username is not None and password:
            try:
                self.user_cache = player_authenticate(
                    request=self.request, username=username, password=password, ip=self.request.META.get("REMOTE_ADDR") if self.request else None
                )
            except ServiceError as error:
                if error.code == "invalid_credentials":
                    raise self.get_invalid_login_error() from None
                raise forms.ValidationError(error.message, code=error.code) from None
            self.confirm_login_allowed(self.user_cache)
        return self.cleaned_data
