"""Checks of the numbers a module is built with, and of the dtype of what it is given.

Like :mod:`helpers.validation`: ``TypeError`` for a wrong type, ``ValueError`` for a wrong value, and a
message that names the argument, the expected and the actual value.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

__all__ = ["require_int", "require_count", "require_dropout", "require_dtype", "module_dtype"]


def require_int(name: str, value: object, *, minimum: int, what: str = "an int", bound: str | None = None) -> int:
    """``value`` is an int (not a bool, not a float such as 2.5) and at least ``minimum``.

    ``what`` names the expected kind in the TypeError; ``bound`` words the lower bound in the ValueError
    (default: "positive" for a minimum of 1, else "at least <minimum>").
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be {what}; got {type(value).__name__} {value!r}")
    if value < minimum:
        if bound is None:
            bound = "positive" if minimum == 1 else f"at least {minimum}"
        raise ValueError(f"{name} must be {bound}; got {value}")
    return value


def require_count(name: str, value: object, *, what: str = "an int") -> int:
    """A count of at least 1, worded "must be at least 1" (blocks, windows, lengths, threads)."""
    return require_int(name, value, minimum=1, what=what, bound="at least 1")


def require_dropout(name: str, value: object) -> float:
    """A dropout probability in [0, 1)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number in [0, 1); got {type(value).__name__}")
    if not 0.0 <= value < 1.0:
        raise ValueError(f"{name} must be in [0, 1); got {value}")
    return float(value)


def module_dtype(module: nn.Module) -> torch.dtype:
    """The dtype of ``module``'s first parameter: the dtype its inputs must have."""
    return next(module.parameters()).dtype


def require_dtype(name: str, tensor: Tensor, dtype: torch.dtype) -> None:
    """``tensor`` has the module's ``dtype``: a float64 input into a float32 model is an error, not a cast."""
    if tensor.dtype != dtype:
        raise TypeError(
            f"{name} must have the module's dtype {dtype}; got {tensor.dtype}. "
            f"Convert the input ({name}.to({dtype})) or the module (module.to({tensor.dtype}))"
        )
