"""environment.yml (conda, Binder) and pyproject.toml ask for the same packages; torch is pinned exactly."""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def pyproject_requirements() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project["dependencies"] + project["optional-dependencies"]["test"]


def environment_pip_requirements() -> list[str]:
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_sections = [d["pip"] for d in environment["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(pip_sections) == 1, "environment.yml must have exactly one pip section"
    return [r for r in pip_sections[0] if not r.startswith("-e")]


def test_environment_and_pyproject_agree():
    assert sorted(environment_pip_requirements()) == sorted(pyproject_requirements())


def test_environment_uses_conda_forge_python_311_and_installs_the_package():
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert environment["channels"] == ["conda-forge"]
    assert "python=3.11" in environment["dependencies"]
    pip_section = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    assert "-e ." in pip_section


def test_torch_is_pinned_exactly_everywhere():
    for requirements in (pyproject_requirements(), environment_pip_requirements()):
        torch_lines = [r for r in requirements if r.split("=")[0].split(">")[0].strip() == "torch"]
        assert torch_lines == ["torch==2.13.0"]


def test_installed_torch_is_the_pinned_cpu_build():
    import torch

    assert torch.__version__.split("+")[0] == "2.13.0"
