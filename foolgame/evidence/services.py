"""Evidence retrieval for the game, over the plain-Python ``retrieval`` package.

- ``page_hints`` / ``page_top_lexical_hit``: the lexical retriever an author plays against
  while drafting (BM25, page title as context). Called on every pause in typing, so each
  process keeps the built BM25 index of recently used pages, keyed by page and a version
  of its sentences (``selectors.page_index_version``): a hint costs one aggregate query
  and a BM25 search, never a rebuild, until an import changes the page.
- ``claim_clue_list``: the hybrid retriever (BM25 + MiniLM) over the claim's page, for the
  clue list stored on a new claim.
- ``pages_index_build``: encode the sentences whose vectors are not stored yet, once per
  model and text (``SentenceEmbedding``); run by the ``build_page_index`` task after an
  import and by ``manage.py build_indexes``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from django.conf import settings

from foolgame.core import events
from foolgame.core.errors import ServiceError
from foolgame.evidence import selectors
from foolgame.evidence.models import SentenceEmbedding
from foolgame.pages.models import Page, Sentence
from retrieval import (
    Doc,
    DocId,
    Encoder,
    HybridRetriever,
    LexicalRetriever,
    clue_ids_for_claim,
    hints_for_draft,
    passage_text,
    text_key,
)

MAX_QUERY_CHARS = 2000
HINT_COUNT = 10
CLUE_COUNT = 10
# Pages whose BM25 index a process keeps; a 300-sentence page costs well under 1 MB.
LEXICAL_CACHE_PAGES = 256
ENCODE_CHUNK = 256

VECTOR_DTYPE = np.dtype("<f4")


# --- Stored embeddings ----------------------------------------------------------------


class DatabaseEmbeddingStore:
    """``retrieval.EmbeddingStore`` over the ``SentenceEmbedding`` table."""

    def get_many(self, model_name: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        return {
            key: np.frombuffer(bytes(blob), dtype=VECTOR_DTYPE).astype(np.float32)
            for key, blob in selectors.embedding_rows(model_name=model_name, keys=list(keys))
        }

    def put_many(self, model_name: str, vectors: Mapping[str, np.ndarray]) -> None:
        rows = []
        for key, vector in vectors.items():
            array = np.asarray(vector, dtype=VECTOR_DTYPE)
            rows.append(SentenceEmbedding(model_name=model_name, text_key=key, dim=array.size, vector=array.tobytes()))
        # Two workers encoding the same page at once both write; the last one wins, and
        # both wrote the same model's vector for the same text.
        SentenceEmbedding.objects.bulk_create(
            rows,
            batch_size=500,
            update_conflicts=True,
            unique_fields=["model_name", "text_key"],
            update_fields=["dim", "vector"],
        )


@lru_cache(maxsize=4)
def _encoder(model_path: str | None, backend: str, onnx_cache_dir: str) -> Encoder:
    return Encoder(model_path, backend=backend, onnx_cache_dir=onnx_cache_dir)  # type: ignore[arg-type]


def encoder_get() -> Encoder:
    """The encoder the settings name (``FM2_RETRIEVAL``), one per process.

    Building it reads two small config files; the model itself loads on the first
    ``encode`` (about 3 s, or 15 s on a machine that has never exported it to ONNX).
    """
    config = settings.FM2_RETRIEVAL
    model_path = config.get("MODEL_PATH")
    return _encoder(
        str(model_path) if model_path else None,
        config.get("ENCODER_BACKEND", "onnx"),
        str(Path(config["ONNX_CACHE_DIR"])),
    )


# --- Sentences as retrieval documents ---------------------------------------------------


def sentence_doc(sentence: Sentence, *, page_title: str) -> Doc:
    return Doc(id=sentence.pk, text=sentence.text, section_header=sentence.section_header, page_title=page_title)


def _page_docs(page: Page) -> list[Doc]:
    return [sentence_doc(s, page_title=page.title) for s in selectors.page_indexed_sentences(page=page)]


def _check_query(query: str) -> None:
    if len(query) > MAX_QUERY_CHARS:
        raise ServiceError("invalid_query", f"A draft is at most {MAX_QUERY_CHARS} characters, not {len(query)}.")


# --- Hints for authors (lexical) -----------------------------------------------------------


@dataclass(frozen=True)
class _LexicalIndex:
    version: tuple
    retriever: LexicalRetriever
    docs_by_id: dict[DocId, Doc]


_lexical_indexes: OrderedDict[int, _LexicalIndex] = OrderedDict()
_lexical_lock = threading.Lock()


def _page_lexical_index(page: Page) -> _LexicalIndex:
    """The page's BM25 index, rebuilt only when its sentences changed (least recently used evicted)."""
    version = selectors.page_index_version(page=page)
    with _lexical_lock:
        index = _lexical_indexes.get(page.pk)
        if index is not None and index.version == version:
            _lexical_indexes.move_to_end(page.pk)
            return index
    docs = _page_docs(page)
    index = _LexicalIndex(version, LexicalRetriever(docs), {doc.id: doc for doc in docs})
    with _lexical_lock:
        _lexical_indexes[page.pk] = index
        _lexical_indexes.move_to_end(page.pk)
        while len(_lexical_indexes) > LEXICAL_CACHE_PAGES:
            _lexical_indexes.popitem(last=False)
    return index


def lexical_cache_clear() -> None:
    """Forget every cached page index (tests; nothing else needs it, versions keep it fresh)."""
    with _lexical_lock:
        _lexical_indexes.clear()


def page_hints(*, page: Page, query: str, k: int = HINT_COUNT) -> list[dict]:
    """What the lexical retriever finds on ``page`` for an author's draft, best first.

    Each hint is ``{sentence_id, text, section_header, highlights}``, ``highlights`` being
    ``[start, end]`` character spans in ``text`` of the draft's words. A blank draft, or one
    of only stop words, has no hints. Raises ``ServiceError("invalid_query")`` over 2,000
    characters.
    """
    _check_query(query)
    if not query.strip():
        return []
    index = _page_lexical_index(page)
    return [
        {
            "sentence_id": hint.doc.id,
            "text": hint.doc.text,
            "section_header": hint.doc.section_header,
            "highlights": [[start, end] for start, end in hint.highlights],
        }
        for hint in hints_for_draft(query, index.retriever, index.docs_by_id, k=k)
    ]


def page_top_lexical_hit(*, page: Page, query: str) -> int | None:
    """The sentence the lexical retriever ranks first for ``query``, or None if nothing matches.

    For the ``gold_too_easy`` rule: a claim whose gold sentence is the author's own top
    hint copied the evidence's words.
    """
    _check_query(query)
    if not query.strip():
        return None
    hits = _page_lexical_index(page).retriever.search(query, 1)
    return int(hits[0].doc_id) if hits else None


# --- Clue lists for new claims (hybrid) ---------------------------------------------------------


def claim_clue_list(*, page: Page, claim_text: str, gold_ids: list[int], k: int = CLUE_COUNT) -> list[dict]:
    """A new claim's clues in reveal order: the hybrid retriever's top ``k`` non-gold
    sentences of ``page``, then the gold sentences (in the given order) last.

    The index covers the whole page, gold included (the gold is left out at query time, so
    every claim of a page shares one index). Vectors come from ``SentenceEmbedding``;
    sentences not encoded yet (a page imported while no worker ran) are encoded here and
    stored. Each clue is ``{sentence_id, text, section_header}``, the shape of
    ``Claim.clues``. Raises ``ServiceError("invalid_gold")`` for a gold id not on the page.
    """
    sentences = list(selectors.page_indexed_sentences(page=page))
    indexed = {s.pk for s in sentences}
    missing = [pk for pk in dict.fromkeys(gold_ids) if pk not in indexed]
    if missing:
        # A retired sentence may still be gold (moderators editing evidence): index it too.
        extra = {s.pk: s for s in Sentence.objects.filter(page=page, pk__in=missing)}
        if len(extra) != len(missing):
            raise ServiceError("invalid_gold", "Every gold sentence must be a sentence of the claim's page.")
        sentences.extend(extra[pk] for pk in missing)
    docs = [sentence_doc(s, page_title=page.title) for s in sentences]
    retriever = HybridRetriever.from_docs(docs, encoder_get(), DatabaseEmbeddingStore())
    by_id = {s.pk: s for s in sentences}
    return [
        {"sentence_id": by_id[pk].pk, "text": by_id[pk].text, "section_header": by_id[pk].section_header}
        for pk in clue_ids_for_claim(claim_text, retriever, gold_ids, k=k)
    ]


# --- Building stored indexes ------------------------------------------------------------------


@dataclass(frozen=True)
class IndexBuildResult:
    """Sentences whose vector had to be encoded now, and those found already stored."""

    encoded: int = 0
    reused: int = 0


def pages_index_build(
    *,
    pages: Iterable[Page] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> IndexBuildResult:
    """Store a vector for every indexed sentence of ``pages`` (all pages when None).

    Only texts with no stored vector for the current model are encoded, so a second run,
    or a second delivery of the task, encodes nothing and does not even load the model.
    Vectors are written every ``ENCODE_CHUNK`` texts: an interrupted build keeps what it
    did. ``progress(done, total)`` is called as texts are encoded.
    """
    sentences = Sentence.objects.filter(retired=False)
    if pages is not None:
        sentences = sentences.filter(page__in=[p.pk for p in pages])
    encoder = encoder_get()
    texts: dict[str, str] = {}
    counts: dict[str, int] = {}
    for title, text in sentences.order_by("page_id", "position").values_list("page__title", "text").iterator():
        passage = passage_text(Doc(id=0, text=text, page_title=title))
        key = text_key(passage)
        texts.setdefault(key, passage)
        counts[key] = counts.get(key, 0) + 1
    stored = selectors.embedding_keys_stored(model_name=encoder.model_name, keys=texts)
    missing = [key for key in texts if key not in stored]
    reused = sum(counts[key] for key in stored)
    if progress is not None:
        progress(0, len(missing))
    store = DatabaseEmbeddingStore()
    for start in range(0, len(missing), ENCODE_CHUNK):
        chunk = missing[start : start + ENCODE_CHUNK]
        vectors = encoder.encode([texts[key] for key in chunk])
        store.put_many(encoder.model_name, dict(zip(chunk, vectors)))
        if progress is not None:
            progress(start + len(chunk), len(missing))
    return IndexBuildResult(encoded=sum(counts[key] for key in missing), reused=reused)


def page_index_build(*, page_id: int) -> IndexBuildResult:
    """One page's vectors (the ``build_page_index`` task); a page deleted since does nothing."""
    page = Page.objects.filter(pk=page_id).first()
    if page is None:
        return IndexBuildResult()
    return pages_index_build(pages=[page])


def page_indexes_build_on_commit(*, page_ids: Iterable[int]) -> None:
    """After the import's transaction commits, queue ``build_page_index`` for each page.

    Skipped when ``FM2_RETRIEVAL["BUILD_ON_IMPORT"]`` is off (the embedded default, whose
    eager tasks would encode inside the import command: ``make run`` runs ``build_indexes``
    instead); clue lists encode whatever is missing on demand either way.
    """
    if not settings.FM2_RETRIEVAL.get("BUILD_ON_IMPORT", True):
        return
    from foolgame.evidence.tasks import build_page_index

    for page_id in dict.fromkeys(page_ids):
        events.task_on_commit(build_page_index, page_id)
