"""The course needs no network at run time: a notebook runs in a kernel whose process cannot reach another host.

The kernel starts with tests/offline_guard/ first on PYTHONPATH, so its sitecustomize.py refuses (before any
packet is sent) every socket connection and name lookup that is not to this machine. The kernel's own ZMQ
sockets are loopback and keep working. A tiny in-memory notebook shows that the guard really refuses
192.0.2.1 (TEST-NET: never routed) and still lets loopback through.
"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
GUARD = ROOT / "tests" / "offline_guard"
NOTEBOOK = ROOT / "notebooks" / "02_qkv_toy_matrix.ipynb"
GUARD_IS_ACTIVE = (
    "import socket\n"
    "assert socket.socket.connect.__name__ == '_guarded_connect', 'the offline guard is not installed'\n"
    "print('offline guard active')"
)


def offline_env() -> dict[str, str]:
    """This process's environment with the guard, then the repository, first on PYTHONPATH."""
    path = [str(GUARD), str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(path), OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))


def run_offline(notebook: nbformat.NotebookNode, cwd: Path = ROOT / "notebooks") -> nbformat.NotebookNode:
    client = NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(cwd)}})
    client.execute(env=offline_env())
    return notebook


def stdout(notebook: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for c in notebook.cells for o in c.get("outputs", []) if o.output_type == "stream")


def test_the_guard_refuses_another_host_and_lets_loopback_through():
    cells = [
        GUARD_IS_ACTIVE,
        "try:\n"
        "    socket.create_connection(('192.0.2.1', 80), timeout=30)\n"
        "except socket.NetworkBlockedError as error:\n"
        "    print('refused:', error)\n"
        "else:\n"
        "    raise AssertionError('a connection to 192.0.2.1 was not refused')",
        "try:\n"
        "    socket.getaddrinfo('pypi.org', 443)\n"
        "except socket.NetworkBlockedError as error:\n"
        "    print('refused:', error)",
        "server = socket.socket()\nserver.bind(('127.0.0.1', 0))\nserver.listen()\n"
        "client = socket.create_connection(server.getsockname(), timeout=5)\n"
        "peer, _ = server.accept()\nclient.sendall(b'ok')\nprint('loopback says', peer.recv(2).decode())",
    ]
    notebook = run_offline(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]))
    out = stdout(notebook)
    assert "offline guard active" in out
    assert "refused: offline guard: no network for this process (connection to ('192.0.2.1', 80) refused)" in out
    assert "refused: offline guard: no network for this process (name lookup of 'pypi.org' refused)" in out
    assert "loopback says ok" in out


def test_a_failing_cell_fails_the_run():
    """run_offline must not swallow errors, or the notebook test below would prove nothing."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import urllib.request\nurllib.request.urlopen('http://192.0.2.1/', timeout=30)")])
    with pytest.raises(CellExecutionError, match="offline guard: no network"):
        run_offline(notebook)


def test_a_course_notebook_runs_with_networking_disabled():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(GUARD_IS_ACTIVE))
    run_offline(notebook)  # raises CellExecutionError on any failing cell
    assert "offline guard active" in stdout(notebook)
    assert all(c.execution_count for c in notebook.cells if c.cell_type == "code")
