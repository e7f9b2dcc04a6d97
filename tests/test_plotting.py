"""Heatmaps and live figures: tokens on the axes, values in cells, updates in place, no figure leak."""

from __future__ import annotations

import base64
import gc
import io
from pathlib import Path

import ipywidgets as widgets
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import PIL.Image
import pytest
import torch
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

import helpers.plotting
import helpers.widgets
from helpers.plotting import CellValues, agg_canvas, head_grid, heatmap, new_figure, to_png
from helpers.widgets import BACKGROUNDS_KEPT, STATIC_TEXT, LiveFigure, StaleBlitError, live_figures, move_every_control

matplotlib.use("Agg")


def test_heatmap_has_tokens_on_both_axes_values_in_cells_and_fixed_limits():
    fig, hm = heatmap(torch.eye(3), ["a", "b", "c"], ["x", "y", "z"])
    assert [t.get_text() for t in hm.ax.get_yticklabels()] == ["a", "b", "c"]
    assert [t.get_text() for t in hm.ax.get_xticklabels()] == ["x", "y", "z"]
    assert hm.values.strings[:4] == ["1.00", "0.00", "0.00", "0.00"]
    assert hm.image.get_clim() == (0.0, 1.0)
    assert hm.image.get_cmap().name == "viridis"
    assert fig.get_facecolor()[3] == 1.0  # opaque
    hm.update(torch.full((3, 3), 0.5))
    assert hm.values.strings[0] == "0.50" and hm.image.get_clim() == (0.0, 1.0)


def test_cell_values_are_drawn_in_their_cells_in_their_colours():
    """The values drawn by CellValues (cached bitmaps) land in the middle of their cells, dark on the bright
    cells and light on the dark ones; an SVG gets them as text."""
    matrix = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    plain, written = (np.asarray(PIL.Image.open(io.BytesIO(to_png(heatmap(matrix, annotate=a)[0]))), dtype=float)
                      for a in (False, True))
    fig, hm = heatmap(matrix)
    agg_canvas(fig).draw()
    for i in range(2):
        for j in range(2):
            (left, bottom), (right, top) = hm.ax.transData.transform([(j - 0.5, i + 0.5), (j + 0.5, i - 0.5)])
            height = plain.shape[0]
            rows, cols = slice(round(height - top), round(height - bottom)), slice(round(left), round(right))
            changed = np.abs(written[rows, cols] - plain[rows, cols]).sum(-1) > 60
            ys, xs = np.nonzero(changed)
            assert changed.sum() > 20, f"no value drawn in cell {i, j}"
            centre = np.array(changed.shape) / 2
            assert np.all(np.abs([ys.mean(), xs.mean()] - centre) < 0.15 * np.array(changed.shape))
            ink = written[rows, cols][changed][:, :3].mean()
            assert ink < 100 if matrix[i, j] == 1 else ink > 150, (i, j, ink)
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        svg = io.StringIO()
        fig.savefig(svg, format="svg")
    assert svg.getvalue().count(">1.00<") == 2 and svg.getvalue().count(">0.00<") == 2


def test_cell_values_fall_back_to_text_when_freetype_calls_differ(monkeypatch):
    """Another matplotlib's FreeType wrapper (the fast path's calls fail) still gets the values, as Text."""
    matrix = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    fast = to_png(heatmap(matrix)[0])

    def changed_api(*args, **kwargs):
        raise AttributeError("FT2Font has no such method")

    monkeypatch.setattr(helpers.plotting, "get_font", changed_api)
    as_text, plain = to_png(heatmap(matrix)[0]), to_png(heatmap(matrix, annotate=False)[0])
    assert as_text != plain and as_text != fast


def test_head_grid_has_one_map_per_head():
    fig, maps = head_grid(torch.rand(6, 4, 4), list("abcd"), list("abcd"), columns=4)
    assert len(maps) == 6 and maps[5].ax.get_title() == "head 5"
    assert fig._supxlabel.get_text() == "key" and fig._supylabel.get_text() == "query", "queries rows, keys columns"


def test_head_grid_names_its_axes_in_the_edition(monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "zh")
    fig, maps = head_grid(torch.rand(2, 3, 3), list("abc"), list("abc"))
    assert (fig._supxlabel.get_text(), fig._supylabel.get_text(), maps[1].ax.get_title()) == ("键", "查询", "头 1")


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


def changing_lines_and_limits():
    """A line plot whose lines, y-limits, legend labels and title follow the control."""
    fig = new_figure(5.0, 3.4)
    ax = fig.add_subplot()
    x = np.linspace(0, 1, 50)
    (wave,) = ax.plot(x, np.sin(x), label="sin")
    (ramp,) = ax.plot(x, x, "--", label="ramp")
    marks = ax.scatter(x[::10], x[::10], color="#d55e00")
    legend = ax.legend(loc="upper left")

    def update(step):
        wave.set_ydata(np.sin((step + 1) * 3 * x) * (1 + step % 3))
        ramp.set_color("#009e73" if step % 2 else "#0072b2")
        marks.set_offsets(np.c_[x[::10], np.cos(step + x[::10])])
        ax.set_ylim(-1 - step % 3, 1 + step % 3)
        legend.get_texts()[0].set_text(f"sin, {step + 1}x")
        ax.set_title(f"step {step}")

    return fig, update


def changing_colour_limits():
    """A heatmap whose colour bar's limits and colormap change with the control."""
    fig, hm = heatmap(np.zeros((4, 4)), list("abcd"), list("abcd"), annotate=False)

    def update(step):
        hm.image.set_data(np.random.default_rng(step).random((4, 4)) * (step + 1))
        hm.image.set_clim(0, step % 3 + 1)
        hm.image.set_cmap("cividis" if step % 2 else "viridis")

    return fig, update


def line_over_image_and_hidden_axes():
    """A static line and legend drawn over a changing image; a grid of 6 heads with 2 empty axes."""
    fig, maps = head_grid(np.random.default_rng(1).random((6, 3, 3)), list("abc"), list("abc"), columns=4)
    maps[0].ax.axhline(1, color="white", linewidth=2, label="row b")
    maps[0].ax.legend(loc="lower right", fontsize=6)

    def update(step):
        for h, hm in enumerate(maps):
            hm.update(np.roll(np.eye(3), step + h, axis=1))

    return fig, update


def grid_lines_under_an_image():
    """Grid lines and inward ticks overlap the image: no fast redraw can be right, every move is drawn in full."""
    fig, hm = heatmap(np.zeros((3, 3)), list("abc"), list("abc"))
    hm.ax.grid(True, color="red")
    hm.ax.tick_params(direction="in")

    def update(step):
        hm.update(np.roll(np.eye(3), step, axis=0))

    return fig, update


def artists_added_and_removed():
    """An update that adds a text and a line, and removes the ones it added before."""
    fig, hm = heatmap(np.zeros((3, 3)), list("abc"), list("abc"), annotate=False)
    added = []

    def update(step):
        while added:
            added.pop().remove()
        added.append(hm.ax.text(step % 3, 0, "★", color="red", ha="center"))
        added.append(hm.ax.plot([0, 2], [step % 3, 2 - step % 3], color="orange")[0])

    return fig, update


def blank_cells_that_move():
    """NaN cells, drawn transparent, whose place follows the control (notebook 10's blocks): what was under
    them before must not show through."""
    fig, hm = heatmap(np.zeros((3, 6)), list("abc"), list("uvwxyz"))

    def update(step):
        seen = np.random.default_rng(step).random((3, 6))
        seen[:, 6 - step % 6:] = np.nan  # fewer keys seen than at the first picture
        hm.update(seen)

    return fig, update


BUILDS = [annotated_with_title, blank_cells_that_move, changing_ticks,
          frames_and_spines, changing_lines_and_limits, changing_colour_limits,
          line_over_image_and_hidden_axes, grid_lines_under_an_image, artists_added_and_removed]
STEPS = (1, 2, 3, 5, 8, 9, 4, 0, 9, 2)  # new tick labels and limits, and back to ones seen before


@pytest.mark.parametrize("build", BUILDS)
def test_live_figure_redrawing_only_what_changes_gives_the_same_pixels_as_a_full_draw(build):
    pictures = {}
    for blit in (True, False):
        fig, update = build()
        slider = widgets.IntSlider(value=0, min=0, max=9)
        live = LiveFigure(fig, update, {"step": slider}, blit=blit, check_blit=False)
        pictures[blit] = [decoded(live.image.value)]
        for step in STEPS:
            slider.value = step
            pictures[blit].append(decoded(live.image.value))
        pictures[blit].append(decoded(to_png(fig)))  # the figure itself is left drawable in full
        if blit:
            fast_moves = live.redraws - live.full_redraws
    for step, (blitted, full) in enumerate(zip(pictures[True], pictures[False], strict=True)):
        assert blitted.shape == full.shape
        differ = np.any(blitted != full, axis=-1)
        assert not differ.any(), f"move {step}: {differ.sum()} pixels differ from a full redraw"
    assert len({p.tobytes() for p in pictures[True]}) > 2, "the moves changed the picture"
    if build is grid_lines_under_an_image:
        assert fast_moves == 0, "grid lines over the image: every move must be drawn in full"
    else:
        assert fast_moves > 0, "this figure can be redrawn fast: some moves must use the cached background"


def test_check_mode_raises_on_a_stale_fast_redraw(monkeypatch):
    monkeypatch.setenv("COURSE_CHECK_BLIT", "1")
    fig, update = annotated_with_title()
    slider = widgets.IntSlider(value=0, min=0, max=9)
    live = LiveFigure(fig, update, {"step": slider})
    assert live.check_blit
    slider.value = 1  # a correct fast redraw passes the check
    assert live.full_redraws == 1 and live.redraws == 2
    real = helpers.widgets.redraw_list
    monkeypatch.setattr(helpers.widgets, "redraw_list", lambda f: [a for a in real(f) if not isinstance(a, CellValues)])
    with pytest.raises(StaleBlitError, match="differs from a full draw"):
        slider.value = 2  # the cell texts are left out: the picture would be stale
    assert "differs from a full draw" in live.readout.value
    monkeypatch.delenv("COURSE_CHECK_BLIT")
    assert not LiveFigure(*annotated_with_title(), {"step": widgets.IntSlider()}).check_blit


def test_move_every_control_walks_every_position_and_returns_to_the_start():
    fig, update = changing_ticks()
    seen = []
    live = LiveFigure(fig, lambda step, kind: seen.append((step, kind)) or update(step), {
        "step": widgets.IntSlider(value=4, min=0, max=9),
        "kind": widgets.Dropdown(options=[("one", 1), ("two", 2), ("three", 3)], value=2),
    })
    assert live in live_figures()
    moves = move_every_control(live)
    assert {s for s, _ in seen} == set(range(10)) and {k for _, k in seen} == {1, 2, 3}
    assert moves == len(seen) - 1 and live.values() == {"step": 4, "kind": 2}
    assert not live.check_blit, "the check is switched on only while the controls move"


def test_live_figure_output_carries_the_widget_the_picture_and_a_fixed_text():
    fig, update = annotated_with_title()
    live = LiveFigure(fig, lambda step: update(step) or f"step {step}", {"step": widgets.IntSlider(value=3)})
    bundle = live._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == live.widget.model_id
    assert base64.b64decode(bundle["image/png"]) == live.image.value
    assert bundle["text/plain"] == f"{STATIC_TEXT['en']}\nstep 3", "deterministic text, for nbval"


@pytest.mark.parametrize("bad, match", [
    (dict(fig="not a figure"), "fig must be a matplotlib Figure; got str"),
    (dict(update=3), "update must be callable; got int"),
    (dict(controls=[widgets.IntSlider()]), "controls must be a dict"),
    (dict(controls={"x": 3}), "controls must be a dict"),
])
def test_live_figure_rejects_bad_arguments(bad, match):
    fig, update = annotated_with_title()
    arguments = dict(fig=fig, update=update, controls={"step": widgets.IntSlider()}) | bad
    with pytest.raises(TypeError, match=match):
        LiveFigure(**arguments)


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


def test_chinese_tokens_on_a_course_heatmap_draw_without_missing_glyphs(recwarn):
    import warnings

    from helpers.plotting import heatmap, to_png

    warnings.simplefilter("always")
    fig, _ = heatmap(torch.eye(3), ["猫", "吃", "鱼"], ["the", "cat", "猫"], title="交叉注意力")
    to_png(fig)
    missing = [str(w.message) for w in recwarn if "missing from" in str(w.message)]
    assert not missing, missing


def test_heatmap_axis_labels_and_head_titles_follow_the_edition_when_drawn(monkeypatch):
    monkeypatch.delenv("COURSE_LANG", raising=False)
    monkeypatch.chdir(Path(__file__).resolve().parents[1])  # not a zh folder: the English edition
    _, hm = heatmap(torch.eye(2), ["a", "b"], ["a", "b"])
    assert (hm.ax.get_xlabel(), hm.ax.get_ylabel()) == ("key", "query")
    assert head_grid(torch.rand(2, 2, 2))[1][1].ax.get_title() == "head 1"
    monkeypatch.setenv("COURSE_LANG", "zh")  # read at call time, not when helpers.plotting was imported
    _, hm = heatmap(torch.eye(2), ["a", "b"], ["a", "b"])
    assert (hm.ax.get_xlabel(), hm.ax.get_ylabel()) == ("键", "查询")
    assert head_grid(torch.rand(2, 2, 2))[1][1].ax.get_title() == "头 1"
    _, hm = heatmap(torch.eye(2), xlabel="feature", ylabel="")  # labels given are kept, in either edition
    assert (hm.ax.get_xlabel(), hm.ax.get_ylabel()) == ("feature", "")
