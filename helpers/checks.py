"""Exercise checkers: each compares a learner's answer to a reference and explains a failure.

An exercise cell starts as ``answer = ...``. A checker given ``...`` (Ellipsis) prints that the exercise
is not done yet; a wrong answer raises :class:`ExerciseError` with a hint; a right one prints
``[x] name: correct``. Checkers return nothing, so a notebook cell shows only their message.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor

from helpers.attention import causal_mask, padding_mask, scaled_dot_product_attention
from helpers.tasks import TOY_WORDS, toy_matrix, toy_projections

__all__ = [
    "ExerciseError",
    "check_value",
    "check_tensor",
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
    "RunEarlierCellError",
    "require",
    "show_exercise_errors",
]


class ExerciseError(AssertionError):
    """A wrong answer; the message says what differs and gives a hint.

    In IPython (a notebook) it is shown as its message alone, without a traceback: see
    :func:`show_exercise_errors`, registered when this module is imported.
    """


class RunEarlierCellError(ExerciseError):
    """A cell ran before the one it depends on (after a kernel restart, or out of order)."""


def _not_done(name: str, answer: object, hint: str) -> None:
    if answer is Ellipsis:
        print(f"[ ] {name}: not answered yet. Replace the ... and run the cell again. Hint: {hint}")
        return True
    return False


def _fail(name: str, problem: str, hint: str) -> None:
    raise ExerciseError(f"{name}: {problem}\nHint: {hint}")


def _passed(name: str) -> None:
    print(f"[x] {name}: correct")


def check_value(name: str, answer: object, expected: float, *, hint: str, rel: float = 1e-6) -> None:
    """A number: right when within ``rel`` relative tolerance of ``expected``."""
    if _not_done(name, answer, hint):
        return
    try:
        value = float(answer)
    except (TypeError, ValueError):
        _fail(name, f"expected a number; got {type(answer).__name__}", hint)
    if not math.isclose(value, expected, rel_tol=rel, abs_tol=rel):
        _fail(name, f"got {value:.6g}, which is not the expected value", hint)
    _passed(name)


def _compare(name: str, answer: object, expected: Tensor, hint: str, atol: float) -> None:
    if not isinstance(answer, Tensor):
        _fail(name, f"expected a torch.Tensor; got {type(answer).__name__}", hint)
    if tuple(answer.shape) != tuple(expected.shape):
        _fail(name, f"expected shape {tuple(expected.shape)}; got {tuple(answer.shape)}", hint)
    if answer.dtype == torch.bool or expected.dtype == torch.bool:
        if answer.dtype != expected.dtype:
            _fail(name, f"expected dtype {expected.dtype}; got {answer.dtype}", hint)
        if not torch.equal(answer, expected):
            _fail(name, f"{int((answer != expected).sum())} entries differ from the expected ones", hint)
        return
    if not torch.allclose(answer.double(), expected.double(), atol=atol, rtol=0):
        worst = (answer.double() - expected.double()).abs().max().item()
        _fail(name, f"values differ by up to {worst:.3g}", hint)


def check_tensor(name: str, answer: object, expected: Tensor, *, hint: str, atol: float = 1e-6) -> None:
    """A tensor: right when it has the expected shape, dtype kind and values (to ``atol``)."""
    if _not_done(name, answer, hint):
        return
    _compare(name, answer, expected, hint, atol)
    _passed(name)


def check_scale(answer: object, d_k: int) -> None:
    """The factor that multiplies Q Kᵀ for keys of size ``d_k``."""
    hint = "the paper divides the scores by the square root of d_k, so the factor is 1 / sqrt(d_k)"
    if _not_done("scale", answer, hint):
        return
    if isinstance(answer, (int, float)) and math.isclose(float(answer), 1 / d_k):
        _fail("scale", f"1/d_k = {1 / d_k:.4g} is the article's slip, not the paper's factor", hint)
    check_value("scale", answer, 1 / math.sqrt(d_k), hint=hint)


def _call(name: str, fn: Callable, hint: str, *args):
    try:
        return fn(*args)
    except Exception as error:  # the learner's code failed: report it as a failed exercise
        _fail(name, f"calling it raised {type(error).__name__}: {error}", hint)


def check_softmax(fn: object) -> None:
    """A row-wise softmax ``fn(scores) -> weights`` over the last axis, stable for large scores."""
    name, hint = "softmax", "exp(x - max) / sum(exp(x - max)) along the last axis (dim=-1)"
    if _not_done(name, fn, hint):
        return
    generator = torch.Generator().manual_seed(1)
    scores = torch.randn(3, 4, 5, generator=generator, dtype=torch.float64)
    _compare(name, _call(name, fn, hint, scores), torch.softmax(scores, -1), hint, 1e-9)
    big = torch.tensor([[1000.0, 1001.0, 999.0]], dtype=torch.float64)
    result = _call(name, fn, hint, big)
    if not isinstance(result, Tensor) or not torch.isfinite(result).all():
        _fail(name, "it gives inf or NaN for scores near 1000", "subtract the row maximum before exp")
    _passed(name)


def check_attention(fn: object) -> None:
    """``fn(query, key, value) -> output`` equal to softmax(Q Kᵀ / √d_k) V."""
    name, hint = "attention", "softmax((Q @ K.transpose(-2, -1)) / sqrt(d_k), dim=-1) @ V"
    if _not_done(name, fn, hint):
        return
    generator = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(2, n, 8, generator=generator, dtype=torch.float64) for n in (3, 5, 5))
    result = _call(name, fn, hint, q, k, v)
    if isinstance(result, tuple):
        result = result[0]
    unscaled = torch.softmax(q @ k.transpose(-2, -1), -1) @ v
    if isinstance(result, Tensor) and result.shape == unscaled.shape and torch.allclose(result, unscaled):
        _fail(name, "the output matches attention without scaling", "divide the scores by sqrt(d_k)")
    check_tensor(name, result, scaled_dot_product_attention(q, k, v)[0], hint=hint, atol=1e-9)


def check_causal_mask(fn: object) -> None:
    """``fn(length) -> (length, length)`` bool mask, True where query i may see key j (j <= i)."""
    name, hint = "causal mask", "True on and below the diagonal: torch.ones(L, L, dtype=torch.bool).tril()"
    if _not_done(name, fn, hint):
        return
    for length in (4, 7, 1):
        result = _call(name, fn, hint, length)
        if isinstance(result, Tensor) and result.shape == (length, length) and length > 1:
            if result.dtype == torch.bool and torch.equal(result, ~causal_mask(length)):
                _fail(name, "this is PyTorch's convention (True = blocked)", "the course's True means may attend")
        _compare(name, result, causal_mask(length), hint, 0.0)
    _passed(name)


def check_padding_mask(fn: object, pad_id: int = 0) -> None:
    """``fn(tokens) -> (batch, 1, L)`` bool mask, True on real tokens."""
    name, hint = "padding mask", "(tokens != pad_id) with a query axis of size 1 inserted: .unsqueeze(1)"
    if _not_done(name, fn, hint):
        return
    tokens = torch.tensor([[5, 6, 7, 0, 0], [3, 4, 0, 0, 0]])
    check_tensor(name, _call(name, fn, hint, tokens), padding_mask(tokens, pad_id), hint=hint)


def check_first_at_least(name: str, answer: object, values: Tensor, threshold: float, *, hint: str) -> None:
    """An index: the first position of the 1-D ``values`` that is >= ``threshold``."""
    if _not_done(name, answer, hint):
        return
    positions = torch.nonzero(torch.as_tensor(values) >= threshold)
    if len(positions) == 0:
        raise ValueError(f"values must reach the threshold {threshold} somewhere; none does")
    if isinstance(answer, bool) or not isinstance(answer, int):
        _fail(name, f"expected an int position; got {type(answer).__name__}", hint)
    expected = int(positions[0])
    if answer != expected:
        side = "reaches the threshold earlier" if answer > expected else "is still below the threshold"
        _fail(name, f"position {answer} is not it: the answer {side}", hint)
    _passed(name)


def check_toy_output(word: str, answer: object) -> None:
    """The attention output row of ``word`` in the toy sentence: softmax(q_word Kᵀ / √3) V, shape (3,)."""
    name = f"output of {word!r}"
    hint = "take row i of r (the weights of that query) and compute r[i] @ V: a weighted sum of the rows of V"
    if _not_done(name, answer, hint):
        return
    if word not in TOY_WORDS:
        raise ValueError(f"word must be one of {TOY_WORDS}; got {word!r}")
    x = torch.as_tensor(toy_matrix())
    w_q, w_k, w_v = (torch.as_tensor(w) for w in toy_projections())
    output, _ = scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)
    row = TOY_WORDS.index(word)
    answer = torch.as_tensor(np.asarray(answer, dtype=float))
    if answer.shape == (3,) and torch.allclose(answer, (x @ w_v)[row], atol=1e-6):
        _fail(name, "this is the word's own value vector V[i], not the weighted sum", hint)
    check_tensor(name, answer, output[row], hint=hint, atol=1e-3)


def check_combined_mask(fn: object, pad_id: int = 0) -> None:
    """``fn(tokens) -> (batch, L, L)`` bool mask: causal AND the key is a real token."""
    name = "combined mask"
    hint = "causal_mask(L) is (L, L), padding_mask(tokens, pad_id) is (batch, 1, L): combine them with &"
    if _not_done(name, fn, hint):
        return
    tokens = torch.tensor([[5, 6, 7, 8, 0], [3, 4, 0, 0, 0]])
    expected = causal_mask(5) & padding_mask(tokens, pad_id)
    result = _call(name, fn, hint, tokens)
    if isinstance(result, Tensor) and result.shape == expected.shape and result.dtype == torch.bool:
        if torch.equal(result, causal_mask(5) | padding_mask(tokens, pad_id)):
            _fail(name, "with | a query may attend wherever either mask allows", "both must allow: use &")
    check_tensor(name, result, expected, hint=hint)


def check_no_future_leak(fn: Callable[[Tensor], Tensor], *, length: int = 6, d_model: int = 8) -> None:
    """``fn(x (1, L, d_model)) -> (1, L, d_model)``: changing tokens after position t leaves outputs 0..t unchanged."""
    name, hint = "no future leak", "use a causal mask, True on and below the diagonal (the course's convention)"
    if _not_done(name, fn, hint):
        return
    generator = torch.Generator().manual_seed(4)
    x = torch.randn(1, length, d_model, generator=generator, dtype=torch.float64)
    base = _call(name, fn, hint, x)
    for t in range(length - 1):
        changed = x.clone()
        changed[:, t + 1 :] = torch.randn(1, length - t - 1, d_model, generator=generator, dtype=torch.float64)
        moved = (_call(name, fn, hint, changed)[:, : t + 1] - base[:, : t + 1]).abs().max().item()
        if moved > 1e-9:
            problem = f"changing the tokens after position {t} moved the outputs at positions <= {t} by {moved:.3g}"
            _fail(name, problem, hint)
    _passed(name)


def check_ignores_padding(fn: Callable[[Tensor, Tensor], Tensor], *, pad_id: int = 0, d_model: int = 8) -> None:
    """``fn(x (batch, L, d_model), tokens (batch, L)) -> (batch, L, d_model)``: the padding's content is ignored.

    Whatever vectors stand at the PAD positions, the outputs at the real positions do not change.
    """
    name = "ignores padding"
    hint = "mask the keys with padding_mask(tokens, pad_id), shape (batch, 1, L), so no query attends to PAD"
    if _not_done(name, fn, hint):
        return
    generator = torch.Generator().manual_seed(6)
    tokens = torch.tensor([[5, 6, 7, 8, 9], [3, 4, 5, pad_id, pad_id]])
    x = torch.randn(2, 5, d_model, generator=generator, dtype=torch.float64)
    real = tokens != pad_id
    base = _call(name, fn, hint, x, tokens)
    other = x.clone()
    other[~real] = 10 * torch.randn(int((~real).sum()), d_model, generator=generator, dtype=torch.float64)
    moved = (_call(name, fn, hint, other, tokens) - base)[real].abs().max().item()
    if moved > 1e-9:
        _fail(name, f"changing only the padding moved the real tokens' outputs by up to {moved:.3g}", hint)
    _passed(name)


def check_split_heads(fn: object) -> None:
    """``fn(x, num_heads)``: (batch, L, d_model) -> (batch, heads, L, d_head), head h = features h·d_head ... ."""
    name = "split heads"
    hint = "x.view(batch, L, heads, d_head) then .transpose(1, 2); a plain .view(batch, heads, L, d_head) mixes tokens"
    if _not_done(name, fn, hint):
        return
    x = torch.arange(2 * 3 * 8, dtype=torch.float64).reshape(2, 3, 8)  # (batch 2, L 3, d_model 8)
    expected = x.view(2, 3, 4, 2).transpose(1, 2)  # 4 heads of size 2
    result = _call(name, fn, hint, x, 4)
    if isinstance(result, Tensor) and result.shape == expected.shape and torch.equal(result, x.view(2, 4, 3, 2)):
        _fail(name, "a plain view to (batch, heads, L, d_head) gives each head pieces of different tokens", hint)
    check_tensor(name, result, expected, hint=hint)


def check_layer_norm(fn: object) -> None:
    """``fn(x, eps) -> (x - mean) / sqrt(var + eps)`` over the last axis (biased variance, no affine part)."""
    name = "layer norm"
    hint = "mean and variance over dim=-1 with keepdim=True; the variance is the biased one (unbiased=False)"
    if _not_done(name, fn, hint):
        return
    x = torch.randn(2, 3, 8, generator=torch.Generator().manual_seed(8), dtype=torch.float64) * 3 + 1
    expected = torch.nn.functional.layer_norm(x, (8,), eps=1e-5)
    result = _call(name, fn, hint, x, 1e-5)
    if isinstance(result, Tensor) and result.shape == x.shape:
        unbiased = (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + 1e-5)
        if torch.allclose(result, unbiased, atol=1e-9):
            _fail(name, "this uses the unbiased variance (divides by n - 1)", hint)
        over_batch = (x - x.mean(0, keepdim=True)) / torch.sqrt(x.var(0, unbiased=False, keepdim=True) + 1e-5)
        if torch.allclose(result, over_batch, atol=1e-9):
            _fail(name, "this normalises over the batch (that is BatchNorm), not over the features", hint)
    check_tensor(name, result, expected, hint=hint, atol=1e-9)


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
        lines = [f"`{name}` is not defined yet: run the cell \"{where}\" first." for name, where in missing]
        lines.append("(After a kernel restart: Run > Run All Above Selected Cell.)")
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
        name = getattr(value, "name", None) or "it"
        stb = [*stb, f"If an earlier cell defines `{name}`, run that cell first "
                     "(after a kernel restart: Run > Run All Above Selected Cell)."]
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
