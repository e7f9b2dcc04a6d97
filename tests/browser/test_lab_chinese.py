"""Every notebook of the Chinese edition (notebooks/zh/) in a real JupyterLab in Chromium, as
test_lab_english.py does the English one: the kernels run in notebooks/zh/, so checks and figures speak Chinese."""

from __future__ import annotations

import pytest
from jupyterlab_session import CHINESE, check_notebook, record_latencies  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("record_latencies")]


def test_every_notebook_has_its_chinese_edition():
    from jupyterlab_session import ENGLISH

    assert [f"zh/{name}" for name in ENGLISH] == CHINESE


@pytest.mark.parametrize("name", CHINESE)
def test_notebook_runs_and_widgets_respond(lab, browser, name):
    check_notebook(lab, browser, name)
