"""What the browser tests do with each notebook in a real JupyterLab in Chromium (test_lab_english.py and
test_lab_chinese.py, one file per edition so that pytest-xdist runs the two side by side).

nbval never renders a widget; these tests do what a learner does. Each notebook is opened with `&reset`, run
with Run > Run All Cells once the kernel is idle, and checked: each code cell got an execution number, no cell
shows a traceback, the browser console logged no error. Then each live figure's controls are moved one by one
(sliders by keyboard, dropdowns by selection, toggle buttons by click), away and back, and its image must
change each time.
A screenshot of each notebook goes to tests/browser/screenshots/ (ignored by git).
Every request that leaves this machine is blocked and fails the test: the course works offline.
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from functools import partial
from pathlib import Path

import pytest
from explorer_moves import explorer_problems, stored_explorers
from offline import block_non_loopback
from playwright.sync_api import TimeoutError as PlaywrightTimeout

SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
NOTEBOOK_DIR = Path(__file__).resolve().parents[2] / "notebooks"
ENGLISH = sorted(p.stem for p in NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))
CHINESE = sorted(f"zh/{p.stem}" for p in NOTEBOOK_DIR.glob("zh/[0-9][0-9]_*.ipynb"))
# each edition's notebooks in two test files of about equal length (01 and 08 take longest), so that pytest-xdist
# (--dist loadfile) runs them on two workers, each with its own JupyterLab
FIRST_HALF = ("01", "03", "05", "07", "09")


# notebooks with no live figure and a long run (01: six models, trained by the first run of `make test` and loaded
# by the others): JupyterLab runs the English edition only; the Chinese one has the same code cells, and nbval
# runs them and compares every output in both editions
LAB_ENGLISH_ONLY = ("zh/01_why_self_attention",)


def half(names: list[str], first: bool) -> list[str]:
    """The notebooks of ``names`` in the first (or second) of the two test files."""
    return [n for n in names if (n.removeprefix("zh/")[:2] in FIRST_HALF) == first and n not in LAB_ENGLISH_ONLY]
RUN_TIMEOUT_MS = 240_000
LATENCIES: list[dict] = []  # one record per move: notebook, move, milliseconds from the move to the new image
EXPLORER_LATENCIES: list[dict] = []  # one record per client-side explorer: notebook, index, each key-to-paint ms

@pytest.fixture(scope="module")
def record_latencies():
    """After the run, the measured move-to-new-image latencies go next to the screenshots (for `make bench`)."""
    yield
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")  # one file per pytest-xdist worker ("gw0", ...)
    for records, stem in ((LATENCIES, "latencies"), (EXPLORER_LATENCIES, "explorer-latencies-lab")):
        if records:
            SCREENSHOTS.mkdir(exist_ok=True)
            (SCREENSHOTS / f"{stem}-{worker}.json").write_text(json.dumps(records))



def read_cells(path: Path, tries: int = 20) -> list[dict]:
    """The cells of a notebook file that JupyterLab may be saving right now: Jupyter's atomic_writing writes the
    file in place (after a backup copy), so a read can meet it empty or cut short; read again until it parses."""
    for attempt in range(tries):
        try:
            return json.loads(path.read_text(encoding="utf-8"))["cells"]
        except (json.JSONDecodeError, KeyError):
            if attempt == tries - 1:
                raise
            time.sleep(0.25)
    return []


def expected_prompts(name: str, root: Path) -> list[str]:
    """The prompts a Run All leaves: code cells are numbered in order, but a cell whose input is hidden (the
    Colab bootstrap) shows no prompt, so its number is missing from the page."""
    cells = [c for c in read_cells(root / f"{name}.ipynb") if c["cell_type"] == "code"]
    return [f"[{i}]:" for i, cell in enumerate(cells, 1)
            if not cell["metadata"].get("jupyter", {}).get("source_hidden")]


def stored_passes(name: str, root: Path) -> int:
    """How many stored outputs show a passed check ("[x] "): demonstrations that check the course's own code."""
    cells = read_cells(root / f"{name}.ipynb")
    return sum("[x] " in "".join(output.get("text", "")) for c in cells if c["cell_type"] == "code"
               for output in c.get("outputs", []))


# One exercise per notebook that a learner tries: the cell (found by a line of its code), a wrong answer and the
# words of the pointed message it must get (English, Chinese). The right answer is the exercise's own solution.
TRIES = {
    "00": ("checks.check_scale(answer, d_k=64)", "answer = 1 / 64\nchecks.check_scale(answer, d_k=64)",
           ("lecture note's slip", "讲义里的笔误")),
    "01": ("checks.check_attention(attend)",
           "attend = lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1], -1) @ v\n"
           "checks.check_attention(attend)", ("divided by d_k", "除以了 d_k")),
    "02": ("checks.check_attention_weights(fixed_weights)",
           "fixed_weights = bugs.attention_weights\nchecks.check_attention_weights(fixed_weights)",
           ("runs over the queries", "softmax 沿查询")),
    "03": ("checks.check_attention(fixed_attention)",
           "fixed_attention = bugs.attention\nchecks.check_attention(fixed_attention)",
           ("divided by d_k", "除以了 d_k")),
    "04": ("checks.check_ignores_padding(fixed)",
           "fixed = bugs.padded_self_attention\nchecks.check_ignores_padding(fixed)",
           ("changing only the padding", "只改动填充位置")),
    "05": ("checks.check_split_heads(fixed_split)",
           "fixed_split = bugs.split_heads\nchecks.check_split_heads(fixed_split)",
           ("without the transpose", "而不转置")),
    "06": ("checks.check_pre_ln(fixed_pre_ln)",
           "fixed_pre_ln = bugs.pre_ln_sublayer\nchecks.check_pre_ln(fixed_pre_ln)",
           ("this is post-LN", "这是 Post-LN")),
    "07": ("checks.check_cross_attention(fixed_cross)",
           "fixed_cross = bugs.cross_attention\nchecks.check_cross_attention(fixed_cross)",
           ("the queries were taken from the encoder", "查询取自编码器")),
    "08": ("checks.check_no_future_leak(fixed_causal)",
           "fixed_causal = bugs.causal_self_attention\nchecks.check_no_future_leak(fixed_causal)",
           ("blocks only the keys", "因果掩码只屏蔽")),
    "09": ('checks.check_number("09-weights-memory", answer)',
           'answer = 64 * 4 * 2 * 0.5\nchecks.check_number("09-weights-memory", answer)',
           ("linearly with L", "线性增长")),
    "10": ('checks.check_number("10-gqa-cache-gib", answer)',
           'answer = 16.0\nchecks.check_number("10-gqa-cache-gib", answer)', ("32 key/value heads", "32 个键/值头")),
}


def solution_after(name: str, root: Path, marker: str) -> str:
    """The code of the solution block that follows the exercise cell containing ``marker``."""
    cells = read_cells(root / f"{name}.ipynb")
    start = next(i for i, c in enumerate(cells) if c["cell_type"] == "code" and marker in "".join(c["source"]))
    block = next("".join(c["source"]) for c in cells[start:] if "solution" in c["metadata"].get("tags", []))
    return block.split("```python\n", 1)[1].rsplit("\n```", 1)[0]


def run_in_cell(page, cell, code: str, expect: str) -> str:
    """Replace the cell's code as a learner would (select all, type), run it, wait for ``expect`` in its output."""
    editor = cell.locator(".cm-content")
    for attempt in range(3):  # a dialog that opened after the last close_dialogs covers the cell: close it
        try:
            editor.click(timeout=10_000)
            break
        except PlaywrightTimeout:
            if attempt == 2 or not close_dialogs(page):
                raise
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(code)
    page.keyboard.press("Escape")  # command mode on this cell: Shift+Enter runs it whatever the editor's state
    page.keyboard.press("Shift+Enter")
    output = cell.locator(".jp-OutputArea-output", has_text=expect)
    try:
        output.first.wait_for(timeout=60_000)
        # The output shows before the kernel has finished the request. A wrong answer raises, and ipykernel
        # aborts what reaches it while it handles the error: wait for this cell's number and an idle kernel.
        page.wait_for_function("p => /^\\[\\d+\\]:$/.test(p.textContent.trim())",
                               arg=cell.locator(".jp-InputArea-prompt").element_handle(), timeout=60_000)
        wait_idle(page, 60_000)
    except PlaywrightTimeout:
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "failed-try.png"))
        raise AssertionError(f"running {code!r} did not print {expect!r}: {cell.inner_text()[-600:]}") from None
    return cell.locator(".jp-OutputArea").inner_text()


def try_an_exercise(page, name: str, root: Path) -> None:
    """A wrong answer gets its pointed message and no traceback; then the solution gets [x]."""
    marker, wrong, (says_en, says_zh) = TRIES[name.split("/")[-1][:2]]
    says = says_zh if name.startswith("zh/") else says_en
    cell = page.locator(".jp-Notebook .jp-CodeCell", has_text=marker.split("(")[0]).filter(
        has=page.locator(".cm-content", has_text=marker)).first
    cell.scroll_into_view_if_needed()
    shown = run_in_cell(page, cell, wrong, says)
    assert "Traceback" not in shown and "helpers/checks.py" not in shown, shown
    run_in_cell(page, cell, solution_after(name, root, marker), "[x]")


def close_dialogs(page) -> list[str]:
    """Close any JupyterLab dialog that covers the notebook (Escape, as a learner would), and return what each
    said. A dialog about the kernel (it died, or must restart) is a failure, not something to click away."""
    said = []
    dialogs = page.locator(".jp-Dialog")
    for _ in range(3):
        open_now = dialogs.count()
        if not open_now:
            break
        text = dialogs.first.inner_text()
        assert not ("kernel" in text.lower() and any(w in text.lower() for w in ("died", "restart", "dead"))), text
        said.append(" ".join(text.split()))
        print(f"closing a dialog: {said[-1]}")  # shown with -rP or on a failure, to learn what they are
        closed = "n => document.querySelectorAll('.jp-Dialog').length < n"
        page.keyboard.press("Escape")
        for button in (".jp-Dialog .jp-mod-reject", ".jp-Dialog .jp-Dialog-button"):
            try:
                page.wait_for_function(closed, arg=open_now, timeout=3_000)
                break
            except PlaywrightTimeout:  # Escape did not close it (the focus was elsewhere): its button does
                if page.locator(button).count():
                    page.locator(button).first.click()
    return said


def wait_idle(page, timeout_ms: int) -> None:
    page.wait_for_selector('.jp-Notebook-ExecutionIndicator[data-status="idle"]', timeout=timeout_ms)


# A JavaScript expression: the text of every code cell's prompt ("[3]:", "[*]:", "[ ]:"), top to bottom.
PROMPT_TEXTS = ("Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputArea-prompt'))"
                ".map(e => e.textContent.trim())")

# Set once any code cell's prompt turns "[*]:" (queued or running). The saved notebook already shows the final
# numbers, so numbered prompts alone cannot tell a finished run from one that has not started yet.
WATCH_RUN = ("""() => {
  window.courseRunStarted = false;
  const observer = new MutationObserver(() => {
    if (PROMPT_TEXTS.includes('[*]:')) { window.courseRunStarted = true; observer.disconnect(); }
  });
  observer.observe(document.querySelector('.jp-Notebook'), {subtree: true, childList: true, characterData: true});
}""".replace("PROMPT_TEXTS", PROMPT_TEXTS))


def run_all(page) -> None:
    """Run > Run All Cells, as a learner does; started once some cell's prompt has shown "[*]:" (watched from
    before the click: a short notebook may be done again before we look). A dialog over the page is closed
    first (one once took the menu click: zh/00, at the start of a CI run); a menu click that did not take is
    tried again, twice."""
    dialogs: list[str] = []
    for attempt in range(3):
        dialogs += close_dialogs(page)
        page.evaluate(WATCH_RUN)
        try:
            page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click(timeout=10_000)
            page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click(timeout=10_000)
            page.wait_for_function("() => window.courseRunStarted", timeout=15_000)
            return
        except PlaywrightTimeout:
            # on a busy machine the first cell (the hidden bootstrap, with no prompt to watch) can still be
            # running: the kernel is busy, so the run did start, and a second Run All would run every cell twice
            busy = page.locator('.jp-Notebook-ExecutionIndicator[data-status="busy"]').count() > 0
            if busy or "[*]:" in prompts(page):
                return
            SCREENSHOTS.mkdir(exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / f"run-all-did-not-start-{attempt}.png"))
            page.keyboard.press("Escape")
    raise AssertionError(f"Run > Run All Cells did not start the notebook (see the screenshots); dialogs closed "
                         f"on the way: {dialogs}")


def prompts(page) -> list[str]:
    return page.evaluate(f"() => {PROMPT_TEXTS}")


# Timed in the page's own clock, so the test's round trips to the browser are not counted: from the first input
# event of a move (key, pointer, selection) that reaches the figure to the `load` of the new image, i.e. decoded
# and ready to paint.
ARM_TIMER = """root => {
  const img = root.querySelector('img');
  const before = img.src;
  const move = {start: null, shown: null, stop: new AbortController()};
  for (const type of ['pointerdown', 'keydown', 'input', 'change']) {
    root.addEventListener(type, e => { if (move.start === null) move.start = e.timeStamp; },
                          {capture: true, signal: move.stop.signal});
  }
  img.addEventListener('load', () => {
    if (img.src !== before && move.shown === null) move.shown = performance.now();
  }, {signal: move.stop.signal});
  root.courseMove = move;
}"""
READ_TIMER = """root => {
  const move = root.courseMove;
  move.stop.abort();
  return move.start === null ? null : (move.shown - move.start) / 1000;
}"""


def timed_move(figure, move, what: str, notebook: str) -> None:
    """Do ``move()`` on the figure's controls; the figure's image must change; its latency goes to LATENCIES."""
    handle = figure.element_handle()
    figure.evaluate(ARM_TIMER)
    move()
    try:
        figure.page.wait_for_function("root => root.courseMove.shown !== null", arg=handle, polling="raf",
                                      timeout=10_000)
    except PlaywrightTimeout:
        raise AssertionError(f"the figure did not change after {what}") from None
    seconds = figure.evaluate(READ_TIMER)
    assert seconds is not None, f"{what} sent no input event to the figure"
    LATENCIES.append({"notebook": notebook, "move": what, "ms": round(seconds * 1e3, 1)})


# What a learner types into a live figure's text box (notebook 08's "type your own sentence"), and the words the
# readout under the figure must then show (English, Chinese edition): a translation, then an unknown word.
TYPED = [("The small dog sees the red car in the park.", ("→", "→")),
         ("The zebra eats fish", ("does not know the word 'zebra'", "模型不认识这些词：'zebra'")),
         ("What does the cat eat?", ("→", "→"))]
# the text boxes of other notebooks (09's head explorers: a pretrained model reads any text, so no word is
# unknown there): each typed sentence must change the picture and leave no traceback; tests/browser/
# test_real_heads.py checks what their readouts say
TYPED_ANYWHERE = [("The cat sat on the mat.", None), ("", None), ("The small dog sees the red car.", None)]


def type_into(figure, notebook: str) -> int:
    """Type each sentence of TYPED into each text box of the figure and press Enter: the image must change and
    the readout must say what TYPED expects, with no traceback. Returns the number of moves."""
    moves = 0
    for box in figure.locator(".widget-text input").all():
        for text, says in TYPED if "08_" in notebook else TYPED_ANYWHERE:
            says = says and says[notebook.startswith("zh/")]

            def enter(box=box, text=text):
                box.fill(text)
                box.press("Enter")

            timed_move(figure, enter, f"typing {text!r}", notebook)
            readout = figure.locator(".widget-html").last
            if says:
                readout.filter(has_text=says).wait_for(timeout=10_000)
            assert "Traceback" not in readout.inner_text()
            moves += 1
    return moves


def move_controls(figure, notebook: str) -> int:
    """Move every control of one live figure away and back (each slider two steps each way, each dropdown to
    two other options and back, each text box typed into, each toggle button on and the first one again); every
    move must change the image. Returns the number of moves."""
    moves = 0
    for slider in figure.locator(".widget-slider .noUi-handle").all():
        room = float(slider.get_attribute("aria-valuemax")) - float(slider.get_attribute("aria-valuenow"))
        away, back = ("ArrowRight", "ArrowLeft") if room >= 2 else ("ArrowLeft", "ArrowRight")
        for key in (away, away, back, back):
            slider.focus()
            timed_move(figure, partial(slider.press, key), f"pressing {key} on a slider", notebook)
            moves += 1
    for select in figure.locator("select").all():
        options = select.locator("option").all_inner_texts()
        first = select.evaluate("s => s.options[s.selectedIndex].text")
        for option in [o for o in options if o != first][:2] + [first]:
            timed_move(figure, partial(select.select_option, label=option), f"choosing {option!r}", notebook)
            moves += 1
    moves += type_into(figure, notebook)
    buttons = figure.locator(".widget-toggle-button").all()
    active = [b for b in buttons if "mod-active" in (b.get_attribute("class") or "")]
    for button in [b for b in buttons if b not in active] + active:
        timed_move(figure, button.click, "clicking a toggle button", notebook)
        moves += 1
    return moves


def check_notebook(lab, browser, name: str) -> None:
    """Open ``name`` (e.g. "03_scaled_dot_product" or "zh/03_scaled_dot_product"), Run All, check every cell,
    move every live figure's controls, try one exercise, take a screenshot."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    blocked = block_non_loopback(context)  # a notebook must fetch nothing from the network: no CDN, no font
    page = context.new_page()
    console_errors: list[str] = []
    page.on("console", lambda message: console_errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: console_errors.append(str(error)))
    try:
        page.goto(f"{lab.url}/lab/tree/{name}.ipynb?token={lab.token}&reset")
        page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=60_000)
        wait_idle(page, 60_000)
        time.sleep(1.0)  # the kernel reports idle once right after it starts: let it settle
        wait_idle(page, 60_000)

        run_all(page)
        expected = expected_prompts(name, lab.root)
        # Done when no cell is queued or running ([*]) and some cell has a number: a cell that stops the run or a
        # prompt that is missing then fails at once on the assert below, not after the whole timeout.
        page.wait_for_function(
            f"() => {{ const p = {PROMPT_TEXTS};"
            " return !p.includes('[*]:') && p.some(t => /^\\[\\d+\\]:$/.test(t)); }",
            timeout=RUN_TIMEOUT_MS,
        )
        wait_idle(page, RUN_TIMEOUT_MS)
        shown = prompts(page)  # (this module's asserts are not rewritten by pytest: the message says it all)
        assert shown == expected, f"every code cell ran once, in order: the page shows {shown}, not {expected}"
        # Run All runs no solution: the only [x] on the page are the demonstrations' own (a check of the course's
        # code), as stored; tests/test_notebook_hygiene.py proves no stored exercise output holds one
        solved = page.locator(".jp-OutputArea-output", has_text="[x] ").count()
        assert solved == stored_passes(name, lab.root), "Run All marks no exercise solved"

        tracebacks = page.locator(".jp-OutputArea-output", has_text="Traceback (most recent call last)")
        assert tracebacks.count() == 0, tracebacks.first.inner_text()[:2000]

        close_dialogs(page)  # a dialog once covered a cell, and a click on it timed out
        figures = page.locator(".course-live-figure")
        for index in range(figures.count()):
            figure = figures.nth(index)
            figure.scroll_into_view_if_needed()
            page.wait_for_function("e => e.querySelector('img') && e.querySelector('img').src",
                                   arg=figure.element_handle())
            assert move_controls(figure, name) >= 1, f"live figure {index} has no control that redraws it"
        # the client-side explorers (helpers.explorer): every control, by keyboard, each frame equal to Python's data
        explorers = page.locator(".jp-OutputArea .course-explorer")
        stored = stored_explorers(NOTEBOOK_DIR / f"{name}.ipynb")
        assert explorers.count() == len(stored), f"{explorers.count()} explorers shown, the notebook has {len(stored)}"
        for index, data in enumerate(stored):
            root = explorers.nth(index)
            root.scroll_into_view_if_needed()
            ms: list[dict] = []
            problems = explorer_problems(page, root, data, ms)
            assert not problems, f"explorer {index}: " + "; ".join(problems[:5])
            EXPLORER_LATENCIES.append({"host": "jupyterlab", "page": name, "explorer": index, "ms": ms})
        if name.split("/")[-1][:2] in TRIES:
            close_dialogs(page)
            try_an_exercise(page, name, lab.root)
            wait_idle(page, RUN_TIMEOUT_MS)
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{name.replace('/', '_')}.png"), full_page=False)
        assert not console_errors, console_errors
        assert not blocked, f"the notebook asked the network for {blocked}"
    finally:
        context.close()
        shut_down_kernel(lab, name)


def shut_down_kernel(lab, name: str) -> None:
    """Stop the notebook's kernel through the server's REST API, so that kernels do not pile up."""
    sessions = f"{lab.url}/api/sessions"
    headers = {"Authorization": f"token {lab.token}"}
    with urllib.request.urlopen(urllib.request.Request(sessions, headers=headers), timeout=10) as response:
        found = [s["id"] for s in json.loads(response.read()) if s["path"].endswith(f"{name}.ipynb")]
    for session in found:
        request = urllib.request.Request(f"{sessions}/{session}", headers=headers, method="DELETE")
        urllib.request.urlopen(request, timeout=30).close()
