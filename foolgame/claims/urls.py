from django.urls import path

from foolgame.claims import views

app_name = "pages"

urlpatterns = [
    path("", views.home, name="home"),
    path("categories/<slug:slug>/", views.category, name="category"),
    path("uncategorised/", views.uncategorised, name="uncategorised"),
    path("pages/<int:page_id>/", views.page, name="page"),
]
