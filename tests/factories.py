"""factory-boy factories for the models tests build on."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model
from django.utils.text import slugify

from foolgame.claims.models import Claim, ClaimGold
from foolgame.pages.models import Category, Page, Sentence

PASSWORD = "correct horse battery"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"player{n}")
    password = factory.django.Password(PASSWORD)


class CategoryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Category
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"Category {n}")
    slug = factory.LazyAttribute(lambda c: slugify(c.name))


class PageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Page

    title = factory.Sequence(lambda n: f"Page {n}")
    category = factory.SubFactory(CategoryFactory)
    source = Page.Source.TEXT


class SentenceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Sentence

    page = factory.SubFactory(PageFactory)
    position = factory.Sequence(int)
    section_header = ""
    text = factory.Sequence(lambda n: f"Sentence number {n} of the article.")


class ClaimFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Claim
        skip_postgeneration_save = True

    page = factory.SubFactory(PageFactory)
    text = factory.Sequence(lambda n: f"Claim number {n} says something checkable.")
    label = Claim.Label.SUPPORTS
    author = factory.SubFactory(UserFactory)

    @factory.post_generation
    def gold(self, create: bool, extracted: list[Sentence] | None, **kwargs: object) -> None:
        sentences = extracted or [SentenceFactory(page=self.page)]
        for position, sentence in enumerate(sentences):
            ClaimGold.objects.create(claim=self, sentence=sentence, position=position)
