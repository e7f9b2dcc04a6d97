"""The course on a learner's own laptop (issue 18): other Pythons, their own copy of the notebooks, threads.

Each test simulates one case: the metadata's Python range, the interpreter the Makefile picks (stub
interpreters on a fake PATH), copy-and-restore of the learner's notebooks, torch's thread count.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from packaging.specifiers import SpecifierSet

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import lab_settings  # noqa: E402
import learner_copy  # noqa: E402

from helpers import reproducibility  # noqa: E402
from helpers.reproducibility import more_threads, seed_everything, threads, use_course_threads  # noqa: E402

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
#: the Pythons torch 2.13.0 ships wheels for (checked against its wheel tags on the package index)
TORCH_PYTHONS = ["3.10", "3.11", "3.12", "3.13", "3.14"]


# --- Pythons --------------------------------------------------------------------------------------------------


def requires_python() -> SpecifierSet:
    return SpecifierSet(PYPROJECT["project"]["requires-python"])


@pytest.mark.parametrize("version", TORCH_PYTHONS)
def test_the_metadata_allows_every_python_torch_supports(version):
    assert requires_python().contains(f"{version}.0"), f"requires-python must allow Python {version}"


@pytest.mark.parametrize("version", ["3.9", "3.15"])
def test_the_metadata_refuses_pythons_torch_does_not_support(version):
    assert not requires_python().contains(f"{version}.0")


def test_ruff_targets_the_oldest_supported_python():
    oldest = TORCH_PYTHONS[0].replace(".", "")
    assert PYPROJECT["tool"]["ruff"]["target-version"] == f"py{oldest}"


def test_the_package_parses_as_the_oldest_supported_python():
    """No syntax newer than 3.10 in helpers/, tools/ and the benchmark, and no import of what 3.10 lacks."""
    sources = [*(ROOT / "helpers").glob("*.py"), *(ROOT / "tools").glob("*.py"), ROOT / "benchmarks" / "run.py"]
    for path in sorted(sources):
        tree = ast.parse(path.read_text(), filename=str(path), feature_version=(3, 10))
        guarded = {id(n) for t in ast.walk(tree) if isinstance(t, ast.Try)  # try: import tomllib / except: tomli
                   and any(isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError")
                           for h in t.handlers) for n in t.body}
        imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                    and id(node) not in guarded for alias in node.names}
        imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom) and node.module}
        assert not imported & {"tomllib"}, f"{path.name} imports a module new in 3.11"
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in ("datetime", "typing"):
                names = {alias.name for alias in node.names}
                assert not names & {"UTC", "Self", "LiteralString", "Never"}, f"{path.name}: {names} is 3.11+"


def test_find_python_bounds_match_the_metadata():
    script = (ROOT / "tools" / "find_python.sh").read_text()
    low, high = (int(re.search(rf"^{name}=(\d+)$", script, re.M).group(1)) for name in ("MIN_MINOR", "MAX_MINOR"))
    assert [f"3.{minor}" for minor in range(low, high + 1)] == TORCH_PYTHONS


def stub_python(folder: Path, name: str, version: tuple[int, int, int] | None) -> None:
    """An executable ``name`` that runs the real Python but reports ``version``; None: a broken shim (exit 127)."""
    path = folder / name
    if version is None:
        path.write_text('#!/bin/sh\necho "pyenv: $0: command not found" >&2\nexit 127\n')
    else:
        major, minor, micro = version
        fake = f'import sys; sys.version_info = ({major}, {minor}, {micro}, "final", 0); exec(sys.argv[2])'
        path.write_text(f"#!/bin/sh\nexec {sys.executable} -c '{fake}' \"$@\"\n")
    path.chmod(0o755)


def find_python(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["/bin/sh", str(ROOT / "tools" / "find_python.sh"), *args], capture_output=True,
                          text=True, env={"PATH": str(folder)}, check=False)


@pytest.mark.parametrize(
    ("stubs", "chosen"),
    [
        ({"python3.11": (3, 11, 7), "python3.12": (3, 12, 1), "python3": (3, 12, 1)}, "python3.11"),
        ({"python3.12": (3, 12, 1), "python3": (3, 9, 18)}, "python3.12"),
        ({"python3": (3, 13, 0)}, "python3"),
        ({"python3.11": None, "python3.10": (3, 10, 13), "python3": (3, 14, 0)}, "python3.10"),  # a broken shim
        ({"python3.12": None, "python3": (3, 12, 1)}, "python3"),
    ],
    ids=["3.11 first", "3.12 when no 3.11", "python3 when in range", "past a broken shim", "python3 last"],
)
def test_the_makefile_finds_a_suitable_python(tmp_path, stubs, chosen):
    for name, version in stubs.items():
        stub_python(tmp_path, name, version)
    result = find_python(tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == chosen


def test_no_suitable_python_says_what_is_needed(tmp_path):
    stub_python(tmp_path, "python3", (3, 9, 18))
    stub_python(tmp_path, "python3.8", (3, 8, 18))
    result = find_python(tmp_path)
    assert result.returncode == 1 and result.stdout == ""
    assert "Python 3.10 to 3.14" in result.stderr
    assert "python3 (Python 3.9.18)" in result.stderr, "it says what it found"
    assert "PYTHON=" in result.stderr, "it says how to name one"


def test_python_override_is_checked(tmp_path):
    stub_python(tmp_path, "python3.11", (3, 11, 7))
    stub_python(tmp_path, "mypython", (3, 13, 0))
    stub_python(tmp_path, "oldpython", (3, 9, 18))
    assert find_python(tmp_path, "mypython").stdout.strip() == "mypython"
    old = find_python(tmp_path, "oldpython")
    assert old.returncode == 1 and "oldpython is Python 3.9.18" in old.stderr and "3.10 to 3.14" in old.stderr
    missing = find_python(tmp_path, "python3.99")
    assert missing.returncode == 1 and "no such command" in missing.stderr


def test_the_makefile_uses_find_python_and_the_override():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^PYTHON \?=\s*$", makefile, re.M), "PYTHON is empty unless the learner sets it"
    assert "tools/find_python.sh $(PYTHON)" in makefile


# --- the learner's copy ------------------------------------------------------------------------------------------


@pytest.fixture
def course(tmp_path) -> tuple[Path, Path]:
    source, copy = tmp_path / "notebooks", tmp_path / "my-notebooks"
    (source / "src").mkdir(parents=True)
    (source / "00_start_here.ipynb").write_text('{"course": 0}')
    (source / "03_scaled_dot_product.ipynb").write_text('{"course": 3}')
    (source / "data").mkdir()
    (source / "data" / "pairs.tsv").write_text("a\tb\n")
    (source / "src" / "03_scaled_dot_product.md").write_text("source, not for the learner")
    return source, copy


def test_sync_copies_every_notebook_and_data_file_but_not_the_sources(course):
    source, copy = course
    copied = learner_copy.sync(source, copy)
    assert sorted(map(str, copied)) == ["00_start_here.ipynb", "03_scaled_dot_product.ipynb", "data/pairs.tsv"]
    assert (copy / "data" / "pairs.tsv").read_text() == "a\tb\n"
    assert not (copy / "src").exists()


def test_sync_never_overwrites_and_adds_new_notebooks(course):
    source, copy = course
    learner_copy.sync(source, copy)
    (copy / "03_scaled_dot_product.ipynb").write_text('{"mine": 3}')  # the learner's answers
    (source / "03_scaled_dot_product.ipynb").write_text('{"course": "3, updated"}')  # git pull
    (source / "04_masking.ipynb").write_text('{"course": 4}')  # a new notebook
    assert [str(p) for p in learner_copy.sync(source, copy)] == ["04_masking.ipynb"]
    assert (copy / "03_scaled_dot_product.ipynb").read_text() == '{"mine": 3}'
    assert (copy / "04_masking.ipynb").read_text() == '{"course": 4}'


def test_restore_brings_back_the_course_version_and_keeps_the_learners(course):
    source, copy = course
    learner_copy.sync(source, copy)
    (copy / "03_scaled_dot_product.ipynb").write_text('{"mine": 1}')
    target, backup = learner_copy.restore("03", source, copy)
    assert target.read_text() == '{"course": 3}'
    assert backup.name == "03_scaled_dot_product.ipynb.bak" and backup.read_text() == '{"mine": 1}'
    target.write_text('{"mine": 2}')
    _, second = learner_copy.restore("3", source, copy)
    assert second.name == "03_scaled_dot_product.ipynb.bak2" and second.read_text() == '{"mine": 2}'
    assert backup.read_text() == '{"mine": 1}', "an older backup is never overwritten"


def test_restore_of_a_deleted_notebook_needs_no_backup(course):
    source, copy = course
    target, backup = learner_copy.restore("00_start_here", source, copy)
    assert backup is None and target.read_text() == '{"course": 0}'


@pytest.mark.parametrize("number", ["07", "", "  ", "x"])
def test_restore_names_the_notebooks_when_the_number_matches_none(course, number):
    source, copy = course
    with pytest.raises(ValueError, match="number must"):
        learner_copy.restore(number, source, copy)


def test_sync_rejects_a_missing_course_folder(tmp_path):
    with pytest.raises(ValueError, match="course must be the folder"):
        learner_copy.sync(tmp_path / "nothing", tmp_path / "copy")


def test_the_learners_copy_is_git_ignored_and_make_lab_opens_it():
    ignored = subprocess.run(["git", "check-ignore", "-q", "my-notebooks/00_start_here.ipynb"], cwd=ROOT,
                             check=False)
    assert ignored.returncode == 0, "my-notebooks/ must be in .gitignore"
    makefile = (ROOT / "Makefile").read_text()
    lab = makefile[makefile.index("\nlab:"):makefile.index("\n## restore")]
    assert "learner_copy.py sync" in lab and "--notebook-dir=my-notebooks" in lab


def test_the_command_line_restores(tmp_path, monkeypatch, capsys, course):
    source, copy = course
    monkeypatch.setattr(learner_copy, "COURSE", source)
    monkeypatch.setattr(learner_copy, "COPY", copy)
    monkeypatch.setattr(learner_copy, "ROOT", tmp_path)
    assert learner_copy.main(["sync"]) == 0
    (copy / "00_start_here.ipynb").write_text("mine")
    assert learner_copy.main(["restore", "00"]) == 0
    assert "kept as 00_start_here.ipynb.bak" in capsys.readouterr().out
    assert learner_copy.main(["restore", "42"]) == 2
    assert "error: number must" in capsys.readouterr().err


# --- quiet JupyterLab ---------------------------------------------------------------------------------------------


def test_lab_settings_turn_off_the_news_and_quiet_the_kernel(tmp_path):
    overrides = tmp_path / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    overrides.parent.mkdir(parents=True)
    overrides.write_text(json.dumps({"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"}}))
    lab_settings.write_settings(tmp_path)
    lab_settings.write_settings(tmp_path)  # twice: the same result
    written = json.loads(overrides.read_text())
    assert written["@jupyterlab/apputils-extension:notification"] == {"fetchNews": "false", "checkForUpdates": False}
    assert written["@jupyterlab/apputils-extension:themes"] == {"theme": "JupyterLab Dark"}, "kept"
    kernel = json.loads((tmp_path / "etc" / "ipython" / "ipython_kernel_config.json").read_text())
    assert kernel == {"IPKernelApp": {"log_level": "ERROR"}}
    with pytest.raises(ValueError, match="prefix must be an existing folder"):
        lab_settings.write_settings(tmp_path / "missing")


def test_the_news_setting_is_one_jupyterlab_knows():
    schemas = Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas" / "@jupyterlab" / "apputils-extension"
    properties = json.loads((schemas / "notification.json").read_text())["properties"]
    assert "false" in [choice["const"] for choice in properties["fetchNews"]["oneOf"]]
    assert properties["checkForUpdates"]["type"] == "boolean"


# --- threads -------------------------------------------------------------------------------------------------------


@pytest.fixture
def restore_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def test_seed_everything_sets_one_thread(restore_threads):
    torch.set_num_threads(2)
    seed_everything(0)
    assert torch.get_num_threads() == 1
    seed_everything(0, num_threads=2)
    assert torch.get_num_threads() == 2


def test_seed_everything_asks_for_deterministic_kernels_without_loading_the_compiler():
    """A fresh interpreter, like a notebook's kernel: torch's switch is on (warnings only), and the 1 s import of
    torch._inductor that torch.use_deterministic_algorithms makes is not paid."""
    code = ("import sys, torch; from helpers.reproducibility import seed_everything; seed_everything(0); "
            "print(torch.are_deterministic_algorithms_enabled(), "
            "torch.is_deterministic_algorithms_warn_only_enabled(), 'torch._inductor' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["True", "True", "False"]


def test_threads_sets_and_restores_even_on_error(restore_threads):
    use_course_threads()
    with threads(2) as count:
        assert count == 2 and torch.get_num_threads() == 2
    assert torch.get_num_threads() == 1
    with pytest.raises(RuntimeError, match="inside"), threads(2):
        raise RuntimeError("inside")
    assert torch.get_num_threads() == 1


def test_more_threads_uses_torchs_default(restore_threads, monkeypatch):
    monkeypatch.setattr(reproducibility, "DEFAULT_THREADS", 2)
    use_course_threads()
    with more_threads() as count:
        assert count == 2 and torch.get_num_threads() == 2
    assert torch.get_num_threads() == 1


def test_use_course_threads_returns_the_previous_count(restore_threads):
    torch.set_num_threads(2)
    assert use_course_threads() == 2
    assert use_course_threads(1) == 1


@pytest.mark.parametrize(("value", "error", "match"), [
    (0, ValueError, "num_threads must be at least 1; got 0"),
    (-2, ValueError, "at least 1; got -2"),
    (1.5, TypeError, "num_threads must be an int number of threads; got float"),
    (True, TypeError, "got bool"),
])
def test_thread_counts_are_validated(restore_threads, value, error, match):
    for call in (lambda: use_course_threads(value), lambda: threads(value).__enter__(),
                 lambda: seed_everything(0, num_threads=value)):
        with pytest.raises(error, match=match):
            call()


def test_restore_of_a_chinese_notebook(course):
    source, copy = course
    (source / "zh").mkdir()
    (source / "zh" / "03_scaled_dot_product.ipynb").write_text('{"course": "zh 3"}')
    learner_copy.sync(source, copy)
    (copy / "zh" / "03_scaled_dot_product.ipynb").write_text('{"mine": "zh"}')
    target, backup = learner_copy.restore("zh/03", source, copy)
    assert target == copy / "zh" / "03_scaled_dot_product.ipynb" and target.read_text() == '{"course": "zh 3"}'
    assert backup.read_text() == '{"mine": "zh"}'
    assert (copy / "03_scaled_dot_product.ipynb").read_text() == '{"course": 3}', "the English one is untouched"
