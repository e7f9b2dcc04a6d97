"""Moving a client-side explorer (helpers/explorer.py, drawn by helpers/js/heatmap.js) by keyboard, in any host.

The same moves serve the course site (tests/browser/test_site_offline.py) and JupyterLab
(tests/browser/jupyterlab_session.py): each control is focused through its label and stepped through all its
options and back; after each key the frame drawn must be the one its controls stand at, its cells equal to the
data Python computed (1e-6; a blank cell "" against null), its readout the data's, its aria-label not empty.
Each move is timed in the page's clock from the keydown event, for `make bench`: to the new figure in the page
(the redraw is synchronous: when data-frame changes, the SVG is new) and to the first frame painted after it
(a requestAnimationFrame callback, then a task: the frame has been painted by then; this waits for the display's
next frame, up to 16.7 ms at 60 Hz).
"""

from __future__ import annotations

from playwright.sync_api import TimeoutError as PlaywrightTimeout

# What an explorer (mounted in `root`, a .course-explorer) shows now: the values drawn as the strings of their
# data-value ("" for a blank cell), per panel in order; the framed row's y; the hidden tables' text.
SHOWN = """root => ({
  frame: root.dataset.frame,
  label: (root.querySelector('svg.cx-svg') || {getAttribute: () => null}).getAttribute('aria-label'),
  values: Array.from(root.querySelectorAll('svg .cx-panel')).map(p =>
    Array.from(p.querySelectorAll('rect.cx-cell')).map(r => r.getAttribute('data-value'))),
  readout: (root.querySelector('output.cx-readout') || {}).textContent,
  highlight: root.querySelector('rect.cx-highlight') && root.querySelector('rect.cx-highlight').getAttribute('y'),
  table: (root.querySelector('.cx-tables') || {}).textContent,
})"""
# Per kind of control: the key that moves it one option on, the key that moves it one option back.
KEYS = {"select": ("ArrowDown", "ArrowUp"), "slider": ("ArrowRight", "ArrowLeft"), "toggle": ("Space", "Space")}
# The timer: a keydown (seen in the capture phase: the explorer stops its propagation, so that JupyterLab's
# shortcuts do not take the arrows) starts it; the change of data-frame (the redraw) arms a requestAnimationFrame
# whose task after the paint stops it.
ARM_TIMER = """root => {
  const move = root.courseTimer = {down: null, drawn: null, painted: null};
  const onKey = event => { if (move.down === null) move.down = event.timeStamp; };
  window.addEventListener('keydown', onKey, {capture: true, once: true});
  const seen = new MutationObserver(() => {
    seen.disconnect();
    move.drawn = performance.now();
    requestAnimationFrame(() => setTimeout(() => { move.painted = performance.now(); }, 0));
  });
  seen.observe(root, {attributes: true, attributeFilter: ['data-frame']});
}"""


def same_value(drawn: str | None, expected: float | None) -> bool:
    """A cell's data-value against the data's number (a blank cell: "" against null)."""
    if expected is None or drawn in (None, ""):
        return expected is None and drawn == ""
    try:
        return abs(float(drawn) - expected) < 1e-6
    except ValueError:
        return False


def frame_problems(shown: dict, data: dict, key: str) -> list[str]:
    """How what an explorer shows differs from its data's frame `key` (the frame its controls stand at)."""
    if shown["frame"] != key:
        return [f"shows frame {shown['frame']!r}, its controls stand at {key!r}"]
    frame = data["frames"].get(key)
    if frame is None:
        return [f"frame {key!r} is not in the data"]
    problems = []
    if len(shown["values"]) != len(frame["panels"]):
        problems.append(f"frame {key}: {len(shown['values'])} panels drawn, the data has {len(frame['panels'])}")
    for p, (drawn, panel) in enumerate(zip(shown["values"], frame["panels"])):
        expected = [v for row in panel["matrix"] for v in row]
        if len(drawn) != len(expected):
            problems.append(f"frame {key} panel {p}: {len(drawn)} cells drawn, the data has {len(expected)}")
            continue
        for c, (a, b) in enumerate(zip(drawn, expected)):
            if not same_value(a, b):
                problems.append(f"frame {key} panel {p} cell {c}: drawn {a!r}, the data has {b!r}")
                break
    if shown["readout"] != (frame.get("readout") or ""):
        problems.append(f"frame {key}: readout {shown['readout']!r}, the data has {frame.get('readout')!r}")
    if not shown["label"]:
        problems.append(f"frame {key}: the figure has no aria-label")
    return problems


def steps(start: int, count: int) -> list[int]:
    """The options a control visits, one step at a time: up to its last, down to its first, back to `start`."""
    return [*range(start + 1, count), *range(count - 2, -1, -1), *range(1, start + 1)]


def explorer_problems(page, root, data: dict, latencies: list[dict] | None = None) -> list[str]:
    """Move each control of the explorer mounted in `root` (a locator of its .course-explorer) through all its
    options by keyboard, then back to its start; check each frame drawn against `data` (what Python shipped).
    Each move's milliseconds from the key to the new figure in the page and to the painted frame are appended to
    `latencies` ({"drawn", "painted"})."""
    handle = root.element_handle()
    indices = [c["index"] for c in data["controls"]]
    problems = frame_problems(root.evaluate(SHOWN), data, ",".join(map(str, indices)))
    for k, control in enumerate(data["controls"]):
        name = f"control {control['label']!r} ({control['kind']})"
        if control["kind"] not in KEYS:
            problems.append(f"{name}: a kind of control this test does not know")
            continue
        field = root.get_by_label(control["label"], exact=True)
        if field.count() != 1:
            problems.append(f"{name}: {field.count()} fields carry its label, not one")
            continue
        forward, back = KEYS[control["kind"]]
        field.focus()
        for target in steps(indices[k], len(control["options"])):
            was = ",".join(map(str, indices))
            root.evaluate(ARM_TIMER)
            page.keyboard.press(forward if target > indices[k] else back)
            indices[k] = target
            try:
                page.wait_for_function("r => r.courseTimer.painted !== null", arg=handle, timeout=5_000)
            except PlaywrightTimeout:
                return [*problems, f"{name}: a key to option {target} left the frame at {was}"]
            timer = root.evaluate("r => r.courseTimer")
            if latencies is not None and timer["down"] is not None:
                latencies.append({"drawn": round(timer["drawn"] - timer["down"], 1),
                                  "painted": round(timer["painted"] - timer["down"], 1)})
            problems += [f"{name}: {p}" for p in frame_problems(root.evaluate(SHOWN), data,
                                                                ",".join(map(str, indices)))]
    return problems


def stored_explorers(notebook) -> list[dict]:
    """The data of each explorer in a notebook file, in output order, as Python computed it (the stored text/html
    output carries it as JSON, with "</" written "<\\/")."""
    import json
    from pathlib import Path

    found = []
    for cell in json.loads(Path(notebook).read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            html = "".join(output.get("data", {}).get("text/html", ""))
            if "data-course-explorer" in html:
                text = html.split('<script type="application/json">', 1)[1].split("</script>", 1)[0]
                found.append(json.loads(text.replace("<\\/", "</")))
    return found
