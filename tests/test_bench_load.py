"""`make bench` loads the machine itself: one CPU burner per core, started and stopped by pid (issue 18).

A tiny run: one burner for about a second. Nothing here measures speed; that is `make bench`'s job.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "benchmarks" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cpu_ticks(pid: int) -> int:
    """User + system CPU time of ``pid`` in clock ticks, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def running_burners(bench) -> list[int]:
    """Pids of this process's children that run the benchmark's burner."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if int(stat[1]) == os.getpid() and bench.BURNER in cmdline:
                pids.append(int(entry.name))
    return pids


pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")


def test_cpu_load_starts_burners_that_burn_and_stops_every_one(bench):
    with bench.cpu_load(1) as burners:
        assert len(burners) == 1 and burners[0].poll() is None
        assert running_burners(bench) == [burners[0].pid]
        before = cpu_ticks(burners[0].pid)
        time.sleep(0.5)
        assert cpu_ticks(burners[0].pid) > before, "a burner uses CPU"
    assert burners[0].returncode is not None, "stopped and waited for"
    assert running_burners(bench) == []


def test_burners_stop_even_when_the_block_fails(bench):
    with pytest.raises(RuntimeError, match="measure failed"), bench.cpu_load(1) as burners:
        raise RuntimeError("measure failed")
    assert burners[0].returncode is not None and running_burners(bench) == []


def test_a_burner_that_ignores_sigterm_is_killed(bench):
    stubborn = subprocess.Popen([sys.executable, "-c", "import signal, time\n"
                                 "signal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\n"
                                 "time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    assert stubborn.stdout.readline().strip() == "ready"
    bench.stop_burners([stubborn], grace=0.5)
    assert stubborn.returncode == -9


def test_idle_and_loaded_measures_once_without_and_once_with_the_load(bench):
    seen = bench.idle_and_loaded(lambda: len(running_burners(bench)), count=2)
    assert seen == (0, 2)
    assert running_burners(bench) == []


@pytest.mark.parametrize("count", [0, -1, 1.5, True])
def test_the_burner_count_is_validated(bench, count):
    with pytest.raises(ValueError, match="count must be a positive int"):
        bench.start_burners(count)


def test_the_load_section_reports_the_ratio(bench):
    section = "\n".join(bench.load_section([("whole notebook series", 90.0, 135.0)], [("00_start_here", 3.0, 4.5)]))
    assert "## 6. Idle vs loaded" in section
    assert "| whole notebook series | 90.0 | 135.0 | 1.50x |" in section
    assert "| 00_start_here | 3.0 | 4.5 | 1.50x |" in section
    assert bench.GOALS["whole notebook series with one CPU burner per core / idle"] == (2.0, "x")
