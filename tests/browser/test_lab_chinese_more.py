"""The other half of test_lab_chinese.py's notebooks (a file of its own, so that pytest-xdist runs it beside the
first half, in its own JupyterLab)."""

from __future__ import annotations

from pathlib import Path

import pytest
from jupyterlab_session import CHINESE, check_notebook, half, record_latencies  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("record_latencies")]
NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def test_the_two_files_cover_every_notebook_once():
    from jupyterlab_session import LAB_ENGLISH_ONLY

    assert sorted(half(CHINESE, first=True) + half(CHINESE, first=False) + list(LAB_ENGLISH_ONLY)) == CHINESE
    assert "LiveFigure" not in (NOTEBOOKS / "src" / "01_why_self_attention.md").read_text(), "01 has no live figure"


@pytest.mark.parametrize("name", half(CHINESE, first=False))
def test_notebook_runs_and_widgets_respond(lab, browser, name):
    check_notebook(lab, browser, name)
