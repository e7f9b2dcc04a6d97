"""A token-level encoder-decoder model around :class:`helpers.transformer.Transformer`."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from helpers.attention import causal_mask, padding_mask
from helpers.layers import PositionalEncoding
from helpers.tasks import BOS, EOS, PAD
from helpers.transformer import Transformer
from helpers.validation import require_same_batch, require_tokens

__all__ = ["Seq2SeqTransformer"]


class Seq2SeqTransformer(nn.Module):
    """Embeddings (scaled by √d_model) + positional encoding + Transformer + a linear layer to the vocabulary.

    Source and target share one embedding table (both sides use the same symbols in the toy tasks).
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int = 64,
        num_heads: int = 4,
        num_layers: int = 6,
        d_ff: int = 128,
        *,
        dropout: float = 0.0,
        norm_first: bool = True,
        max_len: int = 128,
        pad_id: int = PAD,
    ) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.pad_id = pad_id
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.positional = PositionalEncoding(d_model, max_len, dropout=dropout)
        self.transformer = Transformer(
            d_model, num_heads, num_layers, num_layers, d_ff, dropout=dropout, norm_first=norm_first
        )
        self.generator = nn.Linear(d_model, vocab_size)

    def embed(self, tokens: Tensor) -> Tensor:
        """(batch, L) token ids -> (batch, L, d_model)."""
        return self.positional(self.embedding(tokens) * math.sqrt(self.embedding.embedding_dim))

    def masks(self, src: Tensor, tgt: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """The three masks: src (batch, 1, L_src), tgt = causal AND real (batch, L_tgt, L_tgt), memory = src."""
        src_mask = padding_mask(src, self.pad_id)  # (batch, 1, L_src)
        tgt_mask = causal_mask(tgt.shape[1], device=tgt.device) & padding_mask(tgt, self.pad_id)
        return src_mask, tgt_mask, src_mask

    def _check_tokens(self, src: Tensor, tgt: Tensor) -> None:
        require_tokens("src", src, self.vocab_size)
        require_tokens("tgt", tgt, self.vocab_size)
        require_same_batch(src=src, tgt=tgt)

    def forward(self, src: Tensor, tgt: Tensor, *, need_weights: bool | None = None) -> Tensor:
        """src (batch, L_src), tgt (batch, L_tgt) token ids -> logits (batch, L_tgt, vocab_size)."""
        self._check_tokens(src, tgt)
        src_mask, tgt_mask, memory_mask = self.masks(src, tgt)
        hidden = self.transformer(
            self.embed(src), self.embed(tgt), src_mask, tgt_mask, memory_mask, need_weights=need_weights
        )
        return self.generator(hidden)

    @torch.no_grad()
    def greedy_decode(self, src: Tensor, max_new_tokens: int, *, need_weights: bool = False) -> Tensor:
        """Decode one token at a time, each the most likely next one; the encoder runs once.

        src (batch, L_src) -> (batch, <= max_new_tokens) tokens without BOS; after EOS a row holds PAD.
        """
        require_tokens("src", src, self.vocab_size)
        src_mask = padding_mask(src, self.pad_id)
        memory = self.transformer.encode(self.embed(src), src_mask, need_weights=need_weights)
        out = torch.full((src.shape[0], 1), BOS, dtype=torch.long, device=src.device)
        finished = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
        for _ in range(max_new_tokens):
            tgt_mask = causal_mask(out.shape[1], device=src.device)
            hidden = self.transformer.decode(self.embed(out), memory, tgt_mask, src_mask, need_weights=need_weights)
            next_token = self.generator(hidden[:, -1]).argmax(-1)  # (batch,)
            next_token = next_token.masked_fill(finished, PAD)
            out = torch.cat([out, next_token[:, None]], dim=1)
            finished |= next_token == EOS
            if bool(finished.all()):
                break
        return out[:, 1:]
