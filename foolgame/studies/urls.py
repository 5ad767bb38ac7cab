from django.urls import path

from foolgame.studies import views

app_name = "studies"

urlpatterns = [
    path("<slug:slug>/", views.study_page, name="study"),
]
