"""One submitted notebook, run again in a fresh kernel, in its own scratch folder, with a time limit and an
output cap.

:func:`run_notebook` starts a child process (``python -m helpers.classroom.execute``) that runs the notebook
with nbclient and writes what happened to ``run.json`` in the scratch folder; the parent kills the child's whole
process group if it outlives the limit. Whatever the notebook does (loop forever, raise, print megabytes, write
files, forge no JSON at all) ends as a :class:`Run`, never as an exception in the report.

The kernel gets ``COURSE_RECORD`` pointing to ``record.jsonl`` in the scratch folder and ``COURSE_NOTEBOOK``
set to the notebook's file name, so that its checks write a fresh progress record (:mod:`helpers.record`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Run", "run_notebook", "RECORD_NAME"]

#: the fresh progress record's file name in the scratch folder
RECORD_NAME = "record.jsonl"
#: what a notebook's kernel may take to start (and import the course) beyond its time limit
STARTUP_ALLOWANCE = 90.0
#: errors a cell may raise that are not the notebook's failure: a wrong answer, a cell run out of order, and the
#: interrupt that ends a cell at the time limit
ANSWER_ERRORS = ("ExerciseError", "RunEarlierCellError", "KeyboardInterrupt")  # the last: the limit's interrupt


@dataclass
class Run:
    """What re-executing a notebook gave.

    ``ending``: ``"finished"`` (every cell ran; cells may have raised, see ``errors``), ``"timeout"``,
    ``"error"`` (the notebook could not be read or its kernel died) or ``"unreadable"`` (not a notebook: not JSON,
    empty file). ``errors``: the unexpected errors cells raised, as ``"cell 3: NameError: ..."``. ``records``:
    the lines the checks wrote to the fresh progress record.
    """

    ending: str
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)
    records: list[dict] = field(default_factory=list)
    capped: bool = False
    detail: str = ""


def _child(notebook: Path, scratch: Path, limit: float, max_output: int) -> int:
    """The child process: run ``notebook`` in ``scratch``, write ``scratch/run.json``."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    result: dict = {"ending": "finished", "errors": [], "capped": False, "detail": ""}
    out = scratch / "run.json"

    def save() -> None:
        out.write_text(json.dumps(result), encoding="utf-8")

    try:
        nb = nbformat.read(notebook, as_version=4)
    except Exception as error:  # noqa: BLE001 - not JSON, not a notebook, empty: all are "unreadable"
        result.update(ending="unreadable", detail=f"{type(error).__name__}: {str(error)[:200]}")
        save()
        return 0

    class CappedClient(NotebookClient):
        """Outputs past ``max_output`` bytes are dropped (the run goes on); errors are noted before that."""

        size = 0

        def output(self, outs, msg, display_id, cell_index):  # noqa: ANN001 - nbclient's signature
            if msg["msg_type"] == "error":
                content = msg["content"]
                if content.get("ename") not in ANSWER_ERRORS:
                    result["errors"].append(f"cell {cell_index}: {content.get('ename')}: "
                                            f"{str(content.get('evalue'))[:200]}")
            self.size += len(json.dumps(msg.get("content", {}), default=str))
            if self.size > max_output:
                result["capped"] = True
                return None
            return super().output(outs, msg, display_id, cell_index)

    deadline = [time.monotonic() + limit]

    def timeout(cell) -> int:  # noqa: ANN001 - each cell gets what is left of the notebook's limit
        return max(1, int(deadline[0] - time.monotonic() + 0.999))

    client = CappedClient(nb, timeout_func=timeout, allow_errors=True, kernel_name="python3",
                          startup_timeout=int(STARTUP_ALLOWANCE), record_timing=False,
                          resources={"metadata": {"path": str(scratch)}})
    try:
        with client.setup_kernel():
            deadline[0] = time.monotonic() + limit  # the limit counts from a kernel ready to run
            for index, cell in enumerate(nb.cells):
                client.execute_cell(cell, index)
    except CellTimeoutError:
        result.update(ending="timeout", detail=f"stopped after the limit of {limit:g} s")
    except DeadKernelError as error:
        result.update(ending="error", detail=f"the kernel died: {str(error)[:200]}")
    except Exception as error:  # noqa: BLE001 - whatever stops the run is the notebook's status
        result.update(ending="error", detail=f"{type(error).__name__}: {str(error)[:200]}")
    save()
    return 0


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
    process.wait()


def run_notebook(notebook: Path | str, scratch: Path | str, *, limit: float = 300.0,
                 max_output: int = 1_000_000) -> Run:
    """Run ``notebook`` again in a fresh kernel, in the folder ``scratch`` (created; the notebook is copied there),
    stopping it after ``limit`` seconds; outputs past ``max_output`` bytes are dropped."""
    notebook, scratch = Path(notebook).resolve(), Path(scratch).resolve()
    if not notebook.is_file():
        raise ValueError(f"notebook must be a notebook file; {notebook} is not a file")
    if not isinstance(limit, (int, float)) or limit <= 0:
        raise ValueError(f"limit must be a positive number of seconds; got {limit!r}")
    if not isinstance(max_output, int) or max_output < 0:
        raise ValueError(f"max_output must be a number of bytes >= 0; got {max_output!r}")
    scratch.mkdir(parents=True, exist_ok=True)
    copy = scratch / notebook.name
    shutil.copyfile(notebook, copy)
    record = scratch / RECORD_NAME
    env = {key: value for key, value in os.environ.items() if key != "JPY_SESSION_NAME"}
    env.update(COURSE_RECORD=str(record), COURSE_NOTEBOOK=notebook.name, PYTHONUNBUFFERED="1")
    start = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "helpers.classroom.execute", str(copy), str(scratch), str(limit), str(max_output)],
        cwd=scratch, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, stderr = process.communicate(timeout=limit + STARTUP_ALLOWANCE)
    except subprocess.TimeoutExpired:
        _kill(process)
        stderr = b""
        outcome = {"ending": "timeout", "detail": f"killed after {limit + STARTUP_ALLOWANCE:g} s"}
    else:
        try:
            outcome = json.loads((scratch / "run.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            tail = stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no run.json"]
            outcome = {"ending": "error", "detail": f"the run did not finish: {tail[0][:200]}"}
    from helpers.record import read

    return Run(ending=outcome.get("ending", "error"), seconds=time.monotonic() - start,
               errors=list(outcome.get("errors", [])), records=read(record), capped=bool(outcome.get("capped")),
               detail=str(outcome.get("detail", "")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("scratch", type=Path)
    parser.add_argument("limit", type=float)
    parser.add_argument("max_output", type=int)
    args = parser.parse_args(argv)
    return _child(args.notebook, args.scratch, args.limit, args.max_output)


if __name__ == "__main__":
    sys.exit(main())
