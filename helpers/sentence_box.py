"""Type your own sentence: a text box, the model's translation, and any of its attention maps, live.

    sentence_box(model, task, layer=best_layer, head=best_head)

The learner types an English sentence and presses Enter. A sentence within the grammar of
:mod:`helpers.translation` is translated greedily; the figure shows one attention map of the chosen kind, layer
and head, queries as rows and keys as columns: for the cross-attention, the Chinese output tokens (each row is
the position that produced that token) against the English tokens; for the encoder's self-attention, English
against English; for the decoder's self-attention, the Chinese output tokens against the decoder's inputs
(``<bos>`` and the tokens produced before). Anything else (an unknown
word, nothing, a very long text, emoji) gets a message under the figure, never a traceback: the message names
each unknown word and the close words the model knows. The figure keeps a fixed grid, so a short sentence
leaves the rest of it empty; a sentence longer than the grid shows its first tokens and says so.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from torch import nn

from helpers.course import say
from helpers.plotting import Heatmap, new_figure
from helpers.translation import SentenceError, Translation, TranslationTask, translate_text
from helpers.widgets import LiveFigure

__all__ = ["sentence_box", "EXAMPLE"]

EXAMPLE = "I drink tea at home every morning."


def sentence_box(
    model: nn.Module, task: TranslationTask, *, text: str = EXAMPLE, layer: int = 0, head: int = 0
) -> LiveFigure:
    """A live figure: a text box (Enter translates) and sliders for the cross-attention's layer and head."""
    if not isinstance(task, TranslationTask):
        raise TypeError(f"task must be a helpers.translation.TranslationTask; got {type(task).__name__}")
    layers = len(model.transformer.decoder_layers)
    heads = model.transformer.decoder_layers[0].cross_attn.num_heads
    for name, value, count in (("layer", layer, layers), ("head", head, heads)):
        if not isinstance(value, int) or not 0 <= value < count:
            raise ValueError(f"{name} must be an int in [0, {count}); got {value!r}")
    size = max(task.max_tgt_len + 2, task.max_src_len + 4)  # a square grid: every map of the task's sentences fits
    fig = new_figure(7.0, 6.0)
    grid = Heatmap(fig.add_subplot(), np.full((size, size), np.nan), [""] * size, [""] * size, annotate=False)
    grid.image.set_cmap(grid.image.get_cmap().with_extremes(bad="white"))  # the empty part of the grid
    translations: dict[str, Translation | str] = {}  # each text is translated once, not at each slider move
    kinds = {"cross": say("cross-attention", "交叉注意力"),
             "encoder_self": say("encoder self-attention", "编码器自注意力"),
             "decoder_self": say("decoder self-attention", "解码器自注意力")}

    def translate(sentence: str) -> Translation | str:
        if sentence not in translations:
            try:
                translations[sentence] = translate_text(model, task, sentence)
            except SentenceError as error:  # what the learner reads: what is wrong, and close words
                translations[sentence] = say(f"cannot translate this: {error}", f"无法翻译：{error}")
            except TypeError as error:  # not a str: cannot come from the text box, but never a traceback
                translations[sentence] = str(error)
        return translations[sentence]

    def axes(found: Translation, kind: str) -> tuple[list[str], list[str]]:
        """(query tokens, key tokens) of a map of ``kind``."""
        if kind == "encoder_self":
            return found.source, found.source
        if kind == "decoder_self":
            return found.rows, ["<bos>", *found.target][: len(found.rows)]
        return found.rows, found.source

    def update(text: str, kind: str, layer: int, head: int) -> str:
        found = translate(text)
        matrix = np.full((size, size), np.nan)
        row_labels, col_labels = [""] * size, [""] * size
        if isinstance(found, str):
            grid.update(matrix, title=say("no translation", "没有译文"))
            grid.ax.set(xlabel="", ylabel="")
            message = found
        else:
            weights = found.maps[kind][layer, head].numpy()  # (L_q, L_k)
            queries, keys = axes(found, kind)
            rows, cols = min(size, weights.shape[0]), min(size, weights.shape[1])
            matrix[:rows, :cols] = weights[:rows, :cols]
            row_labels[:rows], col_labels[:cols] = queries[:rows], keys[:cols]
            grid.update(matrix, title=say(f"{kinds[kind]}, layer {layer}, head {head}",
                                          f"{kinds[kind]}，第 {layer} 层，第 {head} 个头"))
            chinese, english = say("Chinese", "中文"), say("English", "英文")
            query_side = english if kind == "encoder_self" else chinese
            key_side = {"cross": english, "encoder_self": english, "decoder_self": chinese}[kind]
            grid.ax.set(xlabel=say(f"key ({key_side})", f"键（{key_side}）"),
                        ylabel=say(f"query ({query_side})", f"查询（{query_side}）"))
            message = f"{' '.join(found.source)} → {found.text}"
            if (rows, cols) != weights.shape:
                message += say(f" (the grid shows the first {rows} × {cols} of {tuple(weights.shape)})",
                               f"（图中只显示 {tuple(weights.shape)} 的前 {rows} × {cols}）")
        grid.ax.set_yticks(range(size), row_labels)
        grid.ax.set_xticks(range(size), col_labels, rotation=45, ha="right")
        return message

    controls = {
        "text": widgets.Text(value=text, description=say("English", "英文"), continuous_update=False,
                             placeholder=EXAMPLE, layout=widgets.Layout(width="26em")),
        "kind": widgets.Dropdown(options=[(label, kind) for kind, label in kinds.items()], value="cross",
                                 description=say("attention", "注意力")),
        "layer": widgets.IntSlider(value=layer, min=0, max=layers - 1, description=say("layer", "层")),
        "head": widgets.IntSlider(value=head, min=0, max=heads - 1, description=say("head", "头")),
    }
    return LiveFigure(fig, update, controls, height="520px")
