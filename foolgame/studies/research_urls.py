from django.urls import path

from foolgame.studies import research_views

app_name = "studies_research"

urlpatterns = [
    path("", research_views.study_list, name="list"),
    path("<slug:slug>/", research_views.study_detail, name="detail"),
]
