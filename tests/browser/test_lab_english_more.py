"""The other half of test_lab_english.py's notebooks (a file of its own, so that pytest-xdist runs it beside the
first half, in its own JupyterLab)."""

from __future__ import annotations

import pytest
from jupyterlab_session import ENGLISH, check_notebook, half, record_latencies  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("record_latencies")]


def test_the_two_files_cover_every_notebook_once():
    assert sorted(half(ENGLISH, first=True) + half(ENGLISH, first=False)) == ENGLISH
    assert half(ENGLISH, first=True) and half(ENGLISH, first=False)


@pytest.mark.parametrize("name", half(ENGLISH, first=False))
def test_notebook_runs_and_widgets_respond(lab, browser, name):
    check_notebook(lab, browser, name)
