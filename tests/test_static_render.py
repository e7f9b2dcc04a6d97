"""Every notebook reads without a kernel: rendered to HTML by nbconvert (as nbviewer does), each figure is there.

A live figure's output carries the widget view and its picture as image/png (helpers/widgets.py explains the
choice); with no widget state saved, nbconvert skips the view and shows the picture. These tests render the
committed notebooks, and one small notebook executed here, and count the pictures. They also check that the
saved notebooks hold no per-cell execution timestamps (nbclient's ``record_timing=False``), so that a re-run
changes a file only where an output changed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")) + sorted(
    (ROOT / "notebooks" / "zh").glob("[0-9][0-9]_*.ipynb"))
IDS = [str(p.relative_to(ROOT / "notebooks").with_suffix("")) for p in NOTEBOOKS]
PICTURE = re.compile(r'<img\b[^>]*\bsrc="data:image/png;base64,')
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
NO_KERNEL_TEXT = ("VBox(", "HBox(", "Error displaying widget", "Loading widget")


def render(nb: nbformat.NotebookNode, template: str = "lab") -> str:
    body, _ = HTMLExporter(template_name=template).from_notebook_node(nb)
    return body


def pictures_expected(nb: nbformat.NotebookNode) -> tuple[int, int]:
    """(outputs holding an image/png, code cells that make a live figure)."""
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    live_cells = [c for c in nb.cells if c.cell_type == "code" and "LiveFigure(" in c.source]
    return sum("image/png" in o.get("data", {}) for o in outputs), len(live_cells)


def check_static_render(nb: nbformat.NotebookNode, name: str) -> None:
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            assert WIDGET_VIEW not in data or "image/png" in data, (
                f"{name}: a widget output with no picture, so a static page shows its text "
                f"{data.get('text/plain', '')[:60]!r} (a bare widget or a notebook progress bar) in the cell "
                f"{cell.source[:60]!r}")
    images, live_cells = pictures_expected(nb)
    for template in ("lab", "classic"):
        body = render(nb, template)
        found = len(PICTURE.findall(body))
        assert found >= images, f"{name} ({template}): {found} pictures rendered for {images} image/png outputs"
        for cell in (c for c in nb.cells if c.cell_type == "code" and "LiveFigure(" in c.source):
            one = nbformat.from_dict({**nb, "cells": [cell]})
            assert PICTURE.search(render(one, template)), f"{name}: a live-figure cell shows no picture: " \
                f"{cell.source[:80]!r}"
        for text in NO_KERNEL_TEXT:
            assert text not in body, f"{name} ({template}): {text!r} is shown where a figure should be"
    assert images >= live_cells


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_figure_renders_without_a_kernel(path):
    check_static_render(nbformat.read(path, as_version=4), path.name)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_cell_records_execution_timestamps(path):
    nb = nbformat.read(path, as_version=4)
    stamped = [i for i, c in enumerate(nb.cells) if "execution" in c.metadata]
    assert not stamped, f"{path.name}: cells {stamped} carry execution timestamps; run with record_timing=False"


def test_a_live_figure_cell_executed_here_renders_as_its_picture(tmp_path):
    """The real path: a kernel displays a LiveFigure, nbclient saves the output, nbconvert renders it."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "import numpy as np\n"
        "import ipywidgets as widgets\n"
        "from helpers.plotting import heatmap\n"
        "from helpers.widgets import LiveFigure\n"
        "fig, hm = heatmap(np.eye(3), list('abc'), list('abc'))\n"
        "LiveFigure(fig, lambda step: hm.update(np.roll(np.eye(3), step, 0)) or f'step {step}',\n"
        "           {'step': widgets.IntSlider(value=1, max=2)})"
    )]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    client = NotebookClient(nb, kernel_name="python3", timeout=120, record_timing=False,
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute(env=env)
    nb.metadata.pop("widgets", None)  # what the build saves: no widget state
    (output,) = nb.cells[0].outputs
    assert {WIDGET_VIEW, "image/png", "text/plain"} <= set(output.data)
    assert output.data["text/plain"] == "<live figure: move the controls in JupyterLab>\nstep 1"
    assert "execution" not in nb.cells[0].metadata
    check_static_render(nb, "executed here")
    assert len(PICTURE.findall(render(nb))) == 1
