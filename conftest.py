"""How `make test` spreads the suite over the machine's cores (pytest-xdist, ``-n auto --dist loadgroup``).

Each item is sent to a worker on its own, except those that must share one process:

* the cells of one notebook under nbval: one kernel, run in order;
* the site's tests (tests/test_site.py and tests/browser/test_site_offline.py): they build the same build/site/.

Each run keeps the models that notebooks train (:mod:`helpers.checkpoints`) in a fresh folder, shared by the
workers and by the kernels they start: the first notebook run that needs a model trains it, and the others
(the other edition, the solutions, the browser) load it. Nothing from an earlier run is reused, unless the
caller sets COURSE_CACHE.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

SITE_TESTS = {"test_site.py", "test_site_offline.py"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.xdist_group(item.path.relative_to(config.rootpath).as_posix()))
        elif item.path.name in SITE_TESTS:
            item.add_marker(pytest.mark.xdist_group("site"))


def pytest_configure(config: pytest.Config) -> None:
    # the controller (or a run without xdist) chooses; workers and kernels inherit it. A COURSE_CACHE set by the
    # caller is kept (to iterate on tests without training again), and not removed afterwards.
    if not hasattr(config, "workerinput") and not os.environ.get("COURSE_CACHE"):
        config.course_cache = tempfile.mkdtemp(prefix="course-models-")
        os.environ["COURSE_CACHE"] = config.course_cache


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = getattr(config, "course_cache", None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
