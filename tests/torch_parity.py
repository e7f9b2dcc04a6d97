"""Shared pieces of the parity tests: tolerances per dtype and the mask conversion to PyTorch's meaning."""

from __future__ import annotations

import torch

from helpers.tokens import FIRST_SYMBOL, PAD

#: how close the helpers must be to PyTorch (docs/conventions.md, section 8): 1e-5 in float32, 1e-10 in float64
TOLERANCE = {torch.float32: 1e-5, torch.float64: 1e-10}


def assert_close(actual: torch.Tensor, expected: torch.Tensor, dtype: torch.dtype) -> None:
    tol = TOLERANCE[dtype]
    torch.testing.assert_close(actual, expected, atol=tol, rtol=tol)


def blocked(mask: torch.Tensor) -> torch.Tensor:
    """The course's mask (True = may attend) in nn.MultiheadAttention's meaning (True = blocked)."""
    return ~mask


def lengths_to_tokens(lengths: list[int], length: int, generator: torch.Generator) -> torch.Tensor:
    """(batch, length) token ids in [FIRST_SYMBOL, 10) with PAD after each row's length."""
    tokens = torch.randint(FIRST_SYMBOL, 10, (len(lengths), length), generator=generator)
    for row, n in enumerate(lengths):
        tokens[row, n:] = PAD
    return tokens
