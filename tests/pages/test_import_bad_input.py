"""import_pages and load_categories refuse bad and absurd input with FILE:LINE and change nothing.

Every check runs before anything is written, so the services pass (PostgreSQL, which refuses
NUL and lone surrogates in text) and the embedded pass (SQLite, which stores them) agree.
"""

from __future__ import annotations

import json
import os
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from foolgame.claims.models import Claim
from foolgame.pages.models import Category, Page, PageListing, Sentence
from tests.pages.test_importing import KILT_ROW

pytestmark = pytest.mark.django_db

GOOD = json.dumps(KILT_ROW).encode()


def stored() -> tuple[int, ...]:
    return (
        Page.objects.count(), Sentence.objects.count(), Claim.objects.count(),
        PageListing.objects.count(), Category.objects.count(),
    )


def import_pages(path: Path, **options: object) -> str:
    out = StringIO()
    call_command("import_pages", str(path), no_progress=True, stdout=out, stderr=StringIO(), **options)
    return out.getvalue().strip()


def kilt(title: object = "T", text: object = ("A sentence.",)) -> bytes:
    return json.dumps({"wikipedia_title": title, "text": list(text) if isinstance(text, tuple) else text}).encode()


BAD_KILT_LINES = {
    "not UTF-8 bytes": (b'{"wikipedia_title": "T\xff", "text": []}', "not UTF-8 text"),
    "a JSON string, not an object": (b'"just a string"', "JSON object"),
    "JSON null": (b"null", "JSON object"),
    "title a number": (kilt(title=5), "must be a string"),
    "title null": (kilt(title=None), "must be a string"),
    "title empty": (kilt(title="  _ "), "is empty"),
    "title too long": (kilt(title="T" * 301), "limit of 300"),
    "text not a list": (kilt(text="A sentence."), "'text' must be a list"),
    "text a list of numbers": (kilt(text=[1, 2]), "'text' must be a list"),
    "text null": (kilt(text=None), "'text' must be a list"),
    "NUL in a paragraph": (b'{"wikipedia_title": "T", "text": ["A \\u0000 sentence."]}', "control character (U+0000)"),
    "NUL in the title": (b'{"wikipedia_title": "T\\u0000", "text": []}', "control character (U+0000)"),
    "lone surrogate": (b'{"wikipedia_title": "T", "text": ["A \\ud800 sentence."]}', "lone surrogate (U+D800)"),
    "control character": (b'{"wikipedia_title": "T", "text": ["A \\u0007 bell."]}', "control character (U+0007)"),
    "sentence too long": (kilt(text=["A" + "a" * 5000 + "."]), "limit of 5000"),
    "section header too long": (kilt(text=["Section::::" + "H" * 600 + ".", "A sentence."]), "limit of 500"),
    "number of 5000 digits": (b'{"wikipedia_title": "T", "text": [], "n": 1' + b"0" * 5000 + b"}", "not valid JSON"),
    "nesting a million deep": (b"[" * 1_000_000, "not valid JSON"),
}


@pytest.mark.parametrize("bad, message", BAD_KILT_LINES.values(), ids=BAD_KILT_LINES.keys())
def test_bad_kilt_line_is_refused_with_file_and_line_and_changes_nothing(tmp_path: Path, bad: bytes, message: str) -> None:
    path = tmp_path / "kilt.jsonl"
    path.write_bytes(GOOD + b"\n" + bad + b"\n")
    before = stored()
    with pytest.raises(CommandError) as error:
        import_pages(path)
    assert str(error.value).startswith(f"{path}:2: ")
    assert message in str(error.value)
    assert stored() == before


def test_kilt_line_over_the_byte_limit_is_refused_without_reading_it_whole(tmp_path: Path, settings) -> None:
    settings.FM2_IMPORT = {**settings.FM2_IMPORT, "LINE_MAX_BYTES": 10_000}
    path = tmp_path / "kilt.jsonl"
    path.write_bytes(GOOD + b"\n" + kilt(text=["A sentence. " * 100_000]) + b"\n")
    with pytest.raises(CommandError, match=rf"^{path}:2: line longer than 10000 bytes"):
        import_pages(path)
    assert stored() == (0, 0, 0, 0, 0)


def test_empty_kilt_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "kilt.jsonl"
    path.write_bytes(b"\n\n")
    with pytest.raises(CommandError, match=rf"^{path}:1: empty file"):
        import_pages(path)


def test_kilt_file_with_a_byte_order_mark_imports(tmp_path: Path) -> None:
    path = tmp_path / "kilt.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD + b"\n")
    assert import_pages(path) == "pages=1 sentences=5"


def test_category_option_too_long_is_refused_before_writing(tmp_path: Path) -> None:
    path = tmp_path / "kilt.jsonl"
    path.write_bytes(GOOD + b"\n")
    with pytest.raises(CommandError, match="--category:0: .*limit of 100"):
        import_pages(path, category="C" * 101)
    assert stored() == (0, 0, 0, 0, 0)


# --- Folders of .txt articles -------------------------------------------------------------

GOOD_ARTICLES = {
    "a.txt": b"Mars\nMars is the fourth planet.\n",
    "b.txt": b"Venus\nVenus is the second planet.\n",
    "c.txt": b"\n\nEarth\n\nEarth is the third planet.\n",  # blank lines before the title are allowed
}

BAD_ARTICLES = {
    "not UTF-8 on line 3": (b"Pluto\n\nPluto is \xe9 small.\n", 3, "not UTF-8 text"),
    "NUL on line 2": (b"Pluto\nPluto is\x00 small.\n", 2, "control character (U+0000)"),
    "control character": (b"Pluto\nPluto is\x1b small.\n", 2, "control character (U+001B)"),
    "title of only #": (b"##\nPluto is small.\n", 1, "title is empty"),
    "title too long": (b"P" * 301 + b"\nPluto is small.\n", 1, "limit of 300"),
    "sentence too long on line 5": (b"Pluto\n\nFirst.\n\nP" + b"p" * 5000 + b".\n", 5, "limit of 5000"),
    "empty article": (b"\n\n", 1, "empty article"),
}


@pytest.mark.parametrize("content, line, message", BAD_ARTICLES.values(), ids=BAD_ARTICLES.keys())
def test_folder_with_one_bad_article_writes_nothing_and_names_it(tmp_path: Path, content: bytes, line: int, message: str) -> None:
    for name, good in GOOD_ARTICLES.items():
        (tmp_path / name).write_bytes(good)
    bad = tmp_path / "z.txt"  # checked last: the good articles before it are not written either
    bad.write_bytes(content)
    with pytest.raises(CommandError) as error:
        import_pages(tmp_path)
    assert str(error.value).startswith(f"{bad}:{line}: ")
    assert message in str(error.value)
    assert stored() == (0, 0, 0, 0, 0)


def test_good_folder_imports_every_article(tmp_path: Path) -> None:
    for name, good in GOOD_ARTICLES.items():
        (tmp_path / name).write_bytes(good)
    assert import_pages(tmp_path) == "pages=3 sentences=3"
    assert Page.objects.filter(title="Earth").exists()


def test_article_over_the_size_limit_is_refused(tmp_path: Path, settings) -> None:
    settings.FM2_IMPORT = {**settings.FM2_IMPORT, "ARTICLE_MAX_BYTES": 1000}
    path = tmp_path / "big.txt"
    path.write_bytes(b"Big\n" + b"A sentence. " * 1000 + b"\n")
    with pytest.raises(CommandError, match=rf"^{path}:1: 12005 bytes, more than the limit of 1000"):
        import_pages(path)


def test_folder_without_articles_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("Not an article\n")
    (tmp_path / "x.txt").mkdir()  # a directory named like an article is not one
    with pytest.raises(CommandError, match=rf"^{tmp_path}:0: no .txt or .jsonl files"):
        import_pages(tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_article_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "secret.txt"
    path.write_text("Secret\nHidden.\n")
    path.chmod(0)
    with pytest.raises(CommandError, match=rf"^{path}:0: cannot read"):
        import_pages(path)


# --- Category lists ------------------------------------------------------------------------

BAD_LISTS = {
    "not UTF-8": (b"Saturn\nJ\xfcpiter\n", 2, "not UTF-8 text"),
    "NUL": (b"Saturn\nJupiter\x00\n", 2, "control character (U+0000)"),
    "title too long": (b"Saturn\n" + b"J" * 301 + b"\n", 2, "limit of 300"),
    "a star alone": (b"Saturn\n*\n", 2, "no page title"),
}


@pytest.mark.parametrize("content, line, message", BAD_LISTS.values(), ids=BAD_LISTS.keys())
def test_bad_category_list_names_file_and_line_and_loads_no_list(tmp_path: Path, content: bytes, line: int, message: str) -> None:
    (tmp_path / "categories-Art.txt").write_bytes(b"*Mona Lisa\nThe Scream\n")
    bad = tmp_path / "categories-Science.txt"  # loaded after Art: Art is not stored either
    bad.write_bytes(content)
    with pytest.raises(CommandError) as error:
        call_command("load_categories", str(tmp_path), no_progress=True, stdout=StringIO())
    assert str(error.value).startswith(f"{bad}:{line}: ")
    assert message in str(error.value)
    assert stored() == (0, 0, 0, 0, 0)


def test_category_names_that_share_a_slug_or_have_none_import(tmp_path: Path) -> None:
    path = tmp_path / "kilt.jsonl"
    path.write_bytes(GOOD + b"\n")
    import_pages(path, category="Pop Culture")
    import_pages(path, category="Pop-Culture!")
    assert list(Category.objects.values_list("name", "slug")) == [("Pop Culture", "pop-culture")]
    import_pages(path, category="日本")
    import_pages(path, category="中国")
    assert set(Category.objects.values_list("name", "slug")) == {
        ("Pop Culture", "pop-culture"), ("日本", "category-2"), ("中国", "category-3"),
    }
