"""`make lab` prints the URL and little else, and JupyterLab shows no news toast (issue 18).

Starts the real JupyterLab, with the Makefile's log flags, from a throw-away venv that sees this environment's
packages (so the settings written into it by tools/lab_settings.py are the ones read), on 127.0.0.1 and a free
port; starts one kernel through the REST API and talks to it over its websocket, as JupyterLab does; reads
what the server printed, stops it by its pid.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
from tornado.websocket import websocket_connect

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import lab_settings  # noqa: E402


def makefile_lab_flags() -> list[str]:
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile[makefile.index("\nlab:"):makefile.index("\n## restore")]
    return re.findall(r"--\w+\.log_level=\w+", recipe)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(url: str, method: str = "GET", body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=data, method=method), timeout=30) as response:
        return json.loads(response.read() or b"{}")


async def kernel_info(url: str) -> bool:
    """Connect to a kernel's channels as JupyterLab does; True once it answers a kernel_info_request."""
    socket_ = await websocket_connect(url)
    msg_id = uuid.uuid4().hex
    socket_.write_message(json.dumps({
        "header": {"msg_id": msg_id, "msg_type": "kernel_info_request", "username": "test",
                   "session": uuid.uuid4().hex, "version": "5.3", "date": ""},
        "parent_header": {}, "metadata": {}, "content": {}, "channel": "shell", "buffers": []}))
    try:
        while True:
            message = json.loads(await asyncio.wait_for(socket_.read_message(), 120))
            if message.get("msg_type") == "kernel_info_reply" and message["parent_header"].get("msg_id") == msg_id:
                return message["content"]["status"] == "ok"
    finally:
        socket_.close()


@pytest.fixture
def venv(tmp_path) -> Path:
    """A venv of this Python whose site-packages points at this environment's (a .pth line)."""
    prefix = tmp_path / "venv"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(prefix)],
                   check=True)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(prefix), "platbase": str(prefix)}))
    (site / "course-env.pth").write_text(sysconfig.get_path("purelib") + "\n")
    # JupyterLab's own files (its app dir is sys.prefix/share/jupyter/lab), all but the settings written below
    shared = Path(sys.prefix) / "share" / "jupyter"
    for folder in [*shared.iterdir(), *(shared / "lab").iterdir()]:
        if folder.name not in ("lab", "settings") and folder.is_dir():
            link = prefix / folder.relative_to(sys.prefix)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(folder)
    lab_settings.write_settings(prefix)
    return prefix


def test_lab_prints_the_url_and_no_kernel_warning_and_shows_no_news(venv, tmp_path):
    flags = makefile_lab_flags()
    assert "--ServerApp.log_level=WARN" in flags
    port = free_port()
    log = tmp_path / "lab.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [str(venv / "bin" / "python"), "-m", "jupyterlab", f"--notebook-dir={tmp_path}", "--no-browser",
             "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
             "--allow-root", *flags],
            stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        token = None
        for _ in range(120):
            match = re.search(rf"http://127\.0\.0\.1:{port}/lab\?token=(\w+)", log.read_text())
            if match:
                token = match.group(1)
                break
            assert server.poll() is None, log.read_text()
            time.sleep(0.5)
        assert token, f"no URL printed:\n{log.read_text()}"
        base = f"http://127.0.0.1:{port}"
        kernel = request(f"{base}/api/kernels?token={token}", "POST", {"name": "python3"})
        # the REST state stays "starting" until a client connects: connect as JupyterLab does, and ask
        assert asyncio.run(kernel_info(f"ws://127.0.0.1:{port}/api/kernels/{kernel['id']}/channels?token={token}"))
        time.sleep(1.0)
        settings = request(f"{base}/lab/api/settings/@jupyterlab/apputils-extension:notification?token={token}")
        defaults = settings["schema"]["properties"]  # the overrides become the defaults; user settings win
        assert defaults["fetchNews"]["default"] == "false", settings
        assert defaults["checkForUpdates"]["default"] is False
        printed = log.read_text()
        assert "without encryption" not in printed, printed
        lines = [line for line in printed.splitlines() if line.strip()]
        assert len(lines) <= 8, "make lab prints the URL and little else:\n" + printed
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
