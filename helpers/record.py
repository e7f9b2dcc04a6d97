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
from pathlib import Path

from helpers.progress import _in_kernel

__all__ = ["FILE_NAME", "OUTCOMES", "enabled", "location", "notebook_name", "write", "read"]

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
