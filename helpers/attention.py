"""Scaled dot-product attention, masks and multi-head attention.

Conventions (see ``shared/design/helpers-api.md``):

* tensors are batch-first, ``(batch, seq, d_model)``; per-head tensors are ``(batch, heads, seq, d_head)``;
* a mask is a ``torch.bool`` tensor, **True = this query may attend to this key**, with no head axis;
* a query row with no key it may attend to gets weights of zeros and an output of zeros, never NaN.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from helpers.validation import (
    broadcasts_to,
    require_bool_mask,
    require_float,
    require_last_dim,
    require_ndim,
    require_same_batch,
    require_tokens,
    shape_str,
)

__all__ = [
    "scaled_dot_product_attention",
    "fused_scaled_dot_product_attention",
    "causal_mask",
    "padding_mask",
    "MultiHeadAttention",
]


def _check_qkv(query: object, key: object, value: object) -> tuple[int, ...]:
    """Validate query (..., L_q, d_k), key (..., L_k, d_k), value (..., L_k, d_v).

    Returns the shape of the scores, ``(..., L_q, L_k)``.
    """
    for name, tensor in (("query", query), ("key", key), ("value", value)):
        require_float(name, tensor)
        if tensor.ndim < 2:
            raise ValueError(f"{name} must have at least 2 dimensions (..., L, d); got shape {shape_str(tensor.shape)}")
    d_k = query.shape[-1]
    require_last_dim("key", key, d_k, "d_k of query")
    if value.shape[-2] != key.shape[-2]:
        raise ValueError(
            f"value must have as many rows as key, L_k = {key.shape[-2]}; got value shape {shape_str(value.shape)}"
        )
    if not (query.dtype == key.dtype == value.dtype):
        raise TypeError(f"query, key and value must share one dtype; got {query.dtype}, {key.dtype}, {value.dtype}")
    try:
        batch = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    except RuntimeError:
        raise ValueError(
            "the leading (batch) dimensions of query, key and value must broadcast; got "
            f"{shape_str(query.shape)}, {shape_str(key.shape)}, {shape_str(value.shape)}"
        ) from None
    return (*batch, query.shape[-2], key.shape[-2])


def _check_mask(mask: object, scores_shape: tuple[int, ...], layout: str) -> Tensor:
    tensor = require_bool_mask("mask", mask)
    if not broadcasts_to(tensor.shape, scores_shape):
        raise ValueError(f"mask must broadcast to {layout} = {shape_str(scores_shape)}; got {shape_str(tensor.shape)}")
    return tensor


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    *,
    dropout: Callable[[Tensor], Tensor] | None = None,
) -> tuple[Tensor, Tensor]:
    """softmax(Q Kᵀ / √d_k) V, written out step by step so that the weights can be inspected.

    Args:
        query: (..., L_q, d_k)
        key:   (..., L_k, d_k)
        value: (..., L_k, d_v)
        mask:  bool, broadcastable to (..., L_q, L_k); True = may attend.
        dropout: applied to the weights before they multiply ``value`` (e.g. an ``nn.Dropout``).

    Returns:
        ``(output (..., L_q, d_v), weights (..., L_q, L_k))``; the weights are those before dropout.
    """
    scores_shape = _check_qkv(query, key, value)
    d_k = query.shape[-1]
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)  # (..., L_q, L_k)
    if mask is not None:
        mask = _check_mask(mask, scores_shape, "(..., L_q, L_k)")
        scores = scores.masked_fill(~mask, float("-inf"))
        # A row with no allowed key would be softmax(-inf, ..., -inf) = NaN. Give it finite scores
        # (so no NaN reaches the gradients either); the weights are zeroed right after the softmax.
        empty_row = ~mask.any(dim=-1, keepdim=True)  # (..., L_q, 1)
        scores = scores.masked_fill(empty_row, 0.0)
    weights = torch.softmax(scores, dim=-1)  # (..., L_q, L_k), each row sums to 1
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)  # fully masked rows become all zeros
    mixed = weights if dropout is None else dropout(weights)
    return mixed @ value, weights  # (..., L_q, d_v), (..., L_q, L_k)


def fused_scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    *,
    dropout_p: float = 0.0,
) -> Tensor:
    """The same output as :func:`scaled_dot_product_attention`, by PyTorch's fused kernel.

    ``torch.nn.functional.scaled_dot_product_attention`` shares the course's mask meaning
    (True = may attend). It never materialises the weights, so it is faster and lighter;
    use it when the weights are not needed. Returns ``output (..., L_q, d_v)``.
    """
    scores_shape = _check_qkv(query, key, value)
    if mask is not None:
        mask = _check_mask(mask, scores_shape, "(..., L_q, L_k)")
        empty_row = ~mask.any(dim=-1, keepdim=True)  # (..., L_q, 1)
        if bool(empty_row.any()):
            # Let empty rows attend everywhere (finite numbers, finite gradients), then zero their output.
            output = F.scaled_dot_product_attention(query, key, value, attn_mask=mask | empty_row, dropout_p=dropout_p)
            return output.masked_fill(empty_row, 0.0)
        return F.scaled_dot_product_attention(query, key, value, attn_mask=mask, dropout_p=dropout_p)
    return F.scaled_dot_product_attention(query, key, value, dropout_p=dropout_p)


def causal_mask(length: int, *, device: torch.device | str | None = None) -> Tensor:
    """(length, length) bool mask, True on and below the diagonal: position i sees positions 0..i."""
    if isinstance(length, bool) or not isinstance(length, int):
        raise TypeError(f"length must be an int; got {type(length).__name__}")
    if length < 1:
        raise ValueError(f"length must be at least 1; got {length}")
    return torch.ones(length, length, dtype=torch.bool, device=device).tril()


def padding_mask(tokens: Tensor, pad_id: int) -> Tensor:
    """tokens (batch, L) -> (batch, 1, L) bool mask, True = a real token (not ``pad_id``)."""
    require_tokens("tokens", tokens)
    if isinstance(pad_id, bool) or not isinstance(pad_id, int):
        raise TypeError(f"pad_id must be an int; got {type(pad_id).__name__}")
    return (tokens != pad_id).unsqueeze(1)  # (batch, 1, L): broadcasts over the queries


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

    def _check_inputs(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None) -> Tensor | None:
        for name, tensor in (("query", query), ("key", key), ("value", value)):
            require_float(name, tensor)
            require_ndim(name, tensor, 3, "(batch, L, d_model)")
            require_last_dim(name, tensor, self.d_model, "d_model")
        require_same_batch(query=query, key=key, value=value)
        if key.shape[1] != value.shape[1]:
            raise ValueError(
                f"value must have the same length as key, L_k = {key.shape[1]}; "
                f"got value shape {shape_str(value.shape)}"
            )
        if mask is None:
            return None
        target = (query.shape[0], query.shape[1], key.shape[1])
        mask = require_bool_mask("mask", mask)
        if mask.ndim not in (2, 3) or not broadcasts_to(mask.shape, target):
            raise ValueError(
                f"mask must broadcast to (batch, L_q, L_k) = {shape_str(target)} (no head axis); "
                f"got {shape_str(mask.shape)}"
            )
        return mask.unsqueeze(-3) if mask.ndim == 3 else mask  # (batch, 1, L_q|1, L_k): one mask for all heads

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        mask: Tensor | None = None,
        *,
        need_weights: bool = True,
    ) -> tuple[Tensor, Tensor | None]:
        """(batch, L_q, d_model), (batch, L_k, d_model) x2 -> output (batch, L_q, d_model), weights.

        ``weights`` is (batch, heads, L_q, L_k). With ``need_weights=False`` the fused kernel computes
        the output and ``weights`` is ``None``.
        """
        head_mask = self._check_inputs(query, key, value, mask)
        q = self.split_heads(self.w_q(query))  # (batch, heads, L_q, d_head)
        k = self.split_heads(self.w_k(key))  # (batch, heads, L_k, d_head)
        v = self.split_heads(self.w_v(value))  # (batch, heads, L_k, d_head)
        if need_weights:
            dropout = self.attn_dropout if self.training and self.dropout > 0 else None
            heads, weights = scaled_dot_product_attention(q, k, v, head_mask, dropout=dropout)
        else:
            p = self.dropout if self.training else 0.0
            heads, weights = fused_scaled_dot_product_attention(q, k, v, head_mask, dropout_p=p), None
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
