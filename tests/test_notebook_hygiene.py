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
    course_cells = [c for c in code_cells(notebook) if "bootstrap" not in c.metadata.get("tags", [])]
    first_code = "\n".join(c.source for c in course_cells[:2])
    assert "seed_everything(" in first_code, "the first code cells must call seed_everything()"


def test_exercises_are_checked_and_solutions_never_run(notebook):
    exercises = [c for c in code_cells(notebook) if "checks.check_" in c.source and "= ..." in c.source]
    assert exercises, "an exercise cell starts as `answer = ...` and calls a checker"
    assert not [c for c in code_cells(notebook) if "solution" in c.metadata.get("tags", [])], \
        "a solution is never a code cell: Run All must not run it"
    solutions = [c for c in notebook.cells if "solution" in c.metadata.get("tags", [])]
    assert solutions, "each exercise has a solution"
    for cell in solutions:
        assert cell.cell_type == "markdown" and cell.source.startswith("<details><summary>"), "solutions stay closed"
        assert "checks.check_" in cell.source, "a solution ends with its check"
    for cell in exercises:
        for output in cell.outputs:
            text = output.get("text", "")
            assert "[x]" not in text and "Hint" not in text and "提示" not in text, \
                f"a stored exercise output gives nothing away: {text[:120]}"


def test_ignore_markers_are_per_cell_and_explained(notebook):
    assert not notebook.metadata.get("nbval", {}).get("skip"), "never skip a notebook wholesale"
    for cell in code_cells(notebook):
        assert "NBVAL_SKIP" not in cell.source, "use NBVAL_IGNORE_OUTPUT on one cell, never skip it"
        if "NBVAL_IGNORE_OUTPUT" in cell.source:
            assert re.match(r"\s*# NBVAL_IGNORE_OUTPUT", cell.source), "the marker is the first line"


KINDS = {"predict": "predict, then run", "implement": "implement", "debug": "debug", "explain": "explain"}


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.stem[:2] != "00"], ids=lambda p: p.stem)
def test_five_exercises_of_three_kinds(path):
    """Notebooks 01 on end with at least five exercises of at least three kinds, each heading naming its kind."""
    prose = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")
    headings = re.findall(r"^\*\*Exercise \d+ \(([^)]*)\)\.?\*\*", prose, re.MULTILINE)
    kinds = {kind for heading in headings for kind, words in KINDS.items() if heading.startswith(words)}
    assert len(headings) >= 5, f"{path.stem}: {len(headings)} exercises with a kind in their heading, not 5"
    assert len(kinds) >= 3, f"{path.stem}: exercise kinds {sorted(kinds)}, fewer than 3"
