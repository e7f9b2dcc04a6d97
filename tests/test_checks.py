"""The exercise checkers: right answers pass, wrong ones fail with a hint, unanswered ones say so."""

from __future__ import annotations

import math

import pytest
import torch

from helpers import checks
from helpers.attention import causal_mask


def test_unanswered_exercise_reports_and_returns_false(capsys):
    checks.check_scale(..., d_k=64)
    assert capsys.readouterr().out.count("not answered yet") == 1


def test_scale_accepts_the_paper_and_names_the_articles_slip():
    checks.check_scale(1 / math.sqrt(64), d_k=64)
    with pytest.raises(checks.ExerciseError, match="article's slip"):
        checks.check_scale(1 / 64, d_k=64)
    with pytest.raises(checks.ExerciseError, match="Hint: "):
        checks.check_scale(0.5, d_k=64)


def test_softmax_checker():
    def naive(x):
        return x.exp() / x.exp().sum(-1, keepdim=True)

    def stable(x):
        e = (x - x.amax(-1, keepdim=True)).exp()
        return e / e.sum(-1, keepdim=True)

    checks.check_softmax(stable)
    with pytest.raises(checks.ExerciseError, match="near 1000"):
        checks.check_softmax(naive)
    with pytest.raises(checks.ExerciseError, match="values differ"):
        checks.check_softmax(lambda x: torch.softmax(x, dim=0))


def test_attention_checker_catches_missing_scale_and_errors():
    good = lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1) @ v
    checks.check_attention(good)
    with pytest.raises(checks.ExerciseError, match="without scaling"):
        checks.check_attention(lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1), -1) @ v)
    with pytest.raises(checks.ExerciseError, match="raised RuntimeError"):
        checks.check_attention(lambda q, k, v: q @ k @ v)


def test_mask_checkers():
    checks.check_causal_mask(causal_mask)
    with pytest.raises(checks.ExerciseError, match="PyTorch's convention"):
        checks.check_causal_mask(lambda n: ~causal_mask(n))
    with pytest.raises(checks.ExerciseError, match="dtype"):
        checks.check_causal_mask(lambda n: causal_mask(n).float())
    checks.check_padding_mask(lambda t: (t != 0).unsqueeze(1))
    with pytest.raises(checks.ExerciseError, match=r"expected shape \(2, 1, 5\)"):
        checks.check_padding_mask(lambda t: t != 0)


def test_value_and_tensor_checkers():
    checks.check_value("count", 10, 10, hint="h")
    with pytest.raises(checks.ExerciseError, match="expected a number"):
        checks.check_value("count", "ten", 10, hint="h")
    with pytest.raises(checks.ExerciseError, match="differ by up to 1"):
        checks.check_tensor("t", torch.zeros(2), torch.ones(2), hint="h")


def test_first_at_least_checker(capsys):
    values = torch.tensor([0.001, 0.02, 0.5, 1.0])
    checks.check_first_at_least("reach", 1, values, 0.01, hint="h")
    assert "[x] reach: correct" in capsys.readouterr().out
    with pytest.raises(checks.ExerciseError, match="still below"):
        checks.check_first_at_least("reach", 0, values, 0.01, hint="h")
    with pytest.raises(checks.ExerciseError, match="earlier"):
        checks.check_first_at_least("reach", 2, values, 0.01, hint="h")


def test_toy_output_checker():
    import numpy as np

    from helpers.tasks import toy_matrix, toy_projections

    x = toy_matrix()
    w_q, w_k, w_v = toy_projections()
    scores = (x @ w_q) @ (x @ w_k).T / np.sqrt(3)
    r = np.exp(scores) / np.exp(scores).sum(1, keepdims=True)
    checks.check_toy_output("sat", r[2] @ (x @ w_v))
    with pytest.raises(checks.ExerciseError, match="own value vector"):
        checks.check_toy_output("sat", (x @ w_v)[2])
    with pytest.raises(checks.ExerciseError, match="values differ"):
        checks.check_toy_output("sat", r[1] @ (x @ w_v))


def test_leak_checkers_tell_a_masked_layer_from_a_leaking_one():
    from helpers.attention import padding_mask, scaled_dot_product_attention

    causal = lambda x: scaled_dot_product_attention(x, x, x, causal_mask(x.shape[1]))[0]
    inverted = lambda x: scaled_dot_product_attention(x, x, x, ~causal_mask(x.shape[1]))[0]
    checks.check_no_future_leak(causal)
    with pytest.raises(checks.ExerciseError, match="moved the outputs"):
        checks.check_no_future_leak(inverted)
    padded = lambda x, t: scaled_dot_product_attention(x, x, x, padding_mask(t, 0))[0]
    unmasked = lambda x, t: scaled_dot_product_attention(x, x, x)[0]
    checks.check_ignores_padding(padded)
    with pytest.raises(checks.ExerciseError, match="changing only the padding"):
        checks.check_ignores_padding(unmasked)


def test_combined_mask_checker():
    from helpers.attention import padding_mask

    checks.check_combined_mask(lambda t: causal_mask(t.shape[1]) & padding_mask(t, 0))
    with pytest.raises(checks.ExerciseError, match="use &"):
        checks.check_combined_mask(lambda t: causal_mask(t.shape[1]) | padding_mask(t, 0))


def test_split_heads_checker():
    checks.check_split_heads(lambda x, h: x.view(x.shape[0], x.shape[1], h, -1).transpose(1, 2))
    with pytest.raises(checks.ExerciseError, match="plain view"):
        checks.check_split_heads(lambda x, h: x.view(x.shape[0], h, x.shape[1], -1))


def test_layer_norm_checker():
    good = lambda x, eps: (x - x.mean(-1, keepdim=True)) / (x.var(-1, unbiased=False, keepdim=True) + eps).sqrt()
    checks.check_layer_norm(good)
    with pytest.raises(checks.ExerciseError, match="unbiased"):
        checks.check_layer_norm(lambda x, eps: (x - x.mean(-1, keepdim=True)) / (x.var(-1, keepdim=True) + eps).sqrt())
