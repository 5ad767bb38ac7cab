from django.contrib import admin

from foolgame.evidence.models import SentenceEmbedding


@admin.register(SentenceEmbedding)
class SentenceEmbeddingAdmin(admin.ModelAdmin):
    list_display = ["id", "model_name", "text_key", "dim", "created"]
    list_filter = ["model_name"]
    search_fields = ["text_key"]
    readonly_fields = ["model_name", "text_key", "dim", "created"]
    exclude = ["vector"]
