"""`make bench`: measure the course's speed, one run, and write benchmarks/RESULTS.md.

Each comparison runs its two sides in the same process, one after the other, with torch.utils.benchmark
(median of repeated blocks). Nothing here is a test: the numbers are reported beside the goals.

  1. helpers' fast-path attention vs PyTorch's fastest equivalent (F.sdpa with is_causal=True for causal,
     nn.MultiheadAttention's fast path in eval with need_weights=False), at 1 and 2 threads; causal attention
     at L = 1024, forward and forward+backward; the fixed cost of a tiny call; achieved GFLOP/s
  2. one training step of helpers.Transformer vs nn.Transformer, same configuration
  3. time and peak memory of each attention path against sequence length; the naive masked path against a
     single masked softmax
  4. execution time of every notebook (run on a copy, in a fresh kernel), and of the whole series
  5. the N = 6 training of notebook 08 to 99 % exact match (read from that run)
  6. median latency from a widget move to the new image in JupyterLab (from the browser tests)
  7. idle vs loaded: the whole series, 08's training and 40 of its steps (1 and 2 threads) again with one
     CPU-burning process per core, which the benchmark starts and stops itself (by pid)
"""

from __future__ import annotations

import json
import math
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
from functools import partial
from pathlib import Path

import nbformat
import torch
import torch.nn.functional as F
from torch import nn
from torch.profiler import ProfilerActivity, profile
from torch.utils.benchmark import Timer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from build_notebooks import execute_file  # noqa: E402

from helpers.attention import (  # noqa: E402
    MultiHeadAttention,
    causal_mask,
    fused_scaled_dot_product_attention,
    lengths_mask,
    scaled_dot_product_attention,
)
from helpers.reproducibility import seed_everything, threads  # noqa: E402
from helpers.seq2seq import Seq2SeqTransformer  # noqa: E402
from helpers.training import train  # noqa: E402
from helpers.transformer import Transformer  # noqa: E402
from helpers.translation import TRANSLATOR, translation_task  # noqa: E402

#: torch threads of the attention measurements: every figure is measured at each, and its table says which
THREADS = (1, 2)

#: measure -> (the most it may be, its unit); "x" is a ratio to PyTorch. attention_report() gives these values.
ATTENTION_GOALS = {
    "helpers fast-path attention / PyTorch's fastest equivalent (worst case, 1 and 2 threads)": (1.1, "x"),
    "causal attention L = 1024 / F.sdpa is_causal, forward (worst of 1 and 2 threads)": (1.05, "x"),
    "causal attention L = 1024 / F.sdpa is_causal, forward+backward (worst of 1 and 2 threads)": (1.05, "x"),
    "causal attention L = 4096, extra peak memory / F.sdpa is_causal": (1.2, "x"),
    "naive masked attention / one masked softmax, time (worst of L = 256, 1024, 4096; 1 thread)": (1.1, "x"),
    "naive masked attention / one masked softmax, peak memory (worst of L = 256, 1024, 4096)": (1.1, "x"),
    "fixed cost of a tiny call, fused path / F.sdpa (no mask, 1 thread)": (2.0, "x"),
}
TRAINING = f"N = 6 translator training of notebook 08 ({TRANSLATOR['steps']} steps, 1 thread)"
GOALS = {
    **ATTENTION_GOALS,
    "helpers Transformer train step / nn.Transformer": (1.1, "x"),
    "median widget move to new image in JupyterLab": (70.0, "ms"),
    "whole notebook series, fresh kernels": (180.0, "s"),
    TRAINING: (90.0, "s"),
    "whole notebook series with one CPU burner per core / idle": (2.0, "x"),
    "largest kernel peak RSS of a notebook": (600.0, "MiB"),
}


def median(fn, *args, threads: int = 1, min_run_time: float = 1.0) -> float:
    """Median seconds per call at ``threads`` torch threads, by torch.utils.benchmark."""
    timer = Timer("fn(*args)", globals={"fn": fn, "args": args}, num_threads=threads)
    return timer.blocked_autorange(min_run_time=min_run_time).median


def allocated_bytes(fn, *args) -> int:
    """Bytes the CPU allocator handed out during one call (torch.profiler)."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn(*args)
    return sum(max(event.cpu_memory_usage, 0) for event in prof.key_averages())


def peak_bytes(fn, *args) -> int:
    """The most bytes held at once during one call, beyond what was held before it (torch.profiler)."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn(*args)
    events = sorted((e.start_ns(), e.nbytes()) for e in prof.profiler.kineto_results.events() if e.name() == "[memory]")
    held = peak = 0
    for _, change in events:
        held += change
        peak = max(peak, held)
    return peak


def one_masked_softmax(q, k, v, mask):
    """The reference of the naive path: QKᵀ/√d, one masked_fill, one softmax, times V."""
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def attention_fast_path(threads: int) -> list[tuple[str, float, float]]:
    """(case, helpers s, PyTorch s): batch 8, 8 heads, L = 256, d_head = 64, against PyTorch's fastest way."""
    rows = []
    with torch.no_grad():
        q, k, v = torch.randn(3, 8, 8, 256, 64)
        lengths = torch.randint(128, 257, (8,), generator=torch.Generator().manual_seed(0))
        padded = causal_mask(256) & lengths_mask(lengths, 256)[:, None]  # (8, 1, 256, 256)
        rows.append(("no mask", median(fused_scaled_dot_product_attention, q, k, v, threads=threads),
                     median(F.scaled_dot_product_attention, q, k, v, threads=threads)))
        rows.append(("causal: is_causal=True vs F.sdpa(is_causal=True)",
                     median(lambda: fused_scaled_dot_product_attention(q, k, v, is_causal=True), threads=threads),
                     median(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), threads=threads)))
        rows.append(("causal & padding mask vs F.sdpa(attn_mask) (no faster PyTorch way)",
                     median(fused_scaled_dot_product_attention, q, k, v, padded, threads=threads),
                     median(lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=padded), threads=threads)))
        mha = MultiHeadAttention(512, 8).eval()
        reference = nn.MultiheadAttention(512, 8, batch_first=True).eval()
        x = torch.randn(8, 256, 512)
        rows.append(("MultiHeadAttention(need_weights=False) vs nn.MultiheadAttention fast path (eval)",
                     median(lambda: mha(x, x, x, need_weights=False), threads=threads),
                     median(lambda: reference(x, x, x, need_weights=False), threads=threads)))
    return rows


def causal_long(threads: int) -> list[tuple[str, float, float]]:
    """(case, helpers s, F.sdpa is_causal s) at batch 8, 8 heads, L = 1024, d_head = 64."""
    q, k, v = (t.requires_grad_() for t in torch.randn(3, 8, 8, 1024, 64))
    mask = causal_mask(1024)

    def backward(fn):
        return lambda: fn().sum().backward()

    ours = lambda: fused_scaled_dot_product_attention(q, k, v, is_causal=True)
    ours_masked = lambda: fused_scaled_dot_product_attention(q, k, v, mask)
    best = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
    with torch.no_grad():
        rows = [("forward, is_causal=True", median(ours, threads=threads), median(best, threads=threads)),
                ("forward, causal_mask(L) given", median(ours_masked, threads=threads), median(best, threads=threads))]
    rows.append(("forward+backward, is_causal=True", median(backward(ours), threads=threads),
                 median(backward(best), threads=threads)))
    return rows


def tiny_call() -> list[tuple[str, float, float]]:
    """(case, helpers s, F.sdpa s) for batch 1, 1 head, L = 4, d = 8: the fixed cost of one call, 1 thread."""
    q, k, v = torch.randn(3, 1, 1, 4, 8)
    mask = causal_mask(4)
    pad = lengths_mask(torch.tensor([3]), 4)[:, None]  # (1, 1, 1, 4): the last key is padding
    fast = lambda fn: median(fn, min_run_time=0.5)
    with torch.no_grad():
        return [
            ("no mask", fast(lambda: fused_scaled_dot_product_attention(q, k, v)),
             fast(lambda: F.scaled_dot_product_attention(q, k, v))),
            ("is_causal=True", fast(lambda: fused_scaled_dot_product_attention(q, k, v, is_causal=True)),
             fast(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))),
            ("causal mask given", fast(lambda: fused_scaled_dot_product_attention(q, k, v, mask)),
             fast(lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask))),
            ("padding mask (padded keys zeroed)", fast(lambda: fused_scaled_dot_product_attention(q, k, v, pad)),
             fast(lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=pad))),
        ]


def achieved_gflops(threads: int) -> tuple[float, float]:
    """GFLOP/s of the fast path (no mask, batch 8, 8 heads, L = 1024, d 64) and of a 2048² torch.matmul."""
    with torch.no_grad():
        q, k, v = torch.randn(3, 8, 8, 1024, 64)
        attention = 4 * 8 * 8 * 1024 * 1024 * 64 / median(fused_scaled_dot_product_attention, q, k, v, threads=threads)
        a, b = torch.randn(2, 2048, 2048)
        matmul = 2 * 2048**3 / median(torch.matmul, a, b, threads=threads)
    return attention / 1e9, matmul / 1e9


LENGTHS = (256, 1024, 4096)


def naive_masked(threads: int = 1) -> list[tuple[int, float, float, int, int]]:
    """(L, naive s, one masked softmax s, naive peak, reference peak): causal mask, batch 1, 4 heads, d 64."""
    rows = []
    with torch.no_grad():
        for length in LENGTHS:
            q, k, v = torch.randn(3, 1, 4, length, 64)
            mask = causal_mask(length)
            rows.append((length, median(scaled_dot_product_attention, q, k, v, mask, threads=threads),
                         median(one_masked_softmax, q, k, v, mask, threads=threads),
                         peak_bytes(scaled_dot_product_attention, q, k, v, mask),
                         peak_bytes(one_masked_softmax, q, k, v, mask)))
    return rows


def memory_vs_length() -> tuple[list[str], list[tuple[int, list[int]]]]:
    """Extra peak bytes of each attention path against L (batch 1, 4 heads, d 64; causal where masked)."""
    paths = {
        "naive, no mask": lambda q, k, v, m: scaled_dot_product_attention(q, k, v),
        "naive, causal_mask(L)": lambda q, k, v, m: scaled_dot_product_attention(q, k, v, m),
        "naive, is_causal": lambda q, k, v, m: scaled_dot_product_attention(q, k, v, is_causal=True),
        "one masked softmax": one_masked_softmax,
        "fused, causal_mask(L)": lambda q, k, v, m: fused_scaled_dot_product_attention(q, k, v, m),
        "fused, is_causal": lambda q, k, v, m: fused_scaled_dot_product_attention(q, k, v, is_causal=True),
        "F.sdpa, is_causal": lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, is_causal=True),
    }
    rows = []
    with torch.no_grad():
        for length in LENGTHS:
            q, k, v = torch.randn(3, 1, 4, length, 64)
            mask = causal_mask(length)
            rows.append((length, [peak_bytes(fn, q, k, v, mask) for fn in paths.values()]))
    return list(paths), rows


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
    # PyTorch's fastest causal path: a float mask with the tgt_is_causal hint (the decoder then uses is_causal)
    ref_mask = nn.Transformer.generate_square_subsequent_mask(31)
    t_ref = median(step, reference, opt_ref, lambda m: m(src, tgt, tgt_mask=ref_mask, tgt_is_causal=True))
    return t_ours, t_ref


def kv_cache_decoding(lengths: tuple[int, ...] = (16, 64, 128)) -> list[tuple[int, float, float]]:
    """Greedy decoding tokens/s with the KV cache and re-running the decoder on the whole prefix (1 thread).

    An untrained N = 6 Seq2SeqTransformer (d_model 64), 16 source sentences of 12 tokens; both ways give the same
    tokens (tests/test_layers.py), so both count the same tokens. Returns (new tokens, cached tok/s, full tok/s).
    """
    from helpers.seq2seq import Seq2SeqTransformer

    torch.manual_seed(0)
    model = Seq2SeqTransformer(40, d_model=64, num_heads=4, d_ff=128, max_len=160).eval()
    src = torch.randint(3, 40, (16, 12), generator=torch.Generator().manual_seed(1))
    rows = []
    with torch.no_grad():
        for length in lengths:
            tokens = model.greedy_decode(src, length, use_cache=True)
            produced = int((tokens != model.pad_id).sum())
            cached = median(partial(model.greedy_decode, use_cache=True), src, length, min_run_time=2.0)
            full = median(partial(model.greedy_decode, use_cache=False), src, length, min_run_time=2.0)
            rows.append((length, produced / cached, produced / full))
    return rows


def table(rows: list[tuple[str, float, float]], unit: float = 1e3, digits: int = 3) -> list[str]:
    return [f"| {name} | {a * unit:.{digits}f} | {b * unit:.{digits}f} | {a / b:.2f}x |" for name, a, b in rows]


def attention_report() -> tuple[dict[str, float], list[str], list[str]]:
    """Every attention figure: the values of the attention goals, the Markdown sections 1 and 3."""
    fast = {n: attention_fast_path(n) for n in THREADS}
    causal = {n: causal_long(n) for n in THREADS}
    gflops = {n: achieved_gflops(n) for n in THREADS}
    tiny = tiny_call()
    naive = naive_masked(1)
    names, memory = memory_vs_length()
    peak = dict(zip(names, memory[-1][1]))  # at the largest L
    values = [
        max(a / b for rows in fast.values() for _, a, b in rows[:2]),
        max(rows[0][1] / rows[0][2] for rows in causal.values()),
        max(rows[2][1] / rows[2][2] for rows in causal.values()),
        peak["fused, is_causal"] / max(peak["F.sdpa, is_causal"], 1),
        max(a / b for _, a, b, _, _ in naive),
        max(ma / mb for _, _, _, ma, mb in naive),
        tiny[0][1] / tiny[0][2],
    ]
    mib = lambda b: f"{b / 2**20:.1f}"
    lines = ["## 1. Attention against PyTorch's fastest equivalent", ""]
    for n in THREADS:
        lines += [f"### batch 8, 8 heads, L = 256, d_head = 64, **{n} thread{'s' * (n > 1)}**", "",
                  "| case | helpers (ms) | PyTorch (ms) | ratio |", "|---|---|---|---|", *table(fast[n]), ""]
    for n in THREADS:
        lines += [f"### causal, batch 8, 8 heads, L = 1024, d_head = 64, **{n} thread{'s' * (n > 1)}**", "",
                  "| case | helpers (ms) | F.sdpa is_causal (ms) | ratio |", "|---|---|---|---|",
                  *table(causal[n], digits=1), ""]
    lines += ["### Fixed cost of a tiny call (batch 1, 1 head, L = 4, d = 8), **1 thread**", "",
              "| case | helpers fused (µs) | F.sdpa (µs) | ratio |", "|---|---|---|---|",
              *table(tiny, unit=1e6, digits=1), ""]
    lines += ["### Achieved GFLOP/s: fast path (no mask, batch 8, 8 heads, L = 1024, d 64) vs a 2048² torch.matmul",
              "", "| threads | attention GFLOP/s | matmul GFLOP/s | fraction |", "|---|---|---|---|",
              *[f"| {n} | {att:.1f} | {mm:.1f} | {att / mm:.2f} |" for n, (att, mm) in gflops.items()], ""]
    by_length = ["## 3. Attention against sequence length (batch 1, 4 heads, d_head 64, causal)", "",
              "### Naive path with a mask vs one masked softmax (QKᵀ, one masked_fill, softmax, @V), **1 thread**", "",
              "| L | naive (ms) | one masked softmax (ms) | time ratio | naive peak (MiB) | reference peak (MiB) "
              "| memory ratio |", "|---|---|---|---|---|---|---|",
              *[f"| {n} | {a * 1e3:.2f} | {b * 1e3:.2f} | {a / b:.2f}x | {mib(ma)} | {mib(mb)} | {ma / mb:.2f}x |"
                for n, a, b, ma, mb in naive], "",
              "### Extra peak memory of each path (MiB held at once during one call, beyond its inputs)", "",
              "| L | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|",
              *[f"| {n} | " + " | ".join(mib(b) for b in row) + " |" for n, row in memory], ""]
    return dict(zip(ATTENTION_GOALS, values, strict=True)), lines, by_length


KERNEL_PEAK_MIB: dict[str, float] = {}  # notebook -> its kernel's peak resident memory, filled by notebooks()
# The kernel's own high-water mark, VmHWM, which exec resets. Not getrusage's ru_maxrss: Linux carries that over
# from the process that forked the kernel, so every notebook reported this benchmark's own peak (1049 MiB).
PEAK_RSS_CELL = ("import re\n"
                 "status = open('/proc/self/status').read()\n"
                 "print('PEAK_RSS_MIB', int(re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1)) / 1024)")


#: what notebook 08 measured of its translator, read from its outputs by notebooks(): name -> value
TRANSLATION: dict[str, float] = {}
TRANSLATION_PATTERNS = {
    "test exact match (1000 sentences, greedy)": r"exact match (\d\.\d+), sacrebleu",
    "test BLEU (sacrebleu, tokenize='zh')": r"sacrebleu BLEU \(tokenize='zh'\) (\d+(?:\.\d+)?)",
    "best head's alignment error rate (300 test sentences)": r"layer \d head \d: AER (\d\.\d+)",
    "greedy exact match (300 test sentences)": r"greedy: exact match (\d\.\d+)",
    "beam 4 exact match (300 test sentences)": r"beam 4: exact match (\d\.\d+)",
}


def notebooks() -> tuple[list[tuple[str, float]], float | None]:
    """Each notebook of the English edition run in a fresh kernel (a copy): seconds, and its kernel's peak RSS.
    A fresh model cache, so that notebook 08 trains its translator (and does not load an earlier run's)."""
    rows, training = [], None
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as cache:
        before, os.environ["COURSE_CACHE"] = os.environ.get("COURSE_CACHE"), cache  # the kernels inherit it
        copy = Path(tmp) / "notebooks"
        shutil.copytree(ROOT / "notebooks", copy)
        for path in sorted(copy.glob("[0-9][0-9]_*.ipynb")):
            notebook = nbformat.read(path, as_version=4)
            notebook.cells.append(nbformat.v4.new_code_cell(PEAK_RSS_CELL))
            nbformat.write(notebook, path)
            rows.append((path.stem, execute_file(path, cwd=copy)))
            text = path.read_text()
            peak = re.search(r"PEAK_RSS_MIB (\d+(?:\.\d+)?)", text)
            KERNEL_PEAK_MIB[path.stem] = float(peak.group(1)) if peak else float("nan")
            if path.stem.startswith("08_"):
                match = re.search(r"trained now: (\d+) steps in (\d+(?:\.\d+)?) s", text)
                training = float(match.group(2)) if match else None
                for name, pattern in TRANSLATION_PATTERNS.items():
                    found = re.search(pattern, text)
                    if found:
                        TRANSLATION[name] = float(found.group(1))
        if before is None:
            del os.environ["COURSE_CACHE"]
        else:
            os.environ["COURSE_CACHE"] = before
    return rows, training


def widget_latencies() -> list[dict]:
    """Run the browser tests; one record per widget move (notebook, move, ms), as they wrote them."""
    folder = ROOT / "tests" / "browser" / "screenshots"
    for old in folder.glob("latencies*.json"):
        old.unlink()  # never report an earlier run's numbers
    # one worker, as a learner has one browser: latencies measured with nothing else running; the English
    # edition only (the Chinese one runs the same code)
    subprocess.run([sys.executable, "-m", "pytest", "tests/browser/test_lab_english.py", "-q", "-p", "no:nbval",
                    "-o", "addopts="], cwd=ROOT, check=False)
    return [move for path in sorted(folder.glob("latencies*.json")) for move in json.loads(path.read_text())]


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
    """Seconds for ``steps`` training steps of notebook 08's translator (helpers.translation.TRANSLATOR)."""
    seed_everything(0, num_threads=num_threads)
    task = translation_task(0, n_train=3000)
    recipe = TRANSLATOR
    model = Seq2SeqTransformer(len(task.vocab), d_model=recipe["d_model"], num_heads=recipe["num_heads"],
                               num_encoder_layers=6, num_decoder_layers=6, d_ff=recipe["d_ff"],
                               dropout=recipe["dropout"], norm_first=True, max_len=64)
    with threads(num_threads):
        return train(model, task.sampler(recipe["batch_size"]), steps=steps, lr=recipe["lr"], warmup=10,
                     progress=False).seconds


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
        rows.append(("N = 6 translator training of notebook 08 (in the series)", training_idle, training_loaded))
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
    attention_values, section_1, section_3 = attention_report()
    t_ours, t_ref = train_step()
    kv_rows = kv_cache_decoding()
    series, training = notebooks()
    load, load_per_notebook, load_ratio = load_rows(series, training)
    moves = widget_latencies()
    latency = statistics.median(m["ms"] for m in moves) if moves else None
    by_notebook: dict[str, list[float]] = {}
    for move in moves:
        by_notebook.setdefault(move["notebook"], []).append(move["ms"])
    total = sum(seconds for _, seconds in series)
    train_ratio = t_ours / t_ref
    values = {
        **attention_values,
        "helpers Transformer train step / nn.Transformer": train_ratio,
        "median widget move to new image in JupyterLab": latency,
        "whole notebook series, fresh kernels": total,
        TRAINING: training,
        "whole notebook series with one CPU burner per core / idle": load_ratio,
        "largest kernel peak RSS of a notebook": max(KERNEL_PEAK_MIB.values(), default=None),
    }
    lines = [
        "# Benchmark results",
        "",
        f"Written by `make bench` on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; "
        f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} threads available, "
        f"torch {torch.__version__}, Python {platform.python_version()}.",
        "One run; each comparison measured side by side in one process (torch.utils.benchmark, median).",
        "Every table says the torch threads its figures used (torch.utils.benchmark.Timer(num_threads=...)).",
        "",
        "## Summary against the goals",
        "",
        "| measure | value | goal | |",
        "|---|---|---|---|",
        *[summary_row(measure, values.get(measure)) for measure in GOALS],
        "",
        *section_1,
        "## 2. One training step (d_model 128, 4 heads, 3 + 3 layers, batch 32, L 32, Adam), 1 thread",
        "",
        "| model | ms per step |",
        "|---|---|",
        f"| helpers.Transformer (fused path in training mode) | {t_ours * 1e3:.1f} |",
        f"| nn.Transformer | {t_ref * 1e3:.1f} |",
        f"| ratio | {train_ratio:.2f}x |",
        "",
        *section_3,
        "## KV cache: greedy decoding with and without it (1 thread)",
        "",
        "Untrained N = 6 model, d_model 64, 16 sentences; the same tokens either way (a test checks it).",
        "",
        "| new tokens | with the cache (tok/s) | whole prefix each step (tok/s) | speed-up |",
        "|---|---|---|---|",
        *[f"| {n} | {c:,.0f} | {f:,.0f} | {c / f:.1f}x |" for n, c, f in kv_rows],
        "",
        "## The translator of notebook 08 (as its run in section 4 measured it)",
        "",
        "| measure | value |",
        "|---|---|",
        *[f"| {name} | {value:g} |" for name, value in TRANSLATION.items()],
        "",
        "## 4. Notebooks (Restart & Run All in a fresh kernel, on a copy)",
        "",
        "| notebook | seconds | kernel peak RSS (MiB) |",
        "|---|---|---|",
        *[f"| {name} | {seconds:.1f} | {KERNEL_PEAK_MIB.get(name, float('nan')):.0f} |" for name, seconds in series],
        f"| **whole series** | **{total:.1f}** | |",
        "",
        "## 5. Widget moves in JupyterLab (Chromium, the browser tests)",
        "",
        "Timed in the page's clock: from the move's first input event (key, pointer, selection) to the `load` of",
        "the new image. A move redraws only the artists it changes over a cached background; a move that changes",
        "tick labels draws the whole figure. Each notebook opens in a fresh Chromium, whose WebSockets are watched,",
        "not routed through Playwright (routing added 12-15 ms to each move, and one Chromium for the whole run",
        "about 12 ms more by its last notebooks).",
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
