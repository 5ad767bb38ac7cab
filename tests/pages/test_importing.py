"""import_pages (KILT JSONL and .txt folders) and load_categories."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from foolgame.pages.models import Page, PageListing, Sentence
from tests.factories import ClaimFactory

pytestmark = pytest.mark.django_db

KILT_ROW = {
    "wikipedia_id": "1",
    "wikipedia_title": "Ada Lovelace",
    "text": [
        "Ada Lovelace\n",
        "Augusta Ada King, Countess of Lovelace was an English mathematician. She worked on the Analytical Engine.\n",
        "Section::::Early life.\n",
        "Ada was born in London. Her father was Lord Byron.\n",
        "Section::::Work:Notes.\n",
        "BULLET::::- She wrote the first published algorithm.\n",
    ],
}


def import_pages(path: Path, **options: object) -> str:
    out = StringIO()
    call_command("import_pages", str(path), no_progress=True, stdout=out, stderr=StringIO(), **options)
    return out.getvalue().strip()


def page_rows(title: str) -> list[tuple[int, str, str]]:
    return list(Page.objects.get(title=title).sentences.filter(retired=False).order_by("position").values_list("id", "section_header", "text"))


def test_kilt_sections_become_headers_and_paragraphs_become_sentences(tmp_path: Path) -> None:
    path = tmp_path / "kilt.jsonl"
    path.write_text(json.dumps(KILT_ROW) + "\n")
    assert import_pages(path, category="Science") == "pages=1 sentences=5"
    page = Page.objects.get(title="Ada Lovelace")
    assert (page.source, page.category.name) == ("kilt", "Science")
    assert [(h, t) for _, h, t in page_rows("Ada Lovelace")] == [
        ("", "Augusta Ada King, Countess of Lovelace was an English mathematician."),
        ("", "She worked on the Analytical Engine."),
        ("Early life", "Ada was born in London."),
        ("Early life", "Her father was Lord Byron."),
        ("Work | Notes", "She wrote the first published algorithm."),
    ]


def test_kilt_reimport_changes_nothing_and_keeps_ids(tmp_path: Path) -> None:
    path = tmp_path / "kilt.jsonl"
    path.write_text(json.dumps(KILT_ROW) + "\n")
    import_pages(path)
    before = page_rows("Ada Lovelace")
    import_pages(path)
    assert page_rows("Ada Lovelace") == before


def test_changed_article_keeps_unchanged_sentence_ids_and_retires_cited_ones(tmp_path: Path) -> None:
    path = tmp_path / "kilt.jsonl"
    path.write_text(json.dumps(KILT_ROW) + "\n")
    import_pages(path)
    page = Page.objects.get(title="Ada Lovelace")
    cited = page.sentences.get(text="Her father was Lord Byron.")
    uncited = page.sentences.get(text="She worked on the Analytical Engine.")
    kept = page.sentences.get(text="Ada was born in London.")
    ClaimFactory(page=page, gold=[cited])
    changed = dict(KILT_ROW, text=[
        "Ada Lovelace\n",
        "Augusta Ada King, Countess of Lovelace was an English mathematician.\n",
        "Section::::Early life.\n",
        "Ada was born in London. She was tutored privately.\n",
    ])
    path.write_text(json.dumps(changed) + "\n")
    import_pages(path)
    assert [t for _, _, t in page_rows("Ada Lovelace")] == [
        "Augusta Ada King, Countess of Lovelace was an English mathematician.",
        "Ada was born in London.",
        "She was tutored privately.",
    ]
    assert page.sentences.get(text="Ada was born in London.").pk == kept.pk
    assert Sentence.objects.get(pk=cited.pk).retired, "gold evidence must never be deleted"
    assert not Sentence.objects.filter(pk=uncited.pk).exists()


@pytest.mark.parametrize(
    "line, message",
    [("{oops", "not valid JSON"), ('{"text": ["a"]}', "missing 'wikipedia_title'"), ('{"wikipedia_title": "T", "text": "a"}', "'text' must be a list")],
)
def test_bad_kilt_line_names_file_and_line_and_changes_nothing(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "kilt.jsonl"
    path.write_text(json.dumps(KILT_ROW) + "\n" + line + "\n")
    with pytest.raises(CommandError, match=rf"kilt\.jsonl:2: .*{message}"):
        import_pages(path)
    assert Page.objects.count() == 0 and Sentence.objects.count() == 0


def test_text_folder_imports_one_page_per_file_with_sections(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(
        "The Moon\n\nThe Moon is Earth's only natural satellite. It is bright.\n\n"
        "## Formation\nIt formed 4.5 billion years ago.\n\n### Theories\nA giant impact is favoured.\n"
    )
    (tmp_path / "b.txt").write_text("Mars\nMars is the fourth planet.\n")
    assert import_pages(tmp_path) == "pages=2 sentences=5"
    assert [(h, t) for _, h, t in page_rows("The Moon")] == [
        ("", "The Moon is Earth's only natural satellite."),
        ("", "It is bright."),
        ("Formation", "It formed 4.5 billion years ago."),
        ("Formation | Theories", "A giant impact is favoured."),
    ]
    assert import_pages(tmp_path) == "pages=2 sentences=5"


def test_empty_text_article_is_refused(tmp_path: Path) -> None:
    (tmp_path / "good.txt").write_text("Mars\nMars is red.\n")
    (tmp_path / "empty.txt").write_text("\n\n")
    with pytest.raises(CommandError, match=r"empty\.txt:1: empty article"):
        import_pages(tmp_path)


def test_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no such file"):
        import_pages(tmp_path / "nope.jsonl")


def test_category_lists_mark_priority_and_fill_categories(tmp_path: Path) -> None:
    (tmp_path / "categories-Popular-Culture.txt").write_text("*Star_Wars\nThe Office (US)\n")
    (tmp_path / "categories-Science.txt").write_text("Saturn\nStar Wars\n")
    (tmp_path / "kilt.jsonl").write_text(json.dumps({"wikipedia_title": "Star Wars", "text": ["Star Wars", "A film."]}) + "\n")
    import_pages(tmp_path / "kilt.jsonl")
    out = StringIO()
    call_command("load_categories", str(tmp_path), no_progress=True, stdout=out)
    assert out.getvalue().strip() == "listings=3 changed=4"
    page = Page.objects.get(title="Star Wars")
    assert page.priority and page.category.name == "Popular Culture"
    assert PageListing.objects.get(title="Saturn").category.name == "Science"
    out = StringIO()
    call_command("load_categories", str(tmp_path), no_progress=True, stdout=out)
    assert out.getvalue().strip() == "listings=3 changed=0"


def test_load_categories_needs_lists(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no categories"):
        call_command("load_categories", str(tmp_path), no_progress=True)
