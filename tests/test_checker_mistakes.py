"""The classic mistakes each implement-exercise's checker names (GitHub issue 34, point 5): one wrong answer per
mistake, run in both editions. Each must fail with its own mistake id in the progress record, a message with no
raw PyTorch (or helpers) error text and no chained traceback, and, in the Chinese edition, no English sentence.
tests/test_checks.py keeps the older mistakes; this file the ones that make a learner's function raise or that
come before any value is compared (no return, NumPy, an input changed in place, wrong arguments)."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from helpers import bugs, checks
from helpers.attention import causal_mask, padding_mask
from helpers.attention import scaled_dot_product_attention as sdpa
from helpers.tasks import toy_matrix, toy_projections

CHECK = {
    "softmax": checks.check_softmax, "attention": checks.check_attention, "causal-mask": checks.check_causal_mask,
    "padding-mask": checks.check_padding_mask, "combined-mask": checks.check_combined_mask,
    "no-future-leak": checks.check_no_future_leak, "ignores-padding": checks.check_ignores_padding,
    "split-heads": checks.check_split_heads, "layer-norm": checks.check_layer_norm,
    "cross-attention": checks.check_cross_attention, "pre-ln": checks.check_pre_ln,
    "attention-weights": checks.check_attention_weights, "toy-output-sat": lambda a: checks.check_toy_output("sat", a),
}


SOURCE = torch.randn(1, 6, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))


def scores(q, k, scale=True):
    return q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) if scale else 1)


def softmax_in_place(x):
    x -= x.amax(-1, keepdim=True)
    return x.exp() / x.exp().sum(-1, keepdim=True)


def pre_ln_in_place(x, sublayer, norm):
    x += sublayer(norm(x))
    return x


def layer_norm_without_return(x, eps):
    (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + eps)


def masked_fill_inverted_padding(x, tokens):
    blocked = (tokens != 0).unsqueeze(1)  # PyTorch's key_padding_mask meaning read the course's way
    return torch.softmax(scores(x, x).masked_fill(blocked, float("-inf")), -1) @ x


def toy_no_scale():
    x = toy_matrix()
    w_q, w_k, w_v = toy_projections()
    s = (x @ w_q)[2] @ (x @ w_k).T
    return np.exp(s) / np.exp(s).sum() @ (x @ w_v)


def toy_row_of_r():
    x = toy_matrix()
    w_q, w_k, _ = toy_projections()
    s = (x @ w_q)[2] @ (x @ w_k).T / np.sqrt(3)
    return np.exp(s) / np.exp(s).sum()


# (exercise, wrong answer, the mistake's id, a piece of the English message)
MISTAKES = [
    ("softmax", lambda x: None, "returns-none", "returns None"),
    ("layer-norm", layer_norm_without_return, "returns-none", "returns None"),
    ("softmax", lambda x: np.exp(x.numpy()) / np.exp(x.numpy()).sum(-1, keepdims=True), "numpy-not-torch", "NumPy"),
    ("softmax", softmax_in_place, "modifies-input", "in place"),
    ("pre-ln", pre_ln_in_place, "modifies-input", "in place"),
    ("split-heads", lambda x: x.view(2, 3, 4, 2).transpose(1, 2), "wrong-arguments", r"fn\(tensor \(2, 3, 8\), 4\)"),
    ("layer-norm", lambda x: F.layer_norm(x, x.shape[-1:]), "wrong-arguments", r"defined as \(x\)"),
    ("attention", lambda q, k, v: torch.softmax(scores(q, k), dim=3) @ v, "code-raised", "IndexError"),
    ("softmax", lambda x: torch.softmax(x, 3), "code-raised", "an axis that the tensor does not have"),
    ("attention", lambda q, k, v: torch.softmax(scores(q, k)) @ v, "code-raised", "softmax needs dim="),
    ("cross-attention", lambda d, m: torch.softmax(scores(d, m, False), -1) @ d, "shapes-do-not-multiply",
     "matrix product"),
    ("attention", lambda q, k, v: torch.softmax(scores(q, k) / q.norm(dim=-1), -1) @ v, "shapes-do-not-broadcast",
     "do not broadcast"),
    ("pre-ln", lambda x, sublayer, norm: x + torch.nn.Linear(8, 8)(norm(x)), "dtype-mismatch", "float32"),
    ("no-future-leak", lambda x: sdpa(x, x, x, causal_mask(x.shape[1]).float())[0], "mask-not-bool",
     r"holds numbers \(torch.float32\)"),
    ("padding-mask", lambda t: (t != 0).long().unsqueeze(1), "mask-not-bool", r"holds numbers \(torch.int64\)"),
    ("causal-mask", lambda n: torch.zeros(n, n).masked_fill(~causal_mask(n), float("-inf")), "mask-additive",
     "additive float mask"),
    ("no-future-leak", lambda x: sdpa(x, x, x, causal_mask(x.shape[-1]))[0], "mask-wrong-shape",
     r"shape \(8, 8\) does not fit the attention scores \(1, 6, 6\)"),
    ("ignores-padding", lambda x, t: sdpa(x, x, x, t != 0)[0], "mask-wrong-shape", r"\(2, 5\) does not fit"),
    ("softmax", lambda x: math.exp(x) / math.exp(x).sum(), "python-math-on-tensor", "math.exp"),
    ("attention", lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q), -1) @ v,
     "python-math-on-tensor", "math module"),
    ("softmax", lambda x: F_not_imported.softmax(x, -1), "undefined-name", "`F_not_imported` is not defined"),  # noqa: F821
    ("attention", lambda q, k, v: torch.softmax(q @ k / math.sqrt(q.shape[-1]), -1) @ v, "key-not-transposed",
     "Q @ K does not fit"),
    ("attention", lambda q, k, v: torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), -1) @ v, "key-not-transposed",
     "Q @ K does not fit"),
    ("attention-weights", lambda q, k: torch.softmax(q @ k / math.sqrt(8), -1), "key-not-transposed", "transposed"),
    ("cross-attention", lambda d, m: torch.softmax(d @ m / math.sqrt(d.shape[-1]), -1) @ m, "key-not-transposed",
     "transposed"),
    ("softmax", lambda x: x.exp() / x.exp().sum(-1), "softmax-no-keepdim", "keepdim=True"),
    ("softmax", lambda x: (x - x.amax(-1)).exp() / (x - x.amax(-1)).exp().sum(-1, keepdim=True),
     "softmax-no-keepdim", "lost their axis"),
    ("softmax", lambda x: (x - x.max(-1, keepdim=True)).exp(), "max-returns-pair", "returns a pair"),
    ("softmax", lambda x: torch.softmax(x, 2), "softmax-fixed-axis", "dim=-1 is the last axis"),
    ("attention", lambda q, k, v: F.softmax(scores(q, k)) @ v, "softmax-over-batch", "batch axis"),
    ("attention-weights", lambda q, k: F.softmax(scores(q, k)), "softmax-over-batch", "batch axis"),
    ("cross-attention", lambda d, m: F.softmax(scores(d, m)) @ m, "softmax-over-batch", "batch axis"),
    ("attention", lambda q, k, v: torch.softmax(scores(q, k), -1), "attention-returns-weights", "not the output"),
    ("cross-attention", lambda d, m: sdpa(d, m, m)[1], "attention-returns-weights", "not the output"),
    ("attention", lambda q, k, v: torch.softmax(scores(q, k, False), -1) / math.sqrt(8) @ v,
     "attention-scale-after-softmax", "after the softmax"),
    ("attention-weights", lambda q, k: torch.softmax(scores(q, k, False), -1), "weights-no-scale", "without the scale"),
    ("attention-weights", lambda q, k: torch.softmax(scores(q, k, False) / 8, -1), "weights-scale-1-over-dk",
     "divided by d_k"),
    ("attention-weights", lambda q, k: scores(q, k), "weights-no-softmax", "scaled scores"),
    ("causal-mask", lambda n: torch.ones(n, n, dtype=torch.bool).tril(1), "causal-sees-next-key", "next key"),
    ("padding-mask", lambda t: (t != 0).unsqueeze(0), "padding-query-axis-first", "in front"),
    ("combined-mask", lambda t: causal_mask(t.shape[1]), "combined-causal-only", "causal mask alone"),
    ("combined-mask", lambda t: padding_mask(t, 0), "combined-padding-only", "padding mask alone"),
    ("combined-mask", lambda t: causal_mask(t.shape[1]) & (t != 0), "combined-padding-no-query-axis",
     "do not broadcast"),
    ("no-future-leak", lambda x: sdpa(x, x, x, ~causal_mask(x.shape[1]))[0], "leak-mask-inverted", "wrong way round"),
    ("no-future-leak", lambda x: sdpa(x, x, x, torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).triu())[0],
     "leak-mask-inverted", "upper triangle"),
    ("no-future-leak", lambda x: sdpa(x, x, x, ~causal_mask(x.shape[1]) | torch.eye(x.shape[1], dtype=torch.bool))[0],
     "leak-mask-inverted", "inverted"),
    # notebook 07's bug from the wild: the decoder is fed the source, so it never reads its own input
    ("no-future-leak", lambda y: sdpa(SOURCE, SOURCE, SOURCE, causal_mask(6))[0], "ignores-its-input",
     "never reads its argument"),
    ("ignores-padding", lambda x, t: sdpa(x, x, x, (t == 0).unsqueeze(1))[0], "padding-mask-inverted",
     "wrong way round"),
    ("ignores-padding", masked_fill_inverted_padding, "padding-mask-inverted", "only the PAD keys"),
    ("ignores-padding", bugs.padded_self_attention, "padding-masked-queries",
     "changing only the padding moved .* the PAD \\*queries\\*"),
    ("ignores-padding", lambda x, t: sdpa(x, x, x, (t != 0).unsqueeze(2))[0], "padding-masked-queries",
     r"still read the PAD keys"),
    ("split-heads", lambda x, h: x.view(x.shape[0], x.shape[1], -1, h).permute(0, 3, 1, 2), "split-heads-interleaved",
     "every heads-th feature"),
    ("split-heads", lambda x, h: x.view(x.shape[0], x.shape[1], h, x.shape[2] / h).transpose(1, 2),
     "split-heads-float-size", "d_model // heads"),
    ("split-heads", lambda x, h: x.view(x.shape[0], x.shape[1], h, h).transpose(1, 2), "view-wrong-size",
     "48 numbers"),
    ("layer-norm", lambda x, eps: (x - x.mean(-1)) / torch.sqrt(x.var(-1, unbiased=False) + eps),
     "layer-norm-no-keepdim", "keepdim=True"),
    ("layer-norm", lambda x, eps: x / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + eps),
     "layer-norm-not-centred", "mean is not subtracted"),
    ("layer-norm", lambda x, eps: (x - x.mean()) / torch.sqrt(x.var(unbiased=False) + eps),
     "layer-norm-over-everything", "whole tensor"),
    ("layer-norm", lambda x, eps: (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + eps),
     "layer-norm-std-plus-eps", "x.std()"),
    ("cross-attention", lambda d, m: sdpa(d, d, m)[0], "cross-keys-values-mixed", "different sides"),
    ("cross-attention", lambda d, m: sdpa(d, m, d)[0], "cross-keys-values-mixed", "different sides"),
    ("pre-ln", lambda x, sublayer, norm: x + norm(sublayer(x)), "pre-ln-norm-after-sublayer", "sub-layer's output"),
    ("pre-ln", lambda x, sublayer, norm: norm(x) + sublayer(norm(x)), "pre-ln-normed-residual", r"norm\(x\) instead"),
    ("toy-output-sat", toy_row_of_r(), "toy-weights-not-output", "attention weights"),
    ("toy-output-sat", toy_no_scale(), "toy-no-scale", "√3"),
]

IDS = [f"{exercise}-{mistake}-{i}" for i, (exercise, _, mistake, _) in enumerate(MISTAKES)]

# the text of the errors that PyTorch, Python and helpers raise: none may reach the learner
RAW = ("must match the size of tensor", "Expected size for first", "mat1 and mat2", "cannot be multiplied",
       "Dimension out of range", "is invalid for input of size", "torch.return_types", "only one element tensors",
       "must be a torch.bool tensor", "mask must broadcast", "must have the same dtype", "required positional",
       "name 'F_not_imported' is not defined", "unsupported operand", "must be tuple of ints", "failed to unpack",
       "Traceback", "calling it raised", "调用它时出现 RuntimeError")

ENGLISH_SENTENCE = re.compile(r"[A-Za-z]{2,}(?:[ ,']+[A-Za-z]{2,}){2,}")  # three English words in a row
ALLOWED = ("key_padding_mask", "Pre-LN", "BatchNorm", "NumPy", "torch.bool", "True = ")


def english_in(text: str) -> list[str]:
    text = re.sub(r"`[^`\n]*`", " ", text)  # code in backquotes stays as it is written (docs/zh/style.md)
    for word in ALLOWED:
        text = text.replace(word, " ")
    return ENGLISH_SENTENCE.findall(text)


@pytest.fixture(autouse=True)
def fresh_attempts(monkeypatch):
    checks.reset_attempts()
    yield
    checks.reset_attempts()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("exercise", "answer", "mistake", "message"), MISTAKES, ids=IDS)
def test_each_mistake_is_named_in_both_editions(exercise, answer, mistake, message, lang, monkeypatch, tmp_path):
    path = tmp_path / "record.jsonl"
    monkeypatch.setenv("COURSE_RECORD", str(path))
    monkeypatch.setenv("COURSE_LANG", lang)
    with pytest.raises(checks.ExerciseError) as error:
        CHECK[exercise](answer)
    text = str(error.value)
    lines = [json.loads(raw) for raw in path.read_text(encoding="utf-8").splitlines()]
    assert [(line["exercise"], line["outcome"]) for line in lines] == [(exercise, mistake)], text
    registered = checks.MISTAKES[mistake].exercises
    assert exercise in registered or (exercise.startswith("toy-output-") and "toy-output-<word>" in registered)
    assert not [raw for raw in RAW if raw in text], text
    assert error.value.__cause__ is None and error.value.__context__ is None, "no chained traceback"
    if lang == "en":
        assert re.search(message, text), text
    else:
        assert not english_in(text), (text, english_in(text))
        with pytest.raises(checks.ExerciseError) as again:  # the second time, with the hint
            CHECK[exercise](answer)
        assert "提示：" in str(again.value) and not english_in(str(again.value)), str(again.value)


@pytest.mark.parametrize("mistake", sorted({m for _, _, m, _ in MISTAKES}))
def test_every_message_in_chinese_has_no_english_sentence(mistake):
    zh = checks.MISTAKES[mistake].text("zh")
    assert not english_in(zh), (mistake, english_in(zh))
    assert checks.MISTAKES[mistake].text("en") != zh


def test_every_new_mistake_has_a_test():
    tested = {m for _, _, m, _ in MISTAKES}
    new = {"returns-none", "numpy-not-torch", "modifies-input", "wrong-arguments", "code-raised",
           "shapes-do-not-multiply", "shapes-do-not-broadcast", "dtype-mismatch", "mask-not-bool", "mask-additive",
           "mask-wrong-shape", "python-math-on-tensor", "undefined-name", "key-not-transposed", "softmax-no-keepdim",
           "max-returns-pair", "softmax-fixed-axis", "softmax-over-batch", "attention-returns-weights",
           "attention-scale-after-softmax", "weights-no-scale", "weights-scale-1-over-dk", "weights-no-softmax",
           "causal-sees-next-key", "padding-query-axis-first", "combined-causal-only", "combined-padding-only",
           "combined-padding-no-query-axis", "leak-mask-inverted", "padding-mask-inverted", "padding-masked-queries",
           "split-heads-interleaved",
           "split-heads-float-size", "view-wrong-size", "layer-norm-no-keepdim", "layer-norm-not-centred",
           "layer-norm-over-everything", "layer-norm-std-plus-eps", "cross-keys-values-mixed",
           "pre-ln-norm-after-sublayer", "pre-ln-normed-residual", "toy-weights-not-output", "toy-no-scale",
           "ignores-its-input"}
    assert new <= set(checks.MISTAKES), new - set(checks.MISTAKES)
    assert new <= tested, new - tested


def test_the_learners_own_line_is_named_not_the_inside_of_torch(monkeypatch):
    def attend(query, key, value):
        weights = torch.softmax(query @ key.transpose(-2, -1), dim=3)
        return weights @ value

    with pytest.raises(checks.ExerciseError) as error:
        checks.check_attention(attend)
    assert "weights = torch.softmax(query @ key.transpose(-2, -1), dim=3)" in str(error.value)
    assert "fn(tensor (2, 3, 8), tensor (2, 5, 8), tensor (2, 5, 8))" in str(error.value)
    assert "site-packages" not in str(error.value) and "helpers/" not in str(error.value)


def test_a_tensor_answer_is_no_function(monkeypatch, tmp_path):
    path = tmp_path / "record.jsonl"
    monkeypatch.setenv("COURSE_RECORD", str(path))
    with pytest.raises(checks.ExerciseError, match="expected a torch.Tensor; got NoneType"):
        checks.check_tensor("10-expand-kv", None, torch.ones(2))
    assert json.loads(path.read_text(encoding="utf-8"))["outcome"] == "wrong", "not a function's missing return"


def test_no_warning_from_inside_torch_reaches_the_learner():
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(checks.ExerciseError, match="batch axis"):
            checks.check_attention(lambda q, k, v: F.softmax(scores(q, k)) @ v)  # implicit dim: torch warns
    assert not caught, [str(w.message) for w in caught]


def test_a_right_answer_that_raised_nowhere_still_passes(capsys):
    checks.check_softmax(lambda x: torch.softmax(x, -1))
    checks.check_layer_norm(lambda x, eps: F.layer_norm(x, x.shape[-1:], eps=eps))
    checks.check_no_future_leak(lambda x: sdpa(x, x, x, causal_mask(x.shape[1]))[0])
    checks.check_ignores_padding(lambda x, t: sdpa(x, x, x, padding_mask(t, 0))[0])
    checks.check_cross_attention(lambda d, m: sdpa(d, m, m)[0])
    assert capsys.readouterr().out.count("[x]") == 5


def test_in_a_notebook_the_learner_sees_the_mistake_alone(monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    shell = InteractiveShell.instance()
    shell.run_cell("import helpers.checks as checks\nimport torch", store_history=False)
    checks.show_exercise_errors(shell)
    try:
        for lang, expected in [("en", "attention: Q @ K does not fit"), ("zh", "注意力：Q @ K 的形状对不上")]:
            monkeypatch.setenv("COURSE_LANG", lang)
            checks.reset_attempts()
            with capture_output() as captured:
                shell.run_cell("checks.check_attention(lambda q, k, v: torch.softmax(q @ k, -1) @ v)",
                               store_history=False)
            output = captured.stdout + captured.stderr
            assert output.startswith(expected), output
            assert "Traceback" not in output and "RuntimeError" not in output and "batch2" not in output, output
    finally:
        shell.set_custom_exc((), None)
