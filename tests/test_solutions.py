"""Every solution passes its own check, though Run All never runs one; and every live figure redraws truly.

The built notebooks keep each solution in a closed ``<details>`` block. Here each notebook is built again with its
solutions as code cells, in place, and run top to bottom in a fresh kernel: every solution cell must print
``[x]`` and nothing may fail.

The same run checks the live figures (one kernel per notebook, not two): with ``COURSE_CHECK_BLIT=1`` every fast
redraw is compared with a full draw (a difference raises ``StaleBlitError``), and a last cell moves every control
of every live figure through its positions and back (``helpers.widgets.move_every_control``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import build_notebooks as build  # noqa: E402

SOURCES = build.sources()
MOVE_EVERYTHING = """\
from helpers.widgets import live_figures, move_every_control

figures = live_figures()
moves = [move_every_control(figure) for figure in figures]
assert moves and all(moves), f"every live figure has a control that moves: {moves}"
fast = sum(figure.redraws - figure.full_redraws for figure in figures)
print(len(moves), "live figures,", sum(moves), f"moves ({fast} redrawn fast), each equal to a full draw")
"""


@pytest.mark.parametrize("source", SOURCES, ids=[p.stem for p in SOURCES])
def test_every_solution_passes_and_every_live_figure_redraws_truly(source):
    nb = build.edition(build.read_source(source), "en", source.stem, run_solutions=True)
    solutions = [c for c in nb.cells if build.is_solution(c)]
    assert solutions, f"{source.name} has no solution"
    live = any("LiveFigure(" in c.source for c in nb.cells if c.cell_type == "code")
    if live:
        nb.cells.append(nbformat.v4.new_code_cell(MOVE_EVERYTHING))
    env = {**os.environ, "COURSE_CHECK_BLIT": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    try:
        build.run(nb, env=env)
    except CellExecutionError as error:
        pytest.fail(f"{source.name}: {str(error)[-1500:]}")
    for cell in solutions:
        printed = "".join(o.get("text", "") for o in cell.outputs)
        assert "[x]" in printed, f"{source.name}: this solution does not pass its check:\n{cell.source[:300]}"
    if live:
        assert "each equal to a full draw" in "".join(o.get("text", "") for o in nb.cells[-1].outputs)
