"""Heatmaps of attention weights: queries as rows, keys as columns, tokens on both axes.

Figures are made with ``matplotlib.figure.Figure`` directly, not through pyplot, so none is ever
left open in pyplot's registry: a figure lives as long as the notebook holds a reference to it.
Colours: a colour-blind-safe colormap (viridis by default) with fixed limits, so that two pictures
can be compared by eye; an opaque white background that stays readable under dark themes.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
import PIL.Image
import torch
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg, get_hinting_flag
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties, findfont, get_font
from matplotlib.text import Text

from helpers.course import say
from helpers.fonts import use_cjk_font

try:  # Chinese tokens and labels draw with the CJK font that the course's set-up installs, never as boxes
    use_cjk_font()
except RuntimeError:  # no CJK font on this machine: Latin figures are unaffected (make lab names the package)
    pass

__all__ = ["new_figure", "CellValues", "Heatmap", "heatmap", "head_grid", "agg_canvas", "encode_png", "to_png", "show"]

ANNOTATE_MAX = 10  # write the values into the cells of matrices up to this size


def new_figure(width: float = 4.8, height: float = 4.0) -> Figure:
    """A pyplot-free figure with an opaque white background."""
    fig = Figure(figsize=(width, height), dpi=90, layout="constrained", facecolor="white")
    fig.patch.set_alpha(1.0)
    return fig


def _as_array(matrix: object) -> np.ndarray:
    if isinstance(matrix, torch.Tensor):
        matrix = matrix.detach().cpu().double().numpy()
    array = np.asarray(matrix, dtype=float)
    if array.ndim != 2:
        raise ValueError(f"matrix must be 2-D (queries, keys); got shape {array.shape}")
    return array


class CellValues(Artist):
    """Strings written into the cells of a ``rows x cols`` heatmap, centred, each in its own colour.

    What one ``ax.text`` per cell would draw, made for live figures: matplotlib lays out and rasterizes every
    Text again at each draw, and the 64 values of an 8 x 8 heatmap then cost most of a move (25 of 32 ms of
    drawing). Here Agg gets each distinct (string, colour) rasterized once by FreeType, as its own text is, and
    then only copies it; any other renderer (PDF, SVG) gets ordinary Text artists.
    """

    def __init__(self, ax, rows: int, cols: int, *, fontsize: float = 8.0) -> None:
        super().__init__()
        self.xy = np.array([(j, i) for i in range(rows) for j in range(cols)], dtype=float)  # (cells, 2) x, y
        self.strings = [""] * (rows * cols)  # row by row, like matrix.ravel()
        self.colours = ["black"] * (rows * cols)
        self.font = FontProperties(size=fontsize)
        self._bitmaps: dict[tuple, np.ndarray] = {}  # (string, colour, dpi) -> (h, w, 4) RGBA
        self.set_zorder(Text.zorder)
        ax.add_artist(self)  # in data coordinates, clipped to the axes

    def set_values(self, strings: Sequence[str], colours: Sequence[str]) -> None:
        self.strings, self.colours = list(strings), list(colours)
        self.stale = True

    def _bitmap(self, string: str, colour: str, dpi: float) -> np.ndarray:
        key = (string, colour, dpi)
        if key not in self._bitmaps:
            font = get_font(findfont(self.font))
            font.set_size(self.font.get_size_in_points(), dpi)
            font.set_text(string, 0, flags=get_hinting_flag())
            font.draw_glyphs_to_bitmap(antialiased=True)
            coverage = np.asarray(font.get_image())[::-1]  # (h, w); draw_image wants the bottom row first
            bitmap = np.empty((*coverage.shape, 4), np.uint8)
            bitmap[..., :3] = np.round(np.array(to_rgba(colour)[:3]) * 255)
            bitmap[..., 3] = coverage
            self._bitmaps[key] = bitmap
        return self._bitmaps[key]

    def draw(self, renderer) -> None:
        if not self.get_visible():
            return
        try:
            bitmaps = ([self._bitmap(string, colour, renderer.dpi) if string else None
                        for string, colour in zip(self.strings, self.colours)]
                       if isinstance(renderer, RendererAgg) else None)
        except (AttributeError, TypeError):  # a matplotlib whose FreeType calls differ: plain Text below
            bitmaps = None
        if bitmaps is None:
            for (x, y), string, colour in zip(self.xy, self.strings, self.colours):
                Text(x, y, string, color=colour, ha="center", va="center", fontproperties=self.font,
                     transform=self.get_transform(), figure=self.figure).draw(renderer)
            return
        gc = renderer.new_gc()
        self._set_gc_clip(gc)
        for (x, y), bitmap in zip(self.get_transform().transform(self.xy), bitmaps):  # x, y in pixels
            if bitmap is not None:
                height, width = bitmap.shape[:2]
                renderer.draw_image(gc, round(x - width / 2), round(y - height / 2), bitmap)
        gc.restore()
        self.stale = False


class Heatmap:
    """A heatmap drawn once and updated in place with :meth:`update` (``set_data`` and new cell texts).

    The axis labels default to "key" and "query" in the edition's language (:func:`helpers.course.say`, asked
    when the heatmap is drawn: a kernel started in ``notebooks/zh/`` labels them 键 and 查询); ``""`` for none.
    """

    def __init__(
        self,
        ax,
        matrix: object,
        row_tokens: Sequence[str] | None = None,
        col_tokens: Sequence[str] | None = None,
        *,
        title: str | None = None,
        vmin: float = 0.0,
        vmax: float = 1.0,
        cmap: str = "viridis",
        annotate: bool | None = None,
        fmt: str = ".2f",
        colorbar: bool = True,
        xlabel: str | None = None,
        ylabel: str | None = None,
    ) -> None:
        array = _as_array(matrix)
        rows, cols = array.shape
        self.ax = ax
        self.fmt = fmt
        self.vmin, self.vmax = vmin, vmax
        self.image = ax.imshow(array, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
        for name, tokens, size in (("row_tokens", row_tokens, rows), ("col_tokens", col_tokens, cols)):
            if tokens is not None and len(tokens) != size:
                raise ValueError(f"{name} must have {size} labels for a {rows} x {cols} matrix; got {len(tokens)}")
        ax.set_yticks(range(rows), list(row_tokens) if row_tokens is not None else range(rows))
        ax.set_xticks(range(cols), list(col_tokens) if col_tokens is not None else range(cols))
        ax.tick_params(axis="x", labelrotation=45 if cols > 6 else 0)
        ax.set_xlabel(say("key", "键") if xlabel is None else xlabel)
        ax.set_ylabel(say("query", "查询") if ylabel is None else ylabel)
        if title:
            ax.set_title(title)
        if annotate is None:
            annotate = rows <= ANNOTATE_MAX and cols <= ANNOTATE_MAX
        self.values = CellValues(ax, rows, cols) if annotate else None
        if colorbar:
            ax.figure.colorbar(self.image, ax=ax, shrink=0.85)
        self.update(array)

    def update(self, matrix: object, title: str | None = None) -> None:
        """New values (same shape) into the same image and texts; colour limits stay fixed."""
        array = _as_array(matrix)
        if array.shape != self.image.get_array().shape:
            raise ValueError(
                f"matrix must keep the heatmap's shape {self.image.get_array().shape}; got {array.shape}"
            )
        self.image.set_data(array)
        if self.values is not None:
            middle, values = (self.vmin + self.vmax) / 2, array.ravel()
            self.values.set_values(["" if np.isnan(value) else format(value, self.fmt) for value in values],
                                   ["black" if value > middle else "white" for value in values])
        if title is not None:
            self.ax.set_title(title)


def heatmap(
    matrix: object,
    row_tokens: Sequence[str] | None = None,
    col_tokens: Sequence[str] | None = None,
    *,
    title: str | None = None,
    size: tuple[float, float] = (4.8, 4.0),
    **options,
) -> tuple[Figure, Heatmap]:
    """A new figure holding one :class:`Heatmap` of ``matrix`` (queries as rows, keys as columns)."""
    fig = new_figure(*size)
    return fig, Heatmap(fig.add_subplot(), matrix, row_tokens, col_tokens, title=title, **options)


def head_grid(
    weights: object,
    row_tokens: Sequence[str] | None = None,
    col_tokens: Sequence[str] | None = None,
    *,
    columns: int = 4,
    title: str | None = None,
    cell: float = 2.4,
) -> tuple[Figure, list[Heatmap]]:
    """One small heatmap per head. weights (heads, L_q, L_k) -> (figure, [Heatmap per head])."""
    if isinstance(weights, torch.Tensor):
        weights = weights.detach().cpu().double().numpy()
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 3:
        raise ValueError(f"weights must be 3-D (heads, L_q, L_k); got shape {weights.shape}")
    heads = weights.shape[0]
    columns = min(columns, heads)
    rows = -(-heads // columns)
    fig = new_figure(cell * columns + 0.8, cell * rows + (0.4 if title else 0.0))
    axes = fig.subplots(rows, columns, squeeze=False)
    maps = []
    for h, ax in enumerate(axes.ravel()):
        if h >= heads:
            ax.set_axis_off()
            continue
        maps.append(
            Heatmap(ax, weights[h], row_tokens, col_tokens, title=say(f"head {h}", f"头 {h}"), colorbar=False,
                    annotate=False, xlabel="", ylabel="")
        )
    fig.colorbar(maps[0].image, ax=axes, shrink=0.8)
    fig.supxlabel(say("key", "键"), fontsize=10)          # every small map: queries as rows, keys as columns
    fig.supylabel(say("query", "查询"), fontsize=10)
    if title:
        fig.suptitle(title)
    return fig, maps


def agg_canvas(fig: Figure) -> FigureCanvasAgg:
    """The figure's Agg canvas (attached on first use): a pixel buffer to draw into, no GUI."""
    return fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)


def encode_png(canvas: FigureCanvasAgg) -> bytes:
    """What the canvas holds now, as RGB PNG bytes (the figures are opaque: no alpha channel to encode, and
    none for a dark theme to show through); Pillow with light compression, a fast encode."""
    buffer = io.BytesIO()
    rgb = PIL.Image.fromarray(np.asarray(canvas.buffer_rgba())).convert("RGB")
    rgb.save(buffer, format="png", compress_level=1)
    return buffer.getvalue()


def to_png(fig: Figure) -> bytes:
    """The figure drawn in full and rendered as PNG bytes (what the static cells display)."""
    canvas = agg_canvas(fig)
    canvas.draw()
    return encode_png(canvas)


def show(fig: Figure) -> None:
    """Display the figure as a static PNG (readable on GitHub, nbviewer and in HTML exports)."""
    from IPython.display import Image, display

    display(Image(to_png(fig)))
