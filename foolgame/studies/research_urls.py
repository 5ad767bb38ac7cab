from django.urls import path

from foolgame.studies import research_views

app_name = "studies_research"

urlpatterns = [
    path("", research_views.study_list, name="list"),
    # No trailing slash, so that a study whose slug is "new" keeps its page at new/.
    path("new", research_views.study_new, name="new"),
    path("<slug:slug>/", research_views.study_detail, name="detail"),
]
