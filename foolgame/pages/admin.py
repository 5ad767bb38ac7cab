from django.contrib import admin

from foolgame.pages.models import Category, Page, PageListing, Sentence


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin):
    list_display = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    search_fields = ["name"]


class SentenceInline(admin.TabularInline):
    model = Sentence
    fields = ["position", "section_header", "text", "retired"]
    extra = 0


@admin.register(Page)
class PageAdmin(admin.ModelAdmin):
    list_display = ["title", "category", "source", "priority", "updated"]
    list_filter = ["category", "source", "priority"]
    search_fields = ["title"]
    inlines = [SentenceInline]


@admin.register(PageListing)
class PageListingAdmin(admin.ModelAdmin):
    list_display = ["title", "category", "priority"]
    list_filter = ["category", "priority"]
    search_fields = ["title"]
