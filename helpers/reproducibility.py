"""Seeds, print options and torch's thread count, so that every run of a notebook prints the same numbers
and a busy laptop does not slow it down.

Threads, measured (``benchmarks/run.py`` and the report of issue 18): the course's models are small (d_model 32
to 128, batches of a few hundred short sequences). Their operations are too small to split well over cores, and
when the cores are busy with other work (a browser, an editor, a video call) torch's worker threads wait for
each other: 40 training steps of notebook 08 took 103-127 s with torch's default of 2 threads on a busy 2-core
machine, against 6 s with one thread (measured again on a shared 2-core machine: 2.1-3.0 s on one thread, 9.9-48
s on two; the median step of 08's model, 103 ms on one thread, 110 ms on two). So :func:`seed_everything` sets
**one thread** (:func:`use_course_threads`), and the few cells with large tensors (a 2048 x 2048 matmul,
attention over thousands of positions) ask for more, for their own duration::

    with more_threads():          # every core torch would use by default
        slow = naive_attention(q, k, v)
    with threads(2):              # or an exact count
        ...
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch

from helpers.arguments import require_count

__all__ = [
    "COURSE_THREADS",
    "DEFAULT_THREADS",
    "seed_everything",
    "set_print_options",
    "use_course_threads",
    "threads",
    "more_threads",
]

#: torch's threads for the course's small models: one is as fast when idle and immune to busy cores
COURSE_THREADS = 1
#: what torch chose at import (the physical cores, or OMP_NUM_THREADS), before the course changed it
DEFAULT_THREADS = torch.get_num_threads()


def _require_thread_count(name: str, value: object) -> int:
    return require_count(name, value, what="an int number of threads")


def use_course_threads(num_threads: int = COURSE_THREADS) -> int:
    """Set torch's intra-op threads to ``num_threads`` (the course's default, 1); return the previous count."""
    _require_thread_count("num_threads", num_threads)
    previous = torch.get_num_threads()
    torch.set_num_threads(num_threads)
    return previous


@contextmanager
def threads(num_threads: int) -> Iterator[int]:
    """Run the ``with`` block on ``num_threads`` torch threads, then restore the count it had before.

    Yields the count in force inside the block.
    """
    previous = use_course_threads(num_threads)
    try:
        yield num_threads
    finally:
        torch.set_num_threads(previous)


@contextmanager
def more_threads() -> Iterator[int]:
    """Run the ``with`` block on torch's default thread count (:data:`DEFAULT_THREADS`), for large tensors."""
    with threads(DEFAULT_THREADS) as count:
        yield count


def seed_everything(seed: int = 0, *, deterministic: bool = True, num_threads: int = COURSE_THREADS) -> int:
    """Seed Python, NumPy and PyTorch; with ``deterministic`` ask PyTorch for deterministic kernels.

    Also sets torch to ``num_threads`` threads (one by default: see the module's docstring for why).
    Returns the seed, so a notebook can print what it used.
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int; got {type(seed).__name__}")
    _require_thread_count("num_threads", num_threads)
    os.environ["PYTHONHASHSEED"] = str(seed)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if deterministic:
        _deterministic_kernels()
    use_course_threads(num_threads)
    return seed


def _deterministic_kernels() -> None:
    """``torch.use_deterministic_algorithms(True, warn_only=True)``, without the compiler it imports.

    Since torch 2.x the public call also sets ``torch._inductor.config.deterministic``, and importing that
    config loads the whole compiler: 1.1 s on the course's machine, a fifth of a small notebook's run, in every
    kernel. The course runs in eager mode, and eager kernels read only the switch set here. If the compiler is
    already loaded (a learner who uses ``torch.compile``), the public call costs nothing more and is used.
    """
    if "torch._inductor.config" in sys.modules:
        torch.use_deterministic_algorithms(True, warn_only=True)
    else:
        torch._C._set_deterministic_algorithms(True, warn_only=True)


def set_print_options(precision: int = 3) -> None:
    """Round printed tensors and arrays to ``precision`` decimals, without scientific notation."""
    torch.set_printoptions(precision=precision, sci_mode=False, linewidth=110)
    np.set_printoptions(precision=precision, suppress=True, linewidth=110)
