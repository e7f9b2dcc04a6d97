"""One source per notebook: notebooks/src/NN_name.md builds every edition, and nothing else does.

tools/build_notebooks.py turns each source into its editions; these tests check that the committed editions are
exactly what their source says (so a change to a code cell is made once, in the source), that every prose cell
names its language, and that in a bilingual source no prose block lacks its other language.
"""

from __future__ import annotations

import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import build_notebooks as build  # noqa: E402

SOURCES = build.sources()


def test_every_notebook_has_one_source_and_every_source_its_notebook():
    built = {p.stem for p in build.NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")}
    assert SOURCES, "notebooks/src/ holds the sources"
    assert built == {p.stem for p in SOURCES}, "each notebooks/NN_*.ipynb is built from notebooks/src/NN_*.md"
    for lang, folder in build.EDITION_DIRS.items():
        for path in folder.glob("[0-9][0-9]_*.ipynb"):
            assert (build.SOURCES / f"{path.stem}.md").exists(), f"{lang} edition {path.name} has no source"


@pytest.mark.parametrize("source", SOURCES, ids=[p.stem for p in SOURCES])
def test_built_editions_equal_their_source(source):
    assert build.lint_source(source) == []
    assert build.differences(source) == []


@pytest.mark.parametrize("source", SOURCES, ids=[p.stem for p in SOURCES])
def test_editions_share_every_code_cell(source):
    nb = build.read_source(source)
    code = [c.source for c in nb.cells if c.cell_type == "code" and not build.is_solution(c)]
    for lang in build.languages(nb):
        edition = nbformat.read(build.built_path(source.stem, lang), as_version=4)
        shared = [c.source for c in edition.cells
                  if c.cell_type == "code" and "bootstrap" not in c.metadata.get("tags", [])]
        assert shared == code, lang


def _source(cells: list[tuple[str, str | None]]) -> str:
    nb = nbformat.v4.new_notebook()
    for kind, lang in cells:
        if kind == "code":
            nb.cells.append(nbformat.v4.new_code_cell("x = 1"))
        else:
            nb.cells.append(nbformat.v4.new_markdown_cell("text", metadata={"lang": lang} if lang else {}))
    return jupytext.writes(nb, fmt="md:myst")


@pytest.mark.parametrize(
    ("cells", "problem"),
    [
        ([("md", None), ("code", None)], "has no language"),
        ([("md", "en"), ("md", "zh"), ("md", "en"), ("code", None)], "English prose cell 2 has no Chinese twin"),
        ([("md", "en"), ("code", None), ("md", "zh")], "English prose cell 0 has no Chinese twin"),
        ([("md", "zh"), ("md", "en"), ("md", "zh")], "Chinese prose cell 0 does not follow"),
    ],
)
def test_lint_names_the_prose_that_lacks_its_language(tmp_path, cells, problem):
    path = tmp_path / "99_example.md"
    path.write_text(_source(cells))
    assert any(problem in p for p in build.lint_source(path)), build.lint_source(path)


def test_a_complete_bilingual_source_passes_and_builds_two_editions(tmp_path):
    path = tmp_path / "99_example.md"
    path.write_text(_source([("md", "en"), ("md", "zh"), ("code", None), ("md", "en"), ("md", "zh")]))
    assert build.lint_source(path) == []
    nb = build.read_source(path)
    assert build.languages(nb) == ["en", "zh"]
    zh = build.edition(nb, "zh", path.stem)
    assert [c.cell_type for c in zh.cells] == ["markdown", "code", "code", "markdown"], "title, bootstrap, code, text"
    assert "[English edition](../99_example.ipynb)" in zh.cells[0].source and "Open in Colab" in zh.cells[0].source
    assert zh.metadata["course"] == {"edition": "zh", "source": "src/99_example.md"}


def test_saved_notebooks_carry_no_per_cell_timestamps():
    for path in sorted(build.NOTEBOOKS.rglob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        stamped = [i for i, c in enumerate(nb.cells) if "execution" in c.metadata]
        assert not stamped, f"{path.name}: cells {stamped} keep execution timestamps; rebuild with the tool"
