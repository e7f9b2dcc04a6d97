"""Restart & Run All for the course notebooks, saved in place, as every committed notebook must be.

    .venv/bin/python tools/execute_notebooks.py                 # every notebook
    .venv/bin/python tools/execute_notebooks.py notebooks/03_*.ipynb

Each notebook runs in a fresh kernel from notebooks/ (execution counts 1, 2, 3, ...); the saved widget
state is stripped (widget views are live only). Prints the seconds each notebook took.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def execute(path: Path, timeout: int = 600, notebooks_dir: Path = NOTEBOOKS) -> float:
    """Run ``path`` top to bottom in a new kernel started in ``notebooks_dir``, save it, return the seconds."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(notebooks_dir)}})
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    notebook.metadata.pop("widgets", None)
    nbformat.write(notebook, path)
    return seconds


def main(paths: list[str]) -> None:
    targets = [Path(p).resolve() for p in paths] or sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    for path in targets:
        print(f"{path.name}: {execute(path):.1f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
