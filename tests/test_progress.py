"""A progress bar saved in a notebook is its final text bar, not a frozen widget."""

from __future__ import annotations

import nbformat
from nbclient import NotebookClient

from helpers.progress import progress


def test_in_a_kernel_the_saved_output_is_the_final_bar():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "from helpers.progress import progress\nfor _ in progress(range(50), desc='work'):\n    pass")]
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outputs = nb.cells[0].outputs
    assert len(outputs) == 1 and outputs[0].output_type == "display_data"
    assert set(outputs[0].data) == {"text/plain"}, "text only: no widget view a static page cannot show"
    assert outputs[0].data["text/plain"].startswith("work: 100%|") and "50/50" in outputs[0].data["text/plain"]


def test_outside_a_kernel_it_is_plain_tqdm(capsys):
    assert sum(1 for _ in progress(range(5), desc="plain")) == 5
    assert "plain: 100%" in capsys.readouterr().err
