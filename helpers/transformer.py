"""The full encoder-decoder stack, structured like ``torch.nn.Transformer`` (final LayerNorm on both stacks).

Also :func:`count_parameters` and :func:`build_on_meta`: the size of a big configuration without allocating it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import torch
from torch import Tensor, nn

from helpers.arguments import module_dtype, require_dropout, require_int
from helpers.kv_cache import KVCache
from helpers.layers import DecoderLayer, EncoderLayer, _check_embeddings
from helpers.validation import require_same_batch

__all__ = ["Transformer", "count_parameters", "build_on_meta"]

ModuleT = TypeVar("ModuleT", bound=nn.Module)


def count_parameters(module: nn.Module) -> int:
    """The number of numbers in ``module``'s parameters; works on the meta device (see :func:`build_on_meta`)."""
    return sum(p.numel() for p in module.parameters())


def build_on_meta(factory: Callable[[], ModuleT]) -> ModuleT:
    """``factory()`` built on ``torch.device("meta")``: tensors with shapes but no storage and no random draws.

    ``count_parameters(build_on_meta(lambda: nn.Transformer(1024, 16, 6, 6, 4096)))`` counts 176 M parameters
    without allocating 700 MB. The model cannot compute; it is for counting and inspecting shapes.
    """
    with torch.device("meta"):
        return factory()


class Transformer(nn.Module):
    """N encoder layers and N decoder layers working on embeddings (batch-first).

    The defaults are the paper's base model: d_model = 512, 8 heads, N = 6, d_ff = 2048; the arguments
    are those of ``nn.Transformer`` (``num_encoder_layers``, ``num_decoder_layers``).
    Masks follow the course convention (bool, True = may attend):
    ``src_mask`` (batch, L_src, L_src) or (batch, 1, L_src), ``tgt_mask`` (L_tgt, L_tgt) or
    (batch, L_tgt, L_tgt) or (batch, 1, L_tgt), ``memory_mask`` (batch, 1, L_src) or (batch, L_tgt, L_src).
    ``tgt_is_causal=True`` ANDs the causal mask into ``tgt_mask`` (without a ``tgt_mask``, PyTorch's fastest path).
    """

    def __init__(
        self, d_model: int = 512, num_heads: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
        d_ff: int = 2048, *, dropout: float = 0.1, norm_first: bool = False, layer_norm_eps: float = 1e-5,
        bias: bool = True,
    ) -> None:
        super().__init__()
        require_int("d_model", d_model, minimum=1)
        require_int("num_heads", num_heads, minimum=1)
        require_int("num_encoder_layers", num_encoder_layers, minimum=0)
        require_int("num_decoder_layers", num_decoder_layers, minimum=0)
        require_int("d_ff", d_ff, minimum=1)
        require_dropout("dropout", dropout)
        options = dict(dropout=dropout, norm_first=norm_first, layer_norm_eps=layer_norm_eps, bias=bias)
        self.d_model = d_model
        self.encoder_layers = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, **options) for _ in range(num_encoder_layers)
        )
        self.decoder_layers = nn.ModuleList(
            DecoderLayer(d_model, num_heads, d_ff, **options) for _ in range(num_decoder_layers)
        )
        self.encoder_norm = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.decoder_norm = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)

    def _check(self, **embeddings: Tensor) -> None:
        """Each (given by name) is a (batch, L, d_model) tensor of the model's dtype, all with one batch size."""
        dtype = module_dtype(self)
        for name, x in embeddings.items():
            _check_embeddings(name, x, self.d_model, dtype)
        require_same_batch(**embeddings)

    def _keep(self, need_weights: bool | None) -> bool:
        return (not self.training) if need_weights is None else need_weights

    def new_cache(self) -> KVCache:
        """An empty key/value cache for :meth:`decode`, one entry per decoder layer."""
        return KVCache(len(self.decoder_layers))

    def encode(self, src: Tensor, src_mask: Tensor | None = None, *, need_weights: bool | None = None) -> Tensor:
        """src (batch, L_src, d_model) -> memory (batch, L_src, d_model)."""
        self._check(src=src)
        return self._encode(src, src_mask, self._keep(need_weights))

    def _encode(self, x: Tensor, src_mask: Tensor | None, keep: bool) -> Tensor:
        for layer in self.encoder_layers:
            x = layer(x, src_mask, need_weights=keep)
        return self.encoder_norm(x)

    def decode(
        self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None, *,
        tgt_is_causal: bool = False, need_weights: bool | None = None, cache: KVCache | None = None,
    ) -> Tensor:
        """tgt (batch, L_tgt, d_model), memory (batch, L_src, d_model) -> (batch, L_tgt, d_model).

        With a ``cache`` (from :meth:`new_cache`) ``tgt`` holds only the positions after the cached ones
        (usually one) and the decoding is causal; the cache grows by ``L_tgt`` positions.
        """
        self._check(tgt=tgt, memory=memory)
        if cache is not None:
            if not isinstance(cache, KVCache):
                raise TypeError(f"cache must be a KVCache (Transformer.new_cache()); got {type(cache).__name__}")
            if len(cache.layers) != len(self.decoder_layers):
                raise ValueError(
                    f"cache must hold one entry per decoder layer, {len(self.decoder_layers)}; got {len(cache.layers)}"
                )
        return self._decode(tgt, memory, cache, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_is_causal=tgt_is_causal, need_weights=self._keep(need_weights))

    def _decode(self, x: Tensor, memory: Tensor, cache: KVCache | None, **layer_options: object) -> Tensor:
        """:meth:`decode` without the checks; ``layer_options`` go to every :class:`DecoderLayer`."""
        for i, layer in enumerate(self.decoder_layers):
            x = layer(x, memory, cache=None if cache is None else cache.layers[i], **layer_options)
        return self.decoder_norm(x)

    def forward(
        self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None, *, tgt_is_causal: bool = False, need_weights: bool | None = None,
    ) -> Tensor:
        """src (batch, L_src, d_model), tgt (batch, L_tgt, d_model) -> (batch, L_tgt, d_model).

        ``need_weights=None`` keeps the attention weights in eval mode (for :meth:`attention_maps`) and
        takes the fused fast path in training mode.
        """
        self._check(src=src, tgt=tgt)
        keep = self._keep(need_weights)
        memory = self._encode(src, src_mask, keep)
        return self._decode(tgt, memory, None, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_is_causal=tgt_is_causal, need_weights=keep)

    def attention_maps(self) -> dict[str, Tensor]:
        """The weights of the last forward, stacked over layers.

        ``{"encoder_self": (layers, batch, heads, L_src, L_src), "decoder_self": (layers, batch, heads, L_tgt, L_tgt),
        "cross": (layers, batch, heads, L_tgt, L_src)}``.
        """
        maps = {
            "encoder_self": [layer.self_attention_weights for layer in self.encoder_layers],
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
        linear1 = encoder_layers[0].feed_forward.linear1
        new = cls(
            module.d_model,
            module.nhead,
            0,  # the copied layers are put in below
            0,
            linear1.out_features,
            dropout=module.encoder.layers[0].dropout.p,
            norm_first=encoder_layers[0].self_attn_residual.norm_first,
            layer_norm_eps=module.encoder.norm.eps,
            bias=linear1.bias is not None,
        ).to(device=linear1.weight.device, dtype=linear1.weight.dtype)
        new.encoder_layers = nn.ModuleList(encoder_layers)
        new.decoder_layers = nn.ModuleList(decoder_layers)
        new.encoder_norm.load_state_dict(module.encoder.norm.state_dict())
        new.decoder_norm.load_state_dict(module.decoder.norm.state_dict())
        return new.train(module.training)
