"""Live figures for the notebooks: controls that update one figure in place.

The figure is built once; each change of a control calls ``update(**values)``, which changes the
artists (``set_data``, texts) and the widget shows the new PNG in an image of fixed height. No figure
is created per move, so moving a slider a hundred times leaks nothing.

A move redraws only what a move can change (blitting, as matplotlib's animations do): the images, texts and
patches (spines, frames) of every axes and the figure's own texts are drawn over a cached picture of the rest.
That picture (tick marks and labels, axis labels, colour bars) is drawn again whenever the ticks, limits,
axis labels or axes positions change to a state not seen among the last few (going back to a tick labelling
seen before reuses its picture). An ``update`` that changes other static parts (a line, a colour bar's
limits) needs ``blit=False``: then every move draws the whole figure.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import ipywidgets as widgets
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Patch
from matplotlib.text import Text

from helpers.plotting import agg_canvas, encode_png

__all__ = ["LiveFigure"]

BACKGROUNDS_KEPT = 8  # backgrounds remembered per live figure (one per tick labelling seen last), about 1 MB each


def changing_artists(fig: Figure) -> list[Artist]:
    """The artists a move may change, in drawing order: per axes (images, texts, patches) by zorder, then the
    figure's texts (a suptitle)."""
    artists: list[Artist] = []
    for ax in fig.axes:
        kinds = [a for a in ax.get_children() if isinstance(a, (AxesImage, Text, Patch)) and a is not ax.patch]
        artists += sorted(kinds, key=lambda a: a.get_zorder())
    return artists + list(fig.texts)


def static_key(fig: Figure) -> tuple:
    """What the cached background depends on: each axes' position, limits, tick positions and labels, axis
    labels. Equal keys mean the background is still the right one."""
    key = []
    for ax in fig.axes:
        key.append((ax.get_position().bounds, ax.get_xlim(), ax.get_ylim()))
        for axis in (ax.xaxis, ax.yaxis):
            locations = tuple(axis.get_majorticklocs())
            key.append((locations, tuple(axis.major.formatter.format_ticks(locations)), axis.label.get_text()))
    return tuple(key)


class LiveFigure:
    """``controls`` (name -> ipywidget with a ``value``) drive ``update(**values)`` on ``fig``.

    ``update`` may return a string, shown under the figure as a readout (entropy, gradient, ...).
    ``blit=False`` draws the whole figure at every move (for an ``update`` that changes more than the module
    docstring lists).
    """

    def __init__(
        self,
        fig: Figure,
        update: Callable[..., str | None],
        controls: dict[str, widgets.ValueWidget],
        *,
        height: str = "380px",
        blit: bool = True,
    ) -> None:
        self.fig = fig
        self.update = update
        self.controls = controls
        self.image = widgets.Image(format="png", layout=widgets.Layout(height=height, object_fit="contain"))
        self.readout = widgets.HTML(layout=widgets.Layout(min_height="1.6em"))
        self.redraws = 0  # pictures sent to the image
        self.full_redraws = 0  # of which the whole figure was drawn
        self._changing = changing_artists(fig) if blit else []
        self._backgrounds: OrderedDict[tuple, object] = OrderedDict()  # static key -> picture of the rest
        for control in controls.values():
            control.observe(self._on_change, names="value")
        self.widget = widgets.VBox([widgets.HBox(list(controls.values())), self.image, self.readout])
        self.widget.add_class("course-live-figure")
        self.refresh()
        # The layout is solved once, for the first picture; later redraws keep it (a fixed frame, and a faster
        # redraw: constrained layout would be solved again at every move).
        fig.set_layout_engine("none")

    def values(self) -> dict[str, object]:
        return {name: control.value for name, control in self.controls.items()}

    def refresh(self) -> None:
        text = self.update(**self.values())
        self.readout.value = f"<code>{text}</code>" if text else ""
        self.image.value = self._render()
        self.redraws += 1

    def _render(self) -> bytes:
        canvas = agg_canvas(self.fig)
        key = static_key(self.fig) if self._changing else None
        background = self._backgrounds.get(key)
        if background is None:
            self._set_animated(True)  # animated artists are left out of canvas.draw(): a background without them
            canvas.draw()
            self._set_animated(False)  # the figure stays as it was for anyone else who draws it
            self.full_redraws += 1
            if self._changing:  # keyed after the draw: the constrained layout may have moved the axes
                self._backgrounds[static_key(self.fig)] = canvas.copy_from_bbox(self.fig.bbox)
                while len(self._backgrounds) > BACKGROUNDS_KEPT:
                    self._backgrounds.popitem(last=False)  # the least recently used
        else:
            self._backgrounds.move_to_end(key)
            canvas.restore_region(background)
        for artist in self._changing:
            self.fig.draw_artist(artist)
        return encode_png(canvas)

    def _set_animated(self, animated: bool) -> None:
        for artist in self._changing:
            artist.set_animated(animated)

    def _on_change(self, _change: dict) -> None:
        self.refresh()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
