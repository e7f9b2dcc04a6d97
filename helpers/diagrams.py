"""The Transformer's architecture, drawn by code: the figure the lecture note points to (下图), to project in class.

    architecture()                         # encoder and decoder stacks, N×, residual + LayerNorm, the output
    architecture(highlight="decoder")      # the same, with the part a notebook builds in colour
    you_are_here("07_decoder")             # a one-line strip for the top of notebooks 05-08

Labels come in the edition's language (helpers.course.say); the notebook that builds each part is named on it.
Everything is drawn with matplotlib (no image file), on an opaque white background, so that it prints and
projects the same everywhere. The parts (:data:`PARTS`) are the names ``highlight`` takes.
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from helpers.course import say
from helpers.plotting import new_figure

__all__ = ["PARTS", "NOTEBOOK_PARTS", "architecture", "you_are_here"]

HIGHLIGHT = "#f0a030"  # the part being built: orange, readable in grey too
COLOURS = {"attention": "#cfe3f3", "feed_forward": "#d9efd3", "norm": "#f6f1c9", "embedding": "#f3d9e6",
           "output": "#e4ddf3", "stack": "#f7f7f7"}


@dataclass(frozen=True)
class Box:
    part: str  # one of PARTS
    kind: str  # its colour in COLOURS
    x: float
    y: float
    w: float
    h: float
    en: str
    zh: str


# The blocks, bottom to top, in axes coordinates (0..10 wide, 0..12 high): encoder on the left, decoder right.
BOXES = [
    Box("embedding", "embedding", 0.6, 0.6, 3.6, 0.8, "input embedding", "输入嵌入"),
    Box("positional_encoding", "embedding", 0.6, 1.7, 3.6, 0.7, "+ positional encoding", "+ 位置编码"),
    Box("encoder_self_attention", "attention", 0.9, 3.2, 3.0, 1.0, "multi-head\nself-attention", "多头自注意力"),
    Box("add_norm", "norm", 0.9, 4.4, 3.0, 0.6, "add & LayerNorm", "残差 + 层标准化"),
    Box("encoder_feed_forward", "feed_forward", 0.9, 5.5, 3.0, 0.9, "feed-forward", "前馈网络"),
    Box("add_norm", "norm", 0.9, 6.6, 3.0, 0.6, "add & LayerNorm", "残差 + 层标准化"),
    Box("embedding", "embedding", 5.8, 0.6, 3.6, 0.8, "output embedding\n(shifted right)", "输出嵌入（右移一位）"),
    Box("positional_encoding", "embedding", 5.8, 1.7, 3.6, 0.7, "+ positional encoding", "+ 位置编码"),
    Box("masked_self_attention", "attention", 6.1, 3.2, 3.0, 1.0, "masked multi-head\nself-attention",
        "带掩码的\n多头自注意力"),
    Box("add_norm", "norm", 6.1, 4.4, 3.0, 0.6, "add & LayerNorm", "残差 + 层标准化"),
    Box("cross_attention", "attention", 6.1, 5.5, 3.0, 1.0, "multi-head\ncross-attention", "多头交叉注意力"),
    Box("add_norm", "norm", 6.1, 6.7, 3.0, 0.6, "add & LayerNorm", "残差 + 层标准化"),
    Box("decoder_feed_forward", "feed_forward", 6.1, 7.8, 3.0, 0.9, "feed-forward", "前馈网络"),
    Box("add_norm", "norm", 6.1, 8.9, 3.0, 0.6, "add & LayerNorm", "残差 + 层标准化"),
    Box("output", "output", 5.8, 10.2, 3.6, 0.7, "linear + softmax", "线性层 + softmax"),
]

#: every name ``highlight`` accepts: the blocks, and the two stacks
PARTS = tuple(dict.fromkeys([b.part for b in BOXES] + ["encoder", "decoder"]))
ENCODER_PARTS = {"encoder_self_attention", "encoder_feed_forward"}
DECODER_PARTS = {"masked_self_attention", "cross_attention", "decoder_feed_forward"}

#: what each notebook builds, for its "you are here" strip
NOTEBOOK_PARTS = {
    "02_qkv_toy_matrix": ("encoder_self_attention",),
    "03_scaled_dot_product": ("encoder_self_attention",),
    "04_masking": ("masked_self_attention",),
    "05_multi_head": ("encoder_self_attention", "masked_self_attention", "cross_attention"),
    "06_encoder": ("encoder", "positional_encoding", "add_norm"),
    "07_decoder": ("decoder",),
    "08_full_transformer": ("encoder", "decoder", "embedding", "positional_encoding", "output"),
}


def _check_highlight(highlight: str | tuple[str, ...] | list[str] | None) -> set[str]:
    if highlight is None:
        return set()
    chosen = (highlight,) if isinstance(highlight, str) else highlight
    if not isinstance(chosen, (tuple, list)) or not all(isinstance(p, str) for p in chosen):
        raise TypeError(f"highlight must be a part name or a tuple of them; got {highlight!r}")
    unknown = [p for p in chosen if p not in PARTS]
    if unknown:
        raise ValueError(f"highlight must name parts of {PARTS}; got unknown {unknown}")
    parts = set(chosen)
    if "encoder" in parts:
        parts |= ENCODER_PARTS
    if "decoder" in parts:
        parts |= DECODER_PARTS
    return parts


def _lit(box: Box, parts: set[str]) -> bool:
    if box.part != "add_norm" or "add_norm" in parts:
        return box.part in parts
    encoder = box.x < 5  # an add & norm lights up with the stack it belongs to
    return ("encoder" in parts and encoder) or ("decoder" in parts and not encoder)


def _arrow(ax, start: tuple[float, float], end: tuple[float, float], **style) -> None:
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12, color="0.25", lw=1.2,
                                 shrinkA=0, shrinkB=0, **style))


def architecture(highlight: str | tuple[str, ...] | None = None, *, width: float = 7.0) -> Figure:
    """The encoder-decoder Transformer (the note's 下图, the paper's Figure 1), with the ``highlight`` parts
    (names of :data:`PARTS`; "encoder"/"decoder" light a whole stack) in orange. Returns the figure."""
    parts = _check_highlight(highlight)
    if not isinstance(width, (int, float)) or width <= 0:
        raise ValueError(f"width must be a positive number of inches; got {width!r}")
    fig = new_figure(width, width * 1.2)
    ax = fig.add_subplot()
    ax.set(xlim=(-0.9, 10.9), ylim=(-0.4, 12.2), aspect="equal")
    ax.axis("off")
    for x, y0, y1, label in ((0.6, 2.9, 7.5, say("encoder", "编码器")), (5.8, 2.9, 9.8, say("decoder", "解码器"))):
        ax.add_patch(FancyBboxPatch((x, y0), 3.6, y1 - y0, boxstyle="round,pad=0.05,rounding_size=0.2",
                                    facecolor=COLOURS["stack"], edgecolor="0.35", lw=1.2))
        ax.text(x - 0.15 if x < 5 else x + 3.75, (y0 + y1) / 2, f"{label}\nN×", ha="right" if x < 5 else "left",
                va="center", fontsize=11, weight="bold", linespacing=1.6)
    for box in BOXES:
        lit = _lit(box, parts)
        ax.add_patch(FancyBboxPatch((box.x, box.y), box.w, box.h, boxstyle="round,pad=0.02,rounding_size=0.12",
                                    facecolor=HIGHLIGHT if lit else COLOURS[box.kind],
                                    edgecolor="0.1" if lit else "0.45", lw=2.0 if lit else 0.9))
        ax.text(box.x + box.w / 2, box.y + box.h / 2, say(box.en, box.zh), ha="center", va="center", fontsize=8.5,
                weight="bold" if lit else "normal")
    for x in (2.4, 7.6):  # the main path up each column
        _arrow(ax, (x, 0.1), (x, 0.6))
        _arrow(ax, (x, 1.4), (x, 1.7))
        _arrow(ax, (x, 2.4), (x, 3.2))
    for y0, y1 in ((4.2, 4.4), (5.0, 5.5), (6.4, 6.6)):
        _arrow(ax, (2.4, y0), (2.4, y1))
    for y0, y1 in ((4.2, 4.4), (5.0, 5.5), (6.5, 6.7), (7.3, 7.8), (8.7, 8.9), (9.5, 10.2)):
        _arrow(ax, (7.6, y0), (7.6, y1))
    _arrow(ax, (7.6, 10.9), (7.6, 11.5))
    ax.text(7.6, 11.55, say("output probabilities", "输出概率"), ha="center", va="bottom", fontsize=9)
    ax.text(2.4, 0.05, say("source tokens", "源语言词元"), ha="center", va="top", fontsize=9)
    ax.text(7.6, 0.05, say("target tokens so far", "已生成的目标词元"), ha="center", va="top", fontsize=9)
    # residual connections: around each sub-layer, into its add & norm
    for x, pairs in ((0.9, ((2.9, 4.7), (5.2, 6.9))), (6.1, ((2.9, 4.7), (5.2, 7.0), (7.5, 9.2)))):
        for y0, y1 in pairs:
            ax.add_patch(FancyArrowPatch((x, y0), (x, y1), connectionstyle="bar,fraction=-0.25", arrowstyle="-|>",
                                         mutation_scale=9, color="0.5", lw=0.9, shrinkA=0, shrinkB=0))
    # the encoder's output is the keys and values of every decoder layer's cross-attention
    ax.add_patch(FancyArrowPatch((2.4, 7.2), (6.1, 6.0), connectionstyle="arc3,rad=-0.25", arrowstyle="-|>",
                                 mutation_scale=12, color="#0072b2", lw=1.6, shrinkA=0, shrinkB=0))
    ax.text(4.2, 7.45, say("K, V", "K、V"), ha="center", va="bottom", fontsize=9, color="#0072b2")
    return fig


STRIP = [  # (parts it stands for, English, Chinese)
    (("embedding", "positional_encoding"), "embedding + positions", "嵌入 + 位置编码"),
    (("encoder_self_attention", "encoder_feed_forward", "encoder"), "encoder ×N", "编码器 ×N"),
    (("masked_self_attention", "cross_attention", "decoder_feed_forward", "decoder"), "decoder ×N", "解码器 ×N"),
    (("output",), "linear + softmax", "线性层 + softmax"),
]


def you_are_here(notebook: str, *, width: float = 7.0) -> Figure:
    """A one-line map of the Transformer for the top of ``notebook`` (a key of :data:`NOTEBOOK_PARTS`), the
    blocks it builds in orange and named below."""
    if notebook not in NOTEBOOK_PARTS:
        raise ValueError(f"notebook must be one of {sorted(NOTEBOOK_PARTS)}; got {notebook!r}")
    parts = _check_highlight(NOTEBOOK_PARTS[notebook])
    fig = new_figure(width, width * 0.16)
    ax = fig.add_subplot()
    ax.set(xlim=(0, 10), ylim=(0, 1.6))
    ax.axis("off")
    step = 10 / len(STRIP)
    for i, (stands_for, en, zh) in enumerate(STRIP):
        lit = bool(parts & set(stands_for))
        ax.add_patch(FancyBboxPatch((i * step + 0.15, 0.45), step - 0.6, 0.8,
                                    boxstyle="round,pad=0.02,rounding_size=0.12",
                                    facecolor=HIGHLIGHT if lit else "#eeeeee", edgecolor="0.1" if lit else "0.6",
                                    lw=1.8 if lit else 0.8))
        ax.text(i * step + step / 2 - 0.15, 0.85, say(en, zh), ha="center", va="center", fontsize=9,
                weight="bold" if lit else "normal")
        if i < len(STRIP) - 1:
            _arrow(ax, ((i + 1) * step - 0.45, 0.85), ((i + 1) * step + 0.15, 0.85))
    ax.text(5, 0.12, say(f"you are here: notebook {notebook[:2]} builds the orange part",
                         f"你在这里：笔记本 {notebook[:2]} 搭建的是橙色的部分"), ha="center", va="center", fontsize=8.5)
    return fig
