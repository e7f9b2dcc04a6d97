"""A token-level encoder-decoder model around :class:`helpers.transformer.Transformer`."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from helpers.arguments import require_int
from helpers.layers import PositionalEncoding
from helpers.tokens import BOS, EOS, PAD, check_special_ids, require_token_ids
from helpers.transformer import Transformer
from helpers.validation import require_same_batch

__all__ = ["Seq2SeqTransformer"]


class Seq2SeqTransformer(nn.Module):
    """Embeddings (scaled by √d_model) + positional encoding + Transformer + a linear layer to the vocabulary.

    Source and target share one embedding table (both sides use the same symbols in the toy tasks).
    ``pad_id``, ``bos_id`` and ``eos_id`` (by default those of :mod:`helpers.tokens`) must be distinct:
    every other id is a real token, which attention never masks.
    """

    def __init__(
        self, vocab_size: int, *, d_model: int = 64, num_heads: int = 4, num_encoder_layers: int = 6,
        num_decoder_layers: int = 6, d_ff: int = 128, dropout: float = 0.0, norm_first: bool = True,
        max_len: int = 128, pad_id: int = PAD, bos_id: int = BOS, eos_id: int = EOS,
    ) -> None:
        super().__init__()
        check_special_ids(vocab_size, pad_id=pad_id, bos_id=bos_id, eos_id=eos_id)
        self.vocab_size = vocab_size
        self.pad_id, self.bos_id, self.eos_id = pad_id, bos_id, eos_id
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.positional = PositionalEncoding(d_model, max_len, dropout=dropout)
        self.transformer = Transformer(
            d_model, num_heads, num_encoder_layers, num_decoder_layers, d_ff, dropout=dropout, norm_first=norm_first
        )
        self.generator = nn.Linear(d_model, vocab_size)

    def embed(self, tokens: Tensor, *, start: int = 0) -> Tensor:
        """(batch, L) token ids at positions start .. start + L - 1 -> (batch, L, d_model)."""
        return self.positional(self.embedding(tokens) * math.sqrt(self.embedding.embedding_dim), start=start)

    def _real(self, tokens: Tensor) -> Tensor:
        """(batch, L) checked tokens -> (batch, 1, L) padding mask, True = a real token."""
        return (tokens != self.pad_id).unsqueeze(1)

    def forward(self, src: Tensor, tgt: Tensor, *, need_weights: bool | None = None) -> Tensor:
        """src (batch, L_src), tgt (batch, L_tgt) token ids -> logits (batch, L_tgt, vocab_size).

        The target sees its own real tokens causally (``tgt_is_causal=True`` and its padding mask).
        """
        require_token_ids("src", src, self.vocab_size)
        require_token_ids("tgt", tgt, self.vocab_size)
        require_same_batch(src=src, tgt=tgt)
        src_mask = self._real(src)  # (batch, 1, L_src): for the encoder and the cross-attention
        hidden = self.transformer(
            self.embed(src), self.embed(tgt), src_mask, self._real(tgt), src_mask,
            tgt_is_causal=True, need_weights=need_weights,
        )
        return self.generator(hidden)

    @torch.no_grad()
    def greedy_decode(
        self, src: Tensor, max_new_tokens: int, *, need_weights: bool = False, use_cache: bool = True
    ) -> Tensor:
        """Decode one token at a time, each the most likely next one; the encoder runs once.

        src (batch, L_src) -> (batch, <= max_new_tokens) tokens without BOS; after EOS a row holds PAD.
        With ``use_cache`` (default) each step runs the decoder on the new position only, with a key/value
        cache (:mod:`helpers.kv_cache`); without it, on the whole prefix. Both give the same tokens.
        With ``need_weights`` the layers keep the weights of the last step.
        """
        require_token_ids("src", src, self.vocab_size)
        require_int("max_new_tokens", max_new_tokens, minimum=1)
        src_mask = self._real(src)
        memory = self.transformer.encode(self.embed(src), src_mask, need_weights=need_weights)
        cache = self.transformer.new_cache() if use_cache else None
        out = torch.full((src.shape[0], 1), self.bos_id, dtype=torch.long, device=src.device)
        finished = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
        for step in range(max_new_tokens):
            if cache is None:  # the whole prefix (batch, step + 1)
                hidden = self.transformer.decode(
                    self.embed(out), memory, None, src_mask, tgt_is_causal=True, need_weights=need_weights
                )
            else:  # the last token only, at position step
                hidden = self.transformer.decode(
                    self.embed(out[:, -1:], start=step), memory, None, src_mask, need_weights=need_weights,
                    cache=cache,
                )
            next_token = self.generator(hidden[:, -1]).argmax(-1)  # (batch,)
            next_token = next_token.masked_fill(finished, self.pad_id)
            out = torch.cat([out, next_token[:, None]], dim=1)
            finished |= next_token == self.eos_id
            if bool(finished.all()):
                break
        return out[:, 1:]
