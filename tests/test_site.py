"""The course site (`make site`): every notebook a page in course order, stored outputs only, nothing remote.

The site is built (or brought up to date) into build/site/ exactly as `make site` does; these checks read the
HTML. tests/browser/test_site_offline.py opens the same pages in Chromium.
"""

from __future__ import annotations

import html
import importlib.util
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("course_site", ROOT / "site" / "_ext" / "course_site.py")
course_site = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(course_site)
NOTEBOOKS = course_site.course_notebooks() + course_site.course_notebooks("zh")


class Tags(HTMLParser):
    """Every start tag of a page, as (tag, attributes)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags(path: Path) -> list[tuple[str, dict]]:
    parser = Tags()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.tags


def page_of(notebook: Path, site: Path) -> Path:
    return site / notebook.relative_to(ROOT).with_suffix(".html")


def image_outputs(notebook: Path) -> int:
    cells = json.loads(notebook.read_text())["cells"]
    return sum(any(k.startswith("image/") for k in o.get("data", {})) for c in cells for o in c.get("outputs", []))


@pytest.fixture(scope="module")
def site() -> Path:
    return course_site.build()


def test_every_notebook_is_a_page_in_course_order(site):
    assert len(course_site.course_notebooks()) >= 10
    for notebook in NOTEBOOKS:
        assert page_of(notebook, site).exists(), notebook
    # the left navigation of the home page lists the notebooks in file-name (course) order
    links = [a["href"] for tag, a in tags(site / "index.html")
             if tag == "a" and "reference internal" in a.get("class", "")]
    listed = [h for h in links if re.match(r"^notebooks/(?:zh/)?\d\d_", h)]
    expected = [page_of(n, site).relative_to(site).as_posix() for n in NOTEBOOKS]
    assert list(dict.fromkeys(listed)) == expected


def test_pages_show_the_stored_outputs_and_every_figure(site):
    for notebook in NOTEBOOKS:
        page = page_of(notebook, site)
        images = [a["src"] for tag, a in tags(page) if tag == "img"]
        expected = image_outputs(notebook)
        assert len(images) >= expected, f"{page.name}: {len(images)} images for {expected} image outputs"
        for src in images:
            if src.startswith("data:image/png;base64,"):  # an explorer's fallback picture, inside its own HTML
                continue
            assert (page.parent / src).resolve().is_file(), f"{page.name}: {src} is not in the site"
        stored = [o["text"] for c in nbformat.read(notebook, as_version=4).cells for o in c.get("outputs", [])
                  if o.get("output_type") == "stream" and o["text"].strip()]
        text = page.read_text(encoding="utf-8")
        first = stored[0].strip().splitlines()[0].strip()
        assert first.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") in text, (page.name, first)


def test_widget_outputs_become_a_note_and_no_widget_javascript_is_loaded(site):
    for notebook in NOTEBOOKS:
        # kernel-side live figures become a note; a client-side explorer (helpers.explorer) stays live, no note
        widgets = sum(any(course_site.WIDGET_VIEW in o.get("data", {})
                          and "data-course-explorer" not in str(o["data"].get("text/html", ""))
                          for o in c.get("outputs", []))
                      for c in json.loads(notebook.read_text())["cells"])
        text = page_of(notebook, site).read_text(encoding="utf-8")
        assert text.count("course-widget-note") == widgets, notebook.name
        assert course_site.WIDGET_VIEW not in text and "require.js" not in text


def test_nothing_is_loaded_from_another_host(site):
    assert course_site.external_assets(site) == []
    for page in site.rglob("*.html"):
        for tag, attributes in tags(page):
            url = attributes.get("src") or (attributes.get("href") if tag == "link" else None)
            if url:
                assert not re.match(r"^(?:[a-z]+:)?//", url), f"{page.relative_to(site)}: <{tag}> {url}"


def test_external_asset_scan_catches_a_cdn(tmp_path):
    (tmp_path / "a.html").write_text('<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"></script>'
                                     '<a href="https://github.com/x/y">a link is not a request</a>')
    (tmp_path / "b.css").write_text("@font-face { src: url('//fonts.example/x.woff2'); }")
    found = course_site.external_assets(tmp_path)
    assert len(found) == 2 and found[0].startswith("a.html") and found[1].startswith("b.css")


def test_math_is_rendered_by_the_bundled_mathjax(site):
    page = site / "notebooks" / "03_scaled_dot_product.html"
    scripts = [a.get("src", "") for tag, a in tags(page) if tag == "script"]
    mathjax = [s.split("?")[0] for s in scripts if "mathjax" in s.lower()]
    assert mathjax == ["../_static/mathjax/tex-chtml.js"]
    assert (site / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert (site / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").is_dir()  # fonts bundled
    assert page.read_text(encoding="utf-8").count('class="math') > 3


def test_the_map_lists_every_notebook_with_its_article_section(site):
    text = (site / "map.html").read_text(encoding="utf-8")
    for notebook in course_site.course_notebooks():
        title, article = course_site.title_and_article(notebook)
        assert article, f"{notebook.name} has no '> **Article:**' line"
        assert f'href="notebooks/{notebook.stem}.html"' in text
        assert article.split(" (")[0].split("—")[0].strip().replace("&", "&amp;") in text, notebook.name


def test_glossary_and_corrections_pages_exist(site):
    for name in ("glossary", "corrections"):
        page = site / f"{name}.html"
        assert page.exists()
        source = ROOT / "docs" / f"{name}.md"
        if source.exists():  # the page is docs/<name>.md, not the stub
            first_heading = next(line for line in source.read_text().splitlines() if line.startswith("# "))
            shown = html.unescape(page.read_text(encoding="utf-8")).replace("\u2019", "'")  # Sphinx's smart quotes
            assert first_heading[2:].strip() in shown
            assert "has not been written yet" not in page.read_text(encoding="utf-8")


def test_doc_links_are_rewritten_for_the_site():
    text = "See [scaling](../notebooks/03_scaled_dot_product.ipynb#why), [c](corrections.md), [w](https://x.org)."
    assert course_site.rewrite_doc_links(text) == (
        "See {doc}`scaling <notebooks/03_scaled_dot_product>`, {doc}`c <corrections>`, [w](https://x.org)."
    )


def test_the_reader_replaces_widget_outputs_and_keeps_the_rest():
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=[
        nbformat.v4.new_output("stream", text="kept\n"),
        nbformat.v4.new_output("display_data", data={course_site.WIDGET_VIEW: {"model_id": "a"}, "text/plain": "VBox"}),
        nbformat.v4.new_output("display_data", data={course_site.WIDGET_VIEW: {"model_id": "b"}, "text/plain": "VBox"}),
    ])])
    outputs = course_site.read_notebook(nbformat.writes(notebook)).cells[0].outputs
    assert [o.get("text") for o in outputs] == ["kept\n", None]
    assert outputs[1]["data"] == {"text/html": course_site.WIDGET_NOTE}


def test_docs_pages_and_the_chinese_edition_are_picked_up_when_present(tmp_path, monkeypatch):
    docs, notebooks = tmp_path / "docs", tmp_path / "notebooks"
    (notebooks / "zh").mkdir(parents=True)
    docs.mkdir()
    (docs / "glossary.md").write_text("# Glossary\n\n**query**: see [03](../notebooks/03_scaled_dot_product.ipynb).\n")
    for folder, title in ((notebooks, "# 03 · Scaling"), (notebooks / "zh", "# 03 · 缩放")):
        cell = nbformat.v4.new_markdown_cell(f"{title}\n\n> **Article:** 1.3.1 Scaled Dot-Product Attention")
        nbformat.write(nbformat.v4.new_notebook(cells=[cell]), folder / "03_scaled_dot_product.ipynb")
    monkeypatch.setattr(course_site, "DOCS", docs)
    monkeypatch.setattr(course_site, "NOTEBOOKS", notebooks)
    pages = {name: [(ROOT / "site" / f"{name}.md").read_text()] for name in ("glossary", "corrections", "map", "index")}
    for name, source in pages.items():
        course_site.on_source_read(None, name, source)
    assert pages["glossary"][0] == "# Glossary\n\n**query**: see {doc}`03 <notebooks/03_scaled_dot_product>`.\n"
    assert "has not been written yet" in pages["corrections"][0]  # no docs/corrections.md: the stub stays
    assert "| {doc}`03 · Scaling <notebooks/03_scaled_dot_product>` | 1.3.1 Scaled Dot-Product Attention |" \
           " {doc}`03 · 缩放 <notebooks/zh/03_scaled_dot_product>` |" in pages["map"][0]
    assert ":caption: 中文版" in pages["index"][0] and "notebooks/zh/[0-9][0-9]_*" in pages["index"][0]


def test_every_docs_page_and_its_chinese_twin_is_a_page(site):
    for name, path in course_site.DOC_PAGES.items():
        page, source = site / f"{name}.html", ROOT / "docs" / path
        assert page.exists(), name
        if source.exists():
            first_heading = next(line for line in source.read_text().splitlines() if line.startswith("# "))
            shown = html.unescape(page.read_text(encoding="utf-8")).replace("\u2019", "'")
            assert first_heading[2:].strip().replace("`", "") in shown, name
            assert "has not been written yet" not in shown and "还没有写成" not in shown, name


def test_a_chinese_notebook_links_to_the_chinese_docs_page_when_there_is_one(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    (docs / "zh").mkdir(parents=True)
    (docs / "zh" / "glossary.md").write_text("# 术语表\n")
    monkeypatch.setattr(course_site, "DOCS", docs)
    cell = nbformat.v4.new_markdown_cell("见 [术语表](../../docs/glossary.md) 和 [更正](../../docs/corrections.md)。")
    for edition, glossary in (("zh", "/zh/glossary"), ("en", "/glossary")):
        notebook = nbformat.v4.new_notebook(cells=[cell], metadata={"course": {"edition": edition}})
        text = course_site.read_notebook(nbformat.writes(notebook)).cells[0].source
        assert f"{{doc}}`术语表 <{glossary}>`" in text and "{doc}`更正 </corrections>`" in text  # no zh twin yet
