"""Input checks shared by the modules of `helpers`.

Every check raises ``TypeError`` for a wrong type or dtype and ``ValueError`` for a wrong
shape or value. The message names the argument and gives the expected and the actual
shape, so a learner can see at once which tensor is wrong and how. The message is in the notebook's edition
(:func:`helpers.course.say`): a Chinese notebook gets it in Chinese, with the code names (arguments, dtypes,
shapes) as they are written.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from helpers.course import say


def shape_str(shape: Sequence[int]) -> str:
    """``(2, 5, 7)`` for a shape; ``(7,)`` for one axis."""
    return str(tuple(int(s) for s in shape))


def require_tensor(name: str, value: object) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(say(f"{name} must be a torch.Tensor; got {type(value).__name__}",
                            f"{name} 必须是 torch.Tensor；得到的是 {type(value).__name__}"))
    return value


def require_float(name: str, value: object) -> Tensor:
    tensor = require_tensor(name, value)
    if not tensor.is_floating_point():
        raise TypeError(say(f"{name} must be a floating-point tensor; got dtype {tensor.dtype}",
                            f"{name} 必须是浮点张量；得到的 dtype 是 {tensor.dtype}"))
    return tensor


def require_ndim(name: str, tensor: Tensor, ndim: int, layout: str) -> None:
    if tensor.ndim != ndim:
        raise ValueError(say(f"{name} must be {ndim}-D {layout}; got shape {shape_str(tensor.shape)}",
                             f"{name} 必须是 {ndim} 维的 {layout}；得到的形状是 {shape_str(tensor.shape)}"))


def require_last_dim(name: str, tensor: Tensor, size: int, what: str) -> None:
    if tensor.shape[-1] != size:
        raise ValueError(say(
            f"{name} must have last dimension {what} = {size}; got shape {shape_str(tensor.shape)}",
            f"{name} 的最后一维必须是 {what} = {size}；得到的形状是 {shape_str(tensor.shape)}"))


def require_same_batch(**tensors: Tensor) -> None:
    """All ``tensors`` (given by name) have the same first dimension, the batch size."""
    if len({t.shape[0] for t in tensors.values()}) > 1:
        names = ", ".join(tensors)
        shapes = ", ".join(shape_str(t.shape) for t in tensors.values())
        raise ValueError(say(f"{names} must share the batch size; got shapes {shapes}",
                             f"{names} 的批大小（batch）必须相同；得到的形状是 {shapes}"))


def broadcasts_to(shape: Sequence[int], target: Sequence[int]) -> bool:
    """True when a tensor of ``shape`` broadcasts to ``target`` without growing ``target``."""
    if len(shape) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(reversed(shape), reversed(target)))


def broadcast_shape(*shapes: Sequence[int]) -> tuple[int, ...] | None:
    """The shape ``shapes`` broadcast to, or None when they do not broadcast.

    Plain Python: ``torch.broadcast_shapes`` costs about 20 µs a call, more than a small attention.
    """
    result: list[int] = []
    width = max((len(shape) for shape in shapes), default=0)
    for axis in range(1, width + 1):
        sizes = {shape[-axis] for shape in shapes if len(shape) >= axis} - {1}
        if len(sizes) > 1:
            return None
        result.append(sizes.pop() if sizes else 1)
    return tuple(reversed(result))


def require_bool_mask(name: str, mask: object) -> Tensor:
    tensor = require_tensor(name, mask)
    if tensor.dtype != torch.bool:
        raise TypeError(say(
            f"{name} must be a torch.bool tensor (True = may attend); got dtype {tensor.dtype}. "
            "A float additive mask or a PyTorch-style mask (True = blocked) must be converted first.",
            f"{name} 必须是 torch.bool 张量（True 表示可以关注）；得到的 dtype 是 {tensor.dtype}。"
            "加到分数上的浮点掩码，或者 PyTorch 风格的掩码（True 表示屏蔽），都要先转换。"))
    return tensor


def require_tokens(name: str, tokens: object, vocab_size: int | None = None) -> Tensor:
    """Check a (batch, L) tensor of integer token ids, each in ``[0, vocab_size)``."""
    tensor = require_tensor(name, tokens)
    if tensor.dtype.is_floating_point or tensor.dtype == torch.bool or tensor.is_complex():
        raise TypeError(say(f"{name} must hold integer token ids (torch.long); got dtype {tensor.dtype}",
                            f"{name} 必须是整数的词元编号（torch.long）；得到的 dtype 是 {tensor.dtype}"))
    require_ndim(name, tensor, 2, "(batch, L)")
    if vocab_size is not None and tensor.numel() > 0:
        low, high = int(tensor.min()), int(tensor.max())
        if low < 0 or high >= vocab_size:
            raise ValueError(say(
                f"{name} must hold token ids in [0, {vocab_size}); got values from {low} to {high}",
                f"{name} 里的词元编号必须在 [0, {vocab_size}) 之内；得到的值从 {low} 到 {high}"))
    return tensor
