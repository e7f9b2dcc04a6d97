"""Every solution passes its own check, though Run All never runs one.

The built notebooks keep each solution in a closed ``<details>`` block. Here each notebook is built again with its
solutions as code cells, in place, and run top to bottom in a fresh kernel: every solution cell must print
``[x]`` and nothing may fail.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import build_notebooks as build  # noqa: E402

SOURCES = build.sources()


@pytest.mark.parametrize("source", SOURCES, ids=[p.stem for p in SOURCES])
def test_every_solution_passes_its_check(source):
    nb = build.edition(build.read_source(source), "en", source.stem, run_solutions=True)
    solutions = [c for c in nb.cells if build.is_solution(c)]
    assert solutions, f"{source.name} has no solution"
    try:
        build.run(nb)
    except CellExecutionError as error:
        pytest.fail(f"{source.name}: {str(error)[-1500:]}")
    for cell in solutions:
        printed = "".join(o.get("text", "") for o in cell.outputs)
        assert "[x]" in printed, f"{source.name}: this solution does not pass its check:\n{cell.source[:300]}"
