"""Live figures for the notebooks: controls that update one figure in place, in one cell.

    LiveFigure(fig, update, {"word": widgets.Dropdown(options=words, value="cat")})

The figure is built once; each change of a control calls ``update(**values)``, which changes the artists
(``set_data``, texts, lines, limits) and the widget shows the new PNG. No figure is created per move.

**One cell, visible everywhere.** Displaying a ``LiveFigure`` gives one output whose bundle holds the widget
view, the figure as ``image/png`` and a short ``text/plain``. Each renderer picks what it can show:

- JupyterLab, live: the widget renderer ranks first (rank -10, above image/png at 90), so the live widget is
  shown, once, with no second picture.
- JupyterLab, a saved notebook reopened: its outputs are untrusted, only safe renderers compete, so image/png
  is shown (the widget renderer is not safe) until the cell runs again.
- nbconvert's HTML (so nbviewer too) skips a widget view whose model has no saved state, and falls back
  to the next mimetype: the PNG. No widget state is saved (``notebook.metadata.widgets`` is stripped), so a
  static page never shows "Error displaying widget" or ``VBox(...)``.
- nbval skips image/png and widget views by default and compares the ``text/plain``, which is deterministic
  (the first line below and the readout), so the cell needs no ``# NBVAL_IGNORE_OUTPUT``.

**A move redraws only what a move can change, and is never stale.** The figure's background (the figure's
and each axes' patch, the axes' decorations: ticks, tick labels, axis labels, which cost most to draw, and the
colour bars' strips) is cached; a move restores it and draws every other artist (images, texts, patches, lines,
collections, legends) from its current state, in the order a full draw uses. The cached background is keyed
by everything it shows (``background_key``); a move whose key is new draws the figure in full. A figure whose
decorations could overlap a redrawn artist (grid lines or inward ticks under an image, unclipped artists below
the ticks, overlapping axes, sub-figures) is drawn in full at every move. ``COURSE_CHECK_BLIT=1`` in the
kernel's environment (or ``check_blit=True``) compares every fast move with a full draw and raises
``StaleBlitError`` on any differing pixel.
"""

from __future__ import annotations

import base64
import os
import weakref
from collections import OrderedDict
from collections.abc import Callable

import ipywidgets as widgets
import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.text import Text
from matplotlib.ticker import NullLocator

from helpers.course import edition
from helpers.plotting import agg_canvas, encode_png

__all__ = ["LiveFigure", "StaleBlitError", "live_figures", "move_every_control"]

BACKGROUNDS_KEPT = 8  # backgrounds remembered per live figure (one per tick labelling seen last), about 1 MB each
STATIC_TEXT = {"en": "<live figure: move the controls in JupyterLab>", "zh": "<交互图：在 JupyterLab 里拖动控件>"}
_LIVE: weakref.WeakSet = weakref.WeakSet()  # every LiveFigure of this kernel, for move_every_control


class StaleBlitError(AssertionError):
    """A fast redraw gave other pixels than a full draw of the same figure."""


def _text_state(text: Text) -> tuple:
    return text.get_visible(), to_rgba(text.get_color()), text.get_fontsize(), text.get_rotation()


def _axis_key(axis: Axis) -> tuple:
    """What an axis draws: its ticks (positions, labels and their look, minor ticks, colour, length and
    direction), label, offset text and grid lines."""
    locations = tuple(axis.get_majorticklocs())
    formatter = axis.major.formatter
    labels = tuple(formatter.format_ticks(locations))
    minor = () if isinstance(axis.get_minor_locator(), NullLocator) else tuple(axis.get_minorticklocs())
    first = axis.majorTicks[0]
    look = tuple((_text_state(t.label1), t.label2.get_visible(), t.tick1line.get_visible(), t.tick2line.get_visible())
                 for t in axis.majorTicks[: len(locations)])
    return (locations, labels, formatter.get_offset() if hasattr(formatter, "get_offset") else "", minor, look,
            axis.get_visible(), axis.get_zorder(), first.gridline.get_visible(), first.get_tickdir(),
            to_rgba(first.tick1line.get_color()), first.tick1line.get_markersize(),
            axis.label.get_text(), _text_state(axis.label))


def _colour_bars(fig: Figure) -> dict:
    """The colour strip of each colour bar (solids) -> what it shows: its colormap, norm and limits (a colour
    bar makes a new strip when its mappable's limits or colormap are set, even to the same values)."""
    bars = {m.colorbar for ax in fig.axes for m in (*ax.images, *ax.collections) if getattr(m, "colorbar", None)}
    return {bar.solids: (bar.solids.get_visible(), bar.solids.get_alpha(), bar.cmap.name, bar.cmap.N,
                         type(bar.norm).__name__, bar.norm.vmin, bar.norm.vmax, bar.orientation, bar.extend,
                         None if bar.boundaries is None else tuple(bar.boundaries))
            for bar in bars if bar.solids is not None}


def background_key(fig: Figure) -> tuple:
    """Everything the cached background shows: the figure's size and colour, each axes' position, limits,
    frame and colour, its axes' ticks and labels, and the colour bars' strips. Equal keys mean the background
    is still the right one."""
    key = [tuple(fig.bbox.bounds), to_rgba(fig.patch.get_facecolor()), fig.patch.get_visible(),
           tuple(_colour_bars(fig).values())]
    for ax in fig.axes:
        key.append((ax.get_visible(), ax.axison, ax.get_frame_on(), ax.get_position().bounds, ax.get_xlim(),
                    ax.get_ylim(), to_rgba(ax.patch.get_facecolor()), ax.patch.get_visible()))
        if ax.axison:
            key += [_axis_key(axis) for axis in (ax.xaxis, ax.yaxis)]
    return tuple(key)


def _axes_draw_list(ax: Axes) -> list[Artist]:
    """What ``Axes.draw`` draws after the axes' patch, in its order (stable sort by zorder)."""
    artists = [a for a in ax.get_children() if a is not ax.patch]
    if not (ax.axison and ax.get_frame_on()):
        artists = [a for a in artists if a not in ax.spines.values()]
    if not ax.axison:
        artists = [a for a in artists if not isinstance(a, Axis)]
    return sorted(artists, key=lambda a: a.get_zorder())


def _clipped(artist: Artist) -> bool:
    return artist.get_clip_on() and (artist.get_clip_box() is not None or artist.get_clip_path() is not None)


def redraw_list(fig: Figure) -> list[Artist] | None:
    """The artists a move draws over the background, in the order a full draw draws them; ``None`` when the
    background could overlap one of them (then only a full draw gives the right picture)."""
    if fig.subfigs:
        return None
    top = sorted((a for a in fig.get_children() if a is not fig.patch), key=lambda a: a.get_zorder())
    axes = [a for a in top if isinstance(a, Axes)]
    if axes and any(not isinstance(a, Axes) for a in top[: top.index(axes[-1])]):
        return None  # a figure-level artist under an axes' decorations
    boxes = [ax.get_position() for ax in axes if ax.get_visible()]
    if any(a.overlaps(b) and a.intersection(a, b).width * a.intersection(a, b).height > 1e-9
           for i, a in enumerate(boxes) for b in boxes[i + 1:]):
        return None
    redraw: list[Artist] = []
    strips = _colour_bars(fig)
    for artist in top:
        if not isinstance(artist, Axes):
            redraw.append(artist)
            continue
        if not artist.get_visible():
            continue
        seen_axis = not artist.axison  # only what is drawn before the ticks could be drawn over by them
        first = len(redraw)
        for child in _axes_draw_list(artist):
            if child in strips and len(redraw) == first:
                continue  # a colour strip under everything else its axes draws: in the background, keyed
            if isinstance(child, Axes):
                return None  # an inset axes draws its own decorations
            if isinstance(child, Axis):
                seen_axis = True
                continue
            if not seen_axis and child.get_visible() and not (_clipped(child) and _axes_draw_outside(artist)):
                return None  # drawn under the ticks, and could overlap them
            redraw.append(child)
    return redraw


def _axes_draw_outside(ax: Axes) -> bool:
    """True when the axes' decorations draw nothing inside it: no grid lines, no inward ticks."""
    return all(not t.gridline.get_visible() and t.get_tickdir() == "out"
               for axis in (ax.xaxis, ax.yaxis) for t in (axis.majorTicks[0], axis.minorTicks[0]))


class LiveFigure:
    """``controls`` (name -> ipywidget with a ``value``) drive ``update(**values)`` on ``fig``.

    ``update`` may return a string, shown under the figure as a readout (entropy, gradient, ...).
    ``blit=False`` draws the whole figure at every move. ``check_blit`` (default: the environment variable
    ``COURSE_CHECK_BLIT=1``) compares every fast redraw with a full draw and raises :class:`StaleBlitError`.
    """

    def __init__(
        self,
        fig: Figure,
        update: Callable[..., str | None],
        controls: dict[str, widgets.ValueWidget],
        *,
        height: str = "380px",
        blit: bool = True,
        check_blit: bool | None = None,
    ) -> None:
        if not isinstance(fig, Figure):
            raise TypeError(f"fig must be a matplotlib Figure; got {type(fig).__name__}")
        if not callable(update):
            raise TypeError(f"update must be callable; got {type(update).__name__}")
        if not isinstance(controls, dict) or not all(isinstance(c, widgets.ValueWidget) for c in controls.values()):
            raise TypeError(f"controls must be a dict of name -> ipywidget with a value; got {controls!r}")
        self.fig = fig
        self.update = update
        self.controls = controls
        self.blit = blit
        self.check_blit = os.environ.get("COURSE_CHECK_BLIT") == "1" if check_blit is None else check_blit
        self.image = widgets.Image(format="png", layout=widgets.Layout(height=height, object_fit="contain"))
        self.readout = widgets.HTML(layout=widgets.Layout(min_height="1.6em"))
        self.text = ""  # the last readout, as plain text
        self.redraws = 0  # pictures sent to the image
        self.full_redraws = 0  # of which the whole figure was drawn
        self._backgrounds: OrderedDict[tuple, object] = OrderedDict()  # background key -> picture
        for control in controls.values():
            control.observe(self._on_change, names="value")
        self.widget = widgets.VBox([widgets.HBox(list(controls.values())), self.image, self.readout])
        self.widget.add_class("course-live-figure")
        self.refresh()
        # The layout is solved once, for the first picture; later redraws keep it (a fixed frame, and a faster
        # redraw: constrained layout would be solved again at every move).
        fig.set_layout_engine("none")
        _LIVE.add(self)

    def values(self) -> dict[str, object]:
        return {name: control.value for name, control in self.controls.items()}

    def refresh(self) -> None:
        self.text = self.update(**self.values()) or ""
        self.readout.value = f"<code>{self.text}</code>" if self.text else ""
        self.image.value = self._render()
        self.redraws += 1

    def _render(self) -> bytes:
        canvas = agg_canvas(self.fig)
        redraw = redraw_list(self.fig) if self.blit else None
        key = background_key(self.fig) if redraw is not None else None
        background = self._backgrounds.get(key) if redraw is not None else None
        if background is None:
            self._draw_in_full(canvas, redraw)
        else:
            self._backgrounds.move_to_end(key)
            canvas.restore_region(background)
            for artist in redraw:
                self.fig.draw_artist(artist)
            if self.check_blit:
                self._compare_with_full_draw(canvas)
        return encode_png(canvas)

    def _draw_in_full(self, canvas, redraw: list[Artist] | None) -> None:
        self.full_redraws += 1
        if redraw is None:
            canvas.draw()
            return
        # Animated artists are left out of canvas.draw(): a background without them. Matplotlib before 3.11 draws
        # an animated AxesImage all the same, and a transparent (NaN) cell would then show the old picture
        # through it, so images are hidden instead; they lie inside their axes and do not move the layout.
        images = [artist for artist in redraw if isinstance(artist, AxesImage) and artist.get_visible()]
        for artist in redraw:
            artist.set_animated(True)
        for image in images:
            image.set_visible(False)
        canvas.draw()
        for artist in redraw:
            artist.set_animated(False)  # the figure stays as it was for anyone else who draws it
        for image in images:
            image.set_visible(True)
        # keyed after the draw: the constrained layout may have moved the axes
        self._backgrounds[background_key(self.fig)] = canvas.copy_from_bbox(self.fig.bbox)
        while len(self._backgrounds) > BACKGROUNDS_KEPT:
            self._backgrounds.popitem(last=False)  # the least recently used
        for artist in redraw:
            self.fig.draw_artist(artist)

    def _compare_with_full_draw(self, canvas) -> None:
        fast = np.array(canvas.buffer_rgba())
        canvas.draw()
        differ = np.any(fast != np.asarray(canvas.buffer_rgba()), axis=-1)
        if differ.any():
            message = (f"live figure {self.values()}: the fast redraw differs from a full draw in {differ.sum()} "
                       "pixels; pass blit=False or report the figure")
            self.readout.value = f"<code>{message}</code>"
            raise StaleBlitError(message)

    def _on_change(self, _change: dict) -> None:
        self.refresh()

    def _repr_mimebundle_(self, **kwargs) -> dict:
        """The widget view, with the current picture as image/png for renderers without a kernel."""
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["image/png"] = base64.b64encode(self.image.value).decode("ascii")
        bundle["text/plain"] = STATIC_TEXT[edition()] + (f"\n{self.text}" if self.text else "")
        return bundle


def live_figures() -> list[LiveFigure]:
    """Every live figure made in this kernel that is still alive."""
    return list(_LIVE)


def _positions(control: widgets.ValueWidget, most: int = 12) -> tuple[str, list]:
    """Where to move a control: ("index", every option) for a selection, ("value", up to ``most`` values
    from min to max) for a slider."""
    if hasattr(control, "options") and isinstance(getattr(control, "index", None), int):
        return "index", list(range(len(control.options)))
    if hasattr(control, "min") and hasattr(control, "max"):
        values = np.linspace(control.min, control.max, most)
        return "value", sorted({int(round(v)) if isinstance(control.value, int) else float(v) for v in values})
    return "value", [control.value]


def move_every_control(live: LiveFigure) -> int:
    """Move each control of ``live`` through its positions, back, and to where it was, comparing every fast
    redraw with a full draw (raises :class:`StaleBlitError`). Returns the number of moves."""
    moves = 0
    checking, live.check_blit = live.check_blit, True
    try:
        for control in live.controls.values():
            name, positions = _positions(control)
            start = getattr(control, name)
            for position in positions + positions[::-1][1:] + [start]:
                if position != getattr(control, name):
                    setattr(control, name, position)
                    moves += 1
    finally:
        live.check_blit = checking
    return moves
