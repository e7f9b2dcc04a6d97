"""Shared by every test run: where the models that notebooks train are kept.

`make test` spreads the suite over the machine's cores with pytest-xdist, one file at a time
(``--dist loadfile``): the cells of a notebook stay in one kernel, in order. The browser tests of the two
editions are two files, so they run side by side; the site's build is guarded by a lock (site/_ext).

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
