"""Build the course notebooks from their one source each, and run them (Restart & Run All).

Every notebook has one source, ``notebooks/src/NN_name.md`` (jupytext's MyST Markdown: readable diffs, one code
cell written once). Each prose cell carries its language in its metadata, ``+++ {"lang": "en"}`` or
``+++ {"lang": "zh"}``; code cells have none and are shared by every edition. An edition keeps the code cells and
the prose cells of its language:

    notebooks/src/03_scaled_dot_product.md  ->  notebooks/03_scaled_dot_product.ipynb      (English)
                                            ->  notebooks/zh/03_scaled_dot_product.ipynb   (Chinese, when written)

Usage (from the repository root, with the course's virtualenv):

    .venv/bin/python tools/build_notebooks.py                    # build and run every edition of every notebook
    .venv/bin/python tools/build_notebooks.py 03 08              # only these notebooks (by number or name)
    .venv/bin/python tools/build_notebooks.py --check            # exit 1 if a built notebook differs from its source

Each edition runs in a fresh kernel started in its own folder (execution counts 1, 2, 3, ...). Its first code cell
sets ``COURSE_LANG`` to the edition's language, so ``helpers.course.edition()`` tells the checkers which language
to speak wherever the notebook runs. What is saved holds
no per-cell timestamps and no widget state, so a re-run changes the file only where an output changed.
tests/test_notebook_sources.py checks that every built notebook equals its source.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import os
import sys
import time
from pathlib import Path

import jupytext
import nbformat
from colab_bootstrap import cell_source, links
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
NOTEBOOKS = ROOT / "notebooks"
SOURCES = NOTEBOOKS / "src"
LANGUAGES = ("en", "zh")  # English first: the edition every notebook has
EDITION_DIRS = {"en": NOTEBOOKS, "zh": NOTEBOOKS / "zh"}
SOURCE_ONLY_METADATA = ("jupytext",)
OTHER_EDITION = {"en": ("zh", "中文版"), "zh": ("en", "English edition")}
SOLUTION_SUMMARY = {"en": "Solution (open it after your own attempt)", "zh": "参考答案（先自己尝试，再打开）"}


def sources(names: list[str] | None = None) -> list[Path]:
    """The source files, in course order; ``names`` picks some by number ("03") or by name."""
    paths = sorted(SOURCES.glob("[0-9][0-9]_*.md"))
    if not names:
        return paths
    chosen = [p for p in paths if any(p.stem == n or p.stem.startswith(f"{n}_") or p.stem[:2] == n for n in names)]
    unknown = [n for n in names if not any(p.stem == n or p.stem[:2] == n for p in paths)]
    if unknown:
        raise SystemExit(f"no notebook source for {', '.join(unknown)} in {SOURCES.relative_to(ROOT)}")
    return chosen


def read_source(path: Path) -> nbformat.NotebookNode:
    return jupytext.read(path, fmt="md:myst")


def languages(source: nbformat.NotebookNode) -> list[str]:
    """The editions a source has: English, and every other language that has prose in it."""
    found = {c.metadata.get("lang") for c in source.cells if c.cell_type == "markdown"}
    return [lang for lang in LANGUAGES if lang == "en" or lang in found]


def is_solution(cell: nbformat.NotebookNode) -> bool:
    return cell.cell_type == "code" and "solution" in cell.metadata.get("tags", [])


def solution_cell(cell: nbformat.NotebookNode, lang: str) -> nbformat.NotebookNode:
    """A solution as a closed ``<details>`` block: Run All never runs it, a learner opens it on purpose, and
    every renderer (JupyterLab, GitHub, nbviewer, the site) shows it closed."""
    text = (f"<details><summary>{SOLUTION_SUMMARY[lang]}</summary>\n\n```python\n{cell.source}\n```\n\n</details>")
    return nbformat.v4.new_markdown_cell(text, metadata={"tags": ["solution"]})


def stable_id(cell: nbformat.NotebookNode, seen: set[str]) -> str:
    """A cell id that depends on the cell's text only, so that rebuilding changes no id (and no diff line)."""
    digest = hashlib.sha1(f"{cell.cell_type}\n{cell.source}".encode()).hexdigest()
    for start in range(0, 33):
        candidate = digest[start:start + 8]
        if candidate not in seen:
            seen.add(candidate)
            return candidate
    raise ValueError("no free cell id")  # 33 identical cells in one notebook: never in this course


def banner(name: str, lang: str, languages_built: list[str]) -> str:
    """The line under each notebook's title: Colab and Binder links, and the switch to the other edition."""
    path = name if lang == "en" else f"{lang}/{name}"
    parts = [links(path)]
    other, label = OTHER_EDITION[lang]
    if other in languages_built:
        parts.append(f"[{label}]({other}/{name}.ipynb)" if lang == "en" else f"[{label}](../{name}.ipynb)")
    return " · ".join(parts)


def bootstrap_cell(lang: str, name: str) -> nbformat.NotebookNode:
    """The first code cell: it sets the edition (``COURSE_LANG``), and on Colab it installs the course, with the
    pretrained model only in a notebook that uses it (tools/colab_bootstrap.py). The one code cell in which the
    two editions differ."""
    return nbformat.v4.new_code_cell(cell_source(lang=lang, notebook=name).rstrip("\n"), metadata={
        "tags": ["bootstrap"], "jupyter": {"source_hidden": True}})


def edition(source: nbformat.NotebookNode, lang: str, name: str, *, run_solutions: bool = False
            ) -> nbformat.NotebookNode:
    """The notebook of one language: the shared code cells and that language's prose, in source order.

    Solution cells become closed ``<details>`` blocks; ``run_solutions=True`` keeps them as code cells instead
    (tests/test_solutions.py runs them so, to prove that every solution passes its check).
    """
    nb = copy.deepcopy(source)
    nb.cells = [c for c in nb.cells if c.cell_type != "markdown" or c.metadata.get("lang") == lang]
    if not run_solutions:
        nb.cells = [solution_cell(c, lang) if is_solution(c) else c for c in nb.cells]
    if nb.cells and nb.cells[0].cell_type == "markdown":
        nb.cells[0].source = nb.cells[0].source.rstrip("\n") + "\n\n" + banner(name, lang, languages(source))
    first_code = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code"), len(nb.cells))
    nb.cells.insert(first_code, bootstrap_cell(lang, name))
    seen: set[str] = set()
    for cell in nb.cells:
        cell.metadata.pop("lang", None)
        cell.id = stable_id(cell, seen)
    for key in SOURCE_ONLY_METADATA:
        nb.metadata.pop(key, None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["course"] = {"edition": lang, "source": f"src/{name}.md"}
    return nbformat.v4.upgrade(nb) if nb.nbformat < 4 else nb


def built_path(name: str, lang: str) -> Path:
    return EDITION_DIRS[lang] / f"{name}.ipynb"


def lint_source(path: Path) -> list[str]:
    """What is wrong with a source: prose without a language, and (in a bilingual source) prose without its twin.

    A bilingual source keeps each English prose cell directly followed by its Chinese twin, so that a reviewer
    reads the two side by side and no block can lack its other language.
    """
    source = read_source(path)
    problems = []
    prose = [(i, c) for i, c in enumerate(source.cells) if c.cell_type == "markdown"]
    for i, cell in prose:
        if cell.metadata.get("lang") not in LANGUAGES:
            problems.append(f"{path.name}: prose cell {i} has no language (+++ {{\"lang\": \"en\"}})")
    if "zh" in languages(source):
        cells = source.cells
        for i, cell in enumerate(cells):
            lang = cell.metadata.get("lang") if cell.cell_type == "markdown" else None
            twin = cells[i + 1] if lang == "en" and i + 1 < len(cells) else cells[i - 1] if lang == "zh" else None
            if lang == "en" and (twin is None or twin.cell_type != "markdown" or twin.metadata.get("lang") != "zh"):
                problems.append(f"{path.name}: English prose cell {i} has no Chinese twin right after it")
            if lang == "zh" and (i == 0 or twin.cell_type != "markdown" or twin.metadata.get("lang") != "en"):
                problems.append(f"{path.name}: Chinese prose cell {i} does not follow its English twin")
    return problems


def comparable(nb: nbformat.NotebookNode) -> list[tuple[str, str, dict]]:
    """What a built notebook must share with its source: each cell's kind, text and metadata (not outputs)."""
    return [(c.cell_type, c.get("id"), c.source, {k: v for k, v in c.metadata.items() if k != "execution"})
            for c in nb.cells]


def differences(path: Path) -> list[str]:
    """The editions of ``path`` that are missing or differ from it (empty when everything is built)."""
    source = read_source(path)
    problems = []
    for lang in languages(source):
        target = built_path(path.stem, lang)
        if not target.exists():
            problems.append(f"{target.relative_to(ROOT)} is missing: run tools/build_notebooks.py {path.stem[:2]}")
        elif comparable(nbformat.read(target, as_version=4)) != comparable(edition(source, lang, path.stem)):
            problems.append(f"{target.relative_to(ROOT)} differs from {path.relative_to(ROOT)}: rebuild it")
    return problems


def run(nb: nbformat.NotebookNode, timeout: int = 600, cwd: Path = NOTEBOOKS, env: dict | None = None) -> float:
    """Restart & Run All in a new kernel started in ``cwd`` (with ``env``, if given); returns the seconds."""
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(cwd)}})
    start = time.perf_counter()
    env = {**os.environ, "COURSE_RECORD": "off", **(env or {})}  # a build is no learner: no progress record
    client.execute(env=env)
    nb.metadata.pop("widgets", None)  # widget views are live only: no stored widget state
    return time.perf_counter() - start


def execute_file(path: Path, cwd: Path = NOTEBOOKS) -> float:
    """Run a built notebook file in place (``make bench`` times the series this way, on a copy)."""
    nb = nbformat.read(path, as_version=4)
    seconds = run(nb, cwd=cwd)
    nbformat.write(nb, path)
    return seconds


def build(path: Path) -> None:
    problems = lint_source(path)
    if problems:
        raise SystemExit("\n".join(problems))
    source = read_source(path)
    for lang in languages(source):
        nb = edition(source, lang, path.stem)
        target = built_path(path.stem, lang)
        target.parent.mkdir(parents=True, exist_ok=True)
        seconds = run(nb, cwd=target.parent)  # JupyterLab starts a kernel in its notebook's folder: so do we
        nbformat.write(nb, target)
        print(f"{target.relative_to(ROOT)}: {seconds:.1f} s", flush=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="notebook numbers or names (default: all)")
    parser.add_argument("--check", action="store_true", help="only check that the built notebooks match")
    args = parser.parse_args(argv)
    paths = sources(args.names)
    if args.check:
        problems = [p for path in paths for p in lint_source(path) + differences(path)]
        print("\n".join(problems) or f"{len(paths)} sources, every edition built and up to date")
        return 1 if problems else 0
    for path in paths:
        build(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
