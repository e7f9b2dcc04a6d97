"""Heatmaps and live figures: tokens on the axes, values in cells, updates in place, no figure leak."""

from __future__ import annotations

import gc
import io

import ipywidgets as widgets
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import PIL.Image
import pytest
import torch
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from helpers.plotting import head_grid, heatmap, to_png
from helpers.widgets import BACKGROUNDS_KEPT, LiveFigure

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


def decoded(png: bytes) -> np.ndarray:
    return np.asarray(PIL.Image.open(io.BytesIO(png)).convert("RGBA"))


def annotated_with_title():
    """A matrix with values in its cells and a title that follows the control (notebook 03)."""
    fig, hm = heatmap(np.zeros((6, 6)), list("abcdef"), list("uvwxyz"))

    def update(step):
        hm.update(np.random.default_rng(step).random((6, 6)), title=f"step {step}")

    return fig, update


def changing_ticks():
    """Tick labels that change with the control (notebooks 04 and 08)."""
    fig, hm = heatmap(np.zeros((5, 5)), list("abcde"), list("abcde"))

    def update(step):
        hm.update(np.eye(5) * (step % 2), title=f"pad {step // 2}")
        names = [f"w{i}" if i < 5 - step // 2 else "PAD" for i in range(5)]
        hm.ax.set_xticks(range(5), names)
        hm.ax.set_yticks(range(5), names)

    return fig, update


def frames_and_spines():
    """A moving frame, spines that light up, two axes and a suptitle (notebooks 02 and 05)."""
    fig, maps = head_grid(np.random.default_rng(0).random((4, 4, 4)), list("abcd"), list("abcd"), title="heads")
    frame = Rectangle((-0.5, -0.5), 4, 1, fill=False, edgecolor="#e69f00", linewidth=3)
    maps[0].ax.add_patch(frame)

    def update(step):
        frame.set_y(step % 4 - 0.5)
        for h, hm in enumerate(maps):
            hm.update(np.roll(np.eye(4), step + h, axis=1))
            for spine in hm.ax.spines.values():
                spine.set_edgecolor("#e69f00" if h == step % 4 else "black")
        fig.suptitle(f"heads, step {step}")

    return fig, update


@pytest.mark.parametrize("build", [annotated_with_title, changing_ticks, frames_and_spines])
def test_live_figure_redrawing_only_what_changes_gives_the_same_pixels_as_a_full_draw(build):
    pictures = {}
    for blit in (True, False):
        fig, update = build()
        slider = widgets.IntSlider(value=0, min=0, max=9)
        live = LiveFigure(fig, update, {"step": slider}, blit=blit)
        pictures[blit] = [decoded(live.image.value)]
        for step in (1, 2, 3, 5, 8, 9, 4, 0, 9, 2):  # new tick labels, and back to ones seen before
            slider.value = step
            pictures[blit].append(decoded(live.image.value))
        pictures[blit].append(decoded(to_png(fig)))  # the figure itself is left drawable in full
    for step, (blitted, full) in enumerate(zip(pictures[True], pictures[False], strict=True)):
        assert blitted.shape == full.shape
        differ = np.any(blitted != full, axis=-1)
        assert not differ.any(), f"move {step}: {differ.sum()} pixels differ from a full redraw"
    assert len({p.tobytes() for p in pictures[True]}) > 2, "the moves changed the picture"


def test_live_figure_draws_the_background_again_only_for_new_ticks():
    fig, update = changing_ticks()
    slider = widgets.IntSlider(value=0, min=0, max=9)
    live = LiveFigure(fig, update, {"step": slider})
    assert live.full_redraws == 1
    slider.value = 1  # same ticks (pad 0): only the image, texts and title are drawn
    assert (live.redraws, live.full_redraws) == (2, 1)
    slider.value = 2  # pad 1: new tick labels, a new background
    assert (live.redraws, live.full_redraws) == (3, 2)
    slider.value = 3
    assert (live.redraws, live.full_redraws) == (4, 2)
    slider.value = 0  # back to pad 0: its background is remembered
    assert (live.redraws, live.full_redraws) == (5, 2)
    assert not any(artist.get_animated() for artist in fig.findobj())


def test_live_figure_remembers_a_bounded_number_of_backgrounds():
    fig, hm = heatmap(np.zeros((3, 3)), list("abc"), list("abc"))

    def update(step):
        hm.ax.set_xticks(range(3), [f"{step}{c}" for c in "abc"])  # a new tick labelling at every step

    slider = widgets.IntSlider(value=0, min=0, max=99)
    live = LiveFigure(fig, update, {"step": slider})
    for step in range(1, 100):
        slider.value = step
    assert live.full_redraws == 100
    assert len(live._backgrounds) == BACKGROUNDS_KEPT
