from django.urls import path

from foolgame.authoring import views

app_name = "authoring"

urlpatterns = [
    path("", views.start, name="start"),
    path("<int:task_id>/", views.task, name="task"),
]
