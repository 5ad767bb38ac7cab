"""Browser pages for accounts: sign up, log in, log out, and the player's own standing."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import login, update_session_auth_hash
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView, LogoutView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme

from foolgame.core.errors import ServiceError
from foolgame.claims.models import Claim
from foolgame.players.forms import SignupForm, ThrottledAuthenticationForm
from foolgame.players.roles import is_guest
from foolgame.players.services import guest_claim
from foolgame.players.models import LedgerEntry
from foolgame.players.selectors import player_points, points_shown


def signup(request: HttpRequest) -> HttpResponse:
    form = SignupForm(request.POST or None, ip=request.META.get("REMOTE_ADDR"))
    if request.method == "POST" and form.is_valid() and form.user is not None:
        login(request, form.user, backend="django.contrib.auth.backends.ModelBackend")
        next_url = request.POST.get("next") or ""
        if url_has_allowed_host_and_scheme(next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
            return redirect(next_url)
        return redirect("players:me")
    return render(request, "players/signup.html", {"form": form, "next": request.GET.get("next", "")})


@login_required
def me(request: HttpRequest) -> HttpResponse:
    """The player's standing: points by kind, rounds, rating, recent ledger entries. A player
    whose game hides points (a study's arm) has no such page: they go to the home page."""
    if not points_shown(player_id=request.user.pk):
        return redirect("/")
    entries = LedgerEntry.objects.filter(player=request.user).select_related("claim")[:50]
    context = {
        "points": player_points(player=request.user),
        "entries": entries,
        # With the rounds played (the page's history), what a newcomer is offered to do next.
        "has_written": Claim.objects.filter(author=request.user).exists(),
        "max_step": round(settings.FM2_RATINGS["PLAYER_MAX_STEP"]),
    }
    return render(request, "players/me.html", context)


class PlayerLoginView(LoginView):
    template_name = "players/login.html"
    form_class = ThrottledAuthenticationForm
    redirect_authenticated_user = True


class PlayerLogoutView(LogoutView):
    pass


@login_required
def claim(request: HttpRequest) -> HttpResponse:
    """A guest keeps their account by setting a password (``guest_claim``)."""
    context = {"is_guest": is_guest(request.user), "error": "", "done": False}
    if request.method == "POST" and context["is_guest"]:
        try:
            user = guest_claim(user=request.user, password=str(request.POST.get("password", "")))
        except ServiceError as error:
            context["error"] = error.message
            return render(request, "players/claim.html", context, status=error.status_code)
        update_session_auth_hash(request, user)
        context.update(done=True, is_guest=False)
    return render(request, "players/claim.html", context)
