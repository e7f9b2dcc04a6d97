"""The learner's progress record: one JSON line per check run, in the learner's own folder.

Every checker of :mod:`helpers.checks` calls :func:`write` once per run, with its outcome. A line reads::

    {"time": "2025-03-02T10:15:04Z", "notebook": "03_scaled_dot_product.ipynb", "exercise": "scale",
     "outcome": "scale-1-over-dk", "try": 1, "hint": false, "lang": "en"}

* ``outcome``: ``"correct"``, the id of a known mistake (``"scale-1-over-dk"``), ``"wrong"``, ``"error"`` (the
  checker itself raised) or ``"not answered"``;
* ``try``: the how-many-th answered check of this exercise in this kernel; ``hint``: whether the message gave a
  hint; ``lang``: the edition.

Nothing else is written: no name, no user, no folder, no answer. Nothing leaves the machine.

**Where.** ``COURSE_RECORD`` decides: a file path (``.../progress.jsonl``), a folder (the file
:data:`FILE_NAME` in it), or ``off`` (no record at all). Unset: the ``my-notebooks/`` folder the notebook runs in
(``my-notebooks/zh/03_...`` writes to ``my-notebooks/``), else the notebook's own folder (the kernel's working
directory). With ``COURSE_RECORD`` unset, only a notebook's kernel writes: a script in plain Python and a test
run (pytest, and the kernels it starts) leave no file behind.

**Never in the way.** A folder that is read-only, full or missing makes :func:`write` return False, silently: a
check never fails because its record could not be written.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from helpers.progress import _in_kernel

__all__ = ["FILE_NAME", "OUTCOMES", "enabled", "location", "notebook_name", "write", "read", "NotebookProgress",
           "progress", "progress_figure"]

#: the record's file name in the learner's folder
FILE_NAME = "course-progress.jsonl"
#: the outcomes that are not a known mistake's id
OUTCOMES = ("correct", "wrong", "error", "not answered")
#: the folder of the learner's own copy (tools/learner_copy.py, ``make lab``)
LEARNER_FOLDER = "my-notebooks"


def enabled() -> bool:
    """Whether checks write the record: ``COURSE_RECORD`` set to a path says yes, ``off`` (or ``0``, ``no``,
    ``false``) says no; unset, only in a notebook's kernel, and not under pytest."""
    setting = os.environ.get("COURSE_RECORD", "").strip()
    if not setting:
        return "PYTEST_CURRENT_TEST" not in os.environ and _in_kernel()
    return setting.lower() not in ("off", "0", "no", "false", "none")


def location(cwd: Path | None = None) -> Path:
    """The record's file: ``COURSE_RECORD`` (a file, or a folder), else the ``my-notebooks/`` folder ``cwd`` lies
    in, else ``cwd`` (default: the working directory). Says where, whether or not :func:`enabled`."""
    setting = os.environ.get("COURSE_RECORD", "").strip()
    if setting and setting.lower() not in ("off", "0", "no", "false", "none"):
        path = Path(setting).expanduser()
        return path / FILE_NAME if path.is_dir() or setting.endswith(("/", os.sep)) else path
    here = Path.cwd() if cwd is None else Path(cwd)
    for folder in (here, *here.parents):
        if folder.name == LEARNER_FOLDER:
            return folder / FILE_NAME
    return here / FILE_NAME


def notebook_name() -> str:
    """The running notebook's file name: ``JPY_SESSION_NAME`` (set by the Jupyter server for its kernels), else
    ``COURSE_NOTEBOOK``, else ``"unknown"``. Only the file name is kept, never the folders above it."""
    for variable in ("JPY_SESSION_NAME", "COURSE_NOTEBOOK"):
        value = os.environ.get(variable, "").strip()
        if value:
            return Path(value.replace("\\", "/")).name or "unknown"
    return "unknown"


def write(exercise: str, outcome: str, *, attempt: int = 0, hint: bool = False, lang: str = "en") -> bool:
    """Append one line for a check of ``exercise`` with ``outcome``; True when it was written.

    Never raises on the file system's account (read-only or missing folder, full disk): the check goes on.
    """
    if not isinstance(exercise, str) or not exercise:
        raise ValueError(f"exercise must be a non-empty exercise id; got {exercise!r}")
    if not isinstance(outcome, str) or not outcome:
        raise ValueError(f"outcome must be one of {OUTCOMES} or a known mistake's id; got {outcome!r}")
    if not enabled():
        return False
    line = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "notebook": notebook_name(),
            "exercise": exercise, "outcome": outcome, "try": int(attempt), "hint": bool(hint), "lang": lang}
    try:
        path = location()
        with path.open("a", encoding="utf-8") as file:
            file.write(json.dumps(line, ensure_ascii=False) + "\n")
    except (OSError, ValueError):
        return False
    return True


def read(path: Path | str) -> list[dict]:
    """The lines of a record file, as dicts; lines that are not a JSON object with an exercise and an outcome
    (a truncated last line, a hand edit) are skipped. A missing or unreadable file reads as no lines."""
    lines = []
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return lines
    for raw in text.splitlines():
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("exercise"), str) and isinstance(entry.get("outcome"),
                                                                                              str):
            lines.append(entry)
    return lines


@dataclass(frozen=True)
class NotebookProgress:
    """One notebook's line of the learner's table: its exercises, those checked correct at least once, and those
    tried (answered, not yet correct). ``exercises`` is empty when the notebook's file is not at hand."""

    notebook: str  # the file's stem, "03_scaled_dot_product"
    exercises: tuple[str, ...]
    correct: frozenset[str]
    tried: frozenset[str]


def progress(lines: list[dict], folder: Path | str | None = None) -> list[NotebookProgress]:
    """The learner's table from the record's ``lines`` (:func:`read`): one row per notebook of the course map,
    in its order. The exercises of each notebook are read from its file in ``folder`` (default: the working
    directory), the way the class report finds them; a notebook whose file is missing (on Colab only the open
    one is there) counts only the exercises the record names."""
    from helpers.classroom.report import exercises_in  # the class report's reader: one definition of "exercise"
    from helpers.course import NOTEBOOKS

    if not isinstance(lines, list) or not all(isinstance(line, dict) for line in lines):
        raise TypeError(f"lines must be a list of dicts, as helpers.record.read gives; got {type(lines).__name__}")
    here = Path.cwd() if folder is None else Path(folder)
    rows = []
    for notebook in NOTEBOOKS:
        mine = [line for line in lines if Path(str(line.get("notebook", ""))).stem == notebook.name]
        correct = frozenset(line["exercise"] for line in mine if line["outcome"] == "correct")
        tried = frozenset(line["exercise"] for line in mine if line["outcome"] != "not answered") - correct
        path = here / f"{notebook.name}.ipynb"
        exercises = tuple(exercises_in(path)) if path.is_file() else ()
        rows.append(NotebookProgress(notebook.name, exercises, correct, tried))
    return rows


def progress_figure(rows: list[NotebookProgress]):
    """A small horizontal bar chart of :func:`progress`'s rows: per notebook, the exercises checked correct
    (dark), tried but not yet correct (light) and not tried (outlined), in the edition's language."""
    from helpers.course import say
    from helpers.plotting import new_figure

    fig = new_figure(6.4, 0.28 * len(rows) + 1.1)
    ax = fig.add_subplot()
    names = [row.notebook[:2] for row in rows]
    y = range(len(rows))[::-1]
    totals = [max(len(row.exercises), len(row.correct | row.tried)) for row in rows]
    done = [len(row.correct) for row in rows]
    tried = [len(row.tried) for row in rows]
    ax.barh(y, totals, color="white", edgecolor="0.55", label=say("not tried", "还没做"))
    ax.barh(y, done, color="#21908d", label=say("correct", "做对了"))
    ax.barh(y, tried, left=done, color="#b5de2b", label=say("tried, not yet correct", "做过，还没做对"))
    ax.set_yticks(list(y), names)
    ax.set_xlim(0, max(totals + [1]) + 0.5)
    ax.set_xlabel(say("exercises", "练习数"))
    ax.set_ylabel(say("notebook", "笔记本"))
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.set_title(say(f"your exercises: {sum(done)} of {sum(totals)} correct",
                     f"你的练习：{sum(totals)} 道里做对了 {sum(done)} 道"), fontsize=10)
    return fig
