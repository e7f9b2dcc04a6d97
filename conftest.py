"""How `make test` spreads the suite over the machine's cores (pytest-xdist, ``-n auto --dist loadgroup``).

Each item is sent to a worker on its own, except those that must share one process:

* the cells of one notebook under nbval: one kernel, run in order;
* the site's tests (tests/test_site.py and tests/browser/test_site_offline.py): they build the same build/site/.
"""

from __future__ import annotations

import pytest

SITE_TESTS = {"test_site.py", "test_site_offline.py"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.xdist_group(item.path.relative_to(config.rootpath).as_posix()))
        elif item.path.name in SITE_TESTS:
            item.add_marker(pytest.mark.xdist_group("site"))
