"""The corpus the game is played on: categories, pages and their ordered sentences."""

from __future__ import annotations

from django.db import models
from django.db.models.functions import Lower
from django.urls import reverse


class Category(models.Model):
    """One of the game's menus (History, Sports, ...)."""

    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "categories"

    def __str__(self) -> str:
        return self.name


class Page(models.Model):
    """A Wikipedia-like article: a title, a category and an ordered list of sentences."""

    class Source(models.TextChoices):
        FM2 = "fm2", "FM2 release"
        KILT = "kilt", "KILT knowledge source"
        TEXT = "text", "Plain-text article"

    title = models.CharField(max_length=300, unique=True)
    category = models.ForeignKey(Category, null=True, blank=True, on_delete=models.SET_NULL, related_name="pages")
    source = models.CharField(max_length=10, choices=Source.choices)
    priority = models.BooleanField(default=False, help_text="Listed with a * in the category lists: offered to authors first.")
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["title"]
        indexes = [models.Index(Lower("title"), name="page_title_lower")]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("pages:page", args=[self.pk])


class Sentence(models.Model):
    """A sentence of a page, in article order, with the section it stands under.

    Sentences keep their id across re-imports of their page while their text is unchanged,
    so gold evidence, clue lists and stored embeddings stay attached. A sentence that a
    re-import no longer contains but a claim still cites is kept as ``retired``.
    """

    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="sentences")
    position = models.PositiveIntegerField()
    section_header = models.CharField(max_length=500, blank=True)
    text = models.TextField()
    retired = models.BooleanField(default=False)

    class Meta:
        ordering = ["page", "position"]
        indexes = [models.Index(fields=["page", "position"])]

    def __str__(self) -> str:
        return self.text[:80]


class PageListing(models.Model):
    """A title from the original game's category lists (``categories-*.txt``).

    Kept apart from Page because most listed titles have no article imported yet; when one
    is imported it takes its category (if it has none) and its priority from here.
    """

    title = models.CharField(max_length=300, unique=True)
    category = models.ForeignKey(Category, on_delete=models.CASCADE, related_name="listings")
    priority = models.BooleanField(default=False)

    class Meta:
        ordering = ["category__name", "title"]

    def __str__(self) -> str:
        return f"{'*' if self.priority else ''}{self.title} ({self.category})"
