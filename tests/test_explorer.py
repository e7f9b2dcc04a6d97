"""helpers.explorer.HeatmapExplorer: frames validated at the edge, one bundle for every host, data = the matrices."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest
import torch
from matplotlib import colormaps
from matplotlib.colors import to_hex

from helpers.explorer import MODULE, HeatmapExplorer

WORDS = ["the", "cat", "sat", "down"]


def frames(scale: float = 1.0) -> dict:
    return {w: {"matrix": np.full((4, 4), i / 4 * scale), "rows": WORDS, "cols": WORDS, "title": w,
                "highlight_row": i} for i, w in enumerate(WORDS)}


def explorer(**kwargs) -> HeatmapExplorer:
    return HeatmapExplorer(frames(), {"word": {"options": WORDS, "value": "cat", "label": "query"}}, **kwargs)


def shipped(bundle: dict) -> dict:
    found = re.search(r'<script type="application/json">(.*?)</script>', bundle["text/html"], re.S)
    return json.loads(found.group(1).replace("<\\/", "</"))


def test_the_bundle_has_every_host_s_mimetype():
    bundle, _ = explorer()._repr_mimebundle_()
    assert set(bundle) == {"application/vnd.jupyter.widget-view+json", "text/html", "image/png", "text/plain"}
    assert base64.b64decode(bundle["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"
    html = bundle["text/html"]
    assert '<script type="module">' in html and "export function mount" in html
    assert 'src="data:image/png;base64,' in html  # the fallback where scripts do not run
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "") and "https://" not in html
    assert bundle["text/plain"].startswith("<interactive heatmap")


def test_the_html_is_deterministic_for_nbval():
    assert explorer()._repr_mimebundle_()[0]["text/html"] == explorer()._repr_mimebundle_()[0]["text/html"]


def test_the_json_matches_the_matrices_and_matplotlib_s_colours():
    data = shipped(explorer()._repr_mimebundle_()[0])
    for i, word in enumerate(WORDS):
        panel = data["frames"][str(i)]["panels"][0]
        np.testing.assert_allclose(panel["matrix"], frames()[word]["matrix"], atol=1e-12)
        assert panel["rows"] == WORDS and panel["highlight_row"] == i and panel["title"] == word
        assert panel["text"][0][0] == format(i / 4, ".2f")
    assert data["controls"][0]["index"] == 1 and data["controls"][0]["options"] == WORDS
    table = data["colormaps"]["viridis"]
    assert len(table) == 256 and table[0] == to_hex(colormaps["viridis"](0)) == "#440154"
    assert table[-1] == to_hex(colormaps["viridis"](255))


def test_the_control_is_a_traitlet_and_the_frame_follows_it():
    e = explorer()
    assert e.word == "cat" and e.values() == {"word": "cat"}
    e.word = "down"
    np.testing.assert_array_equal(e.frame()[0], np.full((4, 4), 0.75))
    with pytest.raises(ValueError, match=r"word must be one of \['the', 'cat', 'sat', 'down'\]; got 'dog'"):
        e.word = "dog"
    assert e.word == "down"


def test_several_controls_and_panels():
    keys = {(w, flag): [{"matrix": torch.ones(2, 3) * flag, "title": w}, {"matrix": np.zeros((1, 1))}]
            for w in WORDS for flag in (False, True)}
    e = HeatmapExplorer(keys, {"word": {"options": WORDS}, "scaled": {"kind": "toggle"}},
                        panels=[{"cmap": "cividis", "vmax": 2.0}, {}])
    data = e.data
    assert set(data["frames"]) == {f"{i},{j}" for i in range(4) for j in range(2)}
    assert set(data["colormaps"]) == {"cividis", "viridis"}
    e.scaled = True
    np.testing.assert_array_equal(e.frame()[0], np.ones((2, 3)))


def test_a_nan_is_a_blank_cell_shipped_as_null_with_no_text():
    seen = np.array([[0.5, np.nan], [0.25, np.nan]])
    e = HeatmapExplorer({w: [{"matrix": seen}, {"matrix": np.ones((2, 1))}] for w in WORDS},
                        {"word": {"options": WORDS}}, size=(6, 3), width_ratios=[2, 1])
    panel = shipped(e._repr_mimebundle_()[0])["frames"]["0"]["panels"][0]
    assert panel["matrix"] == [[0.5, None], [0.25, None]] and panel["text"] == [["0.50", ""], ["0.25", ""]]
    assert np.isnan(e.frame()[0][0, 1]) and e.size == (6.0, 3.0) and e.width_ratios == [2.0, 1.0]
    assert base64.b64decode(e._repr_mimebundle_()[0]["image/png"])[:4] == b"\x89PNG"


def test_the_chinese_edition_labels(monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "zh")
    e = explorer()
    assert e.data["panels"][0]["xlabel"] == "键" and e.data["panels"][0]["ylabel"] == "查询"
    assert e.data["strings"]["heatmap"] == "热力图"
    assert e._repr_mimebundle_()[0]["text/plain"].startswith("<交互热力图")


@pytest.mark.parametrize(("make", "error", "message"), [
    (lambda: HeatmapExplorer({"the": {"matrix": np.eye(2)}}, {"word": {"options": WORDS}}), ValueError,
     r"frames must have a frame for every control value; missing 'cat'"),
    (lambda: HeatmapExplorer({w: {"matrix": np.eye(2), "rows": ["a"]} for w in WORDS}, {"word": {"options": WORDS}}),
     ValueError, r"frames\['the'\] panel 0 rows must have 2 labels \(the matrix's size\); got 1"),
    (lambda: HeatmapExplorer({w: {"matrix": np.ones(3)} for w in WORDS}, {"word": {"options": WORDS}}), ValueError,
     r"frames\['the'\] panel 0 matrix must be a non-empty 2-D matrix \(rows, columns\); got shape \(3,\)"),
    (lambda: HeatmapExplorer({w: {"matrix": np.eye(i + 1)} for i, w in enumerate(WORDS)},
                             {"word": {"options": WORDS}}), ValueError,
     r"frames\['cat'\] panel 0 matrix must keep the first frame's shape \(1, 1\); got \(2, 2\)"),
    (lambda: HeatmapExplorer({w: {"matrix": np.eye(2)} for w in WORDS}, {"word": {"options": WORDS, "value": "x"}}),
     ValueError, r"controls\['word'\]\['value'\] must be one of its options .*; got 'x'"),
    (lambda: HeatmapExplorer({w: {"matrix": np.eye(2)} for w in WORDS}, {"word": WORDS}), TypeError,
     r"controls\['word'\] must be a dict with 'options'.*; got list"),
    (lambda: HeatmapExplorer({w: {"matrix": [["a"]]} for w in WORDS}, {"word": {"options": WORDS}}), TypeError,
     r"frames\['the'\] panel 0 matrix must be a 2-D array of numbers; got list"),
    (lambda: HeatmapExplorer({w: "x" for w in WORDS}, {"word": {"options": WORDS}}), TypeError,
     r"frames\['the'\] must be a panel dict"),
    (lambda: HeatmapExplorer({w: {"matrix": np.eye(2)} for w in WORDS}, {"word": {"options": WORDS}},
                             panels=[{"vmin": 1, "vmax": 0}]), ValueError,
     r"panels\[0\]: vmax must be greater than vmin; got vmin=1.0, vmax=0.0"),
    (lambda: HeatmapExplorer({w: {"matrix": np.eye(2)} for w in WORDS}, {"layout": {"options": WORDS}}), ValueError,
     r"a control's name must be a free Python identifier"),
    (lambda: HeatmapExplorer({w: {"matrix": np.full((2, 2), np.inf)} for w in WORDS}, {"word": {"options": WORDS}}),
     ValueError, r"frames\['the'\] panel 0 matrix must hold finite numbers or NaN \(a blank cell\); got inf"),
    (lambda: HeatmapExplorer({w: {"matrix": np.eye(2)} for w in WORDS}, {"word": {"options": WORDS}}, size=(4, 0)),
     ValueError, r"size must be \(width, height\) in inches, both positive; got \(4, 0\)"),
    (lambda: HeatmapExplorer({w: {"matrix": np.eye(2)} for w in WORDS}, {"word": {"options": WORDS}},
                             width_ratios=[1, 2]), ValueError,
     r"width_ratios must be 1 positive numbers, one per panel; got \[1, 2\]"),
])
def test_bad_input_names_the_argument_the_expected_and_the_actual(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_the_module_is_package_data():
    text = open(__import__("pathlib").Path(__file__).resolve().parents[1] / "pyproject.toml").read()
    assert 'helpers = ["js/*.js"]' in text and MODULE.exists()
    assert "export function render" in MODULE.read_text() and "import " not in MODULE.read_text().split("\n", 9)[-1]
