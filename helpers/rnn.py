"""GRU encoder-decoders for notebook 01: one fixed context vector, or cross-attention over all encoder states.

Both have the interface of :mod:`helpers.training`: ``forward(src, tgt_in) -> logits`` and
``greedy_decode(src, max_new_tokens) -> tokens``.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from helpers.arguments import require_int
from helpers.attention import padding_mask, scaled_dot_product_attention
from helpers.tokens import BOS, EOS, PAD, check_special_ids, require_token_ids

__all__ = ["GRUSeq2Seq"]


class GRUSeq2Seq(nn.Module):
    """Embedding -> GRU encoder -> GRU decoder -> vocabulary.

    ``attention=False``: the decoder starts from the encoder's last state, the single context vector C, and
    sees nothing else of the source. ``attention=True``: each decoder state also attends over every encoder
    state (queries from the decoder, keys and values from the encoder), and reads the attended mix.
    ``pad_id``, ``bos_id``, ``eos_id``: distinct special ids (by default those of :mod:`helpers.tokens`).
    """

    def __init__(
        self, vocab_size: int, hidden: int = 64, *, attention: bool, pad_id: int = PAD, bos_id: int = BOS,
        eos_id: int = EOS,
    ) -> None:
        super().__init__()
        check_special_ids(vocab_size, pad_id=pad_id, bos_id=bos_id, eos_id=eos_id)
        require_int("hidden", hidden, minimum=1)
        self.vocab_size = vocab_size
        self.pad_id, self.bos_id, self.eos_id = pad_id, bos_id, eos_id
        self.attention = attention
        self.embedding = nn.Embedding(vocab_size, hidden, padding_idx=pad_id)
        self.encoder = nn.GRU(hidden, hidden, batch_first=True)
        self.decoder = nn.GRU(hidden, hidden, batch_first=True)
        self.combine = nn.Linear(2 * hidden, hidden) if attention else None
        self.out = nn.Linear(hidden, vocab_size)
        self.cross_attention_weights: Tensor | None = None  # (batch, L_tgt, L_src) of the last call

    def encode(self, src: Tensor) -> tuple[Tensor, Tensor]:
        """src (batch, L_src) -> states (batch, L_src, hidden), context C (1, batch, hidden)."""
        require_token_ids("src", src, self.vocab_size)
        lengths = (src != self.pad_id).sum(1).clamp(min=1).cpu()
        packed = pack_padded_sequence(self.embedding(src), lengths, batch_first=True, enforce_sorted=False)
        states, context = self.encoder(packed)  # context: the state after each row's last real token
        states, _ = pad_packed_sequence(states, batch_first=True, total_length=src.shape[1])
        return states, context

    def readout(self, decoded: Tensor, states: Tensor, src: Tensor) -> Tensor:
        """decoder states (batch, L_tgt, hidden) -> logits (batch, L_tgt, vocab)."""
        if not self.attention:
            return self.out(decoded)
        real = padding_mask(src, self.pad_id)  # (batch, 1, L_src), True = a real token
        mixed, self.cross_attention_weights = scaled_dot_product_attention(decoded, states, states, real)
        return self.out(torch.tanh(self.combine(torch.cat([decoded, mixed], dim=-1))))

    def forward(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        """Teacher forcing: src (batch, L_src), tgt_in (batch, L_tgt) -> logits (batch, L_tgt, vocab)."""
        require_token_ids("tgt_in", tgt_in, self.vocab_size)
        states, context = self.encode(src)
        decoded, _ = self.decoder(self.embedding(tgt_in), context)  # (batch, L_tgt, hidden)
        return self.readout(decoded, states, src)

    @torch.no_grad()
    def greedy_decode(self, src: Tensor, max_new_tokens: int) -> Tensor:
        """src (batch, L_src) -> (batch, <= max_new_tokens) tokens without BOS; PAD after EOS."""
        require_int("max_new_tokens", max_new_tokens, minimum=1)
        states, hidden = self.encode(src)
        token = torch.full((src.shape[0], 1), self.bos_id, dtype=torch.long, device=src.device)
        finished = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
        out = []
        for _ in range(max_new_tokens):
            decoded, hidden = self.decoder(self.embedding(token), hidden)  # one step
            token = self.readout(decoded, states, src).argmax(-1).masked_fill(finished[:, None], self.pad_id)
            out.append(token)
            finished |= token[:, 0] == self.eos_id
            if bool(finished.all()):
                break
        return torch.cat(out, dim=1)
