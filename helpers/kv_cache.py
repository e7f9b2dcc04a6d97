"""A key/value cache for incremental (token by token) decoding.

Decoding step t feeds the decoder only the new position t. Each decoder layer keeps the keys and values
of its self-attention for positions 0..t-1 (they never change: position i sees only 0..i) and the keys and
values of the encoder output (computed at the first step), so step t projects one position instead of
re-running the whole prefix. The result equals re-running the decoder on the prefix (tests/test_layers.py).
Meant for inference (``model.eval()``): the cached path does no attention dropout.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from helpers.attention import MultiHeadAttention, scaled_dot_product_attention

__all__ = ["LayerCache", "KVCache"]


def _attend(
    attn: MultiHeadAttention, x: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None
) -> tuple[Tensor, Tensor]:
    """Queries from x (batch, L_q, d_model) over per-head keys, values (batch, heads, L_k, d_head).

    mask: (L_q, L_k) or (batch, 1, L_q | 1, L_k). Returns (batch, L_q, d_model) and weights
    (batch, heads, L_q, L_k).
    """
    queries = attn.split_heads(attn.w_q(x))  # (batch, heads, L_q, d_head)
    heads, weights = scaled_dot_product_attention(queries, keys, values, mask)
    return attn.w_o(attn.merge_heads(heads)), weights


@dataclass
class LayerCache:
    """One decoder layer's cache. keys, values: (batch, heads, t, d_head), positions 0..t-1 so far;
    memory_keys, memory_values: (batch, heads, L_src, d_head)."""

    keys: Tensor | None = None
    values: Tensor | None = None
    memory_keys: Tensor | None = None
    memory_values: Tensor | None = None

    @property
    def length(self) -> int:
        """How many target positions are cached."""
        return 0 if self.keys is None else self.keys.shape[2]

    def self_attention(self, attn: MultiHeadAttention, h: Tensor) -> tuple[Tensor, Tensor]:
        """The new positions h (batch, L_new, d_model) attend to the cached ones and, causally, to each other."""
        start, new = self.length, h.shape[1]
        keys, values = attn.split_heads(attn.w_k(h)), attn.split_heads(attn.w_v(h))  # (batch, heads, L_new, d_head)
        self.keys = keys if self.keys is None else torch.cat([self.keys, keys], dim=2)
        self.values = values if self.values is None else torch.cat([self.values, values], dim=2)
        # (L_new, start + L_new): new position start + i sees keys 0 .. start + i
        causal = torch.arange(start + new, device=h.device) <= start + torch.arange(new, device=h.device)[:, None]
        return _attend(attn, h, self.keys, self.values, causal)

    def cross_attention(
        self, attn: MultiHeadAttention, h: Tensor, memory: Tensor, memory_mask: Tensor | None
    ) -> tuple[Tensor, Tensor]:
        """h (batch, L_new, d_model) attends over memory (batch, L_src, d_model), projected once."""
        if self.memory_keys is None:
            self.memory_keys = attn.split_heads(attn.w_k(memory))  # (batch, heads, L_src, d_head)
            self.memory_values = attn.split_heads(attn.w_v(memory))
        if memory_mask is not None and memory_mask.ndim == 3:
            memory_mask = memory_mask.unsqueeze(1)  # (batch, 1, L_q | 1, L_src): the same for every head
        return _attend(attn, h, self.memory_keys, self.memory_values, memory_mask)


class KVCache:
    """The caches of a decoder stack, one :class:`LayerCache` per layer (``Transformer.new_cache()``)."""

    def __init__(self, num_layers: int) -> None:
        self.layers = [LayerCache() for _ in range(num_layers)]

    @property
    def length(self) -> int:
        """How many target positions are cached (the position of the next one)."""
        return self.layers[0].length if self.layers else 0
