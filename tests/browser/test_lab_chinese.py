"""Every notebook of the Chinese edition (notebooks/zh/) in a real JupyterLab in Chromium, as
test_lab_english.py does the English one: the kernels run in notebooks/zh/, so checks and figures speak Chinese."""

from __future__ import annotations

import pytest
from jupyterlab_session import CHINESE, check_notebook, close_dialogs, half, record_latencies, wait_idle  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("record_latencies")]


def test_every_notebook_has_its_chinese_edition():
    from jupyterlab_session import ENGLISH

    assert [f"zh/{name}" for name in ENGLISH] == CHINESE


@pytest.mark.parametrize("name", half(CHINESE, first=True))  # the others: test_lab_chinese_more.py
def test_notebook_runs_and_widgets_respond(lab, browser, name):
    check_notebook(lab, browser, name)


def test_make_lab_lang_zh_shows_jupyterlab_itself_in_chinese(lab_zh, browser):
    """`make lab LANG=zh`'s settings (the language pack, locale zh_CN): JupyterLab's own menus are Chinese, with
    zh/00 open in it (its first cell's saved output is the Chinese edition's)."""
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.goto(f"{lab_zh.url}/lab/tree/zh/00_start_here.ipynb?token={lab_zh.token}&reset")
    page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=60_000)
    wait_idle(page, 60_000)
    close_dialogs(page)
    menus = [t.strip() for t in page.locator(".lm-MenuBar-itemLabel").all_inner_texts()]
    assert {"文件", "编辑", "运行", "内核"} <= set(menus), menus
    assert not {"File", "Edit", "Run", "Kernel"} & set(menus), menus
    page.locator(".jp-OutputArea-output", has_text="不在 Colab 上").first.wait_for(timeout=30_000)
