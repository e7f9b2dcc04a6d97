"""Two rules a learner's machine enforces the hard way (issue 18):

- **No assert on wall time**, in any notebook or test: on a busy laptop a correct notebook would stop at it.
  Speed belongs in `make bench` (benchmarks/run.py). An assert is flagged when it compares (<, <=, >, >=, ==,
  !=) something that names a clock or a duration (``seconds``, ``elapsed``, ``perf_counter``, ``timing``,
  ``x["seconds"]``), or a variable computed from one anywhere in the same notebook or file.
  ``assert seconds is not None`` compares no time and passes.
- **No machine path in a stored output**: the author's venv or home folder means nothing to a learner.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jupytext
import nbformat
import pytest
from IPython.core.inputtransformer2 import TransformerManager

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
SOURCES = sorted((ROOT / "notebooks" / "src").glob("*.md"))
TESTS = sorted(p for p in (ROOT / "tests").rglob("*.py") if "screenshots" not in p.parts)

#: parts of a name (split at "_" and case changes) that mean a duration or a clock
TIME_NAME_PARTS = {"time", "timer", "timing", "timings", "timeit", "perf", "monotonic", "elapsed", "seconds",
                   "secs", "duration", "durations", "latency", "latencies", "wall", "clock"}
#: the clocks a bare call can read (``from time import perf_counter``)
CLOCKS = {"time", "perf_counter", "monotonic", "process_time", "time_ns", "perf_counter_ns", "default_timer"}
#: comparisons that test a value (``is``, ``in`` do not measure anything)
VALUE_COMPARISONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
MACHINE_PATHS = re.compile(r"/root\b|/home/|/Users/|/work\b|\.venv|site-packages|/tmp/|[A-Z]:\\\\Users")


def name_parts(name: str) -> set[str]:
    return {part.lower() for part in re.split(r"_|(?<=[a-z])(?=[A-Z])", name) if part}


def mentions_time(node: ast.AST, tainted: set[str]) -> bool:
    """True when ``node`` names a clock or a duration (also as a string key), or uses a tainted variable.

    A called function's own name counts only when it is a clock (``perf_counter()``), so that a result of
    ``time_asserts(...)`` is not taken for a duration.
    """
    called = {child.func.id for child in ast.walk(node) if isinstance(child, ast.Call)
              and isinstance(child.func, ast.Name)}
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and child.id in called - tainted:
            if child.id in CLOCKS or name_parts(child.id) & {"timer", "clock", "stopwatch"}:
                return True
        elif isinstance(child, ast.Name) and (child.id in tainted or name_parts(child.id) & TIME_NAME_PARTS):
            return True
        if isinstance(child, ast.Attribute) and name_parts(child.attr) & TIME_NAME_PARTS:
            return True
        if isinstance(child, ast.Subscript) and isinstance(child.slice, ast.Constant) \
                and isinstance(child.slice.value, str) and name_parts(child.slice.value) & TIME_NAME_PARTS:
            return True
    return False


def assigned_names(node: ast.AST) -> set[str]:
    targets = {ast.Assign: lambda n: n.targets, ast.AugAssign: lambda n: [n.target],
               ast.AnnAssign: lambda n: [n.target], ast.For: lambda n: [n.target],
               ast.NamedExpr: lambda n: [n.target]}
    names = set()
    for target in targets.get(type(node), lambda n: [])(node):
        names |= {t.id for t in ast.walk(target) if isinstance(t, ast.Name)}
    if isinstance(node, ast.With):
        names |= {t.id for item in node.items if item.optional_vars for t in ast.walk(item.optional_vars)
                  if isinstance(t, ast.Name)}
    return names


def time_asserts(tree: ast.Module) -> list[str]:
    """The source of every assert in ``tree`` that depends on wall time (see the module docstring)."""
    tainted: set[str] = set()
    changed = True
    while changed:  # a variable computed from a time-like one is time-like too, to a fixed point
        changed = False
        for node in ast.walk(tree):
            value = getattr(node, "value", None) if not isinstance(node, ast.For) else node.iter
            if isinstance(node, ast.With):
                value = ast.Tuple([item.context_expr for item in node.items])
            names = assigned_names(node) - tainted
            if names and value is not None and mentions_time(value, tainted):
                tainted |= names
                changed = True
    return [ast.unparse(node) for node in ast.walk(tree) if isinstance(node, ast.Assert)
            and any(isinstance(compare, ast.Compare) and any(isinstance(op, VALUE_COMPARISONS) for op in compare.ops)
                    and mentions_time(compare, tainted) for compare in ast.walk(node.test))]


def notebook_code(path: Path) -> str:
    """The code cells of a notebook (.ipynb) or of its MyST source (.md), magics turned into Python."""
    if path.suffix == ".ipynb":
        cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    else:
        source = jupytext.read(path, fmt="md:myst")  # the cells as the build tool reads them, options apart
        cells = [c.source for c in source.cells if c.cell_type == "code"]
    transform = TransformerManager().transform_cell
    return "\n".join(transform(cell) for cell in cells)


def test_the_rule_catches_time_asserts_and_spares_the_others():
    flagged = time_asserts(ast.parse(
        "start = time.perf_counter()\nrun()\nspent = time.perf_counter() - start\nratio = spent / 2\n"
        "assert ratio < 3\n"
        "assert result.seconds <= 90, 'about a minute'\n"
        "assert growth > 8, f'time grew only {growth:.1f}x'\n"
        "assert weights.sum() == 1, 'three times the uniform weight'\n"
        "assert accuracy >= 0.99\n"
        "assert spent is not None, 'a duration was measured'\n"
        "assert stats['elapsed_s'] < 60\n"
        "with Timer() as t:\n    run()\nassert 0 < t.total\n"
        "with load() as burners:\n    time.sleep(1)\n    assert len(burners) == 1\n"
        "found = time_asserts(tree)\nassert found == []\n"
        "t0 = perf_counter()\nassert perf_counter() - t0 < 1\n"
    ))
    assert flagged == ["assert ratio < 3", "assert result.seconds <= 90, 'about a minute'",
                       "assert stats['elapsed_s'] < 60", "assert 0 < t.total",
                       "assert perf_counter() - t0 < 1"]


def test_magics_do_not_hide_a_cell():
    code = TransformerManager().transform_cell("%matplotlib inline\nelapsed = 3\nassert elapsed < 5\n")
    assert time_asserts(ast.parse(code)) == ["assert elapsed < 5"]


def test_a_time_ratio_is_still_time():
    code = "timing = measure()\ngrowth = timing['naive'][-1] / timing['naive'][1]\nassert growth > 8\n"
    assert time_asserts(ast.parse(code)) == ["assert growth > 8"]


@pytest.mark.parametrize("path", NOTEBOOKS + SOURCES, ids=lambda p: str(p.relative_to(ROOT / "notebooks")))
def test_no_notebook_asserts_on_wall_time(path):
    found = time_asserts(ast.parse(notebook_code(path)))
    assert not found, f"{path.name} asserts on wall time (speed belongs in `make bench`): {found}"


@pytest.mark.parametrize("path", TESTS, ids=lambda p: str(p.relative_to(ROOT / "tests")))
def test_no_test_asserts_on_wall_time(path):
    found = time_asserts(ast.parse(path.read_text()))
    assert not found, f"{path.name} asserts on wall time (speed belongs in `make bench`): {found}"


def output_texts(output: nbformat.NotebookNode) -> list[str]:
    """Every text of a stored output: streams, tracebacks, and the text (not image) parts of its data."""
    texts = [output.get("text", ""), *output.get("traceback", []), output.get("evalue", "")]
    for kind, value in output.get("data", {}).items():
        if not kind.startswith("image/"):
            texts.append(value if isinstance(value, str) else str(value))
    return [t if isinstance(t, str) else "".join(t) for t in texts]


def test_the_path_rule_sees_paths():
    output = nbformat.v4.new_output("stream", text="Python 3.11 (/home/ada/course/.venv/bin/python)\n")
    assert [MACHINE_PATHS.search(t).group() for t in output_texts(output) if MACHINE_PATHS.search(t)] == ["/home/"]
    clean = nbformat.v4.new_output("execute_result", data={"text/plain": "tensor([0.25, 0.75])"})
    assert not any(MACHINE_PATHS.search(t) for t in output_texts(clean))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT / "notebooks")))
def test_no_stored_output_shows_a_machine_path(path):
    notebook = nbformat.read(path, as_version=4)
    found = []
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            for text in output_texts(output):
                found += [f"cell {index} ({cell.source.splitlines()[0][:40]!r}): {line.strip()}"
                          for line in text.splitlines() if MACHINE_PATHS.search(line)]
    assert not found, f"{path.name} stores machine paths in its outputs:\n" + "\n".join(found)
