"""The course site, opened page by page in Chromium with every request to another host blocked.

The site is built (or brought up to date) into build/site/ as `make site` does, served by `python -m http.server`
on 127.0.0.1 (a free port, stopped by its pid), and every page is opened through Playwright in Debian's Chromium.
Each page must: request nothing outside 127.0.0.1, log no console error, have no broken image, typeset all its
math with the bundled MathJax, and (a notebook page) show at least as many figures as its notebook has image
outputs.
Every explorer (helpers/explorer.py) on a notebook page of either edition is moved by keyboard alone through
every option of each of its controls, and each frame it draws must equal the page's own data to 1e-6.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from explorer_moves import explorer_problems
from offline import block_non_loopback, is_loopback, page_with_errors
from playwright.sync_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
_spec = importlib.util.spec_from_file_location("course_site", ROOT / "site" / "_ext" / "course_site.py")
course_site = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(course_site)

pytestmark = pytest.mark.browser


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def image_outputs(notebook: Path) -> int:
    """How many image outputs (png, jpeg, svg) the notebook's stored cells carry."""
    cells = json.loads(notebook.read_text())["cells"]
    kinds = ("image/png", "image/jpeg", "image/svg+xml")
    return sum(any(k in output.get("data", {}) for k in kinds) for c in cells for output in c.get("outputs", []))


@pytest.fixture(scope="module")
def site() -> Iterator[tuple[str, Path]]:
    folder = course_site.build()
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(folder)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{url}/index.html", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("python -m http.server did not start")
            time.sleep(0.2)
        yield url, folder
    finally:
        if server.poll() is None:
            os.kill(server.pid, signal.SIGTERM)  # stopped by its own pid
        server.wait(timeout=10)


def pages(folder: Path) -> list[str]:
    """Every page of the site (the theme's _static/*.html are templates, not pages)."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.html")
                  if p.relative_to(folder).parts[0] != "_static")


def test_every_page_loads_offline_with_its_figures_and_math(site, browser):
    url, folder = site
    names = pages(folder)
    notebooks = [f"notebooks/{p.stem}.html" for p in course_site.course_notebooks()]
    notebooks += [f"notebooks/zh/{p.stem}.html" for p in course_site.course_notebooks("zh")]
    assert set(notebooks) <= set(names), "every notebook has its page"
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    blocked = block_non_loopback(context)
    problems: list[str] = []
    try:
        for name in names:
            page, errors = page_with_errors(context)
            before = len(blocked)
            page.goto(f"{url}/{name}", wait_until="load")
            page.wait_for_function("() => [...document.images].every(i => i.complete)")
            page.evaluate("() => window.MathJax && MathJax.startup ? MathJax.startup.promise : null")
            state = page.evaluate("""() => ({
                images: [...document.images].map(
                    i => ({src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0})),
                // a picture, or a client-side explorer (helpers.explorer) mounted in place of its picture
                figures: document.querySelectorAll('.cell_output img').length
                    + document.querySelectorAll('.cell_output [data-course-explorer][data-mounted]').length,
                explorers: document.querySelectorAll('.cell_output [data-course-explorer]').length,
                mounted: document.querySelectorAll('.cell_output [data-course-explorer][data-mounted] svg').length,
                math: document.querySelectorAll('.math').length,
                typeset: document.querySelectorAll('.math mjx-container, mjx-container.MathJax').length,
                mathErrors: document.querySelectorAll('mjx-merror').length,
            })""")
            page.close()
            broken = [i["src"] for i in state["images"] if not i["ok"]]
            if broken:
                problems.append(f"{name}: broken images {broken}")
            if errors:
                problems.append(f"{name}: console errors {errors}")
            if len(blocked) > before:
                problems.append(f"{name}: requests to other hosts {blocked[before:]}")
            if state["typeset"] < state["math"] or state["mathErrors"]:
                problems.append(f"{name}: {state['math']} math elements, {state['typeset']} typeset, "
                                f"{state['mathErrors']} MathJax errors")
            if state["explorers"] and not state["mounted"]:
                problems.append(f"{name}: {state['explorers']} explorers, none mounted (their module did not run)")
            if name in notebooks:
                source = ROOT / "notebooks" / Path(name).with_suffix(".ipynb").relative_to("notebooks")
                expected = image_outputs(source)
                if state["figures"] < expected:
                    problems.append(f"{name}: {state['figures']} figures shown, the notebook has {expected}")
    finally:
        context.close()
    assert not problems, "\n".join(problems)
    assert not blocked, blocked


def test_every_explorer_moves_on_the_site_in_both_editions(site, browser):
    url, folder = site
    editions = {"en": sorted(folder.glob("notebooks/*.html")), "zh": sorted(folder.glob("notebooks/zh/*.html"))}
    found = dict.fromkeys(editions, 0)
    problems: list[str] = []
    timings: list[dict] = []
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    blocked = block_non_loopback(context)
    try:
        for edition, files in editions.items():
            for file in files:
                if "data-course-explorer" not in file.read_text(encoding="utf-8"):
                    continue  # no explorer: not opened
                name = file.relative_to(folder).as_posix()
                page, errors = page_with_errors(context)
                before = len(blocked)
                page.goto(f"{url}/{name}", wait_until="load")
                explorers = page.locator(".cell_output [data-course-explorer]")
                try:
                    page.wait_for_function("""() => Array.from(
                        document.querySelectorAll('.cell_output [data-course-explorer]'))
                        .every(e => e.querySelector('.course-explorer[data-frame] svg.cx-svg'))""", timeout=20_000)
                except PlaywrightTimeout:
                    problems.append(f"{name}: not every explorer was mounted")
                else:
                    for e in range(explorers.count()):
                        found[edition] += 1
                        explorer = explorers.nth(e)
                        data = explorer.evaluate("""el => JSON.parse(
                            el.querySelector('script[type="application/json"]').textContent)""")
                        ms: list[dict] = []
                        problems += [f"{name} explorer {e}: {p}" for p in
                                     explorer_problems(page, explorer.locator(".course-explorer"), data, ms)]
                        timings.append({"host": "site", "page": name, "explorer": e, "ms": ms})
                page.close()
                if errors:
                    problems.append(f"{name}: console errors {errors}")
                if len(blocked) > before:
                    problems.append(f"{name}: requests to other hosts {blocked[before:]}")
    finally:
        context.close()
    SCREENSHOTS.mkdir(exist_ok=True)  # each move's key-to-paint time, for `make bench`
    (SCREENSHOTS / "explorer-latencies-site.json").write_text(json.dumps(timings))
    assert not problems, "\n".join(problems)
    assert not blocked, blocked
    assert all(found.values()), f"explorers found per edition: {found} (the test would prove nothing)"


def test_math_is_typeset_somewhere(site, browser):
    """The MathJax check above must not pass vacuously: the course's pages do carry math, and it is typeset."""
    url, folder = site
    with_math = [n for n in pages(folder) if 'class="math' in (folder / n).read_text()]
    assert with_math, "no page has math: the MathJax check would prove nothing"
    context = browser.new_context()
    blocked = block_non_loopback(context)
    page = context.new_page()
    page.goto(f"{url}/{with_math[0]}", wait_until="networkidle")
    page.evaluate("() => MathJax.startup.promise")
    assert page.locator("mjx-container").count() > 0
    context.close()
    assert not blocked, blocked


def test_a_notebook_page_prints_as_the_lesson_alone(site, browser, tmp_path):
    """The print stylesheet (site/_static/course.css): printed to PDF, a notebook page keeps its text, code and
    figures and drops the navigation, the header and the sidebars."""
    url, _ = site
    context = browser.new_context()
    blocked = block_non_loopback(context)
    page = context.new_page()
    page.goto(f"{url}/notebooks/zh/03_scaled_dot_product.html", wait_until="networkidle")
    chrome = ".bd-sidebar-primary, .bd-header, .bd-sidebar-secondary, .prev-next-area"
    assert page.locator(chrome).first.is_visible(), "the screen shows the navigation"
    page.emulate_media(media="print")
    hidden = page.evaluate(f"""() => Array.from(document.querySelectorAll('{chrome}'))
        .every(e => getComputedStyle(e).display === 'none')""")
    assert hidden, "printed, the navigation is left out"
    assert page.locator("article img").first.is_visible() and page.locator("article pre").first.is_visible()
    wide = page.evaluate("""() => Array.from(document.querySelectorAll('article pre'))
        .filter(e => e.scrollWidth > e.clientWidth + 1).length""")
    assert wide == 0, f"{wide} code or output blocks would be cut at the page edge"
    pdf = page.pdf(path=str(tmp_path / "03.pdf"), format="A4")
    assert pdf[:4] == b"%PDF" and len(pdf) > 50_000
    context.close()
    assert not blocked, blocked


def test_the_blocker_stops_and_records_a_request_to_another_host(browser):
    """192.0.2.1 is TEST-NET (never routed): the request is aborted in the browser and recorded."""
    assert is_loopback("http://127.0.0.1:8000/x") and is_loopback("http://[::1]/") and is_loopback("data:,x")
    assert not is_loopback("https://cdn.jsdelivr.net/npm/mathjax") and not is_loopback("http://192.0.2.1/")
    context = browser.new_context()
    blocked = block_non_loopback(context)
    page = context.new_page()
    page.set_content('<img src="http://192.0.2.1/figure.png"><script src="https://192.0.2.1/x.js"></script>')
    page.wait_for_load_state("networkidle")
    width = page.evaluate("() => document.images[0].naturalWidth")
    context.close()
    assert sorted(blocked) == ["GET http://192.0.2.1/figure.png", "GET https://192.0.2.1/x.js"]
    assert width == 0


def test_the_blocker_records_a_websocket_to_another_host_and_the_browser_fails_it(browser):
    """A WebSocket is not routed (that would slow every kernel message): Chromium's dead proxy fails it and the
    page's websocket event records it (the kernels' loopback WebSockets in the JupyterLab tests bypass the proxy)."""
    context = browser.new_context()
    blocked = block_non_loopback(context)
    page = context.new_page()
    page.set_content("<p>offline</p>")
    outcome = page.evaluate("""() => new Promise(done => {
      const socket = new WebSocket('ws://192.0.2.1/kernel');
      socket.onopen = () => done('open');
      socket.onerror = () => done('error');
    })""")
    context.close()
    assert outcome == "error"
    assert blocked == ["WEBSOCKET ws://192.0.2.1/kernel"]
