"""Exercise checkers: each compares a learner's answer with a reference and says what is wrong with it.

An exercise cell starts as ``answer = ...``. A checker given ``...`` (Ellipsis) says the exercise is not done yet
and nothing more. A wrong answer raises :class:`ExerciseError`:

* the first wrong answer to an exercise gets a pointed message: the mistake by name when the checker recognises
  it (1/d_k instead of 1/√d_k, PyTorch's inverted mask, a missing eps, a tuple for a tensor, ...);
* a learner's function that raises (a key without its transpose, a sum without keepdim, a float mask given to the
  attention, ...) gets the same kind of message: the error is read, never shown; no text or traceback from
  inside PyTorch or helpers reaches the learner, only the mistake it means and the learner's own line;
* from the second wrong answer on, the message also carries a hint;
* no checker ever prints the answer itself.

A right answer prints ``[x] name: correct``. Messages come in the edition's language: Chinese when the notebook
runs from a ``zh`` folder (``notebooks/zh/``) or ``COURSE_LANG=zh`` is set, English otherwise.

Four kinds of exercise use them: *predict, then run* (:func:`check_prediction`), *implement* (the ``check_*``
of a piece), *debug* (a planted bug from :mod:`helpers.bugs`, fixed and then checked by the property check its
exercise names) and *explain* (:func:`check_choice`, with an explanation for every wrong choice).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import numbers
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from helpers import answers, record
from helpers.attention import causal_mask, padding_mask, scaled_dot_product_attention
from helpers.course import edition
from helpers.tasks import TOY_WORDS, toy_matrix, toy_projections

__all__ = [
    "ExerciseError",
    "language",
    "reset_attempts",
    "unrecorded",
    "slug",
    "exercise_id",
    "value_id",
    "Mistake",
    "MISTAKES",
    "known_mistakes",
    "KnownMistake",
    "CHECKER_EXERCISES",
    "check_value",
    "check_tensor",
    "check_number",
    "check_choice",
    "check_prediction",
    "check_scale",
    "check_softmax",
    "check_attention",
    "check_causal_mask",
    "check_padding_mask",
    "check_first_at_least",
    "check_toy_output",
    "check_combined_mask",
    "check_no_future_leak",
    "check_ignores_padding",
    "check_split_heads",
    "check_layer_norm",
    "check_cross_attention",
    "check_pre_ln",
    "check_attention_weights",
    "RunEarlierCellError",
    "require",
    "show_exercise_errors",
]


class ExerciseError(AssertionError):
    """A wrong answer; the message says what is wrong (and, after the first try, gives a hint).

    In IPython (a notebook) it is shown as its message alone, without a traceback: see
    :func:`show_exercise_errors`, registered when this module is imported.
    """


class RunEarlierCellError(ExerciseError):
    """A cell ran before the one it depends on (after a kernel restart, or out of order)."""


# ---------------------------------------------------------------------------------------------------------------
# Language, exercise ids, attempts and the three outcomes (each one written to the progress record)


def language() -> str:
    """``"zh"`` or ``"en"``: the edition's language (see :func:`helpers.course.edition`)."""
    return edition()


def _t(en: str, zh: str) -> str:
    return zh if language() == "zh" else en


def slug(text: str) -> str:
    """``text`` as a kebab-case id: ``"expand kv"`` -> ``"expand-kv"``, ``"03-score-variance"`` unchanged."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str; got {type(text).__name__}")
    return re.sub(r"[^0-9a-z]+", "-", text.lower()).strip("-") or "exercise"


class _Name(str):
    """An exercise's name as shown (in the edition's language), carrying its stable id for the record."""

    id: str

    def __new__(cls, shown: str, exercise: str) -> _Name:
        name = super().__new__(cls, shown)
        name.id = exercise
        return name


def exercise_id(name: str) -> str:
    """The stable id of an exercise from the name a checker shows: the same in both editions."""
    return getattr(name, "id", None) or slug(name)


def value_id(wrong: float) -> str:
    """The id of a known wrong number in an answer table: ``37`` -> ``"value-37"``, ``0.99`` -> ``"value-0p99"``,
    ``-math.log(99)`` -> ``"value-minus4p59512"`` (a whole number in full, others to six significant digits)."""
    wrong = float(wrong)
    text = str(int(wrong)) if wrong.is_integer() and abs(wrong) < 1e15 else format(wrong, ".6g")
    text = text.replace("-", "minus").replace("+", "").replace(".", "p")
    return "value-" + slug(text)


_attempts: Counter[str] = Counter()  # wrong answers so far, per exercise id
_tries: Counter[str] = Counter()  # answered checks so far, per exercise id
_recording = [True]  # False inside unrecorded()
_depth = [0]  # how many recorded checkers are running (check_number runs check_value): only the outermost
# records an unexpected error


def reset_attempts() -> None:
    """Forget the wrong answers counted so far (the next wrong answer gets no hint again)."""
    _attempts.clear()
    _tries.clear()


@contextlib.contextmanager
def unrecorded() -> Iterator[None]:
    """Checks run inside ``with unrecorded():`` write nothing to the progress record: for a demonstration that
    runs a checker on planted bugs, not the learner's answer."""
    _recording[0] = False
    try:
        yield
    finally:
        _recording[0] = True


def _record(name: str, outcome: str, hint: bool = False) -> None:
    """One line in the progress record (:mod:`helpers.record`); never raises."""
    if not _recording[0]:
        return
    exercise = exercise_id(name)
    try:
        record.write(exercise, outcome, attempt=_tries[exercise], hint=hint, lang=language())
    except Exception:  # noqa: BLE001 - the record must never break a check
        pass


def _recorded(exercise: Callable[..., str]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A public checker whose unexpected error (not a wrong answer) is recorded as ``"error"``, then raised.

    ``exercise(*args, **kwargs)`` gives the exercise id from the checker's arguments.
    """

    def decorate(checker: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(checker)
        def run(*args: object, **kwargs: object) -> None:
            _depth[0] += 1
            try:
                return checker(*args, **kwargs)
            except ExerciseError:
                raise
            except Exception:
                if _depth[0] == 1:
                    try:
                        name = exercise(*args, **kwargs)
                    except Exception:  # noqa: BLE001 - the arguments themselves are what is wrong
                        name = "unknown"
                    _record(name if isinstance(name, str) else "unknown", "error")
                raise
            finally:
                _depth[0] -= 1

        return run

    return decorate


def _not_done(name: str, answer: object) -> bool:
    if answer is Ellipsis:
        print(_t(f"[ ] {name}: not answered yet. Replace the ... and run the cell again.",
                 f"[ ] {name}：还没有作答。把 ... 换成你的答案，再运行这个单元格。"))
        _record(name, "not answered")
        return True
    return False


def _fail(name: str, problem: str, hint: str | None = None, *, mistake: str | None = None) -> None:
    """Raise the ExerciseError of a wrong answer; ``mistake`` is the known mistake's id (None: just wrong)."""
    exercise = exercise_id(name)
    _attempts[exercise] += 1
    _tries[exercise] += 1
    shown = bool(hint) and _attempts[exercise] >= 2
    if shown:
        more = _t(f"\nHint: {hint}", f"\n提示：{hint}")
    elif hint:
        more = _t("\n(Try again: the next wrong answer also gets a hint.)", "\n（再试一次：下次答错时会给出提示。）")
    else:
        more = ""
    _record(name, mistake or "wrong", shown)
    raise ExerciseError(_t(f"{name}: ", f"{name}：") + f"{problem}{more}")


def _passed(name: str) -> None:
    _tries[exercise_id(name)] += 1
    _record(name, "correct")
    print(_t(f"[x] {name}: correct", f"[x] {name}：正确"))


# ---------------------------------------------------------------------------------------------------------------
# The known mistakes the piece checkers recognise, each with a stable id (the answer tables' own mistakes get
# theirs from :func:`value_id` and the choice's letter): the progress record, the class report and the teaching
# guide's table of misconceptions (docs/teaching.md) use these ids.


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer: its id, the exercises whose checker recognises it, its message in English and Chinese
    (``{field}`` filled at the check), and the ``example`` values that fill it in the teaching guide."""

    id: str
    exercises: tuple[str, ...]
    en: str
    zh: str
    example: Mapping[str, object] = field(default_factory=dict)

    def text(self, lang: str | None = None, **values: object) -> str:
        """The message in ``lang`` (default: the edition's), with ``values`` (default: ``example``) filled in; an
        (English, Chinese) pair as a value gives the one of ``lang``."""
        zh = (lang or language()) == "zh"
        filled = {key: (value[1] if zh else value[0]) if isinstance(value, tuple) else value
                  for key, value in (values or self.example).items()}
        return (self.zh if zh else self.en).format(**filled)


MISTAKES: dict[str, Mistake] = {}

#: the exercises whose checker calls a learner's function and reads a tensor from it
TENSOR_EXERCISES = ("softmax", "attention", "causal-mask", "padding-mask", "combined-mask", "no-future-leak",
                    "ignores-padding", "split-heads", "layer-norm", "cross-attention", "pre-ln",
                    "attention-weights")


def _known(mistake: str, exercises: str | tuple[str, ...], en: str, zh: str, **example: object) -> None:
    if mistake in MISTAKES or slug(mistake) != mistake:
        raise ValueError(f"mistake must be a new kebab-case id; got {mistake!r}")
    MISTAKES[mistake] = Mistake(mistake, (exercises,) if isinstance(exercises, str) else exercises, en, zh, example)


_known("tuple-not-tensor", TENSOR_EXERCISES,
       "got a tuple of {count} (like (output, weights)); return only the output tensor",
       "得到的是含 {count} 个元素的元组（像 (output, weights)）；只返回输出张量", count=2)
_known("nan-in-output", ("no-future-leak", "ignores-padding", "cross-attention", "pre-ln", "attention-weights"),
       "the output holds NaN or inf: does some query have no key it may attend to?",
       "输出里有 NaN 或 inf：是不是有某个查询没有任何可以关注的键？")
_known("scale-1-over-dk", "scale",
       "1/d_k = {value} is the lecture note's slip, not the paper's factor: it over-flattens the softmax",
       "1/d_k = {value} 是讲义里的笔误，不是论文的因子：它会让 softmax 过于平坦", value="0.01562")
_known("scale-times-sqrt-dk", "scale", "that multiplies by √d_k instead of dividing by it",
       "这是乘以 √d_k，而不是除以 √d_k")
_known("scale-1-over-sqrt-dmodel", "scale",
       "that is 1/√d_model: the scale uses the size of ONE head's keys, d_k = d_model / heads",
       "这是 1/√d_model：缩放用的是单个头的键的维度 d_k = d_model / 头数")
_known("softmax-wrong-axis", "softmax",
       "this normalises along dim={dim}; each query's row (the last axis) must sum to 1",
       "这是沿 dim={dim} 归一化；应该让每个查询的那一行（最后一个轴）之和为 1", dim=0)
_known("softmax-overflow", "softmax", "it gives inf or NaN for scores near 1000 (exp overflows)",
       "分数接近 1000 时得到 inf 或 NaN（exp 溢出）")
_known("attention-no-scale", "attention", "the output matches attention without scaling",
       "输出和没有缩放的注意力一样")
_known("attention-scale-1-over-dk", "attention",
       "the scores are divided by d_k (the lecture note's slip); the paper divides by √d_k",
       "分数除以了 d_k（讲义的笔误）；论文除以的是 √d_k")
_known("attention-softmax-over-queries", "attention",
       "the softmax runs over the queries (dim=-2); it must run over the keys (dim=-1)",
       "softmax 是沿查询（dim=-2）做的；应该沿键（dim=-1）做")
_known("pytorch-mask-convention", ("causal-mask", "padding-mask", "combined-mask"),
       "this is PyTorch's attn_mask / key_padding_mask convention (True = blocked); in this course True means may "
       "attend",
       "这是 PyTorch 的 attn_mask / key_padding_mask 约定（True = 屏蔽）；本课程里 True 表示可以关注")
_known("causal-upper-triangle", "causal-mask", "this lets each query see the FUTURE keys (the upper triangle)",
       "这样每个查询看到的是未来的键（上三角）")
_known("causal-diagonal-blocked", "causal-mask", "the diagonal is blocked: a query must be able to attend to itself",
       "对角线被屏蔽了：查询应该能关注它自己")
_known("padding-no-query-axis", "padding-mask",
       "shape (batch, L) has no query axis; broadcast against (batch, L_q, L_k) it would be read wrongly: make it "
       "(batch, 1, L)",
       "形状 (batch, L) 缺少查询轴；和 (batch, L_q, L_k) 广播时会被误读：应为 (batch, 1, L)")
_known("padding-masks-queries", "padding-mask",
       "the size-1 axis is on the keys: this masks QUERIES, not keys; the mask must be (batch, 1, L_k)",
       "大小为 1 的轴放在了键上：这屏蔽的是查询而不是键；掩码应为 (batch, 1, L_k)")
_known("toy-own-value", "toy-output-<word>",
       "this is the word's own value vector V[i], not the weighted sum", "这是这个词自己的值向量 V[i]，不是加权和")
_known("toy-column-of-r", "toy-output-<word>",
       "this uses column i of r (how much others attend to the word) instead of row i",
       "这里用的是 r 的第 i 列（别的词有多关注它），而不是第 i 行")
_known("combined-or", "combined-mask", "with | a query may attend wherever either mask allows",
       "用 | 的话，只要任一掩码允许就能关注")
_known("combined-padding-on-queries", "combined-mask",
       "the padding mask is applied to the queries instead of the keys", "填充掩码用在了查询上，而不是键上")
_known("leak-blocks-past", "no-future-leak",
       "the output at the last position ({last}) is NaN: that query, which may see every key, has none left. A "
       "causal mask blocks only the keys *after* the query; yours blocks the query's own key and the ones before "
       "it. Where does masked_fill write: where the mask is True, or False?",
       "最后一个位置（{last}）的输出是 NaN：这个查询本来可以看见所有的键，现在却一个也没剩下。"
       "因果掩码只屏蔽查询*之后*的键；你的掩码屏蔽的却是查询自己和它之前的键。masked_fill 写入的是"
       "掩码为 True 的位置，还是为 False 的位置？", last=5)
_known("ignores-its-input", "no-future-leak",
       "the output does not change at all when the decoder's input changes: this function never reads its "
       "argument. Which tensor goes in as the decoder's input (the queries of its self-attention)?",
       "解码器的输入变了，输出却一点也没变：这个函数根本没有读它的参数。作为解码器输入（也就是它自注意力的查询）"
       "传进去的是哪个张量？")
_known("future-leaks", "no-future-leak",
       "changing the tokens after position {t} moved the outputs at positions <= {t} by {moved}",
       "改动位置 {t} 之后的词，位置 <= {t} 的输出变化了 {moved}", t=0, moved="0.412")
_known("padding-leaks", "ignores-padding",
       "changing only the padding moved the real tokens' outputs by up to {moved}",
       "只改动填充位置，真实词的输出就变化了最多 {moved}", moved="0.318")
_known("split-view-without-transpose", "split-heads",
       "a plain view to (batch, heads, L, d_head) without the transpose gives each head pieces of different tokens",
       "直接 view 成 (batch, heads, L, d_head) 而不转置，会让每个头拿到不同词的碎片")
_known("split-heads-axis-last", "split-heads", "the head axis is still after the token axis: (batch, L, heads, d_head)",
       "头的轴还在词的轴后面：(batch, L, heads, d_head)")
_known("layer-norm-no-eps", "layer-norm", "without eps a constant token divides 0 by 0; add eps to the variance",
       "没有 eps 时，常数词会出现 0 除以 0；把 eps 加到方差上")
_known("layer-norm-eps-outside-sqrt", "layer-norm",
       "eps is added outside the square root: sqrt(var) + eps; it belongs inside: sqrt(var + eps)",
       "eps 加在了平方根外面：sqrt(var) + eps；应该在里面：sqrt(var + eps)")
_known("layer-norm-unbiased-variance", "layer-norm", "this uses the unbiased variance (divides by n - 1)",
       "这里用的是无偏方差（除以 n - 1）")
_known("layer-norm-over-batch", "layer-norm",
       "this normalises over the batch (that is BatchNorm), not over the features",
       "这是在批次上归一化（那是 BatchNorm），不是在特征上")
_known("layer-norm-eps-ignored", "layer-norm",
       "the result does not change with eps: use the eps argument, not a constant",
       "结果不随 eps 改变：请使用传入的 eps 参数，而不是常数")
_known("cross-queries-from-encoder", "cross-attention",
       "the output has the encoder's length: the queries were taken from the encoder; in cross-attention they come "
       "from the decoder",
       "输出的长度是编码器的：查询取自编码器；交叉注意力的查询来自解码器")
_known("cross-decoder-on-itself", "cross-attention",
       "this is the decoder attending to itself: keys and values must come from the encoder",
       "这是解码器关注它自己：键和值应来自编码器")
_known("pre-ln-is-post-ln", "pre-ln",
       "this is post-LN, norm(x + sublayer(x)) (the 2017 paper's order), not pre-LN",
       "这是 Post-LN，即 norm(x + sublayer(x))（2017 年论文的顺序），不是 Pre-LN")
_known("pre-ln-no-residual", "pre-ln", "the residual connection is missing: the input must be added back",
       "少了残差连接：要把输入加回来")
_known("weights-softmax-over-queries", "attention-weights",
       "the softmax runs over the queries (dim=-2): the columns sum to 1, not the rows",
       "softmax 沿查询（dim=-2）做了：和为 1 的是列而不是行")

# --- what a learner's function does wrong before any value can be compared: it returns nothing, returns NumPy,
# changes its input, or stops with an error (translated here: no raw PyTorch text reaches the learner)
_known("returns-none", TENSOR_EXERCISES, "the function returns None: is the `return` missing?",
       "函数返回的是 None：是不是忘了写 `return`？")
_known("numpy-not-torch", TENSOR_EXERCISES,
       "the function returns a NumPy array: compute with torch on the torch tensor it is given",
       "函数返回的是 NumPy 数组：请直接用 torch 对传入的张量（tensor）做计算")
_known("modifies-input", TENSOR_EXERCISES,
       "the function changed its input tensor in place (such as `x -= ...`, `x += ...` or a method ending in _); "
       "compute a new tensor and leave the input as it was",
       "函数原地（in place）修改了传入的张量（例如 `x -= ...`、`x += ...` 或以 _ 结尾的方法）；"
       "请算出一个新的张量，不要改动输入")
_known("wrong-arguments", TENSOR_EXERCISES,
       "the check calls it as fn{call}, but it is defined as {signature}: give it exactly those arguments",
       "检查器以 fn{call} 调用它，可它的定义是 {signature}：请让它正好接收这些参数",
       call="(tensor (2, 3, 8), 4)", signature="(x)")
_known("code-raised", TENSOR_EXERCISES,
       "calling it as fn{call} stopped with {error}: {what}{where}",
       "以 fn{call} 调用它时出现了 {error}：{what}{where}",
       call="(tensor (2, 3, 8))", error="IndexError",
       what=("an axis that the tensor does not have (count axes from the end: dim=-1)",
             "张量没有这个轴（从后往前数更稳妥：dim=-1）"),
       where=(" (line 2 of your code: `x.sum(3)`)", "（出错的是你的代码第 2 行 `x.sum(3)`）"))
_known("shapes-do-not-multiply", ("cross-attention", "no-future-leak", "ignores-padding", "pre-ln"),
       "the shapes of a matrix product do not fit{where}: `A @ B` needs A's last axis as long as B's second to "
       "last; check which tensor gives the queries, the keys and the values, and which one is transposed",
       "矩阵乘法两边的形状对不上{where}：`A @ B` 要求 A 的最后一个轴和 B 的倒数第二个轴一样长；"
       "请检查查询、键、值各取自哪个张量，以及转置的是哪一个", where="")
_known("shapes-do-not-broadcast", ("attention", "attention-weights", "cross-attention", "no-future-leak",
                                   "ignores-padding", "pre-ln", "padding-mask", "causal-mask"),
       "two tensors whose shapes do not broadcast meet in one operation{where}: a result reduced over an axis "
       "without keepdim=True, or a mask without its size-1 axis?",
       "一次运算里的两个张量形状无法广播（broadcast）{where}：是不是沿某个轴求和或求最大值时没有写 "
       "keepdim=True，或者掩码少了那个大小为 1 的轴？", where="")
_known("dtype-mismatch", ("attention", "cross-attention", "no-future-leak", "ignores-padding", "pre-ln"),
       "two tensors of different dtypes meet{where} (float32 and float64): a tensor or a module you created "
       "yourself is float32; make it with the input's dtype (dtype=x.dtype, or .double() for a module)",
       "两个数据类型（dtype）不同的张量碰到了一起{where}（float32 和 float64）：你自己创建的张量或模块是 "
       "float32；请让它和输入的数据类型一致（dtype=x.dtype，模块用 .double()）", where="")
_known("mask-not-bool", ("causal-mask", "padding-mask", "combined-mask", "no-future-leak", "ignores-padding"),
       "the mask holds numbers ({dtype}), not True/False: in this course a mask is torch.bool, True where a query "
       "may attend (a comparison such as tokens != pad_id gives one; .bool() converts a 0/1 mask)",
       "掩码里装的是数（{dtype}），不是 True/False：本课程的掩码是 torch.bool，查询可以关注的位置为 True"
       "（tokens != pad_id 这样的比较就会得到布尔张量；0/1 掩码可以用 .bool() 转换）", dtype="torch.float32")
_known("mask-additive", ("causal-mask", "padding-mask", "combined-mask"),
       "this is an additive float mask (0 where allowed, -inf where blocked), PyTorch's other form; in this course "
       "a mask is torch.bool, True where a query may attend",
       "这是加性的浮点掩码（additive mask）：允许的位置为 0，屏蔽的位置为 -inf，是 PyTorch 的另一种写法；"
       "本课程的掩码是 torch.bool，查询可以关注的位置为 True")
_known("mask-wrong-shape", ("no-future-leak", "ignores-padding"),
       "the mask's shape {got} does not fit the attention scores {scores}: a causal mask is (L, L), with L the "
       "number of tokens (x.shape[1]); a padding mask is (batch, 1, L), as padding_mask makes it",
       "掩码的形状 {got} 和注意力分数 {scores} 对不上：因果掩码是 (L, L)，L 是词元数 x.shape[1]；"
       "填充掩码是 (batch, 1, L)，也就是 padding_mask 给出的形状", got="(8, 8)", scores="(1, 6, 6)")
_known("python-math-on-tensor", ("softmax", "attention", "attention-weights", "cross-attention", "layer-norm"),
       "a function of Python's math module got a whole tensor{where}: math.exp and math.sqrt take one number; "
       "for a tensor use torch.exp / x.exp() and torch.sqrt / x.sqrt()",
       "Python 的 math 模块的函数拿到了一整个张量{where}：math.exp、math.sqrt 只接受一个数；"
       "对张量要用 torch.exp / x.exp() 和 torch.sqrt / x.sqrt()", where="")
_known("undefined-name", TENSOR_EXERCISES,
       "`{missing}` is not defined where your function runs: import it (`import math`, "
       "`import torch.nn.functional as F`) or run the cell that defines it",
       "你的函数运行时 `{missing}` 还没有定义：请先导入它（`import math`、`import torch.nn.functional as F`），"
       "或者运行定义它的那个单元格", missing="math")
_known("key-not-transposed", ("attention", "attention-weights", "cross-attention"),
       "Q @ K does not fit: query is (..., L_q, d_k) and key is (..., L_k, d_k), so the scores Q Kᵀ need the key "
       "transposed over its last two axes, key.transpose(-2, -1) (on a 3-D tensor .T reverses every axis)",
       "Q @ K 的形状对不上：query 是 (..., L_q, d_k)，key 是 (..., L_k, d_k)，所以分数 Q Kᵀ 要把 key 的"
       "最后两个轴转置，即 key.transpose(-2, -1)（对三维张量，.T 会把所有轴都倒过来）")
_known("softmax-no-keepdim", "softmax",
       "the row sums (or maxima) lost their axis: scores.sum(-1) of scores (3, 4, 5) is (3, 4) and cannot divide "
       "(3, 4, 5); keep the axis with keepdim=True",
       "每行的和（或最大值）丢掉了那个轴：形状为 (3, 4, 5) 的分数做 scores.sum(-1) 得到 (3, 4)，"
       "不能拿来除形状为 (3, 4, 5) 的张量；请用 keepdim=True 保留这个轴")
_known("max-returns-pair", "softmax",
       "x.max(dim) returns a pair (values, indices), not a tensor: use x.amax(dim, keepdim=True) or "
       "x.max(dim, keepdim=True).values",
       "x.max(dim) 返回的是一对 (values, indices)，不是张量：请用 x.amax(dim, keepdim=True) 或 "
       "x.max(dim, keepdim=True).values")
_known("softmax-fixed-axis", "softmax",
       "it fails on 2-D scores (1, 3): an axis counted from the front (dim=2) exists only in a 3-D tensor; "
       "dim=-1 is the last axis whatever the number of axes",
       "遇到二维分数 (1, 3) 时出错：从前往后数的轴（dim=2）只在三维张量里才有；dim=-1 无论有几个轴都是最后一个轴")
_known("softmax-over-batch", ("attention", "attention-weights", "cross-attention"),
       "the softmax runs over the batch axis (dim=0), which is what F.softmax picks for a 3-D tensor when no dim is "
       "given; the weights of each query must sum to 1 over the keys: dim=-1",
       "softmax 是沿批次轴（dim=0）做的，这正是不给 dim 时 F.softmax 对三维张量自己选的轴；"
       "每个查询的权重应在所有键上加起来等于 1，即 dim=-1")
_known("attention-returns-weights", ("attention", "cross-attention"),
       "this is the weights softmax(Q Kᵀ / √d_k), not the output: the output multiplies them by V",
       "这是权重 softmax(Q Kᵀ / √d_k)，不是输出：输出还要再乘以 V")
_known("attention-scale-after-softmax", "attention",
       "√d_k divides the weights after the softmax; it must divide the scores before it",
       "√d_k 除的是 softmax 之后的权重；它应该在 softmax 之前用来除分数")
_known("weights-no-scale", "attention-weights",
       "these are the weights without the scale: divide the scores by √d_k before the softmax",
       "这是没有缩放的权重：做 softmax 之前要把分数除以 √d_k")
_known("weights-scale-1-over-dk", "attention-weights",
       "the scores are divided by d_k (the lecture note's slip); the paper divides by √d_k",
       "分数除以了 d_k（讲义的笔误）；论文除以的是 √d_k")
_known("weights-no-softmax", "attention-weights",
       "these are the scaled scores Q Kᵀ / √d_k: the weights are their softmax over the keys",
       "这是缩放后的分数 Q Kᵀ / √d_k：权重是它们沿键做 softmax 的结果")
_known("causal-sees-next-key", "causal-mask",
       "tril(1) also lets each query see the next key: the diagonal offset of tril must be 0",
       "tril(1) 让每个查询还能看到下一个键：tril 的对角线偏移应为 0")
_known("padding-query-axis-first", "padding-mask",
       "the size-1 axis is in front, (1, batch, L): the query axis goes between the batch and the keys, "
       "unsqueeze(1)",
       "大小为 1 的轴放在了最前面，成了 (1, batch, L)：查询轴应该在批次轴和键轴之间，即 unsqueeze(1)")
_known("combined-causal-only", "combined-mask",
       "this is the causal mask alone: the queries may still attend to the PAD keys",
       "这只是因果掩码：查询仍然可以关注 PAD 键")
_known("combined-padding-only", "combined-mask",
       "this is the padding mask alone: every query may still attend to the future",
       "这只是填充掩码：每个查询仍然可以关注未来的键")
_known("combined-padding-no-query-axis", "combined-mask",
       "the two masks do not broadcast: (L, L) & (batch, L) lines the batch up with the queries; the padding mask "
       "needs its query axis, (batch, 1, L), as padding_mask makes it",
       "两个掩码无法广播：(L, L) & (batch, L) 会把批次轴和查询轴对齐；填充掩码需要它的查询轴，"
       "即 padding_mask 给出的 (batch, 1, L)")
_known("leak-mask-inverted", "no-future-leak",
       "each position reads the keys after it and none before it: the mask is the wrong way round, inverted (~, "
       "PyTorch's True = blocked) or the upper triangle (triu). In this course True means may attend, and query i "
       "may attend to keys 0..i",
       "每个位置读取的都是它之后的键，之前的一个也没读：掩码的方向反了，要么被取反了（~，PyTorch 的 "
       "True = 屏蔽），要么用成了上三角（triu）。本课程里 True 表示可以关注，查询 i 可以关注键 0..i")
_known("padding-mask-inverted", "ignores-padding",
       "the real tokens read only the PAD keys: the padding mask is the wrong way round (True on PAD is PyTorch's "
       "key_padding_mask convention); in this course True marks a real token, a key that may be attended to",
       "真实词元读取的只有 PAD 键：填充掩码的方向反了（PAD 处为 True 是 PyTorch 的 key_padding_mask 约定）；"
       "本课程里 True 标出的是真实词元，也就是可以被关注的键")
_known("padding-masked-queries", "ignores-padding",
       "changing only the padding moved the real tokens' outputs by up to {moved}: the mask blocks the PAD *queries* "
       "(its size-1 axis is on the keys, (batch, L, 1)), so the real queries still read the PAD keys; the mask must "
       "be (batch, 1, L_k)",
       "只改动填充位置，真实词的输出就变化了最多 {moved}：掩码屏蔽的是 PAD *查询*（大小为 1 的轴放在了键上，"
       "成了 (batch, L, 1)），真实的查询仍然会读取 PAD 键；掩码应为 (batch, 1, L_k)", moved="15.4")
_known("split-heads-interleaved", "split-heads",
       "each head gets every heads-th feature: the view cuts the features as (d_head, heads); cut them as "
       "(heads, d_head), so that head h holds the features h·d_head ... (h + 1)·d_head - 1",
       "每个头拿到的是每隔 heads 个取一个的特征：view 把特征切成了 (d_head, heads)；应切成 (heads, d_head)，"
       "让头 h 拿到第 h·d_head 到 (h + 1)·d_head - 1 个特征")
_known("split-heads-float-size", "split-heads",
       "d_model / heads is a float (2.0), and a shape needs ints: use d_model // heads",
       "d_model / heads 是浮点数（2.0），而形状必须是整数：请用 d_model // heads")
_known("view-wrong-size", "split-heads",
       "the sizes given to view or reshape do not multiply to the tensor's {numel} numbers: d_head = d_model // "
       "heads, and batch · L · heads · d_head must equal batch · L · d_model",
       "传给 view 或 reshape 的各个大小相乘不等于张量的 {numel} 个数：d_head = d_model // heads，"
       "batch · L · heads · d_head 必须等于 batch · L · d_model", numel=48)
_known("layer-norm-no-keepdim", "layer-norm",
       "the mean (or variance) over the last axis lost that axis: x.mean(-1) of x (2, 3, 8) is (2, 3) and cannot "
       "be subtracted from (2, 3, 8); keep it with keepdim=True",
       "沿最后一个轴求的均值（或方差）丢掉了这个轴：形状为 (2, 3, 8) 的 x 做 x.mean(-1) 得到 (2, 3)，"
       "无法从 (2, 3, 8) 中减去；请用 keepdim=True 保留它")
_known("layer-norm-not-centred", "layer-norm",
       "the mean is not subtracted: x / sqrt(var + eps) rescales each token but does not centre it; use "
       "(x - mean) / sqrt(var + eps)",
       "没有减去均值：x / sqrt(var + eps) 只缩放了每个词元，没有把它居中；应为 (x - mean) / sqrt(var + eps)")
_known("layer-norm-over-everything", "layer-norm",
       "one mean and one variance for the whole tensor: each token needs its own, over its features (dim=-1, "
       "keepdim=True)",
       "整个张量只用了一个均值和一个方差：每个词元都要有自己的均值和方差，在它的特征上求（dim=-1, keepdim=True）")
_known("layer-norm-std-plus-eps", "layer-norm",
       "x.std() divides by n - 1, and eps lands outside the square root: use the biased variance, "
       "var(unbiased=False), inside sqrt(var + eps)",
       "x.std() 除的是 n - 1，而且 eps 落在了平方根外面：请用有偏方差 var(unbiased=False)，并写成 sqrt(var + eps)")
_known("cross-keys-values-mixed", "cross-attention",
       "the keys and the values come from different sides: both must come from the encoder's output (memory); "
       "only the queries come from the decoder",
       "键和值取自不同的一方：它们都应来自编码器的输出（memory），只有查询来自解码器")
_known("pre-ln-norm-after-sublayer", "pre-ln",
       "the norm acts on the sub-layer's output, x + norm(sublayer(x)); in pre-LN it acts on the sub-layer's input",
       "层标准化作用在了子层的输出上，即 x + norm(sublayer(x))；Pre-LN 里它应作用在子层的输入上")
_known("pre-ln-normed-residual", "pre-ln",
       "the residual path carries norm(x) instead of x: the input must be added back untouched",
       "残差通路传的是 norm(x) 而不是 x：要把未经改动的输入加回来")
_known("toy-weights-not-output", "toy-output-<word>",
       "these are the word's attention weights (its row of r), not its output: weight the rows of V with them",
       "这是这个词的注意力权重（r 中它的那一行），不是输出：要用它们给 V 的各行加权")
_known("toy-no-scale", "toy-output-<word>",
       "the scores were not divided by √d_k = √3 before the softmax",
       "做 softmax 之前，分数没有除以 √d_k = √3")


def _mistake(name: str, mistake: str, hint: str | None = None, **values: object) -> None:
    """Fail with the known mistake ``mistake``'s message (its fields filled with ``values``)."""
    _fail(name, MISTAKES[mistake].text(**values), hint, mistake=mistake)


def _exercise(name: tuple[str, str], hint: tuple[str, str]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The frame of an implement-exercise check, around ``body(answer, ..., *, name, hint)``.

    ``name`` and ``hint`` are (English, Chinese) pairs, put in the edition's language at each call; the exercise's
    id is the English name in kebab case (``"split heads"`` -> ``"split-heads"``). ``...`` as the answer says "not
    answered yet"; a body that returns says "correct"; a wrong answer raises in the body, through :func:`_fail`.
    The check's signature is the body's without ``name`` and ``hint``.
    """

    def decorate(body: Callable[..., None]) -> Callable[..., None]:
        exercise = _EXERCISE_IDS.get(name[0], slug(name[0]))

        @_recorded(lambda *args, **kwargs: exercise)
        @functools.wraps(body)
        def check(answer: object, *args: object, **kwargs: object) -> None:
            shown = _Name(_t(*name), exercise)
            if _not_done(shown, answer):
                return
            body(answer, *args, name=shown, hint=_t(*hint), **kwargs)
            _passed(shown)

        signature = inspect.signature(body)
        check.__signature__ = signature.replace(
            parameters=[p for p in signature.parameters.values() if p.name not in ("name", "hint")])
        return check

    return decorate


#: the exercise ids that are not the English name in kebab case
_EXERCISE_IDS = {"pre-LN sub-layer": "pre-ln"}


def _normal(seed: int, *shapes: tuple[int, ...]) -> tuple[Tensor, ...]:
    """Float64 standard-normal tensors of ``shapes``, drawn in order from one generator seeded with ``seed``:
    a check's test inputs, the same at every call."""
    generator = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(*shape, generator=generator, dtype=torch.float64) for shape in shapes)


def _scalar(answer: object) -> object:
    """A one-element tensor, array or NumPy scalar as a plain Python number; anything else as it is."""
    if isinstance(answer, Tensor) and answer.numel() == 1:
        return answer.reshape(()).item()
    if isinstance(answer, (np.ndarray, np.generic)) and answer.size == 1:
        return answer.reshape(()).item()
    return answer


def _number(name: str, answer: object) -> float:
    """A plain number from an int, a float, a NumPy scalar or a one-element tensor or array."""
    value = _scalar(answer)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        kind = "bool" if isinstance(value, bool) else type(answer).__name__
        _fail(name, _t(f"expected a number; got {kind}", f"这里要的是一个数，得到的是 {kind}"))
    return float(value)


def _integer(name: str, answer: object) -> int:
    """An index from an int, a NumPy integer, a one-element integer tensor (or a float such as 3.0)."""
    value = _scalar(answer)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        _fail(name, _t(f"expected an integer position; got {answer!r}", f"这里要的是一个整数位置，得到的是 {answer!r}"))
    return int(value)


def _tensor(name: str, result: object, hint: str | None = None) -> Tensor:
    """The learner's result as a tensor; a tuple such as MultiHeadAttention's (output, weights) is named."""
    if isinstance(result, tuple) and result and isinstance(result[0], Tensor):
        _mistake(name, "tuple-not-tensor", hint, count=len(result))
    if not isinstance(result, Tensor):
        _fail(name, _t(f"expected a torch.Tensor; got {type(result).__name__}",
                       f"这里要的是 torch.Tensor，得到的是 {type(result).__name__}"))
    return result


def _describe(args: tuple) -> str:
    """The arguments of a call as the learner would picture them: ``(tensor (2, 3, 8), 4)``."""
    shown = []
    for arg in args:
        if isinstance(arg, Tensor):
            shown.append(f"tensor {tuple(arg.shape)}")
        elif isinstance(arg, torch.nn.Module):
            shown.append(type(arg).__name__)
        else:
            shown.append(repr(arg))
    return "(" + ", ".join(shown) + ")"


#: how an error raised inside a learner's function is read: (the exception's type, a pattern of its message, the
#: kind); the first match wins. The patterns are PyTorch's and helpers.attention's own messages; a learner is
#: never shown them, only the kind's message.
_ERROR_KINDS: list[tuple[type, str, str]] = [
    (TypeError, r"^mask\b.*torch\.bool|only supports boolean masks", "mask-not-bool"),  # helpers' (either edition)
    (ValueError, r"^mask\b", "mask-wrong-shape"),
    (TypeError, r"return_types\.", "max-returns-pair"),
    (TypeError, r"must be tuple of ints|but found element of type float|got float", "float-size"),
    (RuntimeError, r"shape '\[[^\]]*\]' is invalid for input of size (\d+)", "view-wrong-size"),
    (RuntimeError, r"cannot be multiplied|Expected size for first two dimensions of batch2|size mismatch"
                   r"|contraction_size|Expected batch2_sizes", "shapes-do-not-multiply"),
    (RuntimeError, r"must match the size of tensor b|shape mismatch|not broadcastable", "shapes-do-not-broadcast"),
    (RuntimeError, r"expected scalar type|must have the same dtype|to have the same dtype|found Double|found Float",
     "dtype-mismatch"),
    ((ValueError, TypeError, RuntimeError), r"only one element tensors can be converted|cannot be converted to "
                                            r"Scalar|must be real number, not Tensor", "python-math-on-tensor"),
    (IndexError, r"Dimension out of range", "dim"),
    (RuntimeError, r"view size is not compatible", "view-not-contiguous"),
    (TypeError, r"received an invalid combination of arguments|missing \d+ required positional argument|must be "
                r"Tensor, not", "torch-arguments"),
]

#: the kind of an error, said in a few words, for the "code-raised" message (the kinds without an id of their own)
_KIND_WORDS = {
    "mask-not-bool": ("a mask that is not torch.bool", "掩码不是 torch.bool"),
    "mask-wrong-shape": ("a mask whose shape does not fit the scores", "掩码的形状和分数对不上"),
    "max-returns-pair": ("x.max(dim) returns a pair (values, indices), not a tensor; use x.amax(dim)",
                         "x.max(dim) 返回的是一对 (values, indices)，不是张量；请用 x.amax(dim)"),
    "float-size": ("a size that is a float: sizes and axes are ints (use //, not /)",
                   "某个大小是浮点数：大小和轴都必须是整数（用 //，不要用 /）"),
    "view-wrong-size": ("view or reshape was given sizes that do not multiply to the tensor's size",
                        "传给 view 或 reshape 的各个大小相乘不等于张量的大小"),
    "shapes-do-not-multiply": ("the shapes of a matrix product do not fit", "矩阵乘法两边的形状对不上"),
    "shapes-do-not-broadcast": ("two shapes that do not broadcast (a missing keepdim=True?)",
                                "两个形状无法广播（是不是少了 keepdim=True？）"),
    "dtype-mismatch": ("two tensors of different dtypes (float32 and float64)",
                       "两个数据类型不同的张量（float32 和 float64）"),
    "python-math-on-tensor": ("a function of Python's math module given a tensor; use torch's",
                              "Python 的 math 模块的函数拿到了张量；请用 torch 的函数"),
    "dim": ("an axis that the tensor does not have (count axes from the end: dim=-1)",
            "张量没有这个轴（从后往前数更稳妥：dim=-1）"),
    "view-not-contiguous": ("view on a transposed tensor; use reshape, or .contiguous() before view",
                            "对转置过的张量用了 view；请改用 reshape，或先调用 .contiguous()"),
    "torch-arguments": ("a torch function called with arguments it does not take (softmax needs dim=)",
                        "调用 torch 函数时给的参数不对（softmax 需要 dim=）"),
    "undefined-name": ("a name that is not defined", "用到了一个没有定义的名字"),
    "other": ("an error in the code", "代码出错"),
}

#: an error kind that, in one exercise, is one mistake: (exercise, kind) -> the mistake's id
_KIND_IN_EXERCISE = {
    ("softmax", "shapes-do-not-broadcast"): "softmax-no-keepdim",
    ("layer-norm", "shapes-do-not-broadcast"): "layer-norm-no-keepdim",
    ("attention", "shapes-do-not-multiply"): "key-not-transposed",
    ("attention-weights", "shapes-do-not-multiply"): "key-not-transposed",
    ("combined-mask", "shapes-do-not-broadcast"): "combined-padding-no-query-axis",
    ("split-heads", "float-size"): "split-heads-float-size",
}


def _error_kind(error: BaseException) -> tuple[str, re.Match | None]:
    if isinstance(error, NameError):
        return "undefined-name", None
    for kinds, pattern, kind in _ERROR_KINDS:
        found = re.search(pattern, str(error)) if isinstance(error, kinds) else None
        if found:
            return kind, found
    return "other", None


def _learner_line(error: BaseException) -> tuple[int, str] | None:
    """(line number, source line) of the last frame of the learner's own code in the error's traceback."""
    import traceback

    inside = (str(Path(torch.__file__).parent), str(Path(np.__file__).parent), str(Path(__file__).parent),
              "site-packages", "<frozen")
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not any(p in f.filename for p in inside)]
    return (frames[-1].lineno or 0, (frames[-1].line or "").strip()) if frames else None


def _raised(name: str, error: BaseException, args: tuple, hint: str | None,
            kinds: Mapping[str, str] | None = None) -> None:
    """Fail with what the error raised inside the learner's function means, never with its own text."""
    kind, found = _error_kind(error)
    exercise = exercise_id(name)
    line = _learner_line(error)
    where = ""
    if line and line[1]:
        where = _t(f" (line {line[0]} of your code: `{line[1]}`)", f"（出错的是你的代码第 {line[0]} 行 `{line[1]}`）")
    mistake = (kinds or {}).get(kind) or _KIND_IN_EXERCISE.get((exercise, kind), kind)
    values: dict[str, object] = {"where": where}
    if mistake == "undefined-name":
        values["missing"] = getattr(error, "name", None) or (re.findall(r"'([^']+)'", str(error)) or ["?"])[0]
    elif mistake == "mask-not-bool":
        dtype = re.search(r"dtype (torch\.\w+|\w+)", str(error))
        values["dtype"] = dtype.group(1) if dtype else "float"
    elif mistake == "mask-wrong-shape":
        shapes = re.findall(r"\((?:\.\.\.|[\w.]+)(?:, (?:\.\.\.|[\w.]+))*\)", str(error))
        numbers = [s for s in shapes if re.fullmatch(r"\((?:\d+(?:, )?)+\)", s)]
        values["scores"], values["got"] = (numbers + ["?", "?"])[:2] if len(numbers) >= 2 else ("?", "?")
    elif mistake == "view-wrong-size" and found:
        values["numel"] = found.group(1)
    if mistake not in MISTAKES or exercise not in MISTAKES[mistake].exercises:
        mistake = "code-raised"
        values = {"call": _describe(args), "error": type(error).__name__, "what": _t(*_KIND_WORDS[kind]),
                  "where": where}
    template = MISTAKES[mistake]
    _fail(name, (template.zh if language() == "zh" else template.en).format_map(_Missing(values)), hint,
          mistake=mistake)


class _Missing(dict):
    """Values for a message template: a field the template does not use is simply not needed."""

    def __missing__(self, key: str) -> str:
        return ""


def _signature(fn: Callable) -> str:
    try:
        return str(inspect.signature(fn))
    except (TypeError, ValueError):  # a builtin without a signature
        return "(...)"


def _accepts(fn: Callable, args: tuple) -> bool:
    """Whether ``fn(*args)`` fits ``fn``'s signature (True when it has none to read)."""
    try:
        inspect.signature(fn).bind(*args)
    except TypeError:
        return False
    except ValueError:  # no signature to read
        return True
    return True


def _call(name: str, fn: Callable, *args, hint: str | None = None,
          probes: Callable[[], list[tuple[tuple, list[tuple[Tensor, str, dict]]]]] | None = None,
          kinds: Mapping[str, str] | None = None):
    """Call the learner's ``fn(*args)``: its result, or a failed exercise that says what went wrong.

    ``probes`` (when the call raises) gives other inputs on which the same mistake runs without an error, each
    with the known wrong answers to compare the result with (a key without its transpose runs on square
    shapes): a match names the mistake. ``kinds`` maps a kind of error (see :data:`_ERROR_KINDS`) to the
    mistake it means at this call (an axis out of range on a check's second input). Warnings raised inside the
    call are not shown (the checker speaks), and the ExerciseError carries no chained PyTorch traceback.
    """
    import warnings

    if not callable(fn):
        _fail(name, _t(f"expected a function; got {type(fn).__name__}",
                       f"这里要的是一个函数，得到的是 {type(fn).__name__}"))
    if not _accepts(fn, args):
        _mistake(name, "wrong-arguments", hint, call=_describe(args), signature=_signature(fn))
    before = [(arg, arg.clone()) for arg in args if isinstance(arg, Tensor)]
    failure = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = fn(*args)
        except Exception as error:  # noqa: BLE001 - the learner's code failed: translated below, outside this block
            failure = error
    if failure is None:
        if result is None:
            _mistake(name, "returns-none", hint)
        if isinstance(result, (np.ndarray, np.generic)):
            _mistake(name, "numpy-not-torch", hint)
        if any(arg.shape != copy.shape or not torch.equal(arg, copy) for arg, copy in before):
            _mistake(name, "modifies-input", hint)
        return result
    for probe_args, wrongs in (probes() if probes else []):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                probed = fn(*probe_args)
            except Exception:  # noqa: BLE001 - the probe did not help; the error itself is translated
                continue
        _known_mistakes(name, probed, hint, wrongs)
    _raised(name, failure, args, hint, kinds)


def _same(result: object, expected: Tensor, atol: float = 1e-9) -> bool:
    return (isinstance(result, Tensor) and result.shape == expected.shape and result.dtype != torch.bool
            and torch.allclose(result.double(), expected.double(), atol=atol, rtol=0))


def _known_mistakes(name: str, result: object, hint: str, mistakes: list[tuple[Tensor, str, dict]]) -> None:
    """A known wrong answer fails with its own message. ``mistakes``: (the wrong answer, the mistake's id in
    :data:`MISTAKES`, the values for its message) triples, tried in order."""
    for wrong, mistake, values in mistakes:
        if _same(result, wrong):
            _mistake(name, mistake, hint, **values)


def _check_against(name: str, result: object, expected: Tensor, hint: str,
                   mistakes: list[tuple[Tensor, str, dict]], atol: float = 1e-9) -> None:
    """``result`` must equal ``expected``; before that, a known wrong answer fails with its own message."""
    _known_mistakes(name, result, hint, mistakes)
    _compare(name, result, expected, hint, atol)


def _compare(name: str, answer: object, expected: Tensor, hint: str | None, atol: float) -> None:
    answer = _tensor(name, answer, hint)
    if tuple(answer.shape) != tuple(expected.shape):
        _fail(name, _t(f"expected shape {tuple(expected.shape)}; got {tuple(answer.shape)}",
                       f"形状应为 {tuple(expected.shape)}，得到的是 {tuple(answer.shape)}"), hint)
    if answer.dtype == torch.bool or expected.dtype == torch.bool:
        if answer.dtype != expected.dtype:
            _fail(name, _t(f"expected dtype {expected.dtype}; got {answer.dtype}",
                           f"数据类型应为 {expected.dtype}，得到的是 {answer.dtype}"), hint)
        if not torch.equal(answer, expected):
            wrong = int((answer != expected).sum())
            _fail(name, _t(f"{wrong} entries differ from the expected ones", f"有 {wrong} 个元素与预期不同"), hint)
        return
    if not torch.allclose(answer.double(), expected.double(), atol=atol, rtol=0):
        worst = (answer.double() - expected.double()).abs().max().item()
        _fail(name, _t(f"values differ by up to {worst:.3g}", f"数值最多相差 {worst:.3g}"), hint)


# ---------------------------------------------------------------------------------------------------------------
# General checkers


@_recorded(lambda name, *args, **kwargs: name)
def check_value(name: str, answer: object, expected: float, *, hint: str | None = None, rel: float = 1e-6,
                mistakes: Mapping[float, str] | None = None, ids: Mapping[float, str] | None = None) -> None:
    """A number: right within ``rel`` of ``expected``. ``mistakes`` maps known wrong values to their message;
    ``ids`` maps them to the mistakes' ids in the progress record (default: :func:`value_id` of the value)."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be the exercise's name, a non-empty str; got {name!r}")
    if _not_done(name, answer):
        return
    value = _number(name, answer)
    for wrong, message in (mistakes or {}).items():
        if math.isclose(value, wrong, rel_tol=rel, abs_tol=rel) and not math.isclose(wrong, expected, rel_tol=rel):
            _fail(name, message, hint, mistake=(ids or {}).get(wrong) or value_id(wrong))
    if not math.isclose(value, expected, rel_tol=rel, abs_tol=rel):
        _fail(name, _t(f"{value:.6g} is not the expected value", f"{value:.6g} 不是预期的值"), hint)
    _passed(name)


@_recorded(lambda name, *args, **kwargs: name)
def check_tensor(name: str, answer: object, expected: Tensor, *, hint: str | None = None, atol: float = 1e-6) -> None:
    """A tensor: right when it has the expected shape, dtype kind and values (to ``atol``)."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be the exercise's name, a non-empty str; got {name!r}")
    if _not_done(name, answer):
        return
    _compare(name, answer, expected, hint, atol)
    _passed(name)


def _text(pair: tuple[str, str] | None) -> str | None:
    return None if pair is None else _t(*pair)


@_recorded(lambda exercise, *args, **kwargs: exercise)
def check_number(exercise: str, answer: object) -> None:
    """A number whose expected value, known wrong values and hint live in :mod:`helpers.answers`."""
    entry = answers.lookup("NUMBERS", exercise)
    mistakes = {wrong: _text(message) for wrong, message in entry.mistakes.items()}
    check_value(exercise, answer, entry.expected, hint=_text(entry.hint), rel=entry.rel, mistakes=mistakes)


def choice_id(choice: str) -> str:
    """The id of a wrong choice in a multiple-choice exercise: ``"c"`` -> ``"choice-c"``."""
    return f"choice-{slug(str(choice))}"


def prediction_id(choice: str) -> str:
    """The id of a prediction the measurement did not bear out: ``"same"`` -> ``"predicted-same"``."""
    return f"predicted-{slug(str(choice))}"


@_recorded(lambda exercise, *args, **kwargs: exercise)
def check_choice(exercise: str, answer: object) -> None:
    """Multiple choice (*explain*): ``answer`` is one of the choices (``"a"``, ``"b"``, ...).

    The right choice and an explanation of every choice live in :mod:`helpers.answers`: a wrong choice gets its
    own explanation, the right one prints ``[x]`` and why it is right.
    """
    entry = answers.lookup("CHOICES", exercise)
    if _not_done(exercise, answer):
        return
    choice = str(answer).strip().lower() if isinstance(answer, str) else answer
    if choice not in entry.explanations:
        choices = ", ".join(map(repr, sorted(entry.explanations)))
        _fail(exercise, _t(f"choose one of {choices}; got {answer!r}", f"请从 {choices} 中选一个；得到的是 {answer!r}"))
    if choice != entry.correct:
        _fail(exercise, _t(f"not {choice!r}. ", f"不是 {choice!r}。") + _text(entry.explanations[choice]),
              _text(entry.hint), mistake=choice_id(choice))
    _passed(exercise)
    print(_text(entry.explanations[entry.correct]))


@_recorded(lambda exercise, *args, **kwargs: exercise)
def check_prediction(exercise: str, prediction: object, outcome: str) -> None:
    """Predict, then run: ``prediction`` was written down before the experiment; ``outcome`` is the choice that the
    experiment's measurement selects. Says whether the prediction was right, and why the outcome happens."""
    explanations = answers.lookup("PREDICTIONS", exercise)
    if outcome not in explanations:
        raise ValueError(f"outcome must be one of {sorted(explanations)}; got {outcome!r}")
    if _not_done(_Name(_t(f"{exercise} (write your prediction first)", f"{exercise}（先写下你的预测）"), exercise),
                 prediction):
        return
    choice = str(prediction).strip().lower() if isinstance(prediction, str) else prediction
    if choice not in explanations:
        choices = ", ".join(map(repr, sorted(explanations)))
        _fail(exercise, _t(f"predict one of {choices}; got {prediction!r}",
                           f"请预测 {choices} 之一；得到的是 {prediction!r}"))
    _tries[exercise] += 1
    _record(exercise, "correct" if choice == outcome else prediction_id(choice))
    if choice == outcome:
        verdict = _t("your prediction was right", "你的预测是对的")
    else:
        verdict = _t(f"you predicted {choice!r}; the measurement says {outcome!r}",
                     f"你预测的是 {choice!r}；测量结果是 {outcome!r}")
    print(_t(f"[x] {exercise}: {verdict}. ", f"[x] {exercise}：{verdict}。") + _text(explanations[outcome]))


# ---------------------------------------------------------------------------------------------------------------
# The pieces of attention


@_recorded(lambda *args, **kwargs: "scale")
def check_scale(answer: object, d_k: int, *, d_model: int | None = None) -> None:
    """The factor that multiplies Q Kᵀ for keys of size ``d_k`` (per head; ``d_model`` names the model width)."""
    if isinstance(d_k, bool) or not isinstance(d_k, numbers.Integral) or d_k < 1:
        raise ValueError(f"d_k must be a positive integer (the size of one head's keys); got {d_k!r}")
    name = _Name(_t("scale", "缩放因子"), "scale")
    hint = _t("the variance of q·k grows like d_k; which factor brings it back to 1?",
              "q·k 的方差随 d_k 线性增长；乘以什么才能让方差回到 1？")
    if _not_done(name, answer):
        return
    known = {1 / d_k: ("scale-1-over-dk", {"value": f"{1 / d_k:.4g}"}), math.sqrt(d_k): ("scale-times-sqrt-dk", {})}
    if d_model is not None and d_model != d_k:
        known[1 / math.sqrt(d_model)] = ("scale-1-over-sqrt-dmodel", {})
    check_value(name, answer, 1 / math.sqrt(d_k), hint=hint,
                mistakes={wrong: MISTAKES[mistake].text(**values) for wrong, (mistake, values) in known.items()},
                ids={wrong: mistake for wrong, (mistake, _) in known.items()})


@_exercise(("softmax", "softmax"),
           ("what must one row of weights add up to? And what keeps e^s finite when a score is near 1000?",
            "一行权重加起来应该等于多少？分数接近 1000 时，怎样让 e^s 不溢出？"))
def check_softmax(fn: object, *, name: str, hint: str) -> None:
    """A row-wise softmax ``fn(scores) -> weights`` over the last axis, stable for large scores."""
    (scores,) = _normal(1, (3, 4, 5))
    result = _call(name, fn, scores, hint=hint)
    _check_against(name, result, torch.softmax(scores, -1), hint,
                   [(torch.softmax(scores, dim), "softmax-wrong-axis", {"dim": dim}) for dim in (0, 1)])
    big = torch.tensor([[1000.0, 1001.0, 999.0]], dtype=torch.float64)
    # the same function that ran on 3-D scores: an axis out of range here was counted from the front
    result = _tensor(name, _call(name, fn, big, hint=hint, kinds={"dim": "softmax-fixed-axis"}), hint)
    if not torch.isfinite(result).all():
        _mistake(name, "softmax-overflow", hint)


@_exercise(("attention", "注意力"),
           ("five steps: Q Kᵀ, scale, (mask), softmax over the keys, times V",
            "五步：Q Kᵀ、缩放、（掩码）、对键做 softmax、乘以 V"))
def check_attention(fn: object, *, name: str, hint: str) -> None:
    """``fn(query, key, value) -> output`` equal to softmax(Q Kᵀ / √d_k) V."""
    q, k, v = _normal(2, (2, 3, 8), (2, 5, 8), (2, 5, 8))
    result = _call(name, fn, q, k, v, hint=hint, probes=lambda: _probes("attention"))
    scores = q @ k.transpose(-2, -1)  # (2, 3, 5), d_k = 8
    weights = torch.softmax(scores / math.sqrt(8), -1)
    _check_against(name, result, scaled_dot_product_attention(q, k, v)[0], hint, [
        (torch.softmax(scores, -1) @ v, "attention-no-scale", {}),
        (torch.softmax(scores / 8, -1) @ v, "attention-scale-1-over-dk", {}),
        (torch.softmax(scores / math.sqrt(8), -2) @ v, "attention-softmax-over-queries", {}),
        (torch.softmax(scores / math.sqrt(8), 0) @ v, "softmax-over-batch", {}),
        (torch.softmax(scores, -1) / math.sqrt(8) @ v, "attention-scale-after-softmax", {}),
        (weights, "attention-returns-weights", {}),
    ])


def _probes(exercise: str) -> list[tuple[tuple, list[tuple[Tensor, str, dict]]]]:
    """Inputs on which a function that raised on the check's own inputs runs, with the known wrong answers it may
    then give: on square shapes (4, 4, 4) a key used without its transpose (``q @ k``, or ``q @ k.T``, which on a
    3-D tensor reverses every axis) runs; with as many keys as queries, keys and values taken from different
    sides run."""
    q, k, v = _normal(20, (4, 4, 4), (4, 4, 4), (4, 4, 4))

    def untransposed(query: Tensor, key: Tensor) -> list[Tensor]:
        return [torch.softmax(query @ key / 2, -1), torch.softmax(query @ key.permute(2, 1, 0) / 2, -1)]

    if exercise == "attention":
        return [((q, k, v), [(w @ v, "key-not-transposed", {}) for w in untransposed(q, k)])]
    if exercise == "attention-weights":
        return [((q, k), [(w, "key-not-transposed", {}) for w in untransposed(q, k)])]
    decoder_x, memory = _normal(21, (2, 4, 8), (2, 4, 8))  # cross-attention: L_tgt = L_src
    return [((decoder_x, memory), [
                (scaled_dot_product_attention(decoder_x, decoder_x, memory)[0], "cross-keys-values-mixed", {}),
                (scaled_dot_product_attention(decoder_x, memory, decoder_x)[0], "cross-keys-values-mixed", {})]),
            ((q, k), [(w @ k, "key-not-transposed", {}) for w in untransposed(q, k)])]


def _mask_dtype(name: str, result: object, hint: str) -> None:
    """A mask of numbers is named: an additive 0 / -inf mask, or 0/1 numbers instead of True/False."""
    if isinstance(result, Tensor) and result.dtype != torch.bool:
        if result.is_floating_point() and torch.isinf(result).any():
            _mistake(name, "mask-additive", hint)
        _mistake(name, "mask-not-bool", hint, dtype=str(result.dtype))


def _inverted(name: str, result: object, expected: Tensor) -> None:
    if isinstance(result, Tensor) and result.dtype == torch.bool and result.shape == expected.shape:
        if torch.equal(result, ~expected):
            _mistake(name, "pytorch-mask-convention")


@_exercise(("causal mask", "因果掩码"),
           ("query i may look at keys 0..i: which triangle of the matrix is that, diagonal included?",
            "查询 i 可以看键 0..i：这是矩阵的哪个三角（含对角线）？"))
def check_causal_mask(fn: object, *, name: str, hint: str) -> None:
    """``fn(length) -> (length, length)`` bool mask, True where query i may see key j (j <= i)."""
    for length in (4, 7, 1):
        result = _call(name, fn, length, hint=hint)
        _mask_dtype(name, _tensor(name, result, hint), hint)
        if length > 1:
            _inverted(name, result, causal_mask(length))
            if isinstance(result, Tensor) and result.dtype == torch.bool and result.shape == (length, length):
                if torch.equal(result, causal_mask(length).T):
                    _mistake(name, "causal-upper-triangle", hint)
                if torch.equal(result, causal_mask(length).tril(-1)):
                    _mistake(name, "causal-diagonal-blocked", hint)
                if torch.equal(result, torch.ones(length, length, dtype=torch.bool).tril(1)):
                    _mistake(name, "causal-sees-next-key", hint)
        _compare(name, result, causal_mask(length), hint, 0.0)


@_exercise(("padding mask", "填充掩码"),
           ("which keys may a query attend to, and over which axis of the (batch, L_q, L_k) scores must the mask "
            "be the same for every query?",
            "查询可以关注哪些键？对 (batch, L_q, L_k) 的分数来说，掩码在哪个轴上对每个查询都一样？"))
def check_padding_mask(fn: object, pad_id: int = 0, *, name: str, hint: str) -> None:
    """``fn(tokens) -> (batch, 1, L)`` bool mask, True on real tokens (the keys a query may attend to)."""
    tokens = torch.tensor([[5, 6, 7, pad_id, pad_id], [3, 4, pad_id, pad_id, pad_id]])
    expected = padding_mask(tokens, pad_id)  # (2, 1, 5)
    result = _call(name, fn, tokens, hint=hint)
    _mask_dtype(name, _tensor(name, result, hint), hint)
    _inverted(name, result, expected)
    if isinstance(result, Tensor) and result.dtype == torch.bool and result.shape == (2, 5):
        if torch.equal(result, ~expected[:, 0]):
            _inverted(name, result.unsqueeze(1), expected)
        _mistake(name, "padding-no-query-axis", hint)
    if isinstance(result, Tensor) and result.dtype == torch.bool and result.shape == (2, 5, 1):
        _mistake(name, "padding-masks-queries", hint)
    if isinstance(result, Tensor) and result.dtype == torch.bool and result.shape == (1, 2, 5):
        _mistake(name, "padding-query-axis-first", hint)
    _compare(name, result, expected, hint, 0.0)


@_recorded(lambda name, *args, **kwargs: name)
def check_first_at_least(name: str, answer: object, values: Tensor, threshold: float, *,
                         hint: str | None = None) -> None:
    """An index: the first position of the 1-D ``values`` that is >= ``threshold``."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be the exercise's name, a non-empty str; got {name!r}")
    if _not_done(name, answer):
        return
    positions = torch.nonzero(torch.as_tensor(values) >= threshold)
    if len(positions) == 0:
        raise ValueError(f"values must reach the threshold {threshold} somewhere; none does")
    position = _integer(name, answer)
    expected = int(positions[0])
    if position != expected:
        side = _t("reaches the threshold earlier", "更早就达到了阈值") if position > expected else _t(
            "is still below the threshold", "还低于阈值")
        _fail(name, _t(f"position {position} is not it: the answer {side}", f"不是位置 {position}：答案{side}"), hint)
    _passed(name)


@_recorded(lambda word, *args, **kwargs: f"toy-output-{slug(str(word))}")
def check_toy_output(word: str, answer: object) -> None:
    """The attention output row of ``word`` in the toy sentence: softmax(q_word Kᵀ / √3) V, shape (3,)."""
    if word not in TOY_WORDS:
        raise ValueError(f"word must be one of {TOY_WORDS}; got {word!r}")
    name = _Name(_t(f"output of {word!r}", f"{word!r} 的输出"), f"toy-output-{slug(word)}")
    hint = _t("the output of a query is a weighted sum of the rows of V, with that query's row of r as weights",
              "一个查询的输出是 V 各行的加权和，权重是 r 中这个查询的那一行")
    if _not_done(name, answer):
        return
    x = torch.as_tensor(toy_matrix())
    w_q, w_k, w_v = (torch.as_tensor(w) for w in toy_projections())
    output, weights = scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)
    row = TOY_WORDS.index(word)
    try:
        answer = torch.as_tensor(np.asarray(answer, dtype=float))
    except (TypeError, ValueError):
        _fail(name, _t("expected 3 numbers (a row vector)", "这里要的是 3 个数（一个行向量）"), hint)
    if answer.shape == (3,) and torch.allclose(answer, (x @ w_v)[row], atol=1e-6):
        _mistake(name, "toy-own-value", hint)
    if answer.shape == (3,) and torch.allclose(answer, (weights[:, row] @ (x @ w_v)), atol=1e-3):
        _mistake(name, "toy-column-of-r", hint)
    if answer.shape == weights[row].shape and torch.allclose(answer, weights[row], atol=1e-3):
        _mistake(name, "toy-weights-not-output", hint)
    unscaled = torch.softmax((x @ w_q)[row] @ (x @ w_k).T, -1) @ (x @ w_v)
    if answer.shape == (3,) and torch.allclose(answer, unscaled, atol=1e-3):
        _mistake(name, "toy-no-scale", hint)
    _compare(name, answer, output[row], hint, 1e-3)
    _passed(name)


@_exercise(("combined mask", "组合掩码"),
           ("a query may attend where BOTH masks allow it; mind the shapes (L, L) and (batch, 1, L)",
            "只有两个掩码都允许的位置才能关注；注意形状 (L, L) 与 (batch, 1, L)"))
def check_combined_mask(fn: object, pad_id: int = 0, *, name: str, hint: str) -> None:
    """``fn(tokens) -> (batch, L, L)`` bool mask: causal AND the key is a real token."""
    tokens = torch.tensor([[5, 6, 7, 8, pad_id], [3, 4, pad_id, pad_id, pad_id]])
    causal, padding = causal_mask(5), padding_mask(tokens, pad_id)
    expected = causal & padding
    result = _call(name, fn, tokens, hint=hint)
    _mask_dtype(name, _tensor(name, result, hint), hint)
    _inverted(name, result, expected)
    if result.shape == causal.shape and torch.equal(result, causal):
        _mistake(name, "combined-causal-only", hint)
    if result.shape == padding.shape and torch.equal(result, padding):
        _mistake(name, "combined-padding-only", hint)
    if isinstance(result, Tensor) and result.shape == expected.shape and result.dtype == torch.bool:
        if torch.equal(result, causal | padding):
            _mistake(name, "combined-or", hint)
        if torch.equal(result, causal & padding.transpose(-2, -1)):
            _mistake(name, "combined-padding-on-queries", hint)
    _compare(name, result, expected, hint, 0.0)


def _output(name: str, fn: Callable, *args, hint: str | None = None, probes=None) -> Tensor:
    result = _tensor(name, _call(name, fn, *args, hint=hint, probes=probes), hint)
    if result.is_floating_point() and not torch.isfinite(result).all():
        _mistake(name, "nan-in-output")
    return result


@_exercise(("no future leak", "不泄露未来"),
           ("self-attention in the decoder needs a mask that lets position i see only positions 0..i",
            "解码器的自注意力需要一个掩码，让位置 i 只能看到位置 0..i"))
def check_no_future_leak(fn: Callable[[Tensor], Tensor], *, length: int = 6, d_model: int = 8, name: str,
                         hint: str) -> None:
    """``fn(x (1, L, d_model)) -> (1, L, d_model)``: changing tokens after position t leaves outputs 0..t unchanged."""
    generator = torch.Generator().manual_seed(4)
    x = torch.randn(1, length, d_model, generator=generator, dtype=torch.float64)
    first = _tensor(name, _call(name, fn, x, hint=hint), hint)
    if first.is_floating_point() and first.dim() == 3 and not torch.isfinite(first[:, -1]).all():
        # the last query may see every key: no key left for it means the mask blocks the past, not the future
        _mistake(name, "leak-blocks-past", hint, last=length - 1)
    base = _output(name, fn, x, hint=hint)
    elsewhere = torch.Generator().manual_seed(5)  # its own draws: the leak probes below stay as they were
    other = _output(name, fn, torch.randn(1, length, d_model, generator=elsewhere, dtype=torch.float64), hint=hint)
    if other.shape == base.shape and torch.allclose(other, base, atol=1e-12, rtol=0):
        _mistake(name, "ignores-its-input", hint)  # no leak, trivially: it reads something else (the source?)
    for t in range(length - 1):
        changed = x.clone()
        changed[:, t + 1:] = torch.randn(1, length - t - 1, d_model, generator=generator, dtype=torch.float64)
        moved = (_output(name, fn, changed, hint=hint)[:, : t + 1] - base[:, : t + 1]).abs().max().item()
        if moved > 1e-9:
            if base.shape == x.shape and _reads_only_future(name, fn, x, base, generator, hint):
                _mistake(name, "leak-mask-inverted", hint)
            _mistake(name, "future-leaks", hint, t=t, moved=f"{moved:.3g}")


def _reads_only_future(name: str, fn: Callable, x: Tensor, base: Tensor, generator: torch.Generator,
                       hint: str | None) -> bool:
    """True when no output depends on the positions before it: a causal mask the wrong way round."""
    length = x.shape[1]
    for t in range(1, length):
        changed = x.clone()
        changed[:, :t] = torch.randn(x.shape[0], t, x.shape[2], generator=generator, dtype=x.dtype)
        out = _tensor(name, _call(name, fn, changed, hint=hint), hint)
        if out.shape != base.shape or not torch.allclose(out[:, t], base[:, t], atol=1e-9, rtol=0, equal_nan=True):
            return False
    return True


@_exercise(("ignores padding", "忽略填充"),
           ("no query may attend to a PAD key: which mask, of which shape?",
            "任何查询都不能关注 PAD 键：用哪个掩码、什么形状？"))
def check_ignores_padding(fn: Callable[[Tensor, Tensor], Tensor], *, pad_id: int = 0, d_model: int = 8, name: str,
                          hint: str) -> None:
    """``fn(x (batch, L, d_model), tokens (batch, L)) -> (batch, L, d_model)``: the padding's content is ignored.

    Whatever vectors stand at the PAD positions, the outputs at the real positions do not change.
    """
    generator = torch.Generator().manual_seed(6)
    tokens = torch.tensor([[5, 6, 7, 8, 9], [3, 4, 5, pad_id, pad_id]])
    x = torch.randn(2, 5, d_model, generator=generator, dtype=torch.float64)
    real = tokens != pad_id
    first = _tensor(name, _call(name, fn, x, tokens, hint=hint), hint)
    if first.shape == x.shape and first.is_floating_point() and not torch.isfinite(first).all():
        if not torch.isfinite(first[0]).any() and torch.isfinite(first[1]).all():
            # the sentence without padding has no key left: the mask lets the queries see only the PAD keys
            _mistake(name, "padding-mask-inverted", hint)
    base = _output(name, fn, x, tokens, hint=hint)
    other = x.clone()
    other[~real] = 10 * torch.randn(int((~real).sum()), d_model, generator=generator, dtype=torch.float64)
    moved = (_output(name, fn, other, tokens, hint=hint) - base)[real].abs().max().item()
    if moved > 1e-9 and base.shape == x.shape:
        if not base[~real].any():  # the PAD queries get nothing, the real ones still read the PAD keys
            _mistake(name, "padding-masked-queries", hint, moved=f"{moved:.3g}")
        mine = x.clone()
        mine[1, 0] = torch.randn(d_model, generator=generator, dtype=torch.float64)  # a real token of sentence 1
        seen = (_output(name, fn, mine, tokens, hint=hint) - base)[1, 1:3].abs().max().item()
        if seen <= 1e-9:  # the other real tokens do not see it: they read only the PAD keys
            _mistake(name, "padding-mask-inverted", hint)
    if moved > 1e-9:
        _mistake(name, "padding-leaks", hint, moved=f"{moved:.3g}")


@_exercise(("split heads", "拆分多头"),
           ("write down the shape after each step: which axis of (batch, L, d_model) holds the features that "
            "belong to one head?",
            "把每一步之后的形状写下来：(batch, L, d_model) 的哪个轴装着属于一个头的那些特征？"))
def check_split_heads(fn: object, *, name: str, hint: str) -> None:
    """``fn(x, num_heads)``: (batch, L, d_model) -> (batch, heads, L, d_head), head h = features h·d_head ... ."""
    x = torch.arange(2 * 3 * 8, dtype=torch.float64).reshape(2, 3, 8)  # (batch 2, L 3, d_model 8)
    expected = x.view(2, 3, 4, 2).transpose(1, 2)  # 4 heads of size 2
    result = _tensor(name, _call(name, fn, x, 4, hint=hint), hint)
    if result.shape == expected.shape and torch.equal(result, x.view(2, 4, 3, 2)):
        _mistake(name, "split-view-without-transpose", hint)
    if result.shape == expected.shape and torch.equal(result, x.view(2, 3, 2, 4).permute(0, 3, 1, 2)):
        _mistake(name, "split-heads-interleaved", hint)
    if result.shape == (2, 3, 4, 2) and torch.equal(result, x.view(2, 3, 4, 2)):
        _mistake(name, "split-heads-axis-last", hint)
    _compare(name, result, expected, hint, 0.0)


@_exercise(("layer norm", "层标准化"),
           ("over which axis does one token's normalisation run, and compare your numbers with nn.LayerNorm's on "
            "one token: which statistic differs?",
            "一个词元的标准化沿哪个轴做？拿一个词元，把你的结果和 nn.LayerNorm 的结果比一比：是哪个统计量不一样？"))
def check_layer_norm(fn: object, *, name: str, hint: str) -> None:
    """``fn(x, eps) -> (x - mean) / sqrt(var + eps)`` over the last axis (biased variance, no affine part)."""
    x = _normal(8, (2, 3, 8))[0] * 3 + 1
    x[0, 0] = 1.0  # a constant token: its variance is 0, and only eps keeps the division finite
    eps = 1e-2
    expected = torch.nn.functional.layer_norm(x, (8,), eps=eps)
    result = _tensor(name, _call(name, fn, x, eps, hint=hint), hint)
    centred = x - x.mean(-1, keepdim=True)
    if result.shape == x.shape:
        var = x.var(-1, unbiased=False, keepdim=True)
        if not torch.isfinite(result).all() or _same(result[1:], (centred / var.sqrt())[1:]):
            _mistake(name, "layer-norm-no-eps", hint)
        over_batch = (x - x.mean(0, keepdim=True)) / torch.sqrt(x.var(0, unbiased=False, keepdim=True) + eps)
        _known_mistakes(name, result, hint, [
            (centred / (var.sqrt() + eps), "layer-norm-eps-outside-sqrt", {}),
            (centred / torch.sqrt(x.var(-1, keepdim=True) + eps), "layer-norm-unbiased-variance", {}),
            (over_batch, "layer-norm-over-batch", {}),
            (x / torch.sqrt(var + eps), "layer-norm-not-centred", {}),
            ((x - x.mean()) / torch.sqrt(x.var(unbiased=False) + eps), "layer-norm-over-everything", {}),
            (centred / (x.std(-1, keepdim=True) + eps), "layer-norm-std-plus-eps", {}),
        ])
        other = _tensor(name, _call(name, fn, x, 1e-5, hint=hint), hint)
        if torch.allclose(other, result) and not torch.allclose(expected, torch.nn.functional.layer_norm(x, (8,))):
            _mistake(name, "layer-norm-eps-ignored", hint)
    _compare(name, result, expected, hint, 1e-9)


@_exercise(("cross-attention", "交叉注意力"),
           ("ask which side asks the questions: the output has one row per position of that side",
            "想一想是哪一方在提问：输出对这一方的每个位置各有一行"))
def check_cross_attention(fn: object, *, name: str, hint: str) -> None:
    """``fn(decoder_x (batch, L_tgt, d), memory (batch, L_src, d)) -> (batch, L_tgt, d)``: queries from the decoder,
    keys and values from the encoder's output (no projections)."""
    decoder_x, memory = _normal(10, (2, 3, 8), (2, 5, 8))
    result = _output(name, fn, decoder_x, memory, hint=hint, probes=lambda: _probes("cross-attention"))
    if result.shape == (2, 5, 8):
        _mistake(name, "cross-queries-from-encoder", hint)
    itself, _ = scaled_dot_product_attention(decoder_x, decoder_x, decoder_x)  # (2, 3, 8): no encoder at all
    output, weights = scaled_dot_product_attention(decoder_x, memory, memory)
    scores = decoder_x @ memory.transpose(-2, -1) / math.sqrt(8)
    _check_against(name, result, output, hint, [
        (itself, "cross-decoder-on-itself", {}),
        (weights, "attention-returns-weights", {}),
        (torch.softmax(scores, 0) @ memory, "softmax-over-batch", {}),
    ])


@_exercise(("pre-LN sub-layer", "Pre-LN 子层"),
           ("in pre-LN the norm acts on the sub-layer's input, and the residual path is left untouched",
            "Pre-LN 里层标准化作用在子层的输入上，残差通路本身不动"))
def check_pre_ln(fn: object, *, name: str, hint: str) -> None:
    """``fn(x, sublayer, norm) -> x + sublayer(norm(x))``: a pre-LN residual sub-layer."""
    torch.manual_seed(11)
    sublayer, norm = torch.nn.Linear(8, 8).double(), torch.nn.LayerNorm(8).double()
    x = _normal(11, (2, 3, 8))[0] * 4
    with torch.no_grad():
        result = _output(name, fn, x, sublayer, norm, hint=hint)
        _check_against(name, result, x + sublayer(norm(x)), hint, [
            (norm(x + sublayer(x)), "pre-ln-is-post-ln", {}),
            (sublayer(norm(x)), "pre-ln-no-residual", {}),
            (x + norm(sublayer(x)), "pre-ln-norm-after-sublayer", {}),
            (norm(x) + sublayer(norm(x)), "pre-ln-normed-residual", {}),
        ])


@_exercise(("attention weights", "注意力权重"),
           ("add up one row of your weights: what should it give, and along which axis does the softmax run?",
            "把你的权重的一行加起来：应该得到多少？softmax 沿哪个轴做？"))
def check_attention_weights(fn: object, *, name: str, hint: str) -> None:
    """``fn(query, key) -> softmax(Q Kᵀ / √d_k)`` over the keys: each row sums to 1."""
    q, k = _normal(12, (2, 3, 8), (2, 5, 8))
    result = _output(name, fn, q, k, hint=hint, probes=lambda: _probes("attention-weights"))
    scores = q @ k.transpose(-2, -1) / math.sqrt(8)  # (2, 3, 5)
    _check_against(name, result, torch.softmax(scores, -1), hint, [
        (torch.softmax(scores, -2), "weights-softmax-over-queries", {}),
        (torch.softmax(scores, 0), "softmax-over-batch", {}),
        (torch.softmax(scores * math.sqrt(8), -1), "weights-no-scale", {}),
        (torch.softmax(scores / math.sqrt(8), -1), "weights-scale-1-over-dk", {}),
        (scores, "weights-no-softmax", {}),
    ])


# --- every known mistake, for the teaching guide and the class report -----------------------------------------

#: each checker's exercise id; None: the id is the checker's first argument (``check_number("03-x", ...)``), as
#: :func:`slug` makes it (``check_tensor("expand kv", ...)`` -> ``"expand-kv"``); check_toy_output's is
#: ``"toy-output-" + word``
CHECKER_EXERCISES: dict[str, str | None] = {
    "check_value": None, "check_tensor": None, "check_number": None, "check_choice": None,
    "check_prediction": None, "check_first_at_least": None, "check_toy_output": None,
    "check_scale": "scale", "check_softmax": "softmax", "check_attention": "attention",
    "check_causal_mask": "causal-mask", "check_padding_mask": "padding-mask", "check_combined_mask": "combined-mask",
    "check_no_future_leak": "no-future-leak", "check_ignores_padding": "ignores-padding",
    "check_split_heads": "split-heads", "check_layer_norm": "layer-norm", "check_cross_attention": "cross-attention",
    "check_pre_ln": "pre-ln", "check_attention_weights": "attention-weights",
}


@dataclass(frozen=True)
class KnownMistake:
    """One known mistake of one exercise: ``exercise`` and ``id`` as the progress record writes them, the message
    in English and Chinese (with example values), ``kind``: ``"checker"`` (a piece checker's, in
    :data:`MISTAKES`), ``"number"``, ``"choice"`` or ``"prediction"`` (from :mod:`helpers.answers`), and
    ``answer``: the wrong answer itself when it is one value (``"64"``, ``"'c'"``), else ``""``."""

    exercise: str
    id: str
    en: str
    zh: str
    kind: str
    answer: str = ""

    def text(self, lang: str) -> str:
        """The message in ``lang`` ("en" or "zh")."""
        return self.zh if lang == "zh" else self.en


def _answer_modules() -> list[object]:
    import importlib
    import pkgutil

    return [importlib.import_module(f"helpers.answers.{info.name}")
            for info in sorted(pkgutil.iter_modules(answers.__path__), key=lambda info: info.name)
            if re.fullmatch(r"n\d\d", info.name)]


def known_mistakes() -> list[KnownMistake]:
    """Every known mistake the checkers can name, in a stable order: the answer tables' (notebook by notebook,
    numbers, choices, predictions), then the piece checkers' (:data:`MISTAKES`, one entry per exercise)."""
    found = []
    for module in _answer_modules():
        for exercise, entry in getattr(module, "NUMBERS", {}).items():
            for wrong, (en, zh) in entry.mistakes.items():
                found.append(KnownMistake(exercise, value_id(wrong), en, zh, "number", format(wrong, ".4g")))
        for exercise, entry in getattr(module, "CHOICES", {}).items():
            for choice, (en, zh) in sorted(entry.explanations.items()):
                if choice != entry.correct:
                    found.append(KnownMistake(exercise, choice_id(choice), en, zh, "choice", repr(choice)))
        for exercise, outcomes in getattr(module, "PREDICTIONS", {}).items():
            for outcome, (en, zh) in sorted(outcomes.items()):
                found.append(KnownMistake(exercise, prediction_id(outcome), en, zh, "prediction", repr(outcome)))
    for mistake in MISTAKES.values():
        for exercise in mistake.exercises:
            found.append(KnownMistake(exercise, mistake.id, mistake.text("en"), mistake.text("zh"), "checker"))
    return found


# --- how a failed check is shown -----------------------------------------------------------------------------


def require(names: dict[str, str] | str, cell: str | None = None, namespace: dict | None = None) -> None:
    """Raise :class:`RunEarlierCellError` naming the cell to run first when a needed variable is missing.

    ``require("toy", "7 · the model")`` or ``require({"toy": "7 · the model", "result": "8 · training"})``:
    each name maps to the cell (its heading, or what it does) that defines it. ``namespace`` defaults to
    IPython's user namespace (the notebook's variables); outside IPython, pass it.
    """
    if isinstance(names, str):
        if not isinstance(cell, str) or not cell:
            raise TypeError(f"cell must name the cell that defines {names!r}; got {cell!r}")
        names = {names: cell}
    elif not isinstance(names, dict) or not names:
        raise TypeError(f"names must be a variable name or a non-empty dict name -> cell; got {names!r}")
    if namespace is None:
        shell = _ipython()
        if shell is None:
            raise TypeError("namespace is required outside IPython: pass the dict of variables, e.g. globals()")
        namespace = shell.user_ns
    missing = [(name, where) for name, where in names.items() if name not in namespace]
    if missing:
        lines = [_t(f"`{name}` is not defined yet: run the cell \"{where}\" first.",
                    f"`{name}` 还没有定义：请先运行“{where}”这个单元格。") for name, where in missing]
        lines.append(_t("(After a kernel restart: Run > Run All Above Selected Cell.)",
                        "（如果刚重启过内核，请从头依次运行前面的单元格。）"))
        raise RunEarlierCellError("\n".join(lines))


def _ipython():
    """The running IPython shell, or None (plain Python, a test)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def _exercise_error_handler(shell, etype, value, tb, tb_offset=None) -> list[str]:
    """IPython's custom-exception hook: an ExerciseError as its message alone.

    A NameError keeps IPython's usual traceback (it shows where) with one line added on what to run.
    """
    if issubclass(etype, ExerciseError):
        stb = [str(value)]
    else:
        stb = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
        name = getattr(value, "name", None)
        stb = [*stb, _t(f"If an earlier cell defines `{name or 'it'}`, run that cell first "
                        "(after a kernel restart: Run > Run All Above Selected Cell).",
                        f"如果 `{name or '它'}` 是在前面某个单元格里定义的，请先运行那个单元格"
                        "（如果刚重启过内核，请从头依次运行前面的单元格）。")]
    shell._showtraceback(etype, value, stb)
    return stb


def show_exercise_errors(shell=None) -> bool:
    """Register the hook that shows an ExerciseError as its message alone; True when IPython is running.

    Called when :mod:`helpers.checks` is imported; ``shell`` defaults to the running IPython shell.
    """
    shell = shell if shell is not None else _ipython()
    if shell is None or not hasattr(shell, "set_custom_exc"):
        return False
    shell.set_custom_exc((ExerciseError, NameError), _exercise_error_handler)
    return True


show_exercise_errors()
