"""Planted bugs for the debug exercises: each function below has ONE realistic mistake.

They are the mistakes the literature and course forums report again and again: a head split without the
transpose, a mask in PyTorch's opposite convention, the lecture note's 1/d_k, a padding mask laid on the queries,
cross-attention's queries taken from the encoder, self-attention where cross-attention was meant, post-LN where
pre-LN was meant, a softmax over the wrong axis.

A debug exercise shows one of them with :func:`show`, lets the learner run the property check that catches it
(``SYMPTOM_CHECK[name]``, a checker of :mod:`helpers.checks`), and asks for a fixed copy that passes the same
check. tests/test_bugs.py proves that every bug here fails its check and that the fix passes.
The names say what a function is meant to do, never what is wrong with it.
"""

from __future__ import annotations

import inspect
import math

import torch
from torch import Tensor, nn

from helpers.attention import causal_mask, padding_mask

__all__ = ["show", "SYMPTOM_CHECK", "split_heads", "causal_self_attention", "attention", "padded_self_attention",
           "cross_attention", "pre_ln_sublayer", "attention_weights", "attention_readout"]


def show(fn: object) -> None:
    """Print a function's source with line numbers, so that a learner can point at the faulty line."""
    lines = inspect.getsource(fn).splitlines()
    for number, line in enumerate(lines, start=1):
        print(f"{number:2d} | {line}")


def split_heads(x: Tensor, num_heads: int) -> Tensor:
    """(batch, L, d_model) -> (batch, heads, L, d_head)."""
    batch, length, d_model = x.shape
    d_head = d_model // num_heads
    return x.reshape(batch, num_heads, length, d_head)


def causal_self_attention(x: Tensor) -> Tensor:
    """Decoder self-attention of x (batch, L, d) on itself: position i may only see positions 0..i."""
    length, d_k = x.shape[1], x.shape[2]
    blocked = torch.ones(length, length, dtype=torch.bool).tril()
    scores = x @ x.transpose(-2, -1) / math.sqrt(d_k)
    scores = scores.masked_fill(blocked, float("-inf"))
    return torch.softmax(scores, dim=-1) @ x


def attention(query: Tensor, key: Tensor, value: Tensor) -> Tensor:
    """softmax(Q Kᵀ / √d_k) V for query (..., L_q, d_k), key (..., L_k, d_k), value (..., L_k, d_v)."""
    d_k = query.shape[-1]
    scores = query @ key.transpose(-2, -1) / d_k
    return torch.softmax(scores, dim=-1) @ value


def padded_self_attention(x: Tensor, tokens: Tensor, pad_id: int = 0) -> Tensor:
    """Self-attention of x (batch, L, d) in which no query attends to a PAD key."""
    real = (tokens != pad_id).unsqueeze(-1)  # (batch, L, 1)
    scores = x @ x.transpose(-2, -1) / math.sqrt(x.shape[-1])
    scores = scores.masked_fill(~real, float("-inf"))
    return torch.softmax(scores, dim=-1).nan_to_num(0.0) @ x


def cross_attention(decoder_x: Tensor, memory: Tensor) -> Tensor:
    """Cross-attention: the decoder's positions (batch, L_tgt, d) read the encoder output (batch, L_src, d)."""
    query, key, value = memory, decoder_x, decoder_x
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    return torch.softmax(scores, dim=-1) @ value


def pre_ln_sublayer(x: Tensor, sublayer: nn.Module, norm: nn.LayerNorm) -> Tensor:
    """A pre-LN residual sub-layer: normalise, apply the sub-layer, add the input back."""
    return norm(x + sublayer(x))


def attention_weights(query: Tensor, key: Tensor) -> Tensor:
    """The weights softmax(Q Kᵀ / √d_k): one row per query, each row sums to 1 over the keys."""
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    return torch.softmax(scores, dim=-2)


def attention_readout(decoder_states: Tensor, encoder_states: Tensor) -> Tensor:
    """The GRU decoder's attention readout: each decoder state (batch, L_tgt, d) reads its mix of the encoder
    states (batch, L_src, d); the result has the decoder's shape."""
    query = decoder_states
    key = value = decoder_states  # (batch, L, d)
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    return torch.softmax(scores, dim=-1) @ value


#: for each planted bug, the name of the checker in helpers.checks whose property it breaks
SYMPTOM_CHECK = {
    "split_heads": "check_split_heads",
    "causal_self_attention": "check_no_future_leak",
    "attention": "check_attention",
    "padded_self_attention": "check_ignores_padding",
    "cross_attention": "check_cross_attention",
    "pre_ln_sublayer": "check_pre_ln",
    "attention_weights": "check_attention_weights",
    "attention_readout": "check_cross_attention",
}


def _references() -> dict[str, object]:
    """The bug-free versions (for the tests; a learner writes their own)."""

    def split_heads_fixed(x, num_heads):
        batch, length, d_model = x.shape
        return x.view(batch, length, num_heads, d_model // num_heads).transpose(1, 2)

    def causal_fixed(x):
        allowed = causal_mask(x.shape[1])
        scores = (x @ x.transpose(-2, -1) / math.sqrt(x.shape[2])).masked_fill(~allowed, float("-inf"))
        return torch.softmax(scores, dim=-1) @ x

    def attention_fixed(query, key, value):
        return torch.softmax(query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1]), dim=-1) @ value

    def padded_fixed(x, tokens, pad_id=0):
        scores = (x @ x.transpose(-2, -1) / math.sqrt(x.shape[-1])).masked_fill(~padding_mask(tokens, pad_id),
                                                                                  float("-inf"))
        return torch.softmax(scores, dim=-1) @ x

    def cross_fixed(decoder_x, memory):
        return torch.softmax(decoder_x @ memory.transpose(-2, -1) / math.sqrt(memory.shape[-1]), dim=-1) @ memory

    def pre_ln_fixed(x, sublayer, norm):
        return x + sublayer(norm(x))

    def weights_fixed(query, key):
        return torch.softmax(query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1]), dim=-1)

    def readout_fixed(decoder_states, encoder_states):
        scores = decoder_states @ encoder_states.transpose(-2, -1) / math.sqrt(decoder_states.shape[-1])
        return torch.softmax(scores, dim=-1) @ encoder_states

    return {"split_heads": split_heads_fixed, "causal_self_attention": causal_fixed, "attention": attention_fixed,
            "padded_self_attention": padded_fixed, "cross_attention": cross_fixed, "pre_ln_sublayer": pre_ln_fixed,
            "attention_weights": weights_fixed, "attention_readout": readout_fixed}
