"""Every committed notebook is saved as after Restart & Run All, reads on its own, and follows the course rules.

nbval (run on notebooks/ by `make test`) re-executes each notebook and compares the outputs; these tests check
what nbval does not: the saved state itself.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.ipynb"))
IDS = [p.stem for p in NOTEBOOKS]


@pytest.fixture(params=NOTEBOOKS, ids=IDS)
def notebook(request) -> nbformat.NotebookNode:
    nb = nbformat.read(request.param, as_version=4)
    nbformat.validate(nb)
    return nb


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def test_notebooks_are_numbered_from_00():
    assert NOTEBOOKS and NOTEBOOKS[0].stem == "00_start_here"
    numbers = [int(p.stem[:2]) for p in NOTEBOOKS]
    assert numbers == list(range(len(numbers))), "notebooks are numbered 00, 01, 02, ... without gaps"


def test_saved_after_restart_and_run_all(notebook):
    counts = [c.execution_count for c in code_cells(notebook)]
    assert counts == list(range(1, len(counts) + 1)), f"execution counts must be 1, 2, 3, ...; got {counts}"


def test_no_errors_and_no_widget_state(notebook):
    for cell in code_cells(notebook):
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.source[:80]
        for output in cell.outputs:
            assert "Traceback" not in output.get("text", ""), cell.source[:80]
    assert "widgets" not in notebook.metadata, "strip the widget state from the saved metadata"


def test_opens_with_a_pointer_to_the_article(notebook):
    first = notebook.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# ")
    assert "> **Article:**" in first.source


def test_seeds_first(notebook):
    first_code = "\n".join(c.source for c in code_cells(notebook)[:2])
    assert "seed_everything(" in first_code, "the first code cells must call seed_everything()"


def test_ends_with_checked_exercises_and_collapsed_solutions(notebook):
    sources = [c.source for c in code_cells(notebook)]
    assert any("checks.check_" in s and "= ..." in s for s in sources), "an exercise cell starts as `answer = ...`"
    solutions = [c for c in code_cells(notebook) if "solution" in c.metadata.get("tags", [])]
    assert solutions, "each exercise has a solution cell tagged 'solution'"
    for cell in solutions:
        assert cell.metadata.get("jupyter", {}).get("source_hidden") is True, "solutions are collapsed"
        assert "checks.check_" in cell.source
        assert any("[x]" in o.get("text", "") for o in cell.outputs), "a solution passes its own check"


def test_ignore_markers_are_per_cell_and_explained(notebook):
    assert not notebook.metadata.get("nbval", {}).get("skip"), "never skip a notebook wholesale"
    for cell in code_cells(notebook):
        assert "NBVAL_SKIP" not in cell.source, "use NBVAL_IGNORE_OUTPUT on one cell, never skip it"
        if "NBVAL_IGNORE_OUTPUT" in cell.source:
            assert re.match(r"\s*# NBVAL_IGNORE_OUTPUT", cell.source), "the marker is the first line"
