"""A real JupyterLab server and a real Chromium for the browser tests.

The server serves a copy of notebooks/ (so nothing the browser does is saved into the repository), binds
127.0.0.1 on a free port with a token and --ServerApp.port_retries=0, renders every cell (windowing off),
fetches no news and checks for no update, and is stopped through its own process id. Chromium is Debian's
/usr/bin/chromium, driven by Playwright, a fresh one for each test; `make test` installs it. Without it these
tests fail: they never skip.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from offline import OFFLINE_ARGS

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import lab_settings  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", *OFFLINE_ARGS,
]


@dataclass
class Lab:
    url: str
    token: str
    root: Path
    pid: int


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_lab(base: Path, locale: str | None = None) -> Iterator[Lab]:
    """JupyterLab on a copy of notebooks/ under ``base``; ``locale`` (e.g. "zh_CN") sets its display language
    as `make lab LANG=zh` does (tools/lab_settings.py)."""
    root = base / "notebooks"
    shutil.copytree(ROOT / "notebooks", root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    settings = base / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    notices = base / "settings" / "@jupyterlab" / "apputils-extension"
    notices.mkdir(parents=True)  # no "get notified about Jupyter news?" toast over the screenshots
    (notices / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    if locale is not None:
        lab_settings.write_locale(base / "settings", locale)
    port, token = free_port(), secrets.token_hex(16)
    command = [
        sys.executable, "-m", "jupyter", "lab", "--no-browser",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={base / 'settings'}", f"--LabApp.workspaces_dir={base / 'workspaces'}",
        "--LabApp.news_url=", "--allow-root", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(base / "config"), JUPYTER_RUNTIME_DIR=str(base / "runtime"))
    log = open(base / "server.log", "w")
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"JupyterLab did not start: {(base / 'server.log').read_text()[-2000:]}")
            time.sleep(0.3)
        yield Lab(url, token, root, server.pid)
    finally:
        if server.poll() is None:
            os.kill(server.pid, signal.SIGTERM)  # stopped by its own pid, never by name
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.kill(server.pid, signal.SIGKILL)
            server.wait()
        log.close()


@pytest.fixture(scope="session")
def lab(tmp_path_factory) -> Iterator[Lab]:
    yield from serve_lab(tmp_path_factory.mktemp("lab"))


@pytest.fixture(scope="session")
def lab_zh(tmp_path_factory) -> Iterator[Lab]:
    """JupyterLab with its menus in Chinese (the language pack, as `make lab LANG=zh` starts it)."""
    yield from serve_lab(tmp_path_factory.mktemp("lab-zh"), locale="zh_CN")


@pytest.fixture
def browser():
    """A fresh Chromium for each test. One Chromium for the whole run grew slower with each notebook it had
    opened: the English run took 320 s, not 245 s, and its widget moves' median was 80 ms, not 67 ms."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
