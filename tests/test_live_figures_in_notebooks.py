"""Every live figure of the course, moved through every position: each fast redraw equals a full draw.

Each notebook that makes a live figure runs in a fresh kernel with ``COURSE_CHECK_BLIT=1`` (every fast redraw
is compared with a full draw and a difference raises ``StaleBlitError``); a last cell then moves every control
of every live figure through its positions and back (``helpers.widgets.move_every_control``).
"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
WITH_LIVE_FIGURES = sorted(p for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb") if "LiveFigure(" in p.read_text())
MOVE_EVERYTHING = """\
from helpers.widgets import live_figures, move_every_control

figures = live_figures()
moves = [move_every_control(figure) for figure in figures]
assert moves and all(moves), f"every live figure has a control that moves: {moves}"
fast = sum(figure.redraws - figure.full_redraws for figure in figures)
print(len(moves), "live figures,", sum(moves), f"moves ({fast} redrawn fast), each equal to a full draw")
"""


@pytest.mark.parametrize("path", WITH_LIVE_FIGURES, ids=[p.stem for p in WITH_LIVE_FIGURES])
def test_every_move_of_every_live_figure_equals_a_full_draw(path):
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(MOVE_EVERYTHING))
    env = {**os.environ, "COURSE_CHECK_BLIT": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    client = NotebookClient(nb, kernel_name="python3", timeout=600, record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute(env=env)  # a StaleBlitError in any cell fails here, with the figure and its control values
    report = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    assert "each equal to a full draw" in report
    expected = sum(c.source.count("LiveFigure(") for c in nb.cells if c.cell_type == "code")
    assert int(report.split()[0]) >= expected, report
