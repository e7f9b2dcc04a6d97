"""The learner's own copy of the notebooks: `make lab` opens it, `git pull` never touches it.

    python tools/learner_copy.py sync            # create my-notebooks/ or add the notebooks it lacks
    python tools/learner_copy.py restore 03      # put back the course's 03_*.ipynb (yours kept as .bak)

``sync`` copies every file of notebooks/ (notebooks and any data file they read, sub-folders too, but not the
sources in notebooks/src/) that the copy does not have yet, and never overwrites one: your answers and outputs
stay yours, and a notebook added by an update appears beside them. my-notebooks/ is git-ignored.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COURSE = ROOT / "notebooks"
COPY = ROOT / "my-notebooks"
#: what is the course's machinery, not the learner's material
SKIPPED_DIRS = {"src", ".ipynb_checkpoints", "__pycache__"}


def course_files(course: Path = COURSE) -> list[Path]:
    """Every file under ``course`` a learner works with, as paths relative to it, sorted."""
    if not course.is_dir():
        raise ValueError(f"course must be the folder of the course's notebooks; {course} is not a folder")
    files = []
    for path in sorted(course.rglob("*")):
        relative = path.relative_to(course)
        if path.is_file() and not SKIPPED_DIRS.intersection(relative.parts[:-1]):
            files.append(relative)
    return files


def sync(course: Path = COURSE, copy: Path = COPY) -> list[Path]:
    """Copy into ``copy`` each file of ``course`` it lacks; never overwrite. Returns the files copied."""
    copied = []
    for relative in course_files(course):
        target = copy / relative
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(course / relative, target)
        copied.append(relative)
    return copied


def backup_path(path: Path) -> Path:
    """``name.ipynb.bak``, or ``name.ipynb.bak2``, ``.bak3``, ... when the earlier ones exist."""
    candidate, number = path.with_name(path.name + ".bak"), 1
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}.bak{number}")
    return candidate


def restore(number: str, course: Path = COURSE, copy: Path = COPY) -> tuple[Path, Path | None]:
    """Replace the copy's notebook ``number`` ("03", "3", "03_scaled_dot_product", or "zh/03" for the Chinese
    edition) by the course's version.

    The learner's version is renamed to a ``.bak`` beside it first. Returns (restored file, backup or None).
    """
    if not isinstance(number, str) or not number.strip():
        raise ValueError(f"number must name a notebook, e.g. '03'; got {number!r}")
    key = number.strip().removesuffix(".ipynb")
    if key.startswith("zh/"):
        key, course, copy = key[3:], course / "zh", copy / "zh"
    if key.isdigit():
        key = f"{int(key):02d}_"
    matches = sorted(p for p in course.glob("*.ipynb") if p.stem.startswith(key) or p.stem == key)
    if len(matches) != 1:
        names = ", ".join(p.stem for p in sorted(course.glob("*.ipynb")))
        raise ValueError(f"number must match exactly one notebook of {names}; {number!r} matches {len(matches)}")
    source = matches[0]
    target = copy / source.name
    backup = None
    if target.exists():
        backup = backup_path(target)
        target.rename(backup)
    copy.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)
    return target, backup


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("sync", help="create my-notebooks/ or add the notebooks it lacks")
    restore_parser = commands.add_parser("restore", help="restore one notebook to the course's version")
    restore_parser.add_argument("notebook", help="its number, e.g. 03")
    args = parser.parse_args(argv)
    try:
        if args.command == "sync":
            copied = sync(COURSE, COPY)
            if copied:
                names = ", ".join(map(str, copied)) if len(copied) <= 3 else f"{len(copied)} files"
                print(f"my-notebooks/ (your copy): added {names} from notebooks/")
        else:
            target, backup = restore(args.notebook, COURSE, COPY)
            kept = f"; yours is kept as {backup.name}" if backup else ""
            print(f"{target.relative_to(ROOT)} is the course's version again{kept}")
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
