"""The architecture figure and the "you are here" strips (helpers.diagrams)."""

from __future__ import annotations

import pytest
from matplotlib.colors import to_rgba
from matplotlib.patches import FancyBboxPatch

from helpers import diagrams
from helpers.plotting import to_png


def lit_labels(fig) -> list[str]:
    """The texts drawn on the orange boxes."""
    ax = fig.axes[0]
    orange = to_rgba(diagrams.HIGHLIGHT)
    boxes = [p for p in ax.patches if isinstance(p, FancyBboxPatch) and p.get_facecolor() == orange]
    texts = []
    for box in boxes:
        x, y, w, h = box.get_x(), box.get_y(), box.get_width(), box.get_height()
        texts += [t.get_text() for t in ax.texts
                  if x <= t.get_position()[0] <= x + w and y <= t.get_position()[1] <= y + h]
    return sorted(texts)


def test_nothing_is_lit_by_default_and_every_block_is_labelled(monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "en")
    fig = diagrams.architecture()
    assert lit_labels(fig) == []
    labels = {t.get_text() for t in fig.axes[0].texts}
    assert {"masked multi-head\nself-attention", "multi-head\ncross-attention", "linear + softmax",
            "encoder\nN×", "decoder\nN×", "K, V"} <= labels
    assert to_png(fig)[:4] == b"\x89PNG"


def test_a_stack_lights_its_blocks_and_its_add_and_norms_only(monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "en")
    assert lit_labels(diagrams.architecture(highlight="decoder")) == sorted(
        ["masked multi-head\nself-attention", "multi-head\ncross-attention", "feed-forward"] + ["add & LayerNorm"] * 3)
    assert lit_labels(diagrams.architecture(highlight="cross_attention")) == ["multi-head\ncross-attention"]
    assert lit_labels(diagrams.architecture(highlight=("add_norm",))) == ["add & LayerNorm"] * 5


def test_labels_follow_the_edition(monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "zh")
    labels = {t.get_text() for t in diagrams.architecture().axes[0].texts}
    assert {"多头交叉注意力", "残差 + 层标准化", "编码器\nN×"} <= labels
    assert not any(t.isascii() and " " in t and t not in ("K, V",) for t in labels), labels
    strip = {t.get_text() for t in diagrams.you_are_here("06_encoder").axes[0].texts}
    assert "你在这里：笔记本 06 搭建的是橙色的部分" in strip


@pytest.mark.parametrize("notebook", sorted(diagrams.NOTEBOOK_PARTS))
def test_each_strip_lights_what_its_notebook_builds(notebook, monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "en")
    lit = lit_labels(diagrams.you_are_here(notebook))
    expected = {"06_encoder": ["embedding + positions", "encoder ×N"], "07_decoder": ["decoder ×N"],
                "08_full_transformer": ["decoder ×N", "embedding + positions", "encoder ×N", "linear + softmax"],
                "04_masking": ["decoder ×N"], "05_multi_head": ["decoder ×N", "encoder ×N"]}
    assert lit == expected.get(notebook, ["encoder ×N"])


@pytest.mark.parametrize("call, error, match", [
    (lambda: diagrams.architecture(highlight="attention"), ValueError, "highlight must name parts of"),
    (lambda: diagrams.architecture(highlight=3), TypeError, "highlight must be a part name"),
    (lambda: diagrams.architecture(width=0), ValueError, "width must be a positive number"),
    (lambda: diagrams.you_are_here("11_nothing"), ValueError, "notebook must be one of"),
])
def test_bad_arguments_are_named(call, error, match):
    with pytest.raises(error, match=match):
        call()
