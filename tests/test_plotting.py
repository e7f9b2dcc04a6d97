"""Heatmaps and live figures: tokens on the axes, values in cells, updates in place, no figure leak."""

from __future__ import annotations

import gc

import ipywidgets as widgets
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure

from helpers.plotting import head_grid, heatmap, to_png
from helpers.widgets import LiveFigure

matplotlib.use("Agg")


def test_heatmap_has_tokens_on_both_axes_values_in_cells_and_fixed_limits():
    fig, hm = heatmap(torch.eye(3), ["a", "b", "c"], ["x", "y", "z"])
    assert [t.get_text() for t in hm.ax.get_yticklabels()] == ["a", "b", "c"]
    assert [t.get_text() for t in hm.ax.get_xticklabels()] == ["x", "y", "z"]
    assert [t.get_text() for t in hm.texts][:4] == ["1.00", "0.00", "0.00", "0.00"]
    assert hm.image.get_clim() == (0.0, 1.0)
    assert hm.image.get_cmap().name == "viridis"
    assert fig.get_facecolor()[3] == 1.0  # opaque
    hm.update(torch.full((3, 3), 0.5))
    assert hm.texts[0].get_text() == "0.50" and hm.image.get_clim() == (0.0, 1.0)


def test_head_grid_has_one_map_per_head():
    fig, maps = head_grid(torch.rand(6, 4, 4), list("abcd"), list("abcd"), columns=4)
    assert len(maps) == 6 and maps[5].ax.get_title() == "head 5"


def test_live_figure_updates_one_figure_and_leaks_nothing():
    fig, hm = heatmap(np.zeros((4, 4)), list("abcd"), list("abcd"))
    slider = widgets.IntSlider(value=0, min=0, max=3)

    def update(row):
        matrix = np.zeros((4, 4))
        matrix[row] = 1.0
        hm.update(matrix)
        return f"row {row}"

    live = LiveFigure(fig, update, {"row": slider})
    first = live.image.value
    open_before = len(plt.get_fignums())
    gc.collect()
    figures_before = sum(type(o) is Figure for o in gc.get_objects())
    for i in range(100):
        slider.value = (i % 3) + 1
    gc.collect()
    figures_after = sum(type(o) is Figure for o in gc.get_objects())
    assert live.redraws == 101
    assert live.image.value != first and live.readout.value == "<code>row 1</code>"
    assert len(plt.get_fignums()) == open_before and figures_after == figures_before
    assert to_png(fig)[:8] == b"\x89PNG\r\n\x1a\n"
