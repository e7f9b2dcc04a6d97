"""`make bench`: measure the course's speed, one run, and write benchmarks/RESULTS.md.

Each comparison runs its two sides in the same process, one after the other, with torch.utils.benchmark
(median of repeated blocks). Nothing here is a test: the numbers are reported beside the goals.

  1. helpers' fast-path attention vs F.scaled_dot_product_attention
  2. one training step of helpers.Transformer vs nn.Transformer, same configuration
  3. time and memory of naive vs fused attention against sequence length
  4. execution time of every notebook (run on a copy, in a fresh kernel), and of the whole series
  5. the N = 6 training of notebook 08 to 99 % exact match (read from that run)
  6. median latency from a widget move to the new image in JupyterLab (from the browser tests)
  7. idle vs loaded: the whole series, 08's training and 40 of its steps (1 and 2 threads) again with one
     CPU-burning process per core, which the benchmark starts and stops itself (by pid)
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn
from torch.profiler import ProfilerActivity, profile
from torch.utils.benchmark import Timer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from execute_notebooks import execute  # noqa: E402

from helpers.attention import (  # noqa: E402
    MultiHeadAttention,
    causal_mask,
    fused_scaled_dot_product_attention,
    scaled_dot_product_attention,
)
from helpers.reproducibility import seed_everything, threads  # noqa: E402
from helpers.seq2seq import Seq2SeqTransformer  # noqa: E402
from helpers.tasks import make_batch  # noqa: E402
from helpers.training import train  # noqa: E402
from helpers.transformer import Transformer  # noqa: E402

#: measure -> (the most it may be, its unit); "x" is a ratio to PyTorch
GOALS = {
    "helpers fast-path attention / F.scaled_dot_product_attention (worst case)": (1.1, "x"),
    "helpers Transformer train step / nn.Transformer": (1.1, "x"),
    "median widget move to new image in JupyterLab": (100.0, "ms"),
    "whole notebook series, fresh kernels": (180.0, "s"),
    "N = 6 training of notebook 08 to >= 99 % exact match": (60.0, "s"),
    "whole notebook series with one CPU burner per core / idle": (2.0, "x"),
}


def median(fn, *args) -> float:
    """Median seconds per call, by torch.utils.benchmark."""
    return Timer("fn(*args)", globals={"fn": fn, "args": args}).blocked_autorange(min_run_time=1.0).median


def allocated_bytes(fn, *args) -> int:
    """Bytes the CPU allocator handed out during one call (torch.profiler)."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn(*args)
    return sum(max(event.cpu_memory_usage, 0) for event in prof.key_averages())


def attention_fast_path() -> list[tuple[str, float, float]]:
    rows = []
    with torch.no_grad():
        q, k, v = torch.randn(3, 8, 8, 256, 64)
        mask = causal_mask(256)
        rows.append(("no mask", median(fused_scaled_dot_product_attention, q, k, v),
                     median(F.scaled_dot_product_attention, q, k, v)))
        rows.append(("causal mask", median(fused_scaled_dot_product_attention, q, k, v, mask),
                     median(lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask))))
        mha = MultiHeadAttention(512, 8).eval()
        reference = nn.MultiheadAttention(512, 8, batch_first=True).eval()
        x = torch.randn(8, 256, 512)
        rows.append(("MultiHeadAttention (need_weights=False) vs nn.MultiheadAttention",
                     median(lambda: mha(x, x, x, need_weights=False)),
                     median(lambda: reference(x, x, x, need_weights=False))))
    return rows


def train_step() -> tuple[float, float]:
    torch.manual_seed(0)
    config = dict(d_model=128, nhead=4, num_encoder_layers=3, num_decoder_layers=3, dim_feedforward=256)
    reference = nn.Transformer(**config, dropout=0.1, batch_first=True)
    ours = Transformer.from_torch(reference)
    src, tgt = torch.randn(32, 32, 128), torch.randn(32, 31, 128)
    causal = causal_mask(31)

    def step(model, optimizer, forward):
        optimizer.zero_grad(set_to_none=True)
        forward(model).pow(2).mean().backward()
        optimizer.step()

    opt_ours, opt_ref = torch.optim.Adam(ours.parameters()), torch.optim.Adam(reference.parameters())
    ours.train()
    reference.train()
    t_ours = median(step, ours, opt_ours, lambda m: m(src, tgt, tgt_mask=causal))
    t_ref = median(step, reference, opt_ref, lambda m: m(src, tgt, tgt_mask=~causal))
    return t_ours, t_ref


def attention_vs_length() -> list[tuple[int, float, float, int, int]]:
    rows = []
    with torch.no_grad():
        for length in (256, 512, 1024, 2048, 4096):
            q, k, v = torch.randn(3, 1, 4, length, 64)
            rows.append((length, median(scaled_dot_product_attention, q, k, v),
                         median(F.scaled_dot_product_attention, q, k, v),
                         allocated_bytes(scaled_dot_product_attention, q, k, v),
                         allocated_bytes(F.scaled_dot_product_attention, q, k, v)))
    return rows


def notebooks() -> tuple[list[tuple[str, float]], float | None]:
    rows, training = [], None
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "notebooks"
        shutil.copytree(ROOT / "notebooks", copy)
        for path in sorted(copy.glob("[0-9][0-9]_*.ipynb")):
            rows.append((path.stem, execute(path, notebooks_dir=copy)))
            if path.stem.startswith("08_"):
                match = re.search(r"(\d+) steps in (\d+(?:\.\d+)?) s", path.read_text())
                training = float(match.group(2)) if match else None
    return rows, training


def widget_latencies() -> list[dict]:
    """Run the browser tests; one record per widget move (notebook, move, ms), as they wrote them."""
    latencies = ROOT / "tests" / "browser" / "screenshots" / "latencies.json"
    latencies.unlink(missing_ok=True)  # never report an earlier run's numbers
    subprocess.run([sys.executable, "-m", "pytest", "tests/browser", "-q", "-p", "no:nbval", "-o", "addopts="],
                   cwd=ROOT, check=False)
    return json.loads(latencies.read_text()) if latencies.exists() else []


# --- 7. idle vs loaded ------------------------------------------------------------------------------------------

#: the load: a Python process that spins forever, one per core
BURNER = "while True: pass"


def start_burners(count: int | None = None) -> list[subprocess.Popen]:
    """Start ``count`` CPU-burning processes (default: one per core); stop them with :func:`stop_burners`."""
    count = (os.cpu_count() or 1) if count is None else count
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be a positive int; got {count!r}")
    return [subprocess.Popen([sys.executable, "-c", BURNER], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL) for _ in range(count)]


def stop_burners(burners: list[subprocess.Popen], grace: float = 5.0) -> None:
    """Stop each burner by its pid: SIGTERM, then SIGKILL after ``grace`` seconds; wait for every one."""
    for burner in burners:
        if burner.poll() is None:
            burner.terminate()
    for burner in burners:
        try:
            burner.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            burner.kill()
            burner.wait()


@contextmanager
def cpu_load(count: int | None = None) -> Iterator[list[subprocess.Popen]]:
    """The ``with`` block runs while ``count`` burners (default: one per core) keep every core busy."""
    burners = start_burners(count)
    try:
        time.sleep(0.5)  # let them reach full speed
        yield burners
    finally:
        stop_burners(burners)


def idle_and_loaded(measure: Callable[[], object], count: int | None = None) -> tuple[object, object]:
    """``measure()`` on the machine as it is, then again under :func:`cpu_load`; returns (idle, loaded)."""
    idle = measure()
    with cpu_load(count):
        loaded = measure()
    return idle, loaded


def training_steps(num_threads: int, steps: int = 40) -> float:
    """Seconds for ``steps`` training steps of notebook 08's N = 6 model (d_model 32, batch 128) on ``num_threads``."""
    seed_everything(0, num_threads=num_threads)
    model = Seq2SeqTransformer(13, d_model=32, num_heads=4, num_layers=6, d_ff=64, dropout=0.0, norm_first=True)
    generator = torch.Generator().manual_seed(0)
    batches = lambda: make_batch("reverse", 128, min_length=3, max_length=6, vocab_size=13, generator=generator)
    with threads(num_threads):
        return train(model, batches, steps=steps, lr=3e-3, warmup=10, progress=False).seconds


def load_rows(series_idle: list[tuple[str, float]], training_idle: float | None,
              ) -> tuple[list[tuple[str, float, float]], list[tuple[str, float, float]], float]:
    """Idle vs loaded: (summary rows, per-notebook rows, series ratio). Each row: (what, idle s, loaded s).

    ``series_idle`` and ``training_idle`` are what :func:`notebooks` measured on the idle machine; the series
    runs again here under :func:`cpu_load`.
    """
    with cpu_load():
        series_loaded, training_loaded = notebooks()
    steps_1 = idle_and_loaded(lambda: training_steps(1))
    steps_2 = idle_and_loaded(lambda: training_steps(2))
    total_idle, total_loaded = (sum(s for _, s in series) for series in (series_idle, series_loaded))
    rows = [("whole notebook series", total_idle, total_loaded)]
    if training_idle is not None and training_loaded is not None:
        rows.append(("N = 6 training of notebook 08 (in the series)", training_idle, training_loaded))
    rows += [("40 steps of 08's model, 1 thread (the course's choice)", *steps_1),
             ("40 steps of 08's model, 2 threads", *steps_2)]
    per_notebook = [(name, idle, loaded) for (name, idle), (_, loaded) in zip(series_idle, series_loaded,
                                                                               strict=True)]
    return rows, per_notebook, total_loaded / total_idle


def load_section(rows: list[tuple[str, float, float]], per_notebook: list[tuple[str, float, float]]) -> list[str]:
    """The "idle vs loaded" section of RESULTS.md."""
    table = lambda items: [f"| {name} | {idle:.1f} | {loaded:.1f} | {loaded / idle:.2f}x |"
                           for name, idle, loaded in items]
    return [
        "## 6. Idle vs loaded (one CPU-burning process per core)",
        "",
        f"Each measure twice: on the machine as it is, then with {os.cpu_count()} processes spinning in",
        "`while True: pass` (one per core), started and stopped by the benchmark. Goal: loaded <= 2x idle.",
        "",
        "| measure | idle (s) | loaded (s) | loaded / idle |",
        "|---|---|---|---|",
        *table(rows),
        "",
        "| notebook | idle (s) | loaded (s) | loaded / idle |",
        "|---|---|---|---|",
        *table(per_notebook),
        "",
    ]


def summary_row(measure: str, value: float | None) -> str:
    """One row of the summary: the value and the goal in the goal's unit, and whether the value meets it."""
    limit, unit = GOALS[measure]
    show = (lambda v: f"{v:.2f}x") if unit == "x" else (lambda v: f"{v:.0f} {unit}")
    verdict = "n/a" if value is None else ("meets the goal" if value <= limit else "misses the goal")
    return f"| {measure} | {'n/a' if value is None else show(value)} | <= {show(limit)} | {verdict} |"


def main() -> None:
    fast = attention_fast_path()
    t_ours, t_ref = train_step()
    lengths = attention_vs_length()
    series, training = notebooks()
    load, load_per_notebook, load_ratio = load_rows(series, training)
    moves = widget_latencies()
    latency = statistics.median(m["ms"] for m in moves) if moves else None
    by_notebook: dict[str, list[float]] = {}
    for move in moves:
        by_notebook.setdefault(move["notebook"], []).append(move["ms"])
    total = sum(seconds for _, seconds in series)
    fast_ratio = max(a / b for _, a, b in fast[:2])
    train_ratio = t_ours / t_ref
    values = [fast_ratio, train_ratio, latency, total, training, load_ratio]  # in the order of GOALS
    lines = [
        "# Benchmark results",
        "",
        f"Written by `make bench` on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; "
        f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} threads, "
        f"torch {torch.__version__}, Python {platform.python_version()}.",
        "One run; each comparison measured side by side in one process (torch.utils.benchmark, median).",
        "",
        "## Summary against the goals",
        "",
        "| measure | value | goal | |",
        "|---|---|---|---|",
        *[summary_row(measure, value) for measure, value in zip(GOALS, values, strict=True)],
        "",
        "## 1. Fast-path attention (batch 8, 8 heads, L = 256, d_head = 64)",
        "",
        "| case | helpers (ms) | PyTorch (ms) | ratio |",
        "|---|---|---|---|",
        *[f"| {name} | {a * 1e3:.3f} | {b * 1e3:.3f} | {a / b:.2f}x |" for name, a, b in fast],
        "",
        "## 2. One training step (d_model 128, 4 heads, 3 + 3 layers, batch 32, L 32, Adam)",
        "",
        "| model | ms per step |",
        "|---|---|",
        f"| helpers.Transformer (fused path in training mode) | {t_ours * 1e3:.1f} |",
        f"| nn.Transformer | {t_ref * 1e3:.1f} |",
        f"| ratio | {train_ratio:.2f}x |",
        "",
        "## 3. Attention against sequence length (batch 1, 4 heads, d_head 64)",
        "",
        "| L | naive (ms) | fused (ms) | naive allocated (MiB) | fused allocated (MiB) |",
        "|---|---|---|---|---|",
        *[f"| {n} | {a * 1e3:.2f} | {b * 1e3:.2f} | {ma / 2**20:.1f} | {mb / 2**20:.1f} |"
          for n, a, b, ma, mb in lengths],
        "",
        "## 4. Notebooks (Restart & Run All in a fresh kernel, on a copy)",
        "",
        "| notebook | seconds |",
        "|---|---|",
        *[f"| {name} | {seconds:.1f} |" for name, seconds in series],
        f"| **whole series** | **{total:.1f}** |",
        "",
        "## 5. Widget moves in JupyterLab (Chromium, the browser tests)",
        "",
        "Timed in the page's clock: from the move's first input event (key, pointer, selection) to the `load` of",
        "the new image. A move redraws only the artists it changes over a cached background; a move that changes",
        "tick labels draws the whole figure.",
        "",
        "| notebook | moves | median (ms) | slowest (ms) |",
        "|---|---|---|---|",
        *[f"| {name} | {len(ms)} | {statistics.median(ms):.0f} | {max(ms):.0f} |" for name, ms in by_notebook.items()],
        f"| **all** | **{len(moves)}** | **{latency:.0f}** | **{max(m['ms'] for m in moves):.0f}** |"
        if moves else "| all | 0 | n/a | n/a |",
        "",
        *load_section(load, load_per_notebook),
    ]
    (ROOT / "benchmarks" / "RESULTS.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
