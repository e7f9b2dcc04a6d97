"""Attention as today's models run it (notebook 10): online softmax, grouped-query attention, RoPE, windows.

* :func:`tiled_attention` computes softmax(Q Kᵀ / √d_k) V block by block over the keys with a running max and a
  running sum (the online softmax of Milakov & Gimelshein 2018, the core of FlashAttention), so that no
  ``(L_q, L_k)`` matrix is ever held; :func:`online_softmax_steps` yields its state after every block.
* :class:`GroupedQueryAttention`: query heads in groups that share one key/value head (MQA with one group,
  multi-head attention with as many groups as heads).
* :func:`apply_rope`: rotary position embedding of queries or keys (RoFormer's pairs ``(2i, 2i + 1)``).
* :func:`sliding_window_mask`: the band mask of local attention, in the course's convention (True = may attend).
* :func:`kv_cache_bytes`: the size of a decoder's key/value cache; :func:`peak_tensor_bytes` measures what a call
  allocates.

Shapes follow ``helpers.attention``: per-head tensors are ``(batch, heads, L, d_head)``; masks are ``torch.bool``
without a head axis, broadcastable to ``(..., L_q, L_k)``; a query with no key to attend to gets zeros.
"""

from __future__ import annotations

import math
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils._python_dispatch import TorchDispatchMode

from helpers.arguments import require_count
from helpers.attention import MultiHeadAttention, _check_mask, _check_qkv
from helpers.validation import require_bool_mask, require_float, require_last_dim, require_ndim, shape_str

__all__ = [
    "OnlineSoftmaxState",
    "online_softmax_steps",
    "tiled_attention",
    "GroupedQueryAttention",
    "expand_kv",
    "rope_angles",
    "apply_rope",
    "sliding_window_mask",
    "kv_cache_bytes",
    "peak_tensor_bytes",
]


# --- online softmax ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OnlineSoftmaxState:
    """The running statistics after the keys ``start .. stop - 1`` have been seen.

    ``running_max`` and ``running_sum`` are ``(..., L_q)``: the largest score so far and the sum of
    exp(score - running_max); ``accumulator`` is ``(..., L_q, d_v)``, the sum of exp(score - running_max) · v.
    ``output`` = accumulator / running_sum is the attention over the keys seen so far (zeros where no key is allowed).
    """

    start: int
    stop: int
    running_max: Tensor
    running_sum: Tensor
    accumulator: Tensor

    @property
    def output(self) -> Tensor:
        total = self.running_sum.unsqueeze(-1)  # (..., L_q, 1)
        return torch.where(total > 0, self.accumulator / total.clamp_min(torch.finfo(total.dtype).tiny), 0.0)


def online_softmax_steps(
    query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None, *, block_size: int = 64
) -> Iterator[OnlineSoftmaxState]:
    """softmax(Q Kᵀ / √d_k) V over ``block_size`` keys at a time; yields the state after each block.

    Args:
        query: (..., L_q, d_k); key: (..., L_k, d_k); value: (..., L_k, d_v).
        mask: bool, broadcastable to (..., L_q, L_k); True = may attend.
        block_size: keys per block (the last block may be shorter).
    """
    scores_shape = _check_qkv(query, key, value)
    require_count("block_size", block_size)
    if mask is not None:
        mask = _check_mask(mask, scores_shape, "(..., L_q, L_k)")
    scale = 1.0 / math.sqrt(query.shape[-1])
    batch_shape, length_q, length_k = scores_shape[:-2], scores_shape[-2], scores_shape[-1]
    dtype = query.dtype
    running_max = torch.full((*batch_shape, length_q), float("-inf"), dtype=dtype, device=query.device)
    running_sum = torch.zeros((*batch_shape, length_q), dtype=dtype, device=query.device)
    accumulator = torch.zeros((*batch_shape, length_q, value.shape[-1]), dtype=dtype, device=query.device)
    for start in range(0, length_k, block_size):
        stop = min(start + block_size, length_k)
        scores = query @ key[..., start:stop, :].transpose(-2, -1) * scale  # (..., L_q, B)
        if mask is not None:
            scores = scores.masked_fill(~mask[..., start:stop], float("-inf"))
        new_max = torch.maximum(running_max, scores.amax(dim=-1))  # (..., L_q)
        shift = new_max.masked_fill(new_max == float("-inf"), 0.0)  # no key allowed yet: exp(-inf - 0) = 0, no NaN
        rescale = torch.exp(running_max - shift)  # (..., L_q): the old terms, brought to the new max
        weights = torch.exp(scores - shift.unsqueeze(-1))  # (..., L_q, B), unnormalised
        running_sum = running_sum * rescale + weights.sum(dim=-1)
        accumulator = accumulator * rescale.unsqueeze(-1) + weights @ value[..., start:stop, :]
        running_max = new_max
        yield OnlineSoftmaxState(start, stop, running_max, running_sum, accumulator)


def tiled_attention(
    query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None, *, block_size: int = 64
) -> Tensor:
    """The output of softmax(Q Kᵀ / √d_k) V, (..., L_q, d_v), computed block by block (see
    :func:`online_softmax_steps`); it never holds more than ``(..., L_q, block_size)`` scores."""
    # only the last state is kept: the earlier ones are freed as the loop goes on
    states = deque(online_softmax_steps(query, key, value, mask, block_size=block_size), maxlen=1)
    if not states:  # no keys at all
        scores_shape = _check_qkv(query, key, value)
        return query.new_zeros((*scores_shape[:-1], value.shape[-1]))
    return states[-1].output


# --- grouped-query attention ------------------------------------------------------------------------------------


def expand_kv(x: Tensor, num_heads: int) -> Tensor:
    """(batch, kv_heads, L, d_head) -> (batch, num_heads, L, d_head): each key/value head repeated for its group.

    Query head h uses key/value head ``h // (num_heads // kv_heads)``: the groups are consecutive heads.
    """
    require_float("x", x)
    require_ndim("x", x, 4, "(batch, kv_heads, L, d_head)")
    require_count("num_heads", num_heads)
    if num_heads % x.shape[1]:
        raise ValueError(
            f"num_heads must be a multiple of the kv_heads of x (axis 1); got num_heads = {num_heads}, "
            f"x shape {shape_str(x.shape)}"
        )
    return x.repeat_interleave(num_heads // x.shape[1], dim=1)


class GroupedQueryAttention(nn.Module):
    """Multi-head attention whose ``num_heads`` query heads share ``num_kv_heads`` key/value heads.

    ``num_kv_heads = num_heads`` is the paper's multi-head attention, ``num_kv_heads = 1`` multi-query attention
    (Shazeer 2019), anything between grouped-query attention (Ainslie et al. 2023). ``w_k`` and ``w_v`` project
    to ``num_kv_heads · d_head`` features only: the key/value cache shrinks by ``num_heads / num_kv_heads``.
    """

    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int, *, bias: bool = True) -> None:
        super().__init__()
        for name, number in (("d_model", d_model), ("num_heads", num_heads), ("num_kv_heads", num_kv_heads)):
            require_count(name, number)
        if d_model % num_heads:
            raise ValueError(
                f"d_model must be divisible by num_heads; got d_model = {d_model}, num_heads = {num_heads}"
            )
        if num_heads % num_kv_heads:
            raise ValueError(
                f"num_heads must be a multiple of num_kv_heads; got num_heads = {num_heads}, "
                f"num_kv_heads = {num_kv_heads}"
            )
        self.d_model, self.num_heads, self.num_kv_heads = d_model, num_heads, num_kv_heads
        self.d_head = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, num_kv_heads * self.d_head, bias=bias)
        self.w_v = nn.Linear(d_model, num_kv_heads * self.d_head, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)

    def _split(self, x: Tensor, heads: int) -> Tensor:
        """(batch, L, heads · d_head) -> (batch, heads, L, d_head)."""
        batch, length, _ = x.shape
        return x.view(batch, length, heads, self.d_head).transpose(1, 2)

    def project_kv(self, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
        """(batch, L_k, d_model) x2 -> k, v (batch, kv_heads, L_k, d_head): what a decoder caches."""
        return self._split(self.w_k(key), self.num_kv_heads), self._split(self.w_v(value), self.num_kv_heads)

    def attend(self, query: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> Tensor:
        """query (batch, L_q, d_model) against projected k, v (batch, kv_heads, L_k, d_head) -> (batch, L_q, d_model).
        """
        q = self._split(self.w_q(query), self.num_heads)  # (batch, heads, L_q, d_head)
        if mask is not None:
            mask = require_bool_mask("mask", mask)
            if mask.ndim == 3:
                mask = mask.unsqueeze(1)  # (batch, 1, L_q, L_k): one mask for every head
        heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)  # (batch, heads, L_q, d_head)
        batch, _, length, _ = heads.shape
        return self.w_o(heads.transpose(1, 2).reshape(batch, length, self.d_model))

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None) -> Tensor:
        """(batch, L_q, d_model), (batch, L_k, d_model) x2 -> (batch, L_q, d_model). ``mask`` True = may attend,
        (L_q, L_k) or (batch, L_q, L_k); every query must have at least one key it may attend to."""
        for name, tensor in (("query", query), ("key", key), ("value", value)):
            require_float(name, tensor)
            require_ndim(name, tensor, 3, "(batch, L, d_model)")
            require_last_dim(name, tensor, self.d_model, "d_model")
        if mask is not None:
            mask = _check_mask(mask, (query.shape[0], query.shape[1], key.shape[1]), "(batch, L_q, L_k)")
            if not bool(mask.any(dim=-1).all()):
                raise ValueError("mask must let every query attend to at least one key; a row of mask is all False")
        k, v = self.project_kv(key, value)
        return self.attend(query, k, v, mask)

    @classmethod
    def from_multi_head(cls, module: MultiHeadAttention) -> GroupedQueryAttention:
        """A copy of the course's ``MultiHeadAttention`` (as many groups as heads) with the same numbers."""
        if not isinstance(module, MultiHeadAttention):
            raise TypeError(f"module must be a helpers.attention.MultiHeadAttention; got {type(module).__name__}")
        bias = module.w_q.bias is not None
        new = cls(module.d_model, module.num_heads, module.num_heads, bias=bias)
        new = new.to(device=module.w_q.weight.device, dtype=module.w_q.weight.dtype)
        new.load_state_dict(module.state_dict())  # the same names: w_q, w_k, w_v, w_o
        return new.train(module.training)


# --- rotary position embedding ----------------------------------------------------------------------------------


def rope_angles(positions: Tensor, d_head: int, *, base: float = 10000.0) -> Tensor:
    """positions (L,) -> angles (L, d_head / 2): pair i of position p turns by p · base^(-2i / d_head).

    The frequencies are those of the paper's sinusoidal encoding (notebook 06).
    """
    if not isinstance(positions, Tensor) or positions.ndim != 1:
        raise TypeError(f"positions must be a 1-D torch.Tensor of positions; got {type(positions).__name__}"
                        + (f" of shape {shape_str(positions.shape)}" if isinstance(positions, Tensor) else ""))
    require_count("d_head", d_head)
    if d_head % 2:
        raise ValueError(f"d_head must be even (RoPE turns pairs of features); got {d_head}")
    frequency = base ** (-torch.arange(0, d_head, 2, dtype=torch.float64) / d_head)  # (d_head / 2,)
    return positions.to(torch.float64).unsqueeze(-1) * frequency  # (L, d_head / 2)


def apply_rope(x: Tensor, positions: Tensor | None = None, *, base: float = 10000.0) -> Tensor:
    """Rotate each pair of features ``(x[2i], x[2i+1])`` of x (..., L, d_head) by its position's angle.

    ``positions`` (L,) defaults to 0, 1, ..., L - 1 (pass an offset range for the new tokens of a cached decoder).
    Applied to queries and keys (never to values): q_m · k_n then depends on m - n only.
    """
    require_float("x", x)
    if x.ndim < 2:
        raise ValueError(f"x must have at least 2 dimensions (..., L, d_head); got shape {shape_str(x.shape)}")
    length, d_head = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(length, device=x.device)
    if isinstance(positions, Tensor) and positions.ndim == 1 and positions.shape[0] != length:
        raise ValueError(f"positions must have one entry per row of x, L = {length}; got shape "
                         f"{shape_str(positions.shape)}")
    angles = rope_angles(positions, d_head, base=base).to(device=x.device)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)  # (L, d_head / 2)
    even, odd = x[..., 0::2], x[..., 1::2]  # (..., L, d_head / 2) each
    rotated = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)  # (..., L, d_head / 2, 2)
    return rotated.flatten(-2)  # (..., L, d_head), pairs back in place


# --- sliding windows and the KV cache ---------------------------------------------------------------------------


def sliding_window_mask(length: int, window: int, *, causal: bool = True, device: torch.device | str | None = None
                        ) -> Tensor:
    """(length, length) bool band mask, True = may attend.

    Causal: query i sees the ``window`` keys i - window + 1 .. i (itself included), as in Mistral.
    Not causal: query i sees the keys j with |i - j| < window (Longformer's local attention).
    """
    require_count("length", length)
    require_count("window", window)
    full = torch.ones(length, length, dtype=torch.bool, device=device)  # (L, L); bools only, no (L, L) of ints
    if causal:
        return full.tril() & ~full.tril(diagonal=-window)  # 0 <= i - j < window
    return full.tril(diagonal=window - 1) & full.triu(diagonal=1 - window)  # |i - j| < window


def kv_cache_bytes(*, layers: int, kv_heads: int, d_head: int, length: int, batch: int = 1,
                   bytes_per_value: int = 2) -> int:
    """Bytes of a decoder's self-attention cache: a key and a value vector per layer, head, token and sequence.

    = 2 · layers · batch · kv_heads · length · d_head · bytes_per_value (2 bytes for fp16/bf16, 4 for fp32).
    """
    values = {"layers": layers, "kv_heads": kv_heads, "d_head": d_head, "length": length, "batch": batch,
              "bytes_per_value": bytes_per_value}
    for name, number in values.items():
        require_count(name, number)
    return 2 * layers * batch * kv_heads * length * d_head * bytes_per_value


class _LiveTensorBytes(TorchDispatchMode):
    """Counts the bytes of the storages that the ops run inside it create, while they are alive."""

    def __init__(self) -> None:
        super().__init__()
        self.live: dict[int, list[int]] = {}  # storage data_ptr -> [bytes, tensors alive on it]
        self.current = 0
        self.peak = 0

    def _release(self, pointer: int) -> None:
        entry = self.live[pointer]
        entry[1] -= 1
        if entry[1] == 0:
            self.current -= entry[0]
            del self.live[pointer]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        known = {a.untyped_storage().data_ptr() for a in args if isinstance(a, Tensor)}
        result = func(*args, **(kwargs or {}))
        outputs = result if isinstance(result, (tuple, list)) else (result,)
        for tensor in outputs:
            if not isinstance(tensor, Tensor):
                continue
            storage = tensor.untyped_storage()
            pointer = storage.data_ptr()
            if pointer in self.live:
                self.live[pointer][1] += 1
            elif pointer in known or storage.nbytes() == 0:
                continue  # a view of an input, or nothing allocated
            else:
                self.live[pointer] = [storage.nbytes(), 1]
                self.current += storage.nbytes()
                self.peak = max(self.peak, self.current)
            weakref.finalize(tensor, self._release, pointer)
        return result


def peak_tensor_bytes(fn: Callable[..., object], *args: object, **kwargs: object) -> int:
    """The most bytes of new tensors alive at once while ``fn(*args, **kwargs)`` runs (without gradients).

    Measured, not estimated: every tensor an operation returns is counted from its creation until it is freed
    (views share their storage and count once). Scratch memory inside one fused kernel is not seen.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable; got {type(fn).__name__}")
    mode = _LiveTensorBytes()
    with torch.no_grad(), mode:
        result = fn(*args, **kwargs)
    del result
    return mode.peak


# --- exercise checkers (to move into helpers.checks) ------------------------------------------------------------
