"""The exercise checkers: right answers pass, each classic mistake gets its own message, hints come only after a
second wrong answer, and nothing a checker says gives the answer away."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from helpers import bugs, checks
from helpers.attention import MultiHeadAttention, causal_mask, padding_mask, scaled_dot_product_attention
from helpers.tasks import toy_matrix, toy_projections


@pytest.fixture(autouse=True)
def fresh_attempts(monkeypatch):
    monkeypatch.delenv("COURSE_LANG", raising=False)
    checks.reset_attempts()
    yield
    checks.reset_attempts()


def attention(q, k, v, scale=None, dim=-1):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    return torch.softmax(q @ k.transpose(-2, -1) * scale, dim=dim) @ v


def layer_norm(x, eps):
    return (x - x.mean(-1, keepdim=True)) / (x.var(-1, unbiased=False, keepdim=True) + eps).sqrt()


def split(x, h):
    return x.view(x.shape[0], x.shape[1], h, -1).transpose(1, 2)


def toy_weights():
    x = toy_matrix()
    w_q, w_k, w_v = toy_projections()
    scores = (x @ w_q) @ (x @ w_k).T / np.sqrt(3)
    r = np.exp(scores) / np.exp(scores).sum(1, keepdims=True)
    return r, x @ w_v


mha = MultiHeadAttention(8, 2).double()
RIGHT = {
    "scale": lambda a: checks.check_scale(a, d_k=64, d_model=512),
    "softmax": checks.check_softmax,
    "attention": checks.check_attention,
    "causal": checks.check_causal_mask,
    "padding": checks.check_padding_mask,
    "combined": checks.check_combined_mask,
    "leak": checks.check_no_future_leak,
    "ignores padding": checks.check_ignores_padding,
    "split": checks.check_split_heads,
    "layer norm": checks.check_layer_norm,
    "cross": checks.check_cross_attention,
    "pre-LN": checks.check_pre_ln,
    "weights": checks.check_attention_weights,
    "toy": lambda a: checks.check_toy_output("sat", a),
    "first": lambda a: checks.check_first_at_least("reach", a, torch.tensor([0.001, 0.02, 0.5]), 0.01),
}

# (checker, wrong answer, the message it must produce)
WRONG = [
    ("scale", 1 / 64, "lecture note's slip"),
    ("scale", torch.tensor(1 / 64), "lecture note's slip"),
    ("scale", np.float32(1 / 64), "lecture note's slip"),
    ("scale", 1 / math.sqrt(512), "1/√d_model"),
    ("scale", 8.0, "multiplies by √d_k"),
    ("scale", 0.5, "not the expected value"),
    ("scale", "1/8", "expected a number; got str"),
    ("scale", True, "expected a number; got bool"),
    ("softmax", lambda x: torch.softmax(x, dim=0), "along dim=0"),
    ("softmax", lambda x: torch.softmax(x, dim=1), "along dim=1"),
    ("softmax", lambda x: x.exp() / x.exp().sum(-1, keepdim=True), "near 1000"),
    ("softmax", lambda x: (torch.softmax(x, -1), None), "got a tuple of 2"),
    ("attention", lambda q, k, v: attention(q, k, v, scale=1.0), "without scaling"),
    ("attention", lambda q, k, v: attention(q, k, v, scale=1 / q.shape[-1]), "divided by d_k"),
    ("attention", lambda q, k, v: attention(q, k, v, dim=-2), "over the queries"),
    ("attention", lambda q, k, v: scaled_dot_product_attention(q, k, v), "got a tuple of 2"),
    ("attention", lambda q, k, v: q @ k @ v, "Q @ K does not fit"),
    ("attention", 42, "expected a function"),
    ("causal", lambda n: ~causal_mask(n), "PyTorch's attn_mask"),
    ("causal", lambda n: torch.ones(n, n, dtype=torch.bool).triu(1), "PyTorch's attn_mask"),
    ("causal", lambda n: causal_mask(n).T, "FUTURE keys"),
    ("causal", lambda n: causal_mask(n).tril(-1), "diagonal is blocked"),
    ("causal", lambda n: causal_mask(n).float(), r"holds numbers \(torch.float32\)"),
    ("padding", lambda t: (t == 0).unsqueeze(1), "PyTorch's attn_mask / key_padding_mask"),
    ("padding", lambda t: t == 0, "PyTorch's attn_mask / key_padding_mask"),
    ("padding", lambda t: t != 0, r"has no query axis"),
    ("padding", lambda t: (t != 0).unsqueeze(2), "masks QUERIES"),
    ("combined", lambda t: causal_mask(t.shape[1]) | padding_mask(t, 0), "either mask allows"),
    ("combined", lambda t: ~(causal_mask(t.shape[1]) & padding_mask(t, 0)), "PyTorch's attn_mask"),
    ("combined", lambda t: causal_mask(t.shape[1]) & padding_mask(t, 0).transpose(-2, -1), "applied to the queries"),
    ("leak", lambda x: scaled_dot_product_attention(x, x, x, ~causal_mask(x.shape[1]))[0], "wrong way round"),
    ("leak", lambda x: scaled_dot_product_attention(x, x, x)[0], "moved the outputs"),
    ("leak", lambda x: mha(x, x, x, causal_mask(x.shape[1])), "got a tuple of 2"),
    ("leak", bugs.causal_self_attention, "yours blocks the query.s own key"),
    ("ignores padding", lambda x, t: scaled_dot_product_attention(x, x, x)[0], "changing only the padding"),
    ("ignores padding", lambda x, t: scaled_dot_product_attention(x, x, x, padding_mask(t, 0)), "got a tuple"),
    ("split", lambda x, h: x.view(x.shape[0], h, x.shape[1], -1), "without the transpose"),
    ("split", lambda x, h: x.view(x.shape[0], x.shape[1], h, -1), "still after the token axis"),
    ("layer norm", lambda x, eps: layer_norm(x, 0.0), "without eps"),
    ("layer norm", lambda x, eps: layer_norm(x, 1e-5), "does not change with eps"),
    ("layer norm", lambda x, eps: (x - x.mean(-1, keepdim=True)) / (x.var(-1, unbiased=False, keepdim=True).sqrt()
                                                                    + eps), "outside the square root"),
    ("layer norm", lambda x, eps: (x - x.mean(-1, keepdim=True)) / (x.var(-1, keepdim=True) + eps).sqrt(), "unbiased"),
    ("layer norm", lambda x, eps: (x - x.mean(0, keepdim=True)) / (x.var(0, unbiased=False, keepdim=True)
                                                                   + eps).sqrt(), "BatchNorm"),
    ("cross", lambda d, m: scaled_dot_product_attention(d, d, d)[0], "attending to itself"),
    ("cross", lambda d, m: scaled_dot_product_attention(m, d, d)[0], "the queries were taken from the encoder"),
    ("cross", lambda d, m: scaled_dot_product_attention(d, m, m), "got a tuple of 2"),
    ("pre-LN", lambda x, sublayer, norm: norm(x + sublayer(x)), "this is post-LN"),
    ("pre-LN", lambda x, sublayer, norm: sublayer(norm(x)), "residual connection is missing"),
    ("pre-LN", lambda x, sublayer, norm: x + norm(sublayer(x)), "on the sub-layer.s output"),
    ("pre-LN", lambda x, sublayer, norm: 2 * x + sublayer(norm(x)), "values differ"),
    ("weights", lambda q, k: torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(8), -2), "columns sum to 1"),
    ("weights", lambda q, k: torch.softmax(q @ k.transpose(-2, -1) / 8, -1), "divided by d_k"),
    ("weights", lambda q, k: torch.softmax(q @ k.transpose(-2, -1) / 2, -1), "values differ"),
    ("toy", toy_weights()[1][2], "own value vector"),
    ("toy", toy_weights()[0][:, 2] @ toy_weights()[1], "column i of r"),
    ("toy", toy_weights()[0][1] @ toy_weights()[1], "values differ"),
    ("first", 0, "still below"),
    ("first", 2, "earlier"),
    ("first", 1.5, "integer position"),
]

RIGHT_ANSWERS = [
    ("scale", 1 / 8), ("scale", torch.tensor(0.125)), ("scale", np.float64(0.125)), ("scale", np.array([0.125])),
    ("softmax", lambda x: torch.softmax(x, -1)), ("attention", attention),
    ("causal", causal_mask), ("padding", lambda t: (t != 0).unsqueeze(1)),
    ("combined", lambda t: causal_mask(t.shape[1]) & padding_mask(t, 0)),
    ("leak", lambda x: scaled_dot_product_attention(x, x, x, causal_mask(x.shape[1]))[0]),
    ("ignores padding", lambda x, t: scaled_dot_product_attention(x, x, x, padding_mask(t, 0))[0]),
    ("split", split), ("layer norm", layer_norm),
    ("cross", lambda d, m: scaled_dot_product_attention(d, m, m)[0]),
    ("pre-LN", lambda x, sublayer, norm: x + sublayer(norm(x))),
    ("weights", lambda q, k: torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1)),
    ("toy", toy_weights()[0][2] @ toy_weights()[1]),
    ("first", 1), ("first", np.int64(1)), ("first", torch.tensor(1)),
]


@pytest.mark.parametrize(("checker", "answer"), RIGHT_ANSWERS,
                         ids=[f"{c}-{i}" for i, (c, _) in enumerate(RIGHT_ANSWERS)])
def test_right_answers_pass(checker, answer, capsys):
    RIGHT[checker](answer)
    assert "[x]" in capsys.readouterr().out


@pytest.mark.parametrize(("checker", "answer", "message"), WRONG,
                         ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(WRONG)])
def test_each_classic_mistake_gets_its_own_message(checker, answer, message):
    with pytest.raises(checks.ExerciseError, match=message) as first:
        RIGHT[checker](answer)
    assert "Hint:" not in str(first.value), "the first wrong answer gets no hint"
    assert "Traceback" not in str(first.value)


def test_a_hint_comes_with_the_second_wrong_answer_and_never_the_answer():
    with pytest.raises(checks.ExerciseError) as first:
        checks.check_split_heads(lambda x, h: x.view(x.shape[0], h, x.shape[1], -1))
    assert "Hint:" not in str(first.value) and "next wrong answer" in str(first.value)
    with pytest.raises(checks.ExerciseError, match="Hint: ") as second:
        checks.check_split_heads(lambda x, h: x.view(x.shape[0], h, x.shape[1], -1))
    for solution_text in ("transpose(1, 2)", ".view(batch", "tril", "sqrt(256)"):
        assert solution_text not in str(second.value)


def test_unanswered_says_so_without_a_hint(capsys):
    checks.check_scale(..., d_k=64)
    checks.check_layer_norm(...)
    out = capsys.readouterr().out
    assert out.count("not answered yet") == 2 and "Hint" not in out and "sqrt" not in out


def test_messages_in_chinese_for_the_chinese_edition(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh")
    with pytest.raises(checks.ExerciseError, match="讲义里的笔误"):
        checks.check_scale(1 / 64, d_k=64)
    with pytest.raises(checks.ExerciseError, match="提示："):
        checks.check_scale(1 / 64, d_k=64)
    checks.check_scale(1 / 8, d_k=64)
    assert "[x] 缩放因子：正确" in capsys.readouterr().out


def test_the_language_is_the_notebooks_not_the_folders(monkeypatch, tmp_path):
    (tmp_path / "zh").mkdir()
    monkeypatch.chdir(tmp_path / "zh")
    monkeypatch.delenv("COURSE_LANG", raising=False)
    assert checks.language() == "en"  # a folder named zh is no longer a sign: the notebook's first cell says
    for value, lang in [("zh", "zh"), ("zh_CN", "zh"), ("ZH", "zh"), ("en", "en"), ("fr", "en"), ("", "en")]:
        monkeypatch.setenv("COURSE_LANG", value)
        assert checks.language() == lang, value


@pytest.fixture
def answer_tables(monkeypatch):
    """A notebook "98" with one exercise of each table, as helpers/answers/n98.py would hold them."""
    import sys
    import types

    from helpers.answers import Choice, Number

    module = types.ModuleType("helpers.answers.n98")
    module.CHOICES = {"98-why": Choice("b", {"a": ("A is wrong because x.", "甲"), "b": ("B is right because y.", "乙"),
                                             "c": ("C is wrong because z.", "丙")}, hint=("think of y", "想想 y"))}
    module.PREDICTIONS = {"98-tie": {"same": ("It stays.", "不变。"),
                                     "symmetric": ("Scores become symmetric.", "对称。")}}
    module.NUMBERS = {"98-count": Number(12, mistakes={20: ("that counts the biases twice", "偏置算了两次")})}
    monkeypatch.setitem(sys.modules, "helpers.answers.n98", module)


def test_choice_explains_each_wrong_choice(answer_tables, capsys):
    with pytest.raises(checks.ExerciseError, match="not 'c'. C is wrong because z") as first:
        checks.check_choice("98-why", "c")
    assert "Hint" not in str(first.value)
    with pytest.raises(checks.ExerciseError, match="Hint: think of y"):
        checks.check_choice("98-why", "a")
    with pytest.raises(checks.ExerciseError, match="choose one of 'a', 'b', 'c'"):
        checks.check_choice("98-why", "d")
    checks.check_choice("98-why", " B ")
    assert "B is right because y." in capsys.readouterr().out
    checks.check_choice("98-why", ...)
    assert "right because" not in capsys.readouterr().out, "an unanswered question reveals nothing"


def test_prediction_reports_the_measured_outcome(answer_tables, capsys):
    checks.check_prediction("98-tie", ..., "symmetric")
    out = capsys.readouterr().out
    assert "write your prediction first" in out and "Scores become" not in out
    checks.check_prediction("98-tie", "same", "symmetric")
    assert "you predicted 'same'; the measurement says 'symmetric'" in capsys.readouterr().out
    checks.check_prediction("98-tie", "symmetric", "symmetric")
    assert "your prediction was right" in capsys.readouterr().out
    with pytest.raises(ValueError, match="outcome must be one of"):
        checks.check_prediction("98-tie", "same", "other")


def test_numbers_from_the_answer_tables(answer_tables, capsys):
    with pytest.raises(checks.ExerciseError, match="counts the biases twice"):
        checks.check_number("98-count", 20)
    checks.check_number("98-count", np.int64(12))
    assert "[x] 98-count" in capsys.readouterr().out


def test_unknown_exercise_ids_are_named():
    with pytest.raises(ValueError, match="id like '04-mask-order'"):
        checks.check_choice("why", "a")
    with pytest.raises(ValueError, match="no choice exercise '04-nope'"):
        checks.check_choice("04-nope", "a")
    with pytest.raises(ValueError, match="no answers for notebook 97"):
        checks.check_number("97-x", 1)


def test_every_answer_table_is_well_formed():
    import importlib
    import pkgutil

    import helpers.answers as answers

    for info in pkgutil.iter_modules(answers.__path__):
        module = importlib.import_module(f"helpers.answers.{info.name}")
        for table in ("NUMBERS", "CHOICES", "PREDICTIONS"):
            for exercise in getattr(module, table, {}):
                assert exercise.startswith(info.name[1:3] + "-"), f"{exercise} belongs to notebook {info.name[1:]}"
                entry = answers.lookup(table, exercise)
                texts = entry.values() if table == "PREDICTIONS" else getattr(entry, "explanations", {}).values()
                for text in texts:
                    assert len(text) == 2 and all(text), f"{exercise}: every explanation in English and Chinese"


def test_value_checker_names_known_wrong_values():
    with pytest.raises(checks.ExerciseError, match="that counts the biases twice"):
        checks.check_value("params", 20, 12, mistakes={20: "that counts the biases twice"})
    with pytest.raises(checks.ExerciseError, match="differ by up to 1"):
        checks.check_tensor("t", torch.zeros(2), torch.ones(2))
    checks.check_value("params", np.int64(12), 12)


def test_reference_answers_agree_with_pytorch():
    """The references the checkers use are PyTorch's own functions."""
    q, k, v = torch.randn(3, 2, 4, 8, dtype=torch.float64)
    torch.testing.assert_close(attention(q, k, v), F.scaled_dot_product_attention(q, k, v))
    x = torch.randn(2, 3, 8, dtype=torch.float64)
    torch.testing.assert_close(layer_norm(x, 1e-5), F.layer_norm(x, (8,), eps=1e-5))


# --- stable ids for every known mistake, and the progress record's hook -----------------------------------------


def test_every_known_mistake_has_a_kebab_case_id_used_by_a_checker():
    import inspect
    import re

    source = inspect.getsource(checks)
    for mistake in checks.MISTAKES.values():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", mistake.id), mistake.id
        assert mistake.text("en") and mistake.text("zh") and mistake.text("en") != mistake.text("zh")
        uses = source.count(f'"{mistake.id}"')
        assert uses >= 2, f"{mistake.id} is registered but no checker names it"
    named = set(re.findall(r'_mistake\(name, "([a-z0-9-]+)"', source)) | set(
        re.findall(r'\(.*?, "([a-z0-9-]+)", \{', source))
    assert named <= set(checks.MISTAKES), named - set(checks.MISTAKES)
    known = checks.known_mistakes()
    assert len({(k.exercise, k.id) for k in known}) == len(known), "an id is unique within its exercise"
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", k.id) for k in known)


@pytest.mark.parametrize(("checker", "answer", "message"), WRONG,
                         ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(WRONG)])
def test_each_wrong_answer_records_its_mistake(checker, answer, message, monkeypatch, tmp_path):
    import json

    path = tmp_path / "record.jsonl"
    monkeypatch.setenv("COURSE_RECORD", str(path))
    with pytest.raises(checks.ExerciseError) as error:
        RIGHT[checker](answer)
    (line,) = [json.loads(raw) for raw in path.read_text(encoding="utf-8").splitlines()]
    exercise = {"scale": "scale", "toy": "toy-output-sat", "first": "reach", "causal": "causal-mask",
                "padding": "padding-mask", "combined": "combined-mask", "leak": "no-future-leak",
                "split": "split-heads", "cross": "cross-attention", "weights": "attention-weights"}.get(
        checker, checker.replace(" ", "-").lower())
    assert line["exercise"] == exercise and line["try"] == 1 and line["hint"] is False
    if line["outcome"] != "wrong":
        mistake = checks.MISTAKES[line["outcome"]]
        assert exercise in mistake.exercises or exercise.startswith("toy-output-")
        assert mistake.text("en")[:25].split("{")[0] in str(error.value)
    else:
        generic = ("not the expected value", "expected a", "values differ", "raised", "still below", "earlier",
                   "integer position", "entries differ", "expected dtype", "expected shape")
        assert any(g in str(error.value) for g in generic), f"a named mistake needs an id: {error.value}"


def test_the_named_mistakes_are_recorded_by_name(monkeypatch, tmp_path):
    import json

    path = tmp_path / "record.jsonl"
    monkeypatch.setenv("COURSE_RECORD", str(path))
    for checker, answer, _ in WRONG:
        checks.reset_attempts()
        with pytest.raises(checks.ExerciseError):
            RIGHT[checker](answer)
    outcomes = [json.loads(raw)["outcome"] for raw in path.read_text(encoding="utf-8").splitlines()]
    for expected in ("scale-1-over-dk", "scale-1-over-sqrt-dmodel", "scale-times-sqrt-dk", "softmax-wrong-axis",
                     "softmax-overflow", "tuple-not-tensor", "attention-no-scale", "attention-scale-1-over-dk",
                     "pytorch-mask-convention", "causal-upper-triangle", "causal-diagonal-blocked",
                     "padding-no-query-axis", "padding-masks-queries", "combined-or", "future-leaks",
                     "leak-blocks-past", "padding-leaks", "split-view-without-transpose", "layer-norm-no-eps",
                     "layer-norm-eps-outside-sqrt", "pre-ln-is-post-ln", "toy-own-value", "toy-column-of-r"):
        assert expected in outcomes, expected


# --- every learner-facing sentence in the Chinese edition is Chinese ---------------------------------------------

ENGLISH_SENTENCE = r"[A-Za-z]{2,}(?:[ ,']+[A-Za-z]{2,}){2,}"  # three English words in a row


def english_in(text: str, allowed: tuple[str, ...] = ()) -> list[str]:
    import re

    for word in allowed:
        text = text.replace(word, " ")
    text = re.sub(r"'[^'\n]*'", " ", text)  # quoted choices and words are data ('same', 'sat'), not sentences
    return re.findall(ENGLISH_SENTENCE, text)


def test_no_english_sentence_in_the_chinese_checkers(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh")
    said = []
    for checker, answer, message in WRONG:
        if "raised" in message:
            continue  # the learner's own error text (PyTorch's) is quoted as it is
        for _ in range(2):  # the second time with the hint
            with pytest.raises(checks.ExerciseError) as error:
                RIGHT[checker](answer)
            said.append(str(error.value))
        checks.reset_attempts()
    for checker in RIGHT:
        RIGHT[checker](...)
    for checker, answer in RIGHT_ANSWERS:
        RIGHT[checker](answer)
    with pytest.raises(checks.ExerciseError) as error:
        checks.check_choice("03-vanishing-not-exploding", "e")
    said.append(str(error.value))
    with pytest.raises(checks.ExerciseError) as error:
        checks.check_prediction("03-scale-and-top-key", "other", "same")
    said.append(str(error.value))
    checks.check_prediction("03-scale-and-top-key", "changed", "same")
    checks.check_prediction("03-scale-and-top-key", ..., "same")
    checks.check_number("03-score-variance", ...)
    said.append(capsys.readouterr().out)
    allowed = ("03-vanishing-not-exploding", "03-scale-and-top-key", "03-score-variance", "attn_mask",
               "key_padding_mask", "masked_fill", "BatchNorm", "Post-LN", "Pre-LN")
    found = [(text, english_in(text, allowed)) for text in said if english_in(text, allowed)]
    assert not found, found


def test_the_name_error_line_in_both_editions(monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    shell = InteractiveShell.instance()
    checks.show_exercise_errors(shell)
    try:
        for lang, expected in [("en", "If an earlier cell defines `nowhere_defined`, run that cell first"),
                               ("zh", "如果 `nowhere_defined` 是在前面某个单元格里定义的，请先运行那个单元格")]:
            monkeypatch.setenv("COURSE_LANG", lang)
            with capture_output() as captured:
                shell.run_cell("nowhere_defined + 1", store_history=False)
            output = captured.stdout + captured.stderr
            assert expected in output, output
            if lang == "zh":
                last = output.strip().splitlines()[-1]
                assert not english_in(last, ("nowhere_defined",)), last
        monkeypatch.setenv("COURSE_LANG", "zh")
        with pytest.raises(checks.RunEarlierCellError) as error:
            checks.require("toy", "7 · 模型", namespace={})
        assert "还没有定义" in str(error.value) and not english_in(str(error.value))
    finally:
        shell.set_custom_exc((), None)


def test_slug_and_value_ids():
    assert checks.slug("expand kv") == "expand-kv" and checks.slug("03-score-variance") == "03-score-variance"
    assert checks.value_id(37) == "value-37" and checks.value_id(0.99) == "value-0p99"
    assert checks.value_id(-math.log(99)) == "value-minus4p59512" and checks.value_id(1e-6) == "value-1eminus06"
    assert checks.value_id(176_312_832) == "value-176312832" and checks.value_id(32.0) == "value-32"
    with pytest.raises(TypeError, match="text must be a str"):
        checks.slug(3)
    with pytest.raises(TypeError, match="name must be the exercise's name"):
        checks.check_value("", 1, 1)
    with pytest.raises(ValueError, match="d_k must be a positive integer"):
        checks.check_scale(0.125, d_k=0)
