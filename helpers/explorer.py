"""Explorers that move in the browser: every frame is computed in Python once and shipped with the figure.

    HeatmapExplorer(frames, {"word": {"options": words, "value": "cat", "label": say("query", "查询")}})

``frames`` maps each control value (a tuple of values, in the controls' order, when there are several
controls) to what the figure shows for it: one panel ``{"matrix", "rows", "cols", "title"}`` (optionally
``"highlight_row"``), or ``{"panels": [panel, ...], "readout": "..."}``. A NaN in a matrix is a blank cell (what
the figure has not seen yet, as in 10's blocks). ``panels`` gives each panel's fixed look (``vmin``, ``vmax``,
``cmap``, ``xlabel``, ``ylabel``, ``colorbar``, ``annotate``, ``fmt``); the defaults are
:class:`helpers.plotting.Heatmap`'s (viridis, 0 to 1, "key"/"query" in the edition's language). In the browser
every panel's cells have one size, so panels with as many rows line up; ``size`` (inches) and ``width_ratios``
shape the PNG of several panels.

**One output, every host.** The figure is drawn by one ES module, ``helpers/js/heatmap.js``:

- JupyterLab, live: anywidget's view (the widget renderer ranks first). Each control's value is a traitlet of
  the same name, synced both ways (``explorer.word`` reads the menu; ``explorer.word = "the"`` moves it), but a
  move never waits for the kernel: the browser already holds every frame.
- A page with no kernel (the course site, an nbconvert HTML export, nbviewer): the widget view has no stored
  state, so the renderer takes the ``text/html``, which carries the data (JSON) and the module inline, in a
  ``<script type="module">`` that mounts the same explorer. Nothing is fetched from another host.
- Where scripts do not run (GitHub, a reopened untrusted notebook in JupyterLab): the same ``text/html`` shows
  its ``<img>``, the PNG of the first frame drawn by :mod:`helpers.plotting`; ``image/png`` is in the bundle too.
- nbval skips the widget view and ``image/png`` and compares ``text/plain`` (short, deterministic) and
  ``text/html``, which is deterministic: the module's text, the JSON (sorted keys, floats as Python writes them)
  and the PNG, drawn by Agg with the course's fonts (the same bytes on the same matplotlib and fonts).

Keyboard and screen readers: the controls are native ``<select>``, ``<input type=range>`` and checkboxes with a
``<label>``; the figure is an SVG with an ``aria-label``, followed by a visually hidden table of each panel's
matrix, redrawn at each move; the readout is an ``aria-live`` region.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
from collections.abc import Mapping, Sequence
from itertools import product
from pathlib import Path

import anywidget
import numpy as np
import torch
import traitlets
from matplotlib import colormaps
from matplotlib.colors import to_hex
from matplotlib.patches import Rectangle

from helpers.course import edition, say
from helpers.plotting import ANNOTATE_MAX, Heatmap, new_figure, to_png

__all__ = ["HeatmapExplorer", "MODULE"]

MODULE = Path(__file__).resolve().parent / "js" / "heatmap.js"
KINDS = ("select", "slider", "toggle")
STATIC_TEXT = {"en": "<interactive heatmap: move its controls in JupyterLab or on the course site>",
               "zh": "<交互热力图：在 JupyterLab 或课程网站上移动控件>"}
STRINGS = {
    "en": {"heatmap": "Heatmap", "rows": "rows", "columns": "columns", "explorer": "Interactive heatmap",
           "table_follows": "The values follow as a table.", "fallback": "The figure for the first choice"},
    "zh": {"heatmap": "热力图", "rows": "行", "columns": "列", "explorer": "交互热力图",
           "table_follows": "数值见后面的表格。", "fallback": "第一个选项对应的图"},
}
PANEL_KEYS = {"vmin", "vmax", "cmap", "xlabel", "ylabel", "colorbar", "annotate", "fmt"}
FRAME_PANEL_KEYS = {"matrix", "rows", "cols", "title", "highlight_row"}


def _matrix(value: object, where: str) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().double().numpy()
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{where} must be a 2-D array of numbers; got {type(value).__name__}") from None
    if array.ndim != 2 or 0 in array.shape:
        raise ValueError(f"{where} must be a non-empty 2-D matrix (rows, columns); got shape {array.shape}")
    if np.isinf(array).any():
        raise ValueError(f"{where} must hold finite numbers or NaN (a blank cell); got inf")
    return array


def _tokens(value: object, size: int, where: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f"{where} must be a list of {size} strings; got {type(value).__name__}")
    if len(value) != size:
        raise ValueError(f"{where} must have {size} labels (the matrix's size); got {len(value)}")
    return [str(token) for token in value]


def _control(name: str, spec: object) -> dict:
    if not isinstance(spec, Mapping):
        raise TypeError(f"controls[{name!r}] must be a dict with 'options' (and 'value', 'label', 'kind'); "
                        f"got {type(spec).__name__}")
    unknown = set(spec) - {"options", "value", "label", "kind", "labels"}
    if unknown:
        raise ValueError(f"controls[{name!r}] has unknown keys {sorted(unknown)}; expected options, value, label, "
                         "kind, labels")
    kind = spec.get("kind", "select")
    if kind not in KINDS:
        raise ValueError(f"controls[{name!r}]['kind'] must be one of {KINDS}; got {kind!r}")
    options = list(spec.get("options", [False, True] if kind == "toggle" else []))
    if not options:
        raise ValueError(f"controls[{name!r}]['options'] must list at least one value; got {options!r}")
    if kind == "toggle" and options != [False, True]:
        raise ValueError(f"controls[{name!r}]: a toggle's options must be [False, True]; got {options!r}")
    for option in options:
        finite = not isinstance(option, float) or math.isfinite(option)
        if not isinstance(option, str | int | float | bool) or not finite:
            raise TypeError(f"controls[{name!r}]['options'] must be strings, numbers or booleans; got {option!r}")
    value = spec.get("value", options[0])
    if value not in options:
        raise ValueError(f"controls[{name!r}]['value'] must be one of its options {options!r}; got {value!r}")
    labels = [str(option) for option in options] if spec.get("labels") is None else list(spec["labels"])
    if len(labels) != len(options):
        raise ValueError(f"controls[{name!r}]['labels'] must have {len(options)} entries; got {len(labels)}")
    return {"name": name, "kind": kind, "label": str(spec.get("label", name)), "options": options,
            "labels": [str(label) for label in labels], "index": options.index(value)}


class HeatmapExplorer(anywidget.AnyWidget):
    """Heatmaps whose every frame is computed in Python once, moved in the browser (see the module's docstring).

    The value of each control is the traitlet of its name; :meth:`frame` gives the matrices shown now.
    """

    _esm = MODULE  # anywidget reads the file (the same text the static pages inline)
    _data = traitlets.Dict().tag(sync=True)

    def __init__(self, frames: Mapping, controls: Mapping, *, panels: Sequence[Mapping] | None = None,
                 title: str | None = None, size: tuple[float, float] | None = None,
                 width_ratios: Sequence[float] | None = None) -> None:
        if not isinstance(controls, Mapping) or not controls:
            raise TypeError(f"controls must be a non-empty dict of name -> control spec; got {controls!r}")
        specs = [_control(name, spec) for name, spec in controls.items()]
        for spec in specs:
            if not spec["name"].isidentifier() or spec["name"].startswith("_") or hasattr(HeatmapExplorer,
                                                                                          spec["name"]):
                raise ValueError(f"controls: a control's name must be a free Python identifier (it becomes a "
                                 f"traitlet); got {spec['name']!r}")
        if not isinstance(frames, Mapping):
            raise TypeError(f"frames must be a dict of control value -> frame; got {type(frames).__name__}")
        self._specs = specs
        self._frames_in = {}
        normalised = {}
        first_panels = None
        for combination in product(*(range(len(s["options"])) for s in specs)):
            values = tuple(s["options"][i] for s, i in zip(specs, combination))
            key = values[0] if len(specs) == 1 else values
            if key not in frames:
                raise ValueError(f"frames must have a frame for every control value; missing {key!r}")
            frame = self._frame(frames[key], key)
            if first_panels is None:
                first_panels = self._panels(panels, len(frame["panels"]))
            self._check_shapes(frame, first_panels, key, normalised)
            normalised[",".join(map(str, combination))] = frame
        extra = [k for k in frames if (k if len(specs) > 1 else (k,)) not in
                 set(product(*(s["options"] for s in specs)))]
        if extra:
            raise ValueError(f"frames has keys that no control value reaches: {extra[:3]!r}")
        self._frames_in = normalised
        self.panels = first_panels
        self.size, self.width_ratios = self._layout(size, width_ratios, len(first_panels))
        self.title = title
        self.language = edition()
        self.data = {
            "version": 1,
            "lang": self.language,
            "title": title or "",
            "controls": specs,
            "panels": self.panels,
            "colormaps": {name: [to_hex(c) for c in colormaps[name](np.arange(256) / 255.0)]
                          for name in sorted({p["cmap"] for p in self.panels})},
            "frames": {key: self._shipped(frame) for key, frame in normalised.items()},
            "strings": STRINGS[self.language],
        }
        super().__init__()
        self.add_traits(**{s["name"]: traitlets.Any(s["options"][s["index"]]).tag(sync=True) for s in specs})
        for spec in specs:
            self.observe(self._check_value, names=spec["name"])
        self._data = self.data

    # ---- validation -------------------------------------------------------------------------------------------
    @staticmethod
    def _frame(frame: object, key: object) -> dict:
        where = f"frames[{key!r}]"
        if isinstance(frame, Mapping) and "matrix" in frame:
            frame = {"panels": [frame]}
        elif isinstance(frame, Sequence) and not isinstance(frame, str):
            frame = {"panels": list(frame)}
        if not isinstance(frame, Mapping) or not isinstance(frame.get("panels"), Sequence) or not frame["panels"]:
            raise TypeError(f"{where} must be a panel dict (matrix, rows, cols, title), a list of them, or "
                            f"{{'panels': [...], 'readout': str}}; got {type(frame).__name__}")
        unknown = set(frame) - {"panels", "readout"}
        if unknown:
            raise ValueError(f"{where} has unknown keys {sorted(unknown)}; expected panels, readout")
        out = []
        for p, panel in enumerate(frame["panels"]):
            at = f"{where} panel {p}"
            if not isinstance(panel, Mapping) or "matrix" not in panel:
                raise TypeError(f"{at} must be a dict with 'matrix', 'rows', 'cols'; got {panel!r:.80}")
            unknown = set(panel) - FRAME_PANEL_KEYS
            if unknown:
                raise ValueError(f"{at} has unknown keys {sorted(unknown)}; expected {sorted(FRAME_PANEL_KEYS)}")
            matrix = _matrix(panel["matrix"], f"{at} matrix")
            rows, cols = matrix.shape
            highlight = panel.get("highlight_row")
            if highlight is not None and not (isinstance(highlight, int) and 0 <= highlight < rows):
                raise ValueError(f"{at} highlight_row must be a row index in [0, {rows}); got {highlight!r}")
            out.append({"matrix": matrix,
                        "rows": _tokens(panel.get("rows", [str(i) for i in range(rows)]), rows, f"{at} rows"),
                        "cols": _tokens(panel.get("cols", [str(j) for j in range(cols)]), cols, f"{at} cols"),
                        "title": str(panel.get("title", "")), "highlight_row": highlight})
        readout = frame.get("readout", "")
        if not isinstance(readout, str):
            raise TypeError(f"{where} readout must be a string; got {type(readout).__name__}")
        return {"panels": out, "readout": readout}

    @staticmethod
    def _panels(panels: Sequence[Mapping] | None, count: int) -> list[dict]:
        panels = [{} for _ in range(count)] if panels is None else list(panels)
        if len(panels) != count:
            raise ValueError(f"panels must have one entry per panel of a frame ({count}); got {len(panels)}")
        out = []
        for p, panel in enumerate(panels):
            unknown = set(panel) - PANEL_KEYS
            if unknown:
                raise ValueError(f"panels[{p}] has unknown keys {sorted(unknown)}; expected {sorted(PANEL_KEYS)}")
            cmap = panel.get("cmap", "viridis")
            if cmap not in colormaps:
                raise ValueError(f"panels[{p}]['cmap'] must be a matplotlib colormap name; got {cmap!r}")
            vmin, vmax = float(panel.get("vmin", 0.0)), float(panel.get("vmax", 1.0))
            if not vmax > vmin:
                raise ValueError(f"panels[{p}]: vmax must be greater than vmin; got vmin={vmin}, vmax={vmax}")
            out.append({"vmin": vmin, "vmax": vmax, "cmap": cmap,
                        "xlabel": say("key", "键") if panel.get("xlabel") is None else str(panel["xlabel"]),
                        "ylabel": say("query", "查询") if panel.get("ylabel") is None else str(panel["ylabel"]),
                        "colorbar": bool(panel.get("colorbar", True)), "annotate": panel.get("annotate"),
                        "fmt": str(panel.get("fmt", ".2f"))})
        return out

    @staticmethod
    def _layout(size: object, width_ratios: object, count: int) -> tuple[tuple[float, float], list[float] | None]:
        if size is None:
            size = (4.6 * count if count > 1 else 4.8, 4.0 if count == 1 else 3.6)
        if (not isinstance(size, Sequence) or len(size) != 2
                or not all(isinstance(v, int | float) and v > 0 for v in size)):
            raise ValueError(f"size must be (width, height) in inches, both positive; got {size!r}")
        if width_ratios is not None:
            if (not isinstance(width_ratios, Sequence) or len(width_ratios) != count
                    or not all(isinstance(v, int | float) and v > 0 for v in width_ratios)):
                raise ValueError(f"width_ratios must be {count} positive numbers, one per panel; got {width_ratios!r}")
            width_ratios = [float(v) for v in width_ratios]
        return (float(size[0]), float(size[1])), width_ratios

    @staticmethod
    def _check_shapes(frame: dict, panels: list[dict], key: object, seen: dict) -> None:
        if len(frame["panels"]) != len(panels):
            raise ValueError(f"frames[{key!r}] must have {len(panels)} panels, as the first frame; "
                             f"got {len(frame['panels'])}")
        if seen:
            first = next(iter(seen.values()))
            for p, (a, b) in enumerate(zip(first["panels"], frame["panels"])):
                if a["matrix"].shape != b["matrix"].shape:
                    raise ValueError(f"frames[{key!r}] panel {p} matrix must keep the first frame's shape "
                                     f"{a['matrix'].shape}; got {b['matrix'].shape}")
        for panel, spec in zip(frame["panels"], panels):
            if spec["annotate"] is None:
                spec["annotate"] = max(panel["matrix"].shape) <= ANNOTATE_MAX

    def _shipped(self, frame: dict) -> dict:
        panels = []
        for panel, spec in zip(frame["panels"], self.panels):
            matrix = panel["matrix"]
            cells = [[None if math.isnan(v) else v for v in row] for row in matrix.tolist()]  # NaN: blank, null
            panels.append({"matrix": cells, "rows": panel["rows"], "cols": panel["cols"],
                           "title": panel["title"], "highlight_row": panel["highlight_row"],
                           "text": [["" if v is None else format(v, spec["fmt"]) for v in row] for row in cells]})
        return {"panels": panels, "readout": frame["readout"]}

    def _check_value(self, change: dict) -> None:
        spec = next(s for s in self._specs if s["name"] == change["name"])
        if change["new"] not in spec["options"]:
            setattr(self, change["name"], change["old"])
            raise ValueError(f"{change['name']} must be one of {spec['options']!r}; got {change['new']!r}")

    # ---- reading it -------------------------------------------------------------------------------------------
    def values(self) -> dict[str, object]:
        """Each control's value now."""
        return {s["name"]: getattr(self, s["name"]) for s in self._specs}

    def _key(self) -> str:
        return ",".join(str(s["options"].index(getattr(self, s["name"]))) for s in self._specs)

    def frame(self) -> list[np.ndarray]:
        """The matrix of each panel for the controls' values now."""
        return [panel["matrix"].copy() for panel in self._frames_in[self._key()]["panels"]]

    @property
    def readout(self) -> str:
        return self._frames_in[self._key()]["readout"]

    # ---- showing it -------------------------------------------------------------------------------------------
    def _first(self) -> dict:
        """The frame of the controls' starting values."""
        return self._frames_in[",".join(str(s["index"]) for s in self._specs)]

    def to_png(self) -> bytes:
        """The first frame (the controls' starting values) drawn by matplotlib, as the course's other figures."""
        first = self._first()
        count = len(first["panels"])
        fig = new_figure(*self.size)
        axes = fig.subplots(1, count, squeeze=False,
                            gridspec_kw={"width_ratios": self.width_ratios} if self.width_ratios else None)[0]
        for ax, panel, spec in zip(axes, first["panels"], self.panels):
            Heatmap(ax, panel["matrix"], panel["rows"], panel["cols"], title=panel["title"], vmin=spec["vmin"],
                    vmax=spec["vmax"], cmap=spec["cmap"], annotate=spec["annotate"], fmt=spec["fmt"],
                    colorbar=spec["colorbar"], xlabel=spec["xlabel"], ylabel=spec["ylabel"])
            if panel["highlight_row"] is not None:
                cols = panel["matrix"].shape[1]
                ax.add_patch(Rectangle((-0.5, panel["highlight_row"] - 0.5), cols, 1, fill=False,
                                       edgecolor="#e69f00", linewidth=3))
        return to_png(fig)

    def to_html(self, png: bytes | None = None) -> str:
        """One self-contained element: the data (JSON), the module inline, the PNG for where scripts do not run."""
        data = json.dumps(self.data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        data = data.replace("</", "<\\/")  # no "</script>" inside the script element
        tag = hashlib.sha256(data.encode()).hexdigest()[:12]
        png = self.to_png() if png is None else png
        alt = html.escape(f"{STRINGS[self.language]['fallback']}: "
                          + "; ".join(p["title"] for p in self._first()["panels"]), quote=True)
        module = MODULE.read_text(encoding="utf-8").replace("</script", "<\\/script")
        mount = ("\nfor (const el of document.querySelectorAll("
                 f"'div[data-course-explorer=\"{tag}\"]:not([data-mounted])')) {{"
                 "\n  el.dataset.mounted = '1';\n"
                 "  const data = JSON.parse(el.querySelector('script[type=\"application/json\"]').textContent);\n"
                 "  mount(el.querySelector('.course-explorer-host'), data);\n}\n")
        return (f'<div class="course-explorer-output" data-course-explorer="{tag}">'
                f'<div class="course-explorer-host"><img alt="{alt}" '
                f'src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}"/></div>'
                f'<script type="application/json">{data}</script>'
                f'<script type="module">{module}{mount}</script></div>')

    def _repr_mimebundle_(self, **kwargs) -> dict:
        shown = super()._repr_mimebundle_(**kwargs)
        data, metadata = shown if isinstance(shown, tuple) else (shown or {}, {})
        bundle = dict(data)
        png = self.to_png()
        bundle["text/html"] = self.to_html(png)
        bundle["image/png"] = base64.b64encode(png).decode("ascii")
        readout = self._first()["readout"]
        bundle["text/plain"] = STATIC_TEXT[self.language] + (f"\n{readout}" if readout else "")
        return bundle, dict(metadata or {})
