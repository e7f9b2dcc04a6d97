"""Scaled dot-product attention, masks and multi-head attention.

Conventions (see ``docs/conventions.md``):

* tensors are batch-first, ``(batch, seq, d_model)``; per-head tensors are ``(batch, heads, seq, d_head)``;
* a mask is a ``torch.bool`` tensor, **True = this query may attend to this key**. Given to
  :func:`scaled_dot_product_attention` it is 2-D ``(L_q, L_k)`` or has as many axes as the scores, so that no
  axis of it can be lined up with the wrong axis of the scores;
* ``is_causal=True`` means query i may attend to keys 0..i (it needs L_q == L_k); with a mask, both must allow;
* a query row with no key it may attend to gets weights of zeros and an output of zeros, never NaN;
* a key that no query may attend to (padding) cannot change the output, even if it holds NaN or inf.

The public functions check their inputs; the cores ``_attention`` and ``_fused_attention`` do not
(``MultiHeadAttention`` checks once and calls them).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from helpers.arguments import require_count
from helpers.validation import (
    broadcast_shape,
    broadcasts_to,
    require_bool_mask,
    require_float,
    require_last_dim,
    require_ndim,
    require_same_batch,
    require_tensor,
    require_tokens,
    shape_str,
)

__all__ = [
    "scaled_dot_product_attention",
    "fused_scaled_dot_product_attention",
    "causal_mask",
    "padding_mask",
    "lengths_mask",
    "MultiHeadAttention",
]


# ---------------------------------------------------------------------------------------------------------------
# The cores: no checks, the formula in a few lines.


def _with_causal(mask: Tensor | None, length: int, device: torch.device) -> Tensor:
    """``mask`` AND the (L, L) causal mask (query i may attend to keys 0..i)."""
    causal = torch.ones(length, length, dtype=torch.bool, device=device).tril()
    return causal if mask is None else mask & causal


def _zero_unused_keys(mask: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
    """Zero the rows of ``key`` and ``value`` that no query may attend to (padding).

    Their weights are 0, but 0 · NaN = NaN: zeroing the rows makes garbage there (NaN, inf) harmless.
    """
    used = mask if mask.shape[-2] == 1 else mask.any(dim=-2, keepdim=True)  # (..., 1, L_k): any query?
    if bool(used.all()):  # nothing to zero (no padding, e.g. a causal mask)
        return key, value
    used = used.transpose(-2, -1)  # (..., L_k, 1): one flag per key row
    return torch.where(used, key, 0.0), torch.where(used, value, 0.0)


def _attention(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None, is_causal: bool,
               dropout: Callable[[Tensor], Tensor] | None) -> tuple[Tensor, Tensor]:
    """softmax(Q Kᵀ / √d_k) V with the weights, unchecked: see :func:`scaled_dot_product_attention`."""
    if is_causal:
        mask = _with_causal(mask, query.shape[-2], query.device)  # (..., L, L)
    if mask is not None:
        key, value = _zero_unused_keys(mask, key, value)
    scores = (query @ key.transpose(-2, -1)).div_(math.sqrt(query.shape[-1]))  # (..., L_q, L_k), in place
    if mask is not None:
        scores.masked_fill_(~mask, float("-inf"))  # one pass, in place: a masked key gets exp(-inf) = 0
    weights = torch.softmax(scores, dim=-1)  # (..., L_q, L_k), each row sums to 1
    if mask is not None:
        empty_row = ~mask.any(dim=-1, keepdim=True)  # (..., L_q, 1): no key allowed, softmax gave NaN
        if bool(empty_row.any()):
            weights = weights.masked_fill(empty_row, 0.0)  # zeros (the NaN gradients are masked out too)
    mixed = weights if dropout is None else dropout(weights)
    return mixed @ value, weights  # (..., L_q, d_v), (..., L_q, L_k): the weights before dropout


def _fused_attention(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None, is_causal: bool,
                     dropout_p: float) -> Tensor:
    """PyTorch's fused kernel, unchecked: see :func:`fused_scaled_dot_product_attention`."""
    if mask is None:  # is_causal=True alone is PyTorch's fastest path: it skips the blocks above the diagonal
        return F.scaled_dot_product_attention(query, key, value, dropout_p=dropout_p, is_causal=is_causal)
    if is_causal:
        mask = _with_causal(mask, query.shape[-2], query.device)
    key, value = _zero_unused_keys(mask, key, value)
    # A row with no allowed key: PyTorch (>= 2.5) returns zeros and zero gradients for it, as the course does.
    return F.scaled_dot_product_attention(query, key, value, attn_mask=mask, dropout_p=dropout_p)


# ---------------------------------------------------------------------------------------------------------------
# The public functions: check, then call the core.


def _check_qkv(query: object, key: object, value: object, is_causal: object = False) -> tuple[int, ...]:
    """Validate query (..., L_q, d_k), key (..., L_k, d_k), value (..., L_k, d_v) and ``is_causal``.

    Returns the shape of the scores, ``(..., L_q, L_k)``. A few cheap tests pass good input at once
    (a tiny attention costs a few µs, so the checks must cost less); anything else gets the detailed
    checks of :func:`_explain_qkv`, which raise the error that names the argument.
    """
    good = (
        isinstance(query, Tensor) and isinstance(key, Tensor) and isinstance(value, Tensor)
        and query.is_floating_point() and query.dtype == key.dtype == value.dtype
        and query.ndim >= 2 and key.ndim >= 2 and value.ndim >= 2 and type(is_causal) is bool
    )
    if good:
        qs, ks, vs = tuple(query.shape), tuple(key.shape), tuple(value.shape)
        good = qs[-1] >= 1 and ks[-1] == qs[-1] and vs[-2] == ks[-2] and (not is_causal or qs[-2] == ks[-2])
    if not good:
        _explain_qkv(query, key, value, is_causal)
    batch = qs[:-2]
    if not batch == ks[:-2] == vs[:-2]:  # the common case, equal batch dimensions, needs no broadcasting
        batch = broadcast_shape(batch, ks[:-2])
        if batch is None or broadcast_shape(batch, vs[:-2]) is None:
            raise ValueError(
                "the leading (batch) dimensions of query, key and value must broadcast; got "
                f"{shape_str(qs)}, {shape_str(ks)}, {shape_str(vs)}"
            )
    return (*batch, qs[-2], ks[-2])


def _explain_qkv(query: object, key: object, value: object, is_causal: object) -> None:
    """Raise the first error that query, key, value or ``is_causal`` deserves."""
    for name, tensor in (("query", query), ("key", key), ("value", value)):
        require_float(name, tensor)
        if tensor.ndim < 2:
            raise ValueError(f"{name} must have at least 2 dimensions (..., L, d); got shape {shape_str(tensor.shape)}")
    d_k = query.shape[-1]
    if d_k < 1:
        raise ValueError(f"query must have a last dimension d_k of at least 1; got shape {shape_str(query.shape)}")
    require_last_dim("key", key, d_k, "d_k of query")
    if value.shape[-2] != key.shape[-2]:
        raise ValueError(
            f"value must have as many rows as key, L_k = {key.shape[-2]}; got value shape {shape_str(value.shape)}"
        )
    if not (query.dtype == key.dtype == value.dtype):
        raise TypeError(f"query, key and value must share one dtype; got {query.dtype}, {key.dtype}, {value.dtype}")
    _check_is_causal(is_causal, query.shape[-2], key.shape[-2])
    raise AssertionError("_explain_qkv found nothing wrong")  # unreachable: _check_qkv's tests are the same


def _check_is_causal(is_causal: object, l_q: int, l_k: int) -> None:
    if type(is_causal) is not bool:
        raise TypeError(f"is_causal must be a bool; got {type(is_causal).__name__}")
    if is_causal and l_q != l_k:
        raise ValueError(
            f"is_causal=True needs as many queries as keys (query i sees keys 0..i); got L_q = {l_q}, L_k = {l_k}. "
            "For another alignment pass an explicit mask"
        )


def _check_mask(mask: object, scores_shape: tuple[int, ...], layout: str) -> Tensor:
    tensor = require_bool_mask("mask", mask)
    ndim = len(scores_shape)
    if tensor.ndim != 2 and tensor.ndim != ndim:
        hint = (
            " A (batch, 1, L_k) padding mask would line its batch axis up with the heads: "
            "add the head axis, mask[:, None] -> (batch, 1, 1, L_k)"
            if tensor.ndim == 3 and ndim == 4
            else " (a mask with fewer axes would be lined up from the right, so its axes could meet the wrong ones)"
        )
        raise ValueError(
            f"mask must be 2-D (L_q, L_k) or {ndim}-D like the scores {layout} = {shape_str(scores_shape)}; "
            f"got {tensor.ndim}-D {shape_str(tensor.shape)}.{hint}"
        )
    if not broadcasts_to(tensor.shape, scores_shape):
        raise ValueError(f"mask must broadcast to {layout} = {shape_str(scores_shape)}; got {shape_str(tensor.shape)}")
    return tensor


def scaled_dot_product_attention(
    query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None, *, is_causal: bool = False,
    dropout: Callable[[Tensor], Tensor] | None = None,
) -> tuple[Tensor, Tensor]:
    """softmax(Q Kᵀ / √d_k) V, written out step by step so that the weights can be inspected.

    Args:
        query: (..., L_q, d_k)
        key:   (..., L_k, d_k)
        value: (..., L_k, d_v)
        mask:  bool, True = may attend; 2-D (L_q, L_k), or with as many axes as the scores (..., L_q, L_k),
            each axis of size 1 or the scores' size (e.g. (batch, 1, L_k) for 3-D scores,
            (batch, 1, 1, L_k) for per-head scores (batch, heads, L_q, L_k)).
        is_causal: query i may attend to keys 0..i only (needs L_q == L_k); ANDed with ``mask`` if both given.
        dropout: applied to the weights before they multiply ``value`` (e.g. an ``nn.Dropout``).

    Returns:
        ``(output (..., L_q, d_v), weights (..., L_q, L_k))``; the weights are those *before* dropout
        (each row sums to 1, or is all zeros when the row may attend to no key).
    """
    scores_shape = _check_qkv(query, key, value, is_causal)
    if mask is not None:
        mask = _check_mask(mask, scores_shape, "(..., L_q, L_k)")
    return _attention(query, key, value, mask, is_causal, dropout)


def fused_scaled_dot_product_attention(
    query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None, *, is_causal: bool = False,
    dropout_p: float = 0.0,
) -> Tensor:
    """The same output as :func:`scaled_dot_product_attention`, by PyTorch's fused kernel.

    ``torch.nn.functional.scaled_dot_product_attention`` shares the course's mask meaning
    (True = may attend). It never materialises the weights, so it is faster and lighter;
    use it when the weights are not needed. ``mask`` and ``is_causal`` are read as in
    :func:`scaled_dot_product_attention`; ``is_causal=True`` without a mask reaches PyTorch's causal kernel,
    which skips the blocks above the diagonal and builds no (L, L) mask. ``dropout_p`` drops weights in the
    kernel (training only). Returns ``output (..., L_q, d_v)``.
    """
    scores_shape = _check_qkv(query, key, value, is_causal)
    if mask is not None:
        mask = _check_mask(mask, scores_shape, "(..., L_q, L_k)")
    if type(dropout_p) not in (float, int) or not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be a number in [0, 1); got {dropout_p!r}")
    return _fused_attention(query, key, value, mask, is_causal, dropout_p)


def causal_mask(length: int, *, device: torch.device | str | None = None) -> Tensor:
    """(length, length) bool mask, True on and below the diagonal: position i sees positions 0..i."""
    require_count("length", length)
    return torch.ones(length, length, dtype=torch.bool, device=device).tril()


def padding_mask(tokens: Tensor, pad_id: int) -> Tensor:
    """tokens (batch, L) -> (batch, 1, L) bool mask, True = a real token (not ``pad_id``).

    Every position holding ``pad_id`` is masked, so ``pad_id`` must not be the id of a real token
    (the models check this; see ``docs/conventions.md``). :func:`lengths_mask` builds the same mask
    from the lengths, without a pad id. For per-head scores (batch, heads, L_q, L_k) add the head axis:
    ``padding_mask(tokens, pad_id)[:, None]`` is (batch, 1, 1, L).
    """
    require_tokens("tokens", tokens)
    if isinstance(pad_id, bool) or not isinstance(pad_id, int):
        raise TypeError(f"pad_id must be an int; got {type(pad_id).__name__}")
    return (tokens != pad_id).unsqueeze(1)  # (batch, 1, L): broadcasts over the queries


def lengths_mask(lengths: Tensor, length: int) -> Tensor:
    """lengths (batch,) -> (batch, 1, length) bool mask, True on the first ``lengths[b]`` positions of row b.

    The same mask as :func:`padding_mask` for right-padded rows, read from the lengths instead of a pad id.
    """
    require_tensor("lengths", lengths)
    if lengths.dtype.is_floating_point or lengths.dtype == torch.bool or lengths.is_complex():
        raise TypeError(f"lengths must hold integers (torch.long); got dtype {lengths.dtype}")
    require_ndim("lengths", lengths, 1, "(batch,)")
    if isinstance(length, bool) or not isinstance(length, int):
        raise TypeError(f"length must be an int; got {type(length).__name__}")
    if lengths.numel() and (int(lengths.min()) < 0 or int(lengths.max()) > length):
        raise ValueError(
            f"lengths must be in [0, length = {length}]; got values from {int(lengths.min())} to {int(lengths.max())}"
        )
    positions = torch.arange(length, device=lengths.device)  # (length,)
    return (positions < lengths[:, None]).unsqueeze(1)  # (batch, 1, length)


class MultiHeadAttention(nn.Module):
    """Multi-head attention as in the paper: h heads of size d_head = d_model / h.

    ``w_q``, ``w_k``, ``w_v`` project the inputs, the heads attend independently, their outputs
    are concatenated and ``w_o`` mixes them.
    """

    def __init__(self, d_model: int, num_heads: int, *, dropout: float = 0.0, bias: bool = True) -> None:
        super().__init__()
        for name, number in (("d_model", d_model), ("num_heads", num_heads)):
            if isinstance(number, bool) or not isinstance(number, int):
                raise TypeError(f"{name} must be an int; got {type(number).__name__}")
            if number < 1:
                raise ValueError(f"{name} must be positive; got {number}")
        if d_model % num_heads:
            raise ValueError(
                f"d_model must be divisible by num_heads; got d_model = {d_model}, num_heads = {num_heads} "
                f"(remainder {d_model % num_heads})"
            )
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1); got {dropout}")
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_head = d_model // num_heads
        self.dropout = dropout
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)
        self.attn_dropout = nn.Dropout(dropout)

    def split_heads(self, x: Tensor) -> Tensor:
        """(batch, L, d_model) -> (batch, heads, L, d_head)."""
        batch, length, _ = x.shape
        return x.view(batch, length, self.num_heads, self.d_head).transpose(1, 2)

    def merge_heads(self, x: Tensor) -> Tensor:
        """(batch, heads, L, d_head) -> (batch, L, d_model): the concatenation of the heads."""
        batch, _, length, _ = x.shape
        return x.transpose(1, 2).reshape(batch, length, self.d_model)

    def check_inputs(
        self, query: object, key: object, value: object, mask: object = None, is_causal: object = False
    ) -> None:
        """The checks of :meth:`forward`: a clear ValueError or TypeError for each bad input, before any work."""
        dtype = self.w_q.weight.dtype
        for name, tensor in (("query", query), ("key", key), ("value", value)):
            require_float(name, tensor)
            require_ndim(name, tensor, 3, "(batch, L, d_model)")
            require_last_dim(name, tensor, self.d_model, "d_model")
            if tensor.dtype != dtype:
                raise TypeError(
                    f"{name} must have the dtype of the module's weights, {dtype}; got {tensor.dtype} "
                    f"(convert the input with .to({dtype}) or the module with .to({tensor.dtype}))"
                )
        require_same_batch(query=query, key=key, value=value)
        if key.shape[1] != value.shape[1]:
            raise ValueError(
                f"value must have the same length as key, L_k = {key.shape[1]}; "
                f"got value shape {shape_str(value.shape)}"
            )
        _check_is_causal(is_causal, query.shape[1], key.shape[1])
        if mask is None:
            return
        batch, l_q, l_k = query.shape[0], query.shape[1], key.shape[1]
        mask = require_bool_mask("mask", mask)
        if mask.ndim not in (2, 3) or not broadcasts_to(mask.shape, (batch, l_q, l_k)):
            hint = ""
            if mask.ndim == 2 and tuple(mask.shape) == (batch, l_k):
                hint = (
                    ". A 2-D mask means (L_q, L_k); for a padding mask of shape (batch, L_k) use "
                    "padding_mask's (batch, 1, L_k) form: mask[:, None]"
                )
            raise ValueError(
                f"mask must broadcast to (batch, L_q, L_k) = {shape_str((batch, l_q, l_k))} (no head axis); "
                f"got {shape_str(mask.shape)}{hint}"
            )

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None, *, is_causal: bool = False,
        need_weights: bool = True,
    ) -> tuple[Tensor, Tensor | None]:
        """(batch, L_q, d_model), (batch, L_k, d_model) x2 -> output (batch, L_q, d_model), weights.

        ``mask`` (bool, True = may attend, no head axis) is (L_q, L_k), (batch, L_q, L_k) or (batch, 1, L_k).
        A 2-D mask always means (L_q, L_k), even when batch == L_q: a (batch, L_k) padding mask must be
        given as (batch, 1, L_k), as :func:`padding_mask` makes it. ``is_causal=True``: query i attends to
        keys 0..i (self-attention, L_q == L_k), ANDed with ``mask``.

        ``weights`` is (batch, heads, L_q, L_k), before dropout. With ``need_weights=False`` the fused
        kernel computes the output and ``weights`` is ``None``.
        """
        self.check_inputs(query, key, value, mask, is_causal)
        if mask is not None and mask.ndim == 3:
            mask = mask.unsqueeze(1)  # (batch, 1, L_q|1, L_k): one mask for all heads
        q = self.split_heads(self.w_q(query))  # (batch, heads, L_q, d_head)
        k = self.split_heads(self.w_k(key))  # (batch, heads, L_k, d_head)
        v = self.split_heads(self.w_v(value))  # (batch, heads, L_k, d_head)
        if need_weights:
            dropout = self.attn_dropout if self.training and self.dropout > 0 else None
            heads, weights = _attention(q, k, v, mask, is_causal, dropout)
        else:
            p = self.dropout if self.training else 0.0
            heads, weights = _fused_attention(q, k, v, mask, is_causal, p), None
        return self.w_o(self.merge_heads(heads)), weights  # (batch, L_q, d_model)

    @classmethod
    def from_torch(cls, module: nn.MultiheadAttention) -> MultiHeadAttention:
        """A copy of a ``batch_first=True`` ``nn.MultiheadAttention`` with the same numbers.

        PyTorch keeps W_Q, W_K, W_V stacked in ``in_proj_weight`` (3·d_model, d_model); they are split here.
        Remember that PyTorch's ``attn_mask`` means True = blocked: pass ``~mask`` to it.
        """
        if not isinstance(module, nn.MultiheadAttention):
            raise TypeError(f"module must be an nn.MultiheadAttention; got {type(module).__name__}")
        if not module.batch_first:
            raise ValueError("module must be built with batch_first=True; got batch_first=False")
        if not module._qkv_same_embed_dim or module.bias_k is not None or module.add_zero_attn:
            raise ValueError("module must use kdim = vdim = embed_dim, add_bias_kv=False and add_zero_attn=False")
        weight = module.in_proj_weight
        bias = module.in_proj_bias is not None
        new = cls(module.embed_dim, module.num_heads, dropout=module.dropout, bias=bias)
        new = new.to(device=weight.device, dtype=weight.dtype)
        with torch.no_grad():
            for linear, part in zip((new.w_q, new.w_k, new.w_v), weight.chunk(3, dim=0)):
                linear.weight.copy_(part)
            new.w_o.weight.copy_(module.out_proj.weight)
            if bias:
                for linear, part in zip((new.w_q, new.w_k, new.w_v), module.in_proj_bias.chunk(3)):
                    linear.bias.copy_(part)
                new.w_o.bias.copy_(module.out_proj.bias)
        return new.train(module.training)
