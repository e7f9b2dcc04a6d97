"""The class report on a planted class: small generated notebooks that call the real checkers, one student for
each way a notebook can go (right, a known mistake, wrong, unanswered, raising, never ending, not JSON, empty,
printing megabytes, writing files); and the teaching guide's table, which must equal the generated one."""

from __future__ import annotations

import csv
import json
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from helpers import checks, record
from helpers.classroom import STATUSES, exercises_in, report, table
from helpers.classroom.__main__ import main
from helpers.classroom.execute import Run
from helpers.classroom.report import Row, find_submissions, grade

LIMIT = 40.0  # seconds per notebook: the planted ones need about 2 idle (importing torch), far more on a busy
#               machine; only the endless one takes all of it
KERNEL = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
IMPORTS = "from helpers import checks\nfrom helpers.attention import causal_mask"


def notebook(folder, name, *cells, edition="en"):
    folder.mkdir(parents=True, exist_ok=True)
    nb = new_notebook(cells=[new_code_cell(c) for c in cells], metadata={**KERNEL, "course": {"edition": edition}})
    nbformat.write(nb, folder / name)


def quiz(folder, scale, causal, *between):
    """The planted exercise sheet: the scale, then the causal mask, with ``between`` cells between them."""
    notebook(folder, "quiz.ipynb", IMPORTS, f"answer = {scale}\nchecks.check_scale(answer, d_k=64)", *between,
             f"my_causal_mask = {causal}\nchecks.check_causal_mask(my_causal_mask)")


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """Seven students; the report of their class, run once for the module's tests."""
    root = tmp_path_factory.mktemp("class")
    subs = root / "submissions"
    quiz(subs / "alice", "1 / 8", "causal_mask")  # all right, and a progress record of her own work
    (subs / "alice" / record.FILE_NAME).write_text("\n".join(json.dumps(line) for line in [
        {"notebook": "quiz.ipynb", "exercise": "scale", "outcome": "scale-1-over-dk", "try": 1, "hint": False},
        {"notebook": "quiz.ipynb", "exercise": "scale", "outcome": "wrong", "try": 2, "hint": True},
        {"notebook": "quiz.ipynb", "exercise": "scale", "outcome": "correct", "try": 3, "hint": False},
        {"notebook": "quiz.ipynb", "exercise": "causal-mask", "outcome": "not answered", "try": 0, "hint": False},
        {"notebook": "quiz.ipynb", "exercise": "causal-mask", "outcome": "correct", "try": 1, "hint": False},
    ]) + "\n{broken", encoding="utf-8")
    quiz(subs / "bob", "1 / 64", "...")  # the lecture note's 1/d_k; the mask not answered
    quiz(subs / "carol", "0.3", "lambda n: causal_mask(n).T",  # wrong; a cell that raises
         "raise RuntimeError('carol broke it')")
    # never ends (asleep, so that it does not take a core from the other tests for the whole limit): the mask times out
    quiz(subs / "dave", "1 / 8", "causal_mask", "import time\nwhile True:\n    time.sleep(0.1)")
    (subs / "erin").mkdir()
    (subs / "erin" / "quiz.ipynb").write_text("this is not JSON {", encoding="utf-8")
    notebook(subs / "erin", "loud.ipynb", IMPORTS, "print('x' * 3_000_000)",
             "open('junk.txt', 'w').write('junk')\nimport os\nos.makedirs('deep/er', exist_ok=True)",
             "checks.check_scale(0.125, d_k=64)")
    notebook(subs / "frank", "quiz.ipynb")  # a notebook with no cell at all
    (subs / "frank" / "zero.ipynb").write_bytes(b"")  # an empty file
    quiz(subs / "grace", "0.125", "lambda n: ~causal_mask(n)",
         "checks.check_scale(0.125, d_k=0)")  # PyTorch's mask; a checker that raises
    (subs / ".hidden").mkdir()  # not a student
    out = root / "out"
    start = time.monotonic()
    rows = report(subs, out, limit=LIMIT, jobs=2, show_progress=False)
    return {"rows": rows, "out": out, "subs": subs, "seconds": time.monotonic() - start}


def status(rows, student, notebook, exercise):
    found = [r for r in rows if (r.student, r.notebook, r.exercise) == (student, notebook, exercise)]
    assert len(found) == 1, (student, notebook, exercise, rows)
    return found[0]


def test_every_status_in_one_class(planted):
    rows = planted["rows"]
    assert {r.student for r in rows} == {"alice", "bob", "carol", "dave", "erin", "frank", "grace"}
    assert {r.status for r in rows} == set(STATUSES)
    expected = {
        ("alice", "quiz.ipynb", "scale"): ("correct", ""),
        ("alice", "quiz.ipynb", "causal-mask"): ("correct", ""),
        ("bob", "quiz.ipynb", "scale"): ("known mistake", "scale-1-over-dk"),
        ("bob", "quiz.ipynb", "causal-mask"): ("not answered", ""),
        ("carol", "quiz.ipynb", "scale"): ("wrong", ""),
        ("carol", "quiz.ipynb", "causal-mask"): ("known mistake", "causal-upper-triangle"),
        ("dave", "quiz.ipynb", "scale"): ("correct", ""),
        ("dave", "quiz.ipynb", "causal-mask"): ("timeout", ""),
        ("erin", "quiz.ipynb", ""): ("error", ""),
        ("erin", "loud.ipynb", "scale"): ("correct", ""),
        ("frank", "quiz.ipynb", ""): ("not answered", ""),
        ("frank", "zero.ipynb", ""): ("error", ""),
        ("grace", "quiz.ipynb", "scale"): ("error", ""),  # its last check: the checker refused d_k=0
        ("grace", "quiz.ipynb", "causal-mask"): ("known mistake", "pytorch-mask-convention"),
    }
    got = {(r.student, r.notebook, r.exercise): (r.status, r.mistake) for r in rows}
    assert got == expected


def test_what_stopped_is_said(planted):
    rows = planted["rows"]
    assert "limit" in status(rows, "dave", "quiz.ipynb", "causal-mask").detail
    assert "JSON" in status(rows, "erin", "quiz.ipynb", "").detail
    assert "output capped" in status(rows, "erin", "loud.ipynb", "scale").detail


def test_an_unexpected_error_before_an_exercise_makes_it_an_error():
    run = Run("finished", errors=["cell 2: RuntimeError: boom"],
              records=[{"exercise": "scale", "outcome": "correct"}])
    rows = grade("carol", "quiz.ipynb", run, ["scale", "causal-mask"], None)
    assert [(r.exercise, r.status) for r in rows] == [("scale", "correct"), ("causal-mask", "error")]
    assert rows[1].detail == "cell 2: RuntimeError: boom" and rows[0].tries is None


def test_tries_and_hints_come_from_the_students_own_record(planted):
    rows = planted["rows"]
    alice = status(rows, "alice", "quiz.ipynb", "scale")
    assert (alice.tries, alice.hints) == (3, 1)
    mask = status(rows, "alice", "quiz.ipynb", "causal-mask")
    assert (mask.tries, mask.hints) == (1, 0)  # "not answered" is no try
    assert status(rows, "bob", "quiz.ipynb", "scale").tries is None  # bob handed in no record


def test_the_csv(planted):
    with (planted["out"] / "report.csv").open(encoding="utf-8") as file:
        lines = list(csv.DictReader(file))
    assert list(lines[0]) == ["student", "notebook", "exercise", "status", "mistake", "tries", "hints", "detail"]
    assert len(lines) == len(planted["rows"])
    alice = next(line for line in lines if line["student"] == "alice" and line["exercise"] == "scale")
    assert (alice["status"], alice["tries"], alice["hints"]) == ("correct", "3", "1")
    bob = next(line for line in lines if line["student"] == "bob" and line["exercise"] == "scale")
    assert (bob["status"], bob["mistake"], bob["tries"]) == ("known mistake", "scale-1-over-dk", "")


def test_the_html(planted):
    page = (planted["out"] / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and "http" not in page
    scale = page.split("<h3>scale</h3>")[1].split("<h3>")[0]
    assert "40% correct (2 of 5)" in scale  # alice and dave, of the five quizzes that were read
    assert "scale-1-over-dk" in scale and "lecture note&#x27;s slip" in scale
    assert "Notebooks that did not run to the end" in page and "dave" in page


def test_no_file_of_a_notebook_is_left_behind(planted):
    assert sorted(p.name for p in planted["out"].iterdir()) == ["report.csv", "report.html"]
    assert not any(p.name in ("junk.txt", "deep") for p in planted["subs"].rglob("*"))


def test_the_html_in_chinese(tmp_path):
    rows = [Row("a", "quiz.ipynb", "scale", "known mistake", "scale-1-over-dk"),
            Row("b", "quiz.ipynb", "scale", "correct"), Row("c", "quiz.ipynb", "scale", "timeout", detail="x")]
    path = tmp_path / "r.html"
    from helpers.classroom.report import write_html

    write_html(rows, path, "zh")
    page = path.read_text(encoding="utf-8")
    assert "班级报告" in page and "正确率 33%（3 人中 1 人）" in page and "讲义里的笔误" in page
    assert "lecture note" not in page and "Class report" not in page


def test_the_command_line(tmp_path, capsys):
    subs = tmp_path / "subs"
    notebook(subs / "zhang", "quiz.ipynb", "x = 1", edition="zh")  # no checks: the quickest kernels
    notebook(subs / "li", "quiz.ipynb", "x = 1")
    notebook(subs / "wang", "quiz.ipynb", "x = 2", edition="zh")
    assert main(["report", str(subs), "--out", str(tmp_path / "out"), "--limit", "30", "--jobs", "3",
                 "--no-progress"]) == 0
    assert "wrote" in capsys.readouterr().out
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "班级报告" in page, "two of three notebooks are Chinese: the class's language is Chinese"
    with pytest.raises(SystemExit):
        main(["report", str(tmp_path / "missing"), "--out", str(tmp_path / "out")])


def test_a_submissions_folder_is_required(tmp_path):
    with pytest.raises(ValueError, match="submissions must be a folder"):
        find_submissions(tmp_path / "missing")
    with pytest.raises(ValueError, match="lang must be"):
        report(tmp_path, tmp_path / "out", lang="fr")
    with pytest.raises(ValueError, match="jobs must be"):
        report(tmp_path, tmp_path / "out", jobs=0)


def test_the_exercises_of_a_notebook(tmp_path):
    cells = ['answer = ...\nchecks.check_number("03-score-variance", answer)', "checks.check_attention(fixed)",
             "# checks.check_softmax(f) in a comment is no exercise", 'checks.check_tensor("expand kv", a, b)',
             "def check_scale(x):\n    pass", "checks.check_toy_output('sat', row)"]
    found = exercises_in("03_scaled_dot_product.ipynb", cells)
    assert found[:4] == ["03-score-variance", "attention", "expand-kv", "toy-output-sat"]
    assert set(found[4:]) == {"03-saturation-gap", "03-scale-and-top-key", "03-vanishing-not-exploding"}
    assert exercises_in("quiz.ipynb", ["x = 1"]) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_teaching_guides_hold_the_generated_table(lang):
    path = table.docs_paths()[lang]
    assert table.table_in(path.read_text(encoding="utf-8")) == table.misconceptions_table(lang), (
        f"{path} is out of date: run python -m helpers.classroom table --write")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_teaching_guides_hold_the_generated_minutes(lang):
    text = table.docs_paths()[lang].read_text(encoding="utf-8")
    held = text[text.index(table.MINUTES_BEGIN) + len(table.MINUTES_BEGIN) + 1:text.index(table.MINUTES_END) - 1]
    assert held == table.minutes_table(lang), "out of date: run python -m helpers.classroom table --write"


def test_the_minutes_follow_the_sources(tmp_path):
    """Measured, not typed: more prose, a code cell or an exercise in a source changes its row."""
    source = tmp_path / "42_x.md"  # a number with no answers module: only the checks its cells call count
    results = tmp_path / "RESULTS.md"
    results.write_text("| 42_x | 60.0 | 300 |\n")
    body = ('+++ {"lang": "en"}\n\n' + "word " * 300 + "$a + b$\n\n+++ {\"lang\": \"zh\"}\n\n" + "字" * 500 + "\n\n"
            "```{code-cell}\nx = 1\n```\n\n```{code-cell}\n:tags: [solution]\n\nx = 2\n```\n")
    source.write_text(body)
    row = table.minutes_table("en", sources=tmp_path, results=results).splitlines()[2]
    assert row == "| 42 | 300 | 1 | 60.0 | 0 / 0 / 0 / 0 | 4 | 0 | 5 |", row  # 300/150 + 0.5 + 1 = 3.5 minutes
    assert table.minutes_table("zh", sources=tmp_path, results=results).splitlines()[2].startswith("| 42 | 500 | 1 |")
    source.write_text(body + "```{code-cell}\nchecks.check_softmax(softmax)\n```\n")
    row = table.minutes_table("en", sources=tmp_path, results=results).splitlines()[2]
    assert row == "| 42 | 300 | 2 | 60.0 | 1 / 0 / 0 / 0 | 4 | 8 | 15 |", row  # one more cell, one implement


def test_the_table_lists_every_known_mistake_once_per_exercise():
    generated = table.misconceptions_table("en").splitlines()[2:]
    known = checks.known_mistakes()
    assert len(generated) == len(known) == len({(k.exercise, k.id) for k in known})
    assert any("`scale-1-over-dk`" in line and line.startswith("| 00, 05 |") for line in generated)
    zh = table.misconceptions_table("zh")
    assert "讲义里的笔误" in zh and "lecture note" not in zh
