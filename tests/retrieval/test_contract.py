"""One contract, every retriever (like Django's SessionTestsMixin over each session backend).

Whatever the retriever, an author or a voter must get sensible, repeatable results: a
sentence that shares the query's words beats one that does not, degenerate input returns
an empty list rather than an exception, and equal scores come out in document order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from retrieval.base import Doc, Hit, Retriever
from retrieval.corpus import CorpusDenseRetriever, CorpusLexicalRetriever
from retrieval.dense import DenseRetriever, passage_text
from retrieval.hybrid import HybridRetriever
from retrieval.lexical import LexicalRetriever

Factory = Callable[[Sequence[Doc]], Retriever]

PAGE = "Iceland"
DOCS = [
    Doc(1, "The Althing replaced the King with a regent after the German occupation of Denmark.", "History", PAGE),
    Doc(2, "Reykjavík is the capital and largest city, home to two thirds of the population.", "Geography", PAGE),
    Doc(3, "British armed forces conducted Operation Fork, the invasion and occupation of the country.", "History", PAGE),
    Doc(4, "Glaciers and volcanoes cover much of the island's interior highlands.", "Geography", PAGE),
    Doc(5, "Icelandic cuisine traditionally relies on fish, lamb and dairy products.", "Culture", PAGE),
]


@pytest.fixture(params=["lexical", "dense", "hybrid", "corpus-lexical", "corpus-dense"])
def make_retriever(request: pytest.FixtureRequest, torch_encoder) -> Factory:
    kind = request.param

    def embeddings(docs: Sequence[Doc]):
        return torch_encoder.encode([passage_text(doc) for doc in docs])

    def build(docs: Sequence[Doc]) -> Retriever:
        ids = [doc.id for doc in docs]
        if kind == "lexical":
            return LexicalRetriever(docs)
        if kind == "dense":
            return DenseRetriever(ids, embeddings(docs), torch_encoder)
        if kind == "hybrid":
            return HybridRetriever(LexicalRetriever(docs), DenseRetriever(ids, embeddings(docs), torch_encoder))
        if kind == "corpus-lexical":
            return CorpusLexicalRetriever(docs)
        return CorpusDenseRetriever(ids, embeddings(docs), torch_encoder)

    return build


def test_sentence_with_the_query_words_ranks_first(make_retriever: Factory) -> None:
    retriever = make_retriever(DOCS)
    hits = retriever.search("Operation Fork was a British invasion", k=3)
    assert hits[0].doc_id == 3


def test_sentence_sharing_words_outranks_one_sharing_none(make_retriever: Factory) -> None:
    docs = [
        Doc("a", "The orchestra performed the symphony in Vienna.", "", "Music"),
        Doc("b", "Volcanic eruptions reshaped the coastline in 1963.", "", "Music"),
    ]
    hits = make_retriever(docs).search("volcanic eruptions and the coastline", k=2)
    assert [hit.doc_id for hit in hits][0] == "b"


def test_hits_are_sorted_best_first_and_limited_to_k(make_retriever: Factory) -> None:
    hits = make_retriever(DOCS).search("occupation of Iceland by Denmark and Britain", k=2)
    assert 1 <= len(hits) <= 2
    assert all(isinstance(hit, Hit) for hit in hits)
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_blank_query_returns_nothing(make_retriever: Factory, query: str) -> None:
    assert make_retriever(DOCS).search(query, k=5) == []


def test_page_without_sentences_returns_nothing(make_retriever: Factory) -> None:
    assert make_retriever([]).search("anything at all", k=5) == []


def test_zero_k_returns_nothing(make_retriever: Factory) -> None:
    assert make_retriever(DOCS).search("Operation Fork", k=0) == []


def test_non_ascii_text_and_queries_work(make_retriever: Factory) -> None:
    docs = [
        Doc(1, "Pelé scored 1,279 goals in 1,363 games for Santos and Brazil.", "Career", "Pelé"),
        Doc(2, "Björk Guðmundsdóttir released Homogenic in 1997.", "Music", "Pelé"),
        Doc(3, "東京は日本の首都です。", "Other", "Pelé"),
    ]
    retriever = make_retriever(docs)
    assert retriever.search("Björk Guðmundsdóttir Homogenic", k=1)[0].doc_id == 2
    # Only the shape is promised for a query in another script: no crash, valid ids.
    assert {hit.doc_id for hit in retriever.search("東京 首都", k=3)} <= {1, 2, 3}
    assert retriever.search("😀 🎉", k=3) is not None


def test_equal_scores_keep_document_order(make_retriever: Factory) -> None:
    # Identical sentences get identical scores from every retriever; order must not flip.
    docs = [Doc(id_, "The river floods the valley every spring.", "", "River") for id_ in (30, 10, 20)]
    retriever = make_retriever(docs)
    first = [hit.doc_id for hit in retriever.search("river floods valley", k=3)]
    assert first == [30, 10, 20]
    assert [hit.doc_id for hit in retriever.search("river floods valley", k=3)] == first


def test_duplicate_ids_are_refused(make_retriever: Factory) -> None:
    with pytest.raises(ValueError):
        make_retriever([Doc(1, "one", "", "P"), Doc(1, "two", "", "P")])
