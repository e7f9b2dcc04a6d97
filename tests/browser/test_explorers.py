"""The client-side explorers (helpers/explorer.py, helpers/js/heatmap.js) in a real Chromium, with no network.

(a) JupyterLab: notebook 02 run, then a cell that sleeps 20 s; the explorer moved by keyboard while the kernel
    is busy must redraw at once (its frames are in the page). (b) An nbconvert HTML export of the built 02,
    opened from file://: moving the menu by keyboard changes the figure, and the values drawn equal the frames
    Python computed (stored in the output) to 1e-6. (c) axe-core (axe-playwright-python, bundled) finds no
    serious or critical violation in the explorer.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from explorer_moves import SHOWN, frame_problems, stored_explorers
from jupyterlab_session import close_dialogs, run_all, shut_down_kernel, wait_idle
from offline import block_non_loopback, page_with_errors

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "02_qkv_toy_matrix.ipynb"
pytestmark = pytest.mark.browser


def stored_data(notebook: Path) -> dict:
    """The first explorer's data as Python computed it (in the stored text/html output)."""
    found = stored_explorers(notebook)
    assert found, f"{notebook.name} has no explorer output"
    return found[0]


def check_frame(shown: dict, data: dict) -> None:
    problems = frame_problems(shown, data, shown["frame"])
    assert not problems, problems


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("export")
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--output-dir", str(folder),
                    str(NOTEBOOK)], check=True, capture_output=True)
    return folder / "02_qkv_toy_matrix.html"


# What nbconvert's own template asks of a CDN (not the explorer): require.js and MathJax 2 for the page's math.
TEMPLATE_CDN = ("/require.js/", "/mathjax/")


def from_the_explorer(blocked: list[str]) -> list[str]:
    return [request for request in blocked if not any(part in request for part in TEMPLATE_CDN)]


def open_page(browser, url: str):
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    blocked = block_non_loopback(context)
    page, errors = page_with_errors(context)
    page.goto(url)
    return context, page, blocked, errors


def test_the_export_moves_with_no_kernel_and_shows_python_s_values(browser, export):
    data = stored_data(NOTEBOOK)
    context, page, blocked, errors = open_page(browser, export.as_uri())
    try:
        root = page.locator(".course-explorer").first
        root.wait_for(timeout=20_000)
        menu = page.get_by_label(data["controls"][0]["label"], exact=True).first
        assert menu.evaluate("e => e.tagName") == "SELECT"
        before = root.evaluate(SHOWN)
        assert before["frame"] == str(data["controls"][0]["index"])
        check_frame(before, data)
        seen = {before["frame"]}
        menu.focus()
        for key in ("ArrowDown", "ArrowDown", "ArrowUp"):
            was = root.evaluate(SHOWN)["frame"]
            page.keyboard.press(key)
            page.wait_for_function("([r, f]) => r.dataset.frame !== f", arg=[root.element_handle(), was],
                                   timeout=5_000)
            shown = root.evaluate(SHOWN)
            check_frame(shown, data)
            assert shown["label"] and shown["table"]
            seen.add(shown["frame"])
        assert len(seen) >= 3, seen
        template = ("require", "MathJax", "ERR_BLOCKED_BY_CLIENT")  # the template's CDN scripts, blocked
        assert not [e for e in errors if not any(word in e for word in template)], errors
        assert not from_the_explorer(blocked), blocked
    finally:
        context.close()


def test_the_explorer_has_no_serious_accessibility_violation(browser, export):
    from axe_playwright_python.sync_playwright import Axe

    context, page, blocked, errors = open_page(browser, export.as_uri())
    try:
        page.locator(".course-explorer").first.wait_for(timeout=20_000)
        results = Axe().run(page, context={"include": [[".course-explorer"]]})
        bad = [(v["id"], v["impact"], v["help"]) for v in results.response["violations"]
               if v["impact"] in ("serious", "critical")]
        assert not bad, bad
        assert not from_the_explorer(blocked), blocked
    finally:
        context.close()


def test_a_move_does_not_wait_for_a_busy_kernel(lab, browser):
    name = "02_qkv_toy_matrix"
    context, page, blocked, errors = open_page(browser, f"{lab.url}/lab/tree/{name}.ipynb?token={lab.token}&reset")
    try:
        page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=60_000)
        wait_idle(page, 60_000)
        time.sleep(1.0)
        wait_idle(page, 60_000)
        run_all(page)
        page.wait_for_function("() => !Array.from(document.querySelectorAll('.jp-InputArea-prompt'))"
                               ".some(e => e.textContent.includes('*'))", timeout=240_000)
        wait_idle(page, 240_000)
        close_dialogs(page)
        root = page.locator(".jp-OutputArea .course-explorer").first
        try:
            root.wait_for(timeout=30_000)
        except Exception:
            output = page.locator(".jp-CodeCell", has_text="HeatmapExplorer(").locator(".jp-OutputArea").first
            shown = output.inner_html()[:1500]
            raise AssertionError(f"no explorer in JupyterLab: {shown}; console: {errors}") from None
        # a cell that keeps the kernel busy for 20 s
        last = page.locator(".jp-Notebook .jp-CodeCell").last
        last.locator(".cm-content").click()
        page.keyboard.press("Control+A")
        page.keyboard.press("Delete")
        page.keyboard.insert_text("import time\ntime.sleep(20)")
        page.keyboard.press("Escape")
        page.keyboard.press("Shift+Enter")
        page.wait_for_selector('.jp-Notebook-ExecutionIndicator[data-status="busy"]', timeout=10_000)
        root.scroll_into_view_if_needed()
        before = root.evaluate(SHOWN)
        root.locator("select").first.focus()
        page.keyboard.press("ArrowDown")
        page.wait_for_function("([r, f]) => r.dataset.frame !== f", arg=[root.element_handle(), before["frame"]],
                               timeout=3_000)
        after = root.evaluate(SHOWN)
        busy = page.locator('.jp-Notebook-ExecutionIndicator[data-status="busy"]').count()
        assert busy == 1, "the kernel must still be busy: the move did not wait for it"
        assert after["label"] != before["label"] and after["values"] != before["values"]
        assert after["highlight"] != before["highlight"]
        assert not blocked, blocked
    finally:
        context.close()
        shut_down_kernel(lab, name)
