"""Live figures for the notebooks: controls that update one figure in place.

The figure is built once; each change of a control calls ``update(**values)``, which changes the
artists (``set_data``, texts) and the widget shows the new PNG in an image of fixed height. No figure
is created per move, so moving a slider a hundred times leaks nothing.
"""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as widgets
from matplotlib.figure import Figure

from helpers.plotting import to_png

__all__ = ["LiveFigure"]


class LiveFigure:
    """``controls`` (name -> ipywidget with a ``value``) drive ``update(**values)`` on ``fig``.

    ``update`` may return a string, shown under the figure as a readout (entropy, gradient, ...).
    """

    def __init__(
        self,
        fig: Figure,
        update: Callable[..., str | None],
        controls: dict[str, widgets.ValueWidget],
        *,
        height: str = "380px",
    ) -> None:
        self.fig = fig
        self.update = update
        self.controls = controls
        self.image = widgets.Image(format="png", layout=widgets.Layout(height=height, object_fit="contain"))
        self.readout = widgets.HTML(layout=widgets.Layout(min_height="1.6em"))
        self.redraws = 0
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
        self.image.value = to_png(self.fig)
        self.redraws += 1

    def _on_change(self, _change: dict) -> None:
        self.refresh()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
