from django.urls import path

from foolgame.checks import views

app_name = "checks"

urlpatterns = [
    path("", views.checks_page, name="check"),
]
