"""The pieces of one Transformer layer: positional encoding, feed-forward, the residual sub-layer, encoder and
decoder layers.

The layers follow ``torch.nn.TransformerEncoderLayer`` / ``TransformerDecoderLayer`` (ReLU, dropout
in the same places, ``norm_first`` for pre-LN), so that ``from_torch`` copies give the same numbers.
``activation="gelu"`` gives BERT's feed-forward (helpers.pretrained builds a real BERT encoder from these layers).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from helpers.arguments import module_dtype, require_dropout, require_dtype, require_int
from helpers.attention import MultiHeadAttention
from helpers.kv_cache import LayerCache
from helpers.validation import require_float, require_last_dim, require_ndim, shape_str

__all__ = ["PositionalEncoding", "FeedForward", "Residual", "EncoderLayer", "DecoderLayer"]


def sinusoidal_table(max_len: int, d_model: int) -> Tensor:
    """(max_len, d_model) table: PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(...)."""
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)  # (max_len, 1)
    frequency = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(position * frequency)  # (max_len, ceil(d/2))
    table[:, 1::2] = torch.cos(position * frequency[: d_model // 2])  # (max_len, floor(d/2))
    return table.to(torch.get_default_dtype())


#: the feed-forward activations by name: the paper's ReLU, and BERT's GELU (the exact, erf form)
ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {"relu": F.relu, "gelu": F.gelu}


def require_activation(name: str, value: object) -> str:
    """``value`` names one of :data:`ACTIVATIONS`."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, one of {sorted(ACTIVATIONS)}; got {type(value).__name__} {value!r}")
    if value not in ACTIVATIONS:
        raise ValueError(f"{name} must be one of {sorted(ACTIVATIONS)}; got {value!r}")
    return value


def _check_embeddings(name: str, x: object, d_model: int, dtype: torch.dtype | None = None) -> Tensor:
    """x is a floating (batch, L, d_model) tensor, of the module's dtype when ``dtype`` is given."""
    tensor = require_float(name, x)
    require_ndim(name, tensor, 3, "(batch, L, d_model)")
    require_last_dim(name, tensor, d_model, "d_model")
    if dtype is not None:
        require_dtype(name, tensor, dtype)
    return tensor


class PositionalEncoding(nn.Module):
    """Adds the paper's sinusoidal position table to (batch, L, d_model) embeddings."""

    def __init__(self, d_model: int, max_len: int = 512, *, dropout: float = 0.0) -> None:
        super().__init__()
        require_int("d_model", d_model, minimum=1)
        require_int("max_len", max_len, minimum=1)
        self.d_model = d_model
        self.max_len = max_len
        self.register_buffer("pe", sinusoidal_table(max_len, d_model), persistent=False)
        self.dropout = nn.Dropout(require_dropout("dropout", dropout))

    def forward(self, x: Tensor, *, start: int = 0) -> Tensor:
        """(batch, L, d_model) -> (batch, L, d_model); the rows are positions start .. start + L - 1."""
        _check_embeddings("x", x, self.d_model)
        if start + x.shape[1] > self.max_len:
            raise ValueError(
                f"x must have length L <= max_len = {self.max_len}"
                + (f" - start = {self.max_len - start}" if start else "")
                + f"; got shape {shape_str(x.shape)}"
            )
        return self.dropout(x + self.pe[start : start + x.shape[1]].to(x.dtype))


class FeedForward(nn.Module):
    """Position-wise feed-forward network: Linear(d_model, d_ff) -> ReLU -> dropout -> Linear(d_ff, d_model).

    ``activation="gelu"`` puts BERT's GELU in place of the ReLU.
    """

    def __init__(
        self, d_model: int, d_ff: int, *, dropout: float = 0.0, bias: bool = True, activation: str = "relu"
    ) -> None:
        super().__init__()
        self.d_model = require_int("d_model", d_model, minimum=1)
        self.activation = require_activation("activation", activation)
        self._activation = ACTIVATIONS[activation]
        self.linear1 = nn.Linear(d_model, require_int("d_ff", d_ff, minimum=1), bias=bias)
        self.linear2 = nn.Linear(d_ff, d_model, bias=bias)
        self.dropout = nn.Dropout(require_dropout("dropout", dropout))

    def forward(self, x: Tensor) -> Tensor:
        """(batch, L, d_model) -> (batch, L, d_model), checked; see :meth:`position_wise`."""
        _check_embeddings("x", x, self.d_model, self.linear1.weight.dtype)
        return self.position_wise(x)

    def position_wise(self, x: Tensor) -> Tensor:
        """(..., d_model) -> (..., d_ff) -> (..., d_model), each position on its own (unchecked)."""
        return self.linear2(self.dropout(self._activation(self.linear1(x))))


class Residual(nn.Module):
    """A residual connection around a sub-layer, with its LayerNorm and dropout.

    post-LN (the paper, ``norm_first=False``): x -> LN(x + dropout(sublayer(x)));
    pre-LN (``norm_first=True``):           x -> x + dropout(sublayer(LN(x))).
    """

    def __init__(self, d_model: int, *, dropout: float, norm_first: bool, layer_norm_eps: float, bias: bool) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.norm = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor]) -> Tensor:
        """x (batch, L, d_model), sublayer: (batch, L, d_model) -> (batch, L, d_model)."""
        if self.norm_first:
            return x + self.dropout(sublayer(self.norm(x)))
        return self.norm(x + self.dropout(sublayer(x)))


def _self_attention(
    attn: MultiHeadAttention, h: Tensor, mask: Tensor | None, is_causal: bool, need_weights: bool
) -> tuple[Tensor, Tensor | None]:
    """h (batch, L, d_model) attends to itself; ``is_causal`` ANDs "position i sees 0..i" into ``mask``."""
    return attn(h, h, h, mask, is_causal=is_causal, need_weights=need_weights)


class _Layer(nn.Module):
    """What encoder and decoder layers share: self-attention, [cross-attention,] feed-forward, each in a Residual."""

    #: whether the layer also attends over the encoder output; each subclass says (a decoder layer does)
    _cross_attention: bool

    def __init__(
        self, d_model: int, num_heads: int, d_ff: int, *, dropout: float = 0.1, norm_first: bool = False,
        layer_norm_eps: float = 1e-5, bias: bool = True, activation: str = "relu",
    ) -> None:
        super().__init__()
        require_dropout("dropout", dropout)
        require_activation("activation", activation)
        # built in this order so that a seed gives the same weights as PyTorch's layers (and as before)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout, bias=bias)
        if self._cross_attention:
            self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout, bias=bias)
        self.feed_forward = FeedForward(d_model, d_ff, dropout=dropout, bias=bias, activation=activation)
        options = dict(dropout=dropout, norm_first=norm_first, layer_norm_eps=layer_norm_eps, bias=bias)
        self.self_attn_residual = Residual(d_model, **options)
        if self._cross_attention:
            self.cross_attn_residual = Residual(d_model, **options)
        self.feed_forward_residual = Residual(d_model, **options)
        self.self_attention_weights: Tensor | None = None  # (batch, heads, L, L) of the last forward, if asked
        if self._cross_attention:
            self.cross_attention_weights: Tensor | None = None  # (batch, heads, L_tgt, L_src)

    @classmethod
    def _from_torch(cls, layer: nn.Module, kind: type) -> _Layer:
        """A ``cls`` layer with the configuration and the weights of PyTorch's ``layer`` (an instance of ``kind``)."""
        if not isinstance(layer, kind):
            raise TypeError(f"layer must be an nn.{kind.__name__}; got {type(layer).__name__}")
        if not (layer.activation is F.relu or isinstance(layer.activation, nn.ReLU)):
            raise ValueError("layer must use the ReLU activation (the paper's); got another activation")
        if not layer.self_attn.batch_first:
            raise ValueError("layer must be built with batch_first=True; got batch_first=False")
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
        if hasattr(layer, "multihead_attn"):
            new.cross_attn = MultiHeadAttention.from_torch(layer.multihead_attn)
        new.feed_forward.linear1.load_state_dict(layer.linear1.state_dict())
        new.feed_forward.linear2.load_state_dict(layer.linear2.state_dict())
        # PyTorch numbers its norms in the order of the sub-layers
        residuals = [module for module in new.children() if isinstance(module, Residual)]
        for residual, norm in zip(residuals, (layer.norm1, layer.norm2, getattr(layer, "norm3", None))):
            residual.norm.load_state_dict(norm.state_dict())
        return new.train(layer.training)


class EncoderLayer(_Layer):
    """Self-attention and feed-forward, each wrapped in a :class:`Residual` (residual connection + LayerNorm)."""

    _cross_attention = False

    def forward(
        self, x: Tensor, mask: Tensor | None = None, *, is_causal: bool = False, need_weights: bool = False
    ) -> Tensor:
        """x (batch, L, d_model), mask broadcastable to (batch, L, L) -> (batch, L, d_model).

        ``is_causal=True`` also lets position i see only positions 0..i (ANDed with ``mask``).
        With ``need_weights=True`` the attention weights are kept in ``self.self_attention_weights``.
        """
        require_dtype("x", require_float("x", x), module_dtype(self))

        def self_attention(h: Tensor) -> Tensor:
            out, self.self_attention_weights = _self_attention(self.self_attn, h, mask, is_causal, need_weights)
            return out

        x = self.self_attn_residual(x, self_attention)
        return self.feed_forward_residual(x, self.feed_forward.position_wise)

    @classmethod
    def from_torch(cls, layer: nn.TransformerEncoderLayer) -> EncoderLayer:
        """A copy of a ``batch_first=True`` ``nn.TransformerEncoderLayer`` (ReLU) with the same numbers."""
        return cls._from_torch(layer, nn.TransformerEncoderLayer)


class DecoderLayer(_Layer):
    """Masked self-attention, cross-attention over the encoder output, feed-forward; each in a :class:`Residual`."""

    _cross_attention = True

    def forward(
        self, x: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None, *,
        tgt_is_causal: bool = False, need_weights: bool = False, cache: LayerCache | None = None,
    ) -> Tensor:
        """x (batch, L_tgt, d_model), memory (batch, L_src, d_model) -> (batch, L_tgt, d_model).

        ``tgt_mask`` broadcasts to (batch, L_tgt, L_tgt), ``memory_mask`` to (batch, L_tgt, L_src) (usually
        the source padding mask). ``tgt_is_causal=True`` lets target position i see only positions 0..i
        (ANDed with ``tgt_mask``): PyTorch's fastest path when there is no ``tgt_mask``.

        With a ``cache`` (incremental decoding, see :mod:`helpers.kv_cache`) ``x`` holds only the new
        positions; they see every cached position and, causally, each other; ``tgt_mask`` must be None.
        """
        require_dtype("x", require_float("x", x), module_dtype(self))
        if cache is not None and tgt_mask is not None:
            raise ValueError("tgt_mask must be None with a cache (cached decoding is causal); got a mask")

        def self_attention(h: Tensor) -> Tensor:
            if cache is None:
                out, weights = _self_attention(self.self_attn, h, tgt_mask, tgt_is_causal, need_weights)
            else:
                out, weights = cache.self_attention(self.self_attn, h)
            self.self_attention_weights = weights if need_weights else None
            return out

        def cross_attention(h: Tensor) -> Tensor:
            # queries from the decoder, keys and values from the encoder output
            if cache is None:
                out, weights = self.cross_attn(h, memory, memory, memory_mask, need_weights=need_weights)
            else:
                out, weights = cache.cross_attention(self.cross_attn, h, memory, memory_mask)
            self.cross_attention_weights = weights if need_weights else None
            return out

        x = self.self_attn_residual(x, self_attention)
        x = self.cross_attn_residual(x, cross_attention)
        return self.feed_forward_residual(x, self.feed_forward.position_wise)

    @classmethod
    def from_torch(cls, layer: nn.TransformerDecoderLayer) -> DecoderLayer:
        """A copy of a ``batch_first=True`` ``nn.TransformerDecoderLayer`` (ReLU) with the same numbers."""
        return cls._from_torch(layer, nn.TransformerDecoderLayer)
