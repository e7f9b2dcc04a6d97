"""The class report: every student's notebooks run again, each exercise's status, report.csv and report.html."""

from __future__ import annotations

import csv
import html
import re
import shutil
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from helpers import checks, record
from helpers.classroom.execute import Run, run_notebook

__all__ = ["STATUSES", "COLUMNS", "Row", "Submission", "find_submissions", "exercises_in", "grade", "report",
           "write_csv", "write_html", "mistake_message"]

#: an exercise's status in the report
STATUSES = ("correct", "known mistake", "wrong", "not answered", "error", "timeout")
#: report.csv's columns; tries and hints are empty when the student's folder holds no progress record
COLUMNS = ("student", "notebook", "exercise", "status", "mistake", "tries", "hints", "detail")

_CALL = re.compile(r"\b(check_[a-z_]+)\s*\(\s*(?:(['\"])(.*?)\2)?")


@dataclass
class Row:
    """One line of report.csv: one exercise of one student's notebook."""

    student: str
    notebook: str
    exercise: str
    status: str
    mistake: str = ""
    tries: int | None = None
    hints: int | None = None
    detail: str = ""

    def as_csv(self) -> dict[str, str]:
        return {"student": self.student, "notebook": self.notebook, "exercise": self.exercise,
                "status": self.status, "mistake": self.mistake,
                "tries": "" if self.tries is None else str(self.tries),
                "hints": "" if self.hints is None else str(self.hints), "detail": self.detail}


@dataclass
class Submission:
    """One student's folder: the notebooks in it, and the progress records the student's own work wrote."""

    student: str
    notebooks: list[Path]
    records: list[Path]


def find_submissions(submissions: Path | str) -> list[Submission]:
    """One :class:`Submission` per folder of ``submissions`` (sorted by name), with every ``.ipynb`` below it
    (checkpoints and hidden folders left out) and every progress record (:data:`helpers.record.FILE_NAME`)."""
    root = Path(submissions)
    if not root.is_dir():
        raise ValueError(f"submissions must be a folder with one folder per student; {root} is not a folder")
    found = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        def kept(path: Path, folder: Path = folder) -> bool:
            parts = path.relative_to(folder).parts[:-1]
            return path.is_file() and not any(part.startswith(".") for part in parts)

        notebooks = sorted(p for p in folder.rglob("*.ipynb") if kept(p))
        records = sorted(p for p in folder.rglob(record.FILE_NAME) if kept(p))
        found.append(Submission(folder.name, notebooks, records))
    return found


def exercises_in(notebook: Path | str, cells: Iterable[str] | None = None) -> list[str]:
    """The exercise ids of a notebook, in order: the checks its code cells call (``checks.check_scale(...)`` ->
    ``"scale"``, ``checks.check_number("03-score-variance", ...)`` -> that id), then the exercises of its number in
    :mod:`helpers.answers` (``03_*.ipynb`` -> ``"03-..."``) that its cells do not call.

    ``cells``: the code cells' sources (default: read from ``notebook``; an unreadable notebook has none).
    """
    name = Path(notebook).name
    if cells is None:
        cells = _code_cells(Path(notebook))
    found: list[str] = []
    for source in cells:
        code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("#", "def ")))
        for checker, _, literal in _CALL.findall(code):
            if checker not in checks.CHECKER_EXERCISES:
                continue
            fixed = checks.CHECKER_EXERCISES[checker]
            if fixed is None and not literal:
                continue
            exercise = fixed or (f"toy-output-{checks.slug(literal)}" if checker == "check_toy_output"
                                 else checks.slug(literal))
            if exercise not in found:
                found.append(exercise)
    number = re.match(r"(\d\d)[_\-. ]", name)
    if number:
        found.extend(sorted(_answer_exercises(number.group(1)) - set(found)))
    return found


def _answer_exercises(number: str) -> set[str]:
    """Every exercise of notebook ``number`` in helpers.answers (with or without known mistakes)."""
    import importlib

    try:
        module = importlib.import_module(f"helpers.answers.n{number}")
    except ModuleNotFoundError:
        return set()
    return {exercise for table in ("NUMBERS", "CHOICES", "PREDICTIONS") for exercise in getattr(module, table, {})}


def _code_cells(notebook: Path) -> list[str]:
    import nbformat

    try:
        nb = nbformat.read(notebook, as_version=4)
    except Exception:  # noqa: BLE001 - an unreadable notebook has no cells to read
        return []
    return [cell.source for cell in nb.cells if cell.cell_type == "code"]


def _edition(notebook: Path) -> str | None:
    import nbformat

    try:
        nb = nbformat.read(notebook, as_version=4)
    except Exception:  # noqa: BLE001
        return None
    edition = nb.metadata.get("course", {}).get("edition")
    return edition if edition in ("en", "zh") else None


def grade(student: str, notebook: str, run: Run, expected: list[str], progress: list[dict] | None) -> list[Row]:
    """The rows of one notebook's run: each exercise's last outcome in the fresh record; an exercise that
    recorded nothing is "not answered" when the notebook ran to its end without an unexpected error, else
    "error" or "timeout". ``progress``: the student's own progress record (for tries and hints), or None."""
    last: dict[str, dict] = {}
    for line in run.records:
        last[line["exercise"]] = line
    exercises = list(expected) + [e for e in last if e not in expected]
    stopped = {"timeout": "timeout", "error": "error", "unreadable": "error"}.get(run.ending)
    detail = run.detail or (run.errors[0] if run.errors else "")
    if run.capped:
        detail = (detail + "; " if detail else "") + "output capped"
    rows = []
    for exercise in exercises or [""]:
        line = last.get(exercise)
        mistake = ""
        if line is None:
            status = stopped or ("error" if run.errors else "not answered")
        elif line["outcome"] in ("correct", "wrong", "error", "not answered"):
            status = line["outcome"]
        else:
            status, mistake = "known mistake", line["outcome"]
        tries = hints = None
        if progress is not None and exercise:
            mine = [p for p in progress
                    if p.get("exercise") == exercise and p.get("notebook") in (notebook, "unknown")]
            tries = sum(1 for p in mine if p.get("outcome") != "not answered")
            hints = sum(1 for p in mine if p.get("hint") is True)
        rows.append(Row(student, notebook, exercise, status, mistake, tries, hints,
                        detail if status in ("error", "timeout") or run.capped else ""))
    return rows


def report(submissions: Path | str, out: Path | str, *, limit: float = 300.0, max_output: int = 1_000_000,
           lang: str | None = None, jobs: int = 1, show_progress: bool = True) -> list[Row]:
    """Run every student's notebooks again (each in a fresh kernel and its own scratch folder, ``limit`` seconds
    at most, outputs past ``max_output`` bytes dropped) and write ``out/report.csv`` and ``out/report.html``.

    ``lang``: the HTML's language, "en" or "zh" (default: the submitted notebooks' edition, most of them).
    ``jobs``: how many notebooks run at once. Returns the rows of report.csv.
    """
    if lang is not None and lang not in ("en", "zh"):
        raise ValueError(f"lang must be 'en' or 'zh'; got {lang!r}")
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer; got {jobs!r}")
    students = find_submissions(submissions)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    progress = {s.student: [line for path in s.records for line in record.read(path)] if s.records else None
                for s in students}
    work = [(s.student, notebook) for s in students for notebook in s.notebooks]
    scratch_root = Path(tempfile.mkdtemp(prefix="classroom-"))
    results: dict[tuple[str, Path], list[Row]] = {}

    def one(index: int, student: str, notebook: Path) -> list[Row]:
        scratch = scratch_root / f"{index:04d}"
        try:
            run = run_notebook(notebook, scratch, limit=limit, max_output=max_output)
        except Exception as error:  # noqa: BLE001 - one notebook never stops the report
            run = Run("error", detail=f"{type(error).__name__}: {error}")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return grade(student, notebook.name, run, exercises_in(notebook), progress[student])

    from helpers.progress import progress as bar

    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(one, i, student, nb): (student, nb) for i, (student, nb) in enumerate(work)}
            for future in bar(as_completed(futures), total=len(futures), desc="class report",
                              disable=not show_progress):
                results[futures[future]] = future.result()
    finally:
        shutil.rmtree(scratch_root, ignore_errors=True)
    rows = [row for key in work for row in results[key]]
    if lang is None:
        editions = Counter(e for _, nb in work if (e := _edition(nb)))
        lang = editions.most_common(1)[0][0] if editions else checks.language()
    write_csv(rows, out / "report.csv")
    write_html(rows, out / "report.html", lang, students=len(students))
    return rows


def write_csv(rows: list[Row], path: Path | str) -> None:
    """report.csv: one line per :class:`Row`, the columns :data:`COLUMNS`."""
    with Path(path).open("w", encoding="utf-8", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(row.as_csv() for row in rows)


def mistake_message(exercise: str, mistake: str, lang: str) -> str:
    """A known mistake's message in ``lang``, as the learner saw it (with example values); ``""`` if unknown."""
    for known in checks.known_mistakes():
        if known.id == mistake and (known.exercise == exercise or known.exercise == "toy-output-<word>"
                                    and exercise.startswith("toy-output-")):
            return known.text(lang)
    entry = checks.MISTAKES.get(mistake)
    return entry.text(lang) if entry else ""


_WORDS = {
    "title": ("Class report", "班级报告"),
    "summary": ("{students} students, {notebooks} notebooks, each run again in a fresh kernel.",
                "共 {students} 名学生、{notebooks} 个笔记本，每个笔记本都在新的内核里重新运行过。"),
    "correct share": ("{share:.0f}% correct ({correct} of {total})",
                      "正确率 {share:.0f}%（{total} 人中 {correct} 人）"),
    "top": ("Most common known mistakes", "最常见的已知错误"),
    "none": ("No known mistake.", "没有出现已知错误。"),
    "times": ("{count}×", "{count} 次"),
    "stopped": ("Notebooks that did not run to the end", "没有运行到结尾的笔记本"),
    "student": ("student", "学生"), "notebook": ("notebook", "笔记本"), "status": ("status", "状态"),
    "detail": ("detail", "说明"), "exercise": ("exercise", "练习"),
    "correct": ("correct", "正确"), "known mistake": ("known mistake", "已知错误"), "wrong": ("wrong", "错误"),
    "not answered": ("not answered", "未作答"), "error": ("error", "出错"), "timeout": ("timeout", "超时"),
    "no exercise": ("(no exercise)", "（没有练习）"),
}
_COLOURS = {"correct": "#2e7d32", "known mistake": "#ef6c00", "wrong": "#c62828", "not answered": "#9e9e9e",
            "error": "#6a1b9a", "timeout": "#283593"}


def write_html(rows: list[Row], path: Path | str, lang: str = "en", *, students: int | None = None) -> None:
    """report.html, in ``lang``: per exercise the share correct, a bar of the statuses, and the three most
    common known mistakes with their messages; then the notebooks that did not run to the end. One self-contained
    file (no script, no network)."""
    if lang not in ("en", "zh"):
        raise ValueError(f"lang must be 'en' or 'zh'; got {lang!r}")

    def say(key: str, **values: object) -> str:
        en, zh = _WORDS[key]
        return html.escape((zh if lang == "zh" else en).format(**values))

    groups: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in rows:
        groups[(row.notebook, row.exercise)].append(row)
    students = students if students is not None else len({row.student for row in rows})
    notebooks = len({(row.student, row.notebook) for row in rows})
    parts = [f"<!DOCTYPE html>\n<html lang=\"{'zh-CN' if lang == 'zh' else 'en'}\"><head><meta charset=\"utf-8\">",
             f"<title>{say('title')}</title><style>",
             "body{font-family:sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}",
             ".bar{display:flex;height:1.4rem;border:1px solid #ccc;margin:.3rem 0}",
             ".bar span{display:block;height:100%}.legend span{display:inline-block;margin-right:1rem}",
             ".swatch{display:inline-block;width:.8rem;height:.8rem;margin-right:.3rem}",
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:left}",
             "</style></head><body>", f"<h1>{say('title')}</h1>",
             f"<p>{say('summary', students=students, notebooks=notebooks)}</p>", "<p class=\"legend\">"]
    parts += [f"<span><span class=\"swatch\" style=\"background:{_COLOURS[s]}\"></span>{say(s)}</span>"
              for s in STATUSES]
    parts.append("</p>")
    current = None
    for (notebook, exercise), members in groups.items():
        if notebook != current:
            parts.append(f"<h2>{html.escape(notebook)}</h2>")
            current = notebook
        counts = Counter(row.status for row in members)
        total = len(members)
        parts.append(f"<h3>{html.escape(exercise) if exercise else say('no exercise')}</h3>")
        share = say("correct share", share=100 * counts["correct"] / total, correct=counts["correct"], total=total)
        parts.append(f"<p>{share}</p>")
        parts.append("<div class=\"bar\">" + "".join(
            f"<span title=\"{say(s)}: {counts[s]}\" style=\"width:{100 * counts[s] / total:.1f}%;"
            f"background:{_COLOURS[s]}\"></span>" for s in STATUSES if counts[s]) + "</div>")
        mistakes = Counter(row.mistake for row in members if row.mistake).most_common(3)
        parts.append(f"<p><b>{say('top')}</b></p>")
        if not mistakes:
            parts.append(f"<p>{say('none')}</p>")
        else:
            parts.append("<ol>")
            for mistake, count in mistakes:
                message = mistake_message(exercise, mistake, lang)
                parts.append(f"<li><code>{html.escape(mistake)}</code> ({say('times', count=count)}): "
                             f"{html.escape(message)}</li>")
            parts.append("</ol>")
    stopped = {(row.student, row.notebook): row for row in rows if row.status in ("error", "timeout") and row.detail}
    if stopped:
        parts.append(f"<h2>{say('stopped')}</h2><table><tr><th>{say('student')}</th><th>{say('notebook')}</th>"
                     f"<th>{say('status')}</th><th>{say('detail')}</th></tr>")
        for row in stopped.values():
            parts.append(f"<tr><td>{html.escape(row.student)}</td><td>{html.escape(row.notebook)}</td>"
                         f"<td>{say(row.status)}</td><td>{html.escape(row.detail)}</td></tr>")
        parts.append("</table>")
    parts.append("</body></html>\n")
    Path(path).write_text("\n".join(parts), encoding="utf-8")
