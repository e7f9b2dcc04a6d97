"""The progress record: one JSON line per check, in the learner's folder, nothing personal, can be turned off,
and never in the way of a check."""

from __future__ import annotations

import json
import os
import re

import pytest

from helpers import checks, record

FIELDS = {"time", "notebook", "exercise", "outcome", "try", "hint", "lang"}


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    for variable in ("COURSE_RECORD", "COURSE_NOTEBOOK", "JPY_SESSION_NAME", "COURSE_LANG"):
        monkeypatch.delenv(variable, raising=False)
    checks.reset_attempts()
    yield
    checks.reset_attempts()


@pytest.fixture
def recorded(monkeypatch, tmp_path):
    path = tmp_path / "progress.jsonl"
    monkeypatch.setenv("COURSE_RECORD", str(path))
    monkeypatch.setenv("COURSE_NOTEBOOK", "03_scaled_dot_product.ipynb")
    return path


def lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_each_outcome_of_a_check_is_one_line(recorded):
    checks.check_scale(..., d_k=64)
    for _ in range(2):
        with pytest.raises(checks.ExerciseError):
            checks.check_scale(1 / 64, d_k=64)
    with pytest.raises(checks.ExerciseError):
        checks.check_scale(0.3, d_k=64)
    checks.check_scale(1 / 8, d_k=64)
    got = lines(recorded)
    assert all(set(line) == FIELDS for line in got), "nothing beyond the documented fields"
    assert [(g["exercise"], g["outcome"], g["try"], g["hint"]) for g in got] == [
        ("scale", "not answered", 0, False),
        ("scale", "scale-1-over-dk", 1, False),
        ("scale", "scale-1-over-dk", 2, True),  # the second wrong answer shows the hint
        ("scale", "wrong", 3, True),
        ("scale", "correct", 4, False),
    ]
    assert {g["notebook"] for g in got} == {"03_scaled_dot_product.ipynb"} and got[0]["lang"] == "en"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", got[0]["time"]), got[0]["time"]  # UTC, ISO 8601


def test_answer_tables_choices_predictions_and_errors_are_recorded(recorded):
    with pytest.raises(checks.ExerciseError):
        checks.check_number("03-score-variance", 32)
    with pytest.raises(checks.ExerciseError):
        checks.check_choice("03-vanishing-not-exploding", "c")
    checks.check_choice("03-vanishing-not-exploding", "b")
    checks.check_prediction("03-scale-and-top-key", "changed", "same")
    checks.check_prediction("03-scale-and-top-key", ..., "same")
    with pytest.raises(ValueError):
        checks.check_scale(0.125, d_k=0)  # the checker itself refuses: recorded as an error, then raised
    with pytest.raises(ValueError):
        checks.check_number("97-nothing", 1)
    checks.check_layer_norm(lambda x, eps: (x - x.mean(-1, keepdim=True)) / (x.var(-1, unbiased=False, keepdim=True)
                                                                              + eps).sqrt())
    got = [(g["exercise"], g["outcome"]) for g in lines(recorded)]
    assert got == [("03-score-variance", "value-32"), ("03-vanishing-not-exploding", "choice-c"),
                   ("03-vanishing-not-exploding", "correct"), ("03-scale-and-top-key", "predicted-changed"),
                   ("03-scale-and-top-key", "not answered"), ("scale", "error"), ("97-nothing", "error"),
                   ("layer-norm", "correct")]


def test_a_check_inside_a_check_is_recorded_once(recorded):
    checks.check_number("03-saturation-gap", 4.59512)  # check_number runs check_value: one line, not two
    assert [(g["exercise"], g["outcome"]) for g in lines(recorded)] == [("03-saturation-gap", "correct")]


def test_the_same_ids_in_the_chinese_edition(recorded, monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "zh")
    with pytest.raises(checks.ExerciseError, match="讲义里的笔误"):
        checks.check_scale(1 / 64, d_k=64)
    checks.check_split_heads(lambda x, h: x.view(x.shape[0], x.shape[1], h, -1).transpose(1, 2))
    got = [(g["exercise"], g["outcome"], g["lang"]) for g in lines(recorded)]
    assert got == [("scale", "scale-1-over-dk", "zh"), ("split-heads", "correct", "zh")]


def test_off_writes_nothing(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    for value in ("off", "OFF", "0", "no"):
        monkeypatch.setenv("COURSE_RECORD", value)
        assert not record.enabled()
        checks.check_scale(1 / 8, d_k=64)
    assert list(tmp_path.iterdir()) == []


def test_nothing_under_pytest_unless_asked(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert "PYTEST_CURRENT_TEST" in os.environ and not record.enabled()
    checks.check_scale(1 / 8, d_k=64)
    assert list(tmp_path.iterdir()) == []


def test_where_the_record_goes(monkeypatch, tmp_path):
    (tmp_path / "my-notebooks" / "zh").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    assert record.location(tmp_path / "my-notebooks" / "zh") == tmp_path / "my-notebooks" / record.FILE_NAME
    assert record.location(tmp_path / "my-notebooks") == tmp_path / "my-notebooks" / record.FILE_NAME
    assert record.location(tmp_path / "elsewhere") == tmp_path / "elsewhere" / record.FILE_NAME  # beside it
    monkeypatch.setenv("COURSE_RECORD", str(tmp_path / "elsewhere"))  # a folder: the file in it
    assert record.location(tmp_path) == tmp_path / "elsewhere" / record.FILE_NAME
    monkeypatch.setenv("COURSE_RECORD", str(tmp_path / "mine.jsonl"))
    assert record.location(tmp_path / "my-notebooks") == tmp_path / "mine.jsonl"


def test_plain_python_writes_nothing_without_a_setting(monkeypatch, tmp_path):
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    monkeypatch.chdir(tmp_path)
    assert not record.enabled(), "a script is not a notebook"
    checks.check_scale(1 / 8, d_k=64)
    assert list(tmp_path.iterdir()) == []


def test_the_learners_folder_gets_the_record_without_any_setting(monkeypatch, tmp_path):
    monkeypatch.delenv("PYTEST_CURRENT_TEST")  # as in a learner's kernel
    monkeypatch.setattr(record, "_in_kernel", lambda: True)
    folder = tmp_path / "my-notebooks" / "zh"
    folder.mkdir(parents=True)
    monkeypatch.chdir(folder)
    checks.check_scale(1 / 8, d_k=64)
    assert [g["outcome"] for g in lines(tmp_path / "my-notebooks" / record.FILE_NAME)] == ["correct"]
    assert list(folder.iterdir()) == []


def test_the_notebooks_name_and_nothing_of_its_folders(monkeypatch):
    assert record.notebook_name() == "unknown"
    monkeypatch.setenv("COURSE_NOTEBOOK", "07_decoder.ipynb")
    assert record.notebook_name() == "07_decoder.ipynb"
    monkeypatch.setenv("JPY_SESSION_NAME", "/home/alice/course/my-notebooks/zh/03_scaled_dot_product.ipynb")
    assert record.notebook_name() == "03_scaled_dot_product.ipynb"  # the server's name wins; no user, no folder
    monkeypatch.setenv("JPY_SESSION_NAME", "C:\\Users\\bob\\04_masking.ipynb")
    assert record.notebook_name() == "04_masking.ipynb"


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_never_breaks_a_check(monkeypatch, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    monkeypatch.setenv("COURSE_RECORD", str(folder / "progress.jsonl"))
    try:
        checks.check_scale(1 / 8, d_k=64)
        with pytest.raises(checks.ExerciseError, match="lecture note's slip"):
            checks.check_scale(1 / 64, d_k=64)
        assert not record.write("scale", "correct")
    finally:
        folder.chmod(0o755)
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("kind", ["under a file", "missing folder", "a folder as the file"])
def test_an_unwritable_record_never_breaks_a_check(monkeypatch, tmp_path, capsys, kind):
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "a-folder.jsonl").mkdir()
    target = {"under a file": tmp_path / "a-file" / "progress.jsonl",
              "missing folder": tmp_path / "no" / "such" / "progress.jsonl",
              "a folder as the file": tmp_path / "a-folder.jsonl"}[kind]
    monkeypatch.setenv("COURSE_RECORD", str(target))
    checks.check_scale(1 / 8, d_k=64)
    assert "[x]" in capsys.readouterr().out
    with pytest.raises(checks.ExerciseError, match="lecture note's slip"):
        checks.check_scale(1 / 64, d_k=64)
    checks.check_scale(..., d_k=64)
    assert "not answered" in capsys.readouterr().out


def test_unrecorded_demonstrations(recorded):
    with checks.unrecorded():
        with pytest.raises(checks.ExerciseError):
            checks.check_scale(1 / 64, d_k=64)
    checks.check_scale(1 / 8, d_k=64)
    assert [g["outcome"] for g in lines(recorded)] == ["correct"]


def test_read_skips_what_is_not_a_record(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"exercise": "scale", "outcome": "correct"}\nnot json\n[1, 2]\n{"exercise": "sc', "utf-8")
    assert record.read(path) == [{"exercise": "scale", "outcome": "correct"}]
    assert record.read(tmp_path / "missing.jsonl") == []


def test_write_names_its_arguments(recorded):
    with pytest.raises(ValueError, match="exercise must be"):
        record.write("", "correct")
    with pytest.raises(ValueError, match="outcome must be"):
        record.write("scale", None)


def test_the_learners_table_counts_each_notebooks_exercises_from_its_file(tmp_path):
    notebooks = os.path.join(os.path.dirname(__file__), "..", "notebooks")
    entry = {"time": "2026-01-01T00:00:00Z", "try": 1, "hint": False, "lang": "en"}
    lines = [dict(entry, notebook="03_scaled_dot_product.ipynb", exercise="attention", outcome="attention-no-scale"),
             dict(entry, notebook="03_scaled_dot_product.ipynb", exercise="attention", outcome="correct"),
             dict(entry, notebook="03_scaled_dot_product.ipynb", exercise="03-score-variance", outcome="wrong"),
             dict(entry, notebook="03_scaled_dot_product.ipynb", exercise="03-saturation-gap",
                  outcome="not answered"),
             dict(entry, notebook="my/folder/05_multi_head.ipynb", exercise="split-heads", outcome="correct")]
    rows = {row.notebook: row for row in record.progress(lines, folder=notebooks)}
    three = rows["03_scaled_dot_product"]
    assert "attention" in three.exercises and "03-score-variance" in three.exercises
    assert three.correct == {"attention"}, "a mistake followed by a right answer counts as correct"
    assert three.tried == {"03-score-variance"}, "'not answered' is not a try"
    assert rows["05_multi_head"].correct == {"split-heads"}, "only the file name of the notebook counts"
    assert not rows["04_masking"].correct and rows["04_masking"].exercises
    # a folder without the notebooks (Colab): only what the record names
    bare = {row.notebook: row for row in record.progress(lines, folder=tmp_path)}
    assert bare["03_scaled_dot_product"].exercises == () and bare["03_scaled_dot_product"].correct == {"attention"}
    with pytest.raises(TypeError, match="lines must be a list of dicts"):
        record.progress("course-progress.jsonl")


@pytest.mark.parametrize("lang, title", [("en", "your exercises: 1 of"), ("zh", "你的练习：")])
def test_the_progress_figure_draws_done_tried_and_left_per_notebook(monkeypatch, lang, title):
    monkeypatch.setenv("COURSE_LANG", lang)
    rows = [record.NotebookProgress("03_scaled_dot_product", ("a", "b", "c"), frozenset({"a"}), frozenset({"b"})),
            record.NotebookProgress("04_masking", ("d", "e"), frozenset(), frozenset())]
    fig = record.progress_figure(rows)
    ax = fig.axes[0]
    widths = [patch.get_width() for patch in ax.patches]
    assert widths == [3, 2, 1, 0, 1, 0], "totals, then correct, then tried, one bar per notebook each"
    assert ax.patches[4].get_x() == 1, "the tried bar starts where the correct one ends"
    assert ax.get_title().startswith(title)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["03", "04"]
