"""The pieces of one Transformer layer: positional encoding, feed-forward, encoder and decoder layers.

The layers follow ``torch.nn.TransformerEncoderLayer`` / ``TransformerDecoderLayer`` (ReLU, dropout
in the same places, ``norm_first`` for pre-LN), so that ``from_torch`` copies give the same numbers.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from helpers.attention import MultiHeadAttention
from helpers.validation import require_float, require_last_dim, require_ndim, shape_str

__all__ = ["PositionalEncoding", "FeedForward", "EncoderLayer", "DecoderLayer"]


def sinusoidal_table(max_len: int, d_model: int) -> Tensor:
    """(max_len, d_model) table: PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(...)."""
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)  # (max_len, 1)
    frequency = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(position * frequency)  # (max_len, ceil(d/2))
    table[:, 1::2] = torch.cos(position * frequency[: d_model // 2])  # (max_len, floor(d/2))
    return table.to(torch.get_default_dtype())


class PositionalEncoding(nn.Module):
    """Adds the paper's sinusoidal position table to (batch, L, d_model) embeddings."""

    def __init__(self, d_model: int, max_len: int = 512, *, dropout: float = 0.0) -> None:
        super().__init__()
        if d_model < 1 or max_len < 1:
            raise ValueError(f"d_model and max_len must be positive; got d_model = {d_model}, max_len = {max_len}")
        self.d_model = d_model
        self.max_len = max_len
        self.register_buffer("pe", sinusoidal_table(max_len, d_model), persistent=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        """(batch, L, d_model) -> (batch, L, d_model)."""
        require_float("x", x)
        require_ndim("x", x, 3, "(batch, L, d_model)")
        require_last_dim("x", x, self.d_model, "d_model")
        if x.shape[1] > self.max_len:
            raise ValueError(f"x must have length L <= max_len = {self.max_len}; got shape {shape_str(x.shape)}")
        return self.dropout(x + self.pe[: x.shape[1]].to(x.dtype))


class FeedForward(nn.Module):
    """Position-wise feed-forward network: Linear(d_model, d_ff) -> ReLU -> dropout -> Linear(d_ff, d_model)."""

    def __init__(self, d_model: int, d_ff: int, *, dropout: float = 0.0, bias: bool = True) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=bias)
        self.linear2 = nn.Linear(d_ff, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        """(batch, L, d_model) -> (batch, L, d_ff) -> (batch, L, d_model), each position on its own."""
        return self.linear2(self.dropout(F.relu(self.linear1(x))))


def _check_torch_layer(layer: nn.Module, kind: type) -> None:
    if not isinstance(layer, kind):
        raise TypeError(f"layer must be an nn.{kind.__name__}; got {type(layer).__name__}")
    if not (layer.activation is F.relu or isinstance(layer.activation, nn.ReLU)):
        raise ValueError("layer must use the ReLU activation (the paper's); got another activation")
    if not layer.self_attn.batch_first:
        raise ValueError("layer must be built with batch_first=True; got batch_first=False")


def _from_torch(cls: type, layer: nn.Module, kind: type) -> nn.Module:
    """A ``cls`` layer with the configuration and the weights of PyTorch's ``layer`` (an instance of ``kind``).

    Copies what encoder and decoder layers share: self-attention, feed-forward and the LayerNorms.
    """
    _check_torch_layer(layer, kind)
    attn = layer.self_attn
    new = cls(
        attn.embed_dim,
        attn.num_heads,
        layer.linear1.out_features,
        dropout=layer.dropout.p,
        norm_first=layer.norm_first,
        layer_norm_eps=layer.norm1.eps,
        bias=attn.in_proj_bias is not None,
    ).to(device=attn.in_proj_weight.device, dtype=attn.in_proj_weight.dtype)
    new.self_attn = MultiHeadAttention.from_torch(attn)
    new.feed_forward.linear1.load_state_dict(layer.linear1.state_dict())
    new.feed_forward.linear2.load_state_dict(layer.linear2.state_dict())
    for name in ("norm1", "norm2", "norm3"):
        if hasattr(layer, name):
            getattr(new, name).load_state_dict(getattr(layer, name).state_dict())
    return new


class EncoderLayer(nn.Module):
    """Self-attention and feed-forward, each wrapped in a residual connection and a LayerNorm.

    post-LN (the paper, ``norm_first=False``): x = LN(x + Sublayer(x));
    pre-LN (``norm_first=True``):           x = x + Sublayer(LN(x)).
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        *,
        dropout: float = 0.1,
        norm_first: bool = False,
        layer_norm_eps: float = 1e-5,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.d_model = d_model
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout, bias=bias)
        self.feed_forward = FeedForward(d_model, d_ff, dropout=dropout, bias=bias)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.attention_weights: Tensor | None = None  # (batch, heads, L, L) of the last forward, if asked

    def _self_attention(self, x: Tensor, mask: Tensor | None, need_weights: bool) -> Tensor:
        out, self.attention_weights = self.self_attn(x, x, x, mask, need_weights=need_weights)
        return self.dropout1(out)

    def forward(self, x: Tensor, mask: Tensor | None = None, *, need_weights: bool = False) -> Tensor:
        """x (batch, L, d_model), mask broadcastable to (batch, L, L) -> (batch, L, d_model).

        With ``need_weights=True`` the attention weights are kept in ``self.attention_weights``.
        """
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), mask, need_weights)
            return x + self.dropout2(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self._self_attention(x, mask, need_weights))
        return self.norm2(x + self.dropout2(self.feed_forward(x)))

    @classmethod
    def from_torch(cls, layer: nn.TransformerEncoderLayer) -> EncoderLayer:
        """A copy of a ``batch_first=True`` ``nn.TransformerEncoderLayer`` (ReLU) with the same numbers."""
        return _from_torch(cls, layer, nn.TransformerEncoderLayer).train(layer.training)


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the encoder output, feed-forward; each with residual + LayerNorm."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        *,
        dropout: float = 0.1,
        norm_first: bool = False,
        layer_norm_eps: float = 1e-5,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.d_model = d_model
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout, bias=bias)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout, bias=bias)
        self.feed_forward = FeedForward(d_model, d_ff, dropout=dropout, bias=bias)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm3 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.dropout3 = nn.Dropout(dropout)
        self.self_attention_weights: Tensor | None = None  # (batch, heads, L_tgt, L_tgt)
        self.cross_attention_weights: Tensor | None = None  # (batch, heads, L_tgt, L_src)

    def _self_attention(self, x: Tensor, mask: Tensor | None, need_weights: bool) -> Tensor:
        out, self.self_attention_weights = self.self_attn(x, x, x, mask, need_weights=need_weights)
        return self.dropout1(out)

    def _cross_attention(self, x: Tensor, memory: Tensor, mask: Tensor | None, need_weights: bool) -> Tensor:
        # queries from the decoder, keys and values from the encoder output
        out, self.cross_attention_weights = self.cross_attn(x, memory, memory, mask, need_weights=need_weights)
        return self.dropout2(out)

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        *,
        need_weights: bool = False,
    ) -> Tensor:
        """x (batch, L_tgt, d_model), memory (batch, L_src, d_model) -> (batch, L_tgt, d_model).

        ``tgt_mask`` broadcasts to (batch, L_tgt, L_tgt) (usually causal), ``memory_mask`` to
        (batch, L_tgt, L_src) (usually the source padding mask).
        """
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), tgt_mask, need_weights)
            x = x + self._cross_attention(self.norm2(x), memory, memory_mask, need_weights)
            return x + self.dropout3(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + self._self_attention(x, tgt_mask, need_weights))
        x = self.norm2(x + self._cross_attention(x, memory, memory_mask, need_weights))
        return self.norm3(x + self.dropout3(self.feed_forward(x)))

    @classmethod
    def from_torch(cls, layer: nn.TransformerDecoderLayer) -> DecoderLayer:
        """A copy of a ``batch_first=True`` ``nn.TransformerDecoderLayer`` (ReLU) with the same numbers."""
        new = _from_torch(cls, layer, nn.TransformerDecoderLayer)
        new.cross_attn = MultiHeadAttention.from_torch(layer.multihead_attn)
        return new.train(layer.training)
