"""Seeds and print options, so that every run of a notebook prints the same numbers."""

from __future__ import annotations

import os
import random

import numpy as np
import torch

__all__ = ["seed_everything", "set_print_options"]


def seed_everything(seed: int = 0, *, deterministic: bool = True) -> int:
    """Seed Python, NumPy and PyTorch; with ``deterministic`` ask PyTorch for deterministic kernels.

    Returns the seed, so a notebook can print what it used.
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int; got {type(seed).__name__}")
    os.environ["PYTHONHASHSEED"] = str(seed)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if deterministic:
        torch.use_deterministic_algorithms(True, warn_only=True)
    return seed


def set_print_options(precision: int = 3) -> None:
    """Round printed tensors and arrays to ``precision`` decimals, without scientific notation."""
    torch.set_printoptions(precision=precision, sci_mode=False, linewidth=110)
    np.set_printoptions(precision=precision, suppress=True, linewidth=110)
