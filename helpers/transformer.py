"""The full encoder-decoder stack, structured like ``torch.nn.Transformer`` (final LayerNorm on both stacks)."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from helpers.layers import DecoderLayer, EncoderLayer
from helpers.validation import require_float, require_last_dim, require_ndim, require_same_batch

__all__ = ["Transformer"]


class Transformer(nn.Module):
    """N encoder layers and N decoder layers working on embeddings (batch-first).

    The defaults are the paper's base model: d_model = 512, 8 heads, N = 6, d_ff = 2048.
    Masks follow the course convention (bool, True = may attend):
    ``src_mask`` (batch, L_src, L_src) or (batch, 1, L_src), ``tgt_mask`` (L_tgt, L_tgt) or
    (batch, L_tgt, L_tgt), ``memory_mask`` (batch, 1, L_src) or (batch, L_tgt, L_src).
    """

    def __init__(
        self,
        d_model: int = 512,
        num_heads: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        d_ff: int = 2048,
        *,
        dropout: float = 0.1,
        norm_first: bool = False,
        layer_norm_eps: float = 1e-5,
        bias: bool = True,
    ) -> None:
        super().__init__()
        options = dict(dropout=dropout, norm_first=norm_first, layer_norm_eps=layer_norm_eps, bias=bias)
        self.d_model = d_model
        self.num_heads = num_heads
        self.encoder_layers = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, **options) for _ in range(num_encoder_layers)
        )
        self.decoder_layers = nn.ModuleList(
            DecoderLayer(d_model, num_heads, d_ff, **options) for _ in range(num_decoder_layers)
        )
        self.encoder_norm = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.decoder_norm = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)

    def _check(self, name: str, x: Tensor) -> None:
        require_float(name, x)
        require_ndim(name, x, 3, "(batch, L, d_model) embeddings")
        require_last_dim(name, x, self.d_model, "d_model")

    def _keep(self, need_weights: bool | None) -> bool:
        return (not self.training) if need_weights is None else need_weights

    def encode(self, src: Tensor, src_mask: Tensor | None = None, *, need_weights: bool | None = None) -> Tensor:
        """src (batch, L_src, d_model) -> memory (batch, L_src, d_model)."""
        self._check("src", src)
        keep = self._keep(need_weights)
        x = src
        for layer in self.encoder_layers:
            x = layer(x, src_mask, need_weights=keep)
        return self.encoder_norm(x)

    def decode(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        *,
        need_weights: bool | None = None,
    ) -> Tensor:
        """tgt (batch, L_tgt, d_model), memory (batch, L_src, d_model) -> (batch, L_tgt, d_model)."""
        self._check("tgt", tgt)
        self._check("memory", memory)
        require_same_batch(tgt=tgt, memory=memory)
        keep = self._keep(need_weights)
        x = tgt
        for layer in self.decoder_layers:
            x = layer(x, memory, tgt_mask, memory_mask, need_weights=keep)
        return self.decoder_norm(x)

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        *,
        need_weights: bool | None = None,
    ) -> Tensor:
        """src (batch, L_src, d_model), tgt (batch, L_tgt, d_model) -> (batch, L_tgt, d_model).

        ``need_weights=None`` keeps the attention weights in eval mode (for :meth:`attention_maps`) and
        takes the fused fast path in training mode.
        """
        self._check("src", src)
        self._check("tgt", tgt)
        require_same_batch(src=src, tgt=tgt)
        memory = self.encode(src, src_mask, need_weights=need_weights)
        return self.decode(tgt, memory, tgt_mask, memory_mask, need_weights=need_weights)

    def attention_maps(self) -> dict[str, Tensor]:
        """The weights of the last forward, stacked over layers.

        ``{"encoder_self": (layers, batch, heads, L_src, L_src), "decoder_self": (layers, batch, heads, L_tgt, L_tgt),
        "cross": (layers, batch, heads, L_tgt, L_src)}``.
        """
        maps = {
            "encoder_self": [layer.attention_weights for layer in self.encoder_layers],
            "decoder_self": [layer.self_attention_weights for layer in self.decoder_layers],
            "cross": [layer.cross_attention_weights for layer in self.decoder_layers],
        }
        if any(w is None for weights in maps.values() for w in weights):
            raise RuntimeError(
                "no attention weights kept: run forward in eval mode, or with need_weights=True, "
                "before attention_maps()"
            )
        return {name: torch.stack(weights) for name, weights in maps.items()}

    @classmethod
    def from_torch(cls, module: nn.Transformer) -> Transformer:
        """A copy of a ``batch_first=True`` ``nn.Transformer`` (ReLU) with the same numbers."""
        if not isinstance(module, nn.Transformer):
            raise TypeError(f"module must be an nn.Transformer; got {type(module).__name__}")
        encoder_layers = [EncoderLayer.from_torch(layer) for layer in module.encoder.layers]
        decoder_layers = [DecoderLayer.from_torch(layer) for layer in module.decoder.layers]
        first = encoder_layers[0]
        linear1 = first.feed_forward.linear1
        new = cls(
            module.d_model,
            module.nhead,
            0,  # the copied layers are put in below
            0,
            linear1.out_features,
            dropout=module.encoder.layers[0].dropout.p,
            norm_first=first.norm_first,
            layer_norm_eps=first.norm1.eps,
            bias=linear1.bias is not None,
        ).to(device=linear1.weight.device, dtype=linear1.weight.dtype)
        new.encoder_layers = nn.ModuleList(encoder_layers)
        new.decoder_layers = nn.ModuleList(decoder_layers)
        new.encoder_norm.load_state_dict(module.encoder.norm.state_dict())
        new.decoder_norm.load_state_dict(module.decoder.norm.state_dict())
        return new.train(module.training)
