from django.urls import path

from foolgame.dataset import views

app_name = "dataset"

urlpatterns = [
    path("", views.exports, name="exports"),
]
