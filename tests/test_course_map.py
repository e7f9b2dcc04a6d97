"""The course map is kept once, in helpers/course.py; the notebooks' headers and README's table agree with it."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from helpers import course

ROOT = Path(__file__).resolve().parents[1]
NAMES = [n.name for n in course.NOTEBOOKS]


def test_the_map_lists_every_notebook_in_course_order():
    sources = sorted(p.stem for p in (ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.md"))
    assert NAMES == sources, "helpers/course.py lists each notebook of notebooks/src/, in order"
    assert [int(n[:2]) for n in NAMES] == list(range(len(NAMES)))


@pytest.mark.parametrize("name", NAMES)
def test_each_notebook_quotes_its_section(name):
    editions = [("en", ROOT / "notebooks" / f"{name}.ipynb"), ("zh", ROOT / "notebooks" / "zh" / f"{name}.ipynb")]
    for lang, path in editions:
        first = nbformat.read(path, as_version=4).cells[0].source
        quote = f"{course.SECTION_LABEL[lang]} {course.section(name, lang)}"
        assert quote in first, f"{lang}/{path.name}: quote helpers/course.py's section as {quote!r}"
        other = course.SECTION_LABEL["zh" if lang == "en" else "en"]
        assert other not in first, f"{lang}/{path.name}: the other edition's label {other!r}"


def test_the_chinese_headings_are_chinese_where_the_note_is():
    for entry in course.NOTEBOOKS:
        zh = course.section(entry.name, "zh")
        english_words = re.findall(r"[A-Za-z]{3,}(?: [A-Za-z]{2,}){2,}", zh)
        # the note's own English headings (1.3.1 Scaled Dot-Product Attention) stay; the course's own words do not
        assert all(words in NOTE_HEADINGS for words in english_words), (entry.name, english_words)
    with pytest.raises(ValueError, match="lang must be one of"):
        course.section("03_scaled_dot_product", "fr")


NOTE_HEADINGS = {"Scaled Dot-Product Attention", "Multi-Head Attention"}


def test_readme_table_agrees_with_the_map():
    rows = {m.group(1): m.group(2).strip() for m in
            re.finditer(r"^\| `(\d\d_\w+)` \| ([^|]+) \|", (ROOT / "README.md").read_text(), re.MULTILINE)}
    assert list(rows) == NAMES, "README's table lists every notebook, in order"
    for name, section in rows.items():
        assert section == course.section(name), f"README's section for {name}"


def test_unknown_names_are_refused():
    with pytest.raises(ValueError, match="name must be one of the course's notebooks"):
        course.section("11_nothing")
