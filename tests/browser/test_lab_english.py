"""Every notebook of the English edition in a real JupyterLab in Chromium (see jupyterlab_session.py): Run All,
no error, every live figure's controls move its picture, one exercise tried wrong and then right."""

from __future__ import annotations

from pathlib import Path

import pytest
from jupyterlab_session import ENGLISH, check_notebook, half, record_latencies  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("record_latencies")]


@pytest.mark.parametrize("name", half(ENGLISH, first=True))  # the others: test_lab_english_more.py
def test_notebook_runs_and_widgets_respond(lab, browser, name):
    check_notebook(lab, browser, name)


def test_notebooks_with_widgets_have_live_figures():
    """The widget notebooks are the ones the course promises; each must have a live figure (moved by the test
    above) or a client-side explorer (moved by test_explorers.py)."""
    root = Path(__file__).resolve().parents[2] / "notebooks"
    with_widgets = {p.stem for p in root.glob("*.ipynb")
                    if "<live figure: move the controls" in (text := p.read_text()) or "data-course-explorer" in text}
    assert {"02_qkv_toy_matrix", "03_scaled_dot_product", "04_masking", "05_multi_head",
            "08_full_transformer", "09_attention_everywhere", "10_attention_today"} <= with_widgets
