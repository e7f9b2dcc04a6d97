"""Decoding a trained :class:`helpers.seq2seq.Seq2SeqTransformer`: beam search, and scoring an output.

Greedy decoding (``model.greedy_decode``) keeps one prefix and takes the most likely next token at each step.
Beam search keeps the ``beam_size`` prefixes with the highest total log-probability so far; a finished prefix
(it produced EOS) keeps its score and waits. At the end the best finished prefix wins, its score divided by
``length ** length_penalty`` (0: plain log-probability; 1: per token). With ``beam_size = 1`` beam search is
greedy decoding (for a model that never prefers PAD or BOS, which beam search never emits): tests/test_decoding.py
checks that they give the same tokens.

Each step runs the decoder on the whole prefix of every beam (batch · beam_size rows), with no key/value
cache: the sentences of the course are short, and the code stays a few readable lines.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from helpers.arguments import require_int
from helpers.tokens import require_token_ids
from helpers.validation import shape_str

__all__ = ["beam_search", "sequence_log_prob"]


def _check_model(model: object) -> nn.Module:
    needed = ("embed", "transformer", "generator", "bos_id", "eos_id", "pad_id", "vocab_size")
    if not isinstance(model, nn.Module) or not all(hasattr(model, name) for name in needed):
        raise TypeError(f"model must be a helpers.seq2seq.Seq2SeqTransformer; got {type(model).__name__}")
    return model


def _next_log_probs(model: nn.Module, src_mask: Tensor, memory: Tensor, prefix: Tensor) -> Tensor:
    """prefix (rows, t) starting with BOS -> log-probabilities of the next token (rows, vocab)."""
    hidden = model.transformer.decode(model.embed(prefix), memory, None, src_mask, tgt_is_causal=True,
                                      need_weights=False)  # the fused path: no weights kept, less memory
    return torch.log_softmax(model.generator(hidden[:, -1]), dim=-1)


@torch.no_grad()
def beam_search(
    model: nn.Module, src: Tensor, max_new_tokens: int, *, beam_size: int = 4, length_penalty: float = 0.0
) -> tuple[Tensor, Tensor]:
    """The best output of each source sentence found by beam search.

    src (batch, L_src) token ids -> (tokens (batch, <= max_new_tokens) without BOS, PAD after EOS;
    scores (batch,): each output's log-probability divided by its length (EOS counted) ** length_penalty).
    An output that never produced EOS within ``max_new_tokens`` competes with the finished ones as it stands.
    """
    model = _check_model(model)
    require_token_ids("src", src, model.vocab_size)
    require_int("max_new_tokens", max_new_tokens, minimum=1)
    require_int("beam_size", beam_size, minimum=1)
    if isinstance(length_penalty, bool) or not isinstance(length_penalty, int | float) or length_penalty < 0:
        raise ValueError(f"length_penalty must be a number >= 0 (0: plain log-probability); got {length_penalty!r}")
    was_training = model.training
    model.eval()
    batch, k = src.shape[0], beam_size
    src_mask = (src != model.pad_id).unsqueeze(1)  # (batch, 1, L_src)
    memory = model.transformer.encode(model.embed(src), src_mask, need_weights=False)  # (batch, L_src, d_model)
    memory = memory.repeat_interleave(k, dim=0)  # (batch·k, L_src, d_model): beam j of sentence b is row b·k + j
    src_mask = src_mask.repeat_interleave(k, dim=0)
    prefix = torch.full((batch * k, 1), model.bos_id, dtype=torch.long, device=src.device)
    score = torch.full((batch, k), float("-inf"), device=src.device)
    score[:, 0] = 0.0  # one live beam at the start: k copies of BOS would fill the beam with one prefix
    finished = torch.zeros(batch, k, dtype=torch.bool, device=src.device)
    length = torch.zeros(batch, k, device=src.device)  # tokens produced, EOS included
    for _ in range(max_new_tokens):
        log_probs = _next_log_probs(model, src_mask, memory, prefix).view(batch, k, -1)  # (batch, k, vocab)
        vocab = log_probs.shape[-1]
        # a finished beam can only be continued by PAD, at no cost: it stays in the race with its own score
        stay = torch.full_like(log_probs, float("-inf"))
        stay[..., model.pad_id] = 0.0
        log_probs[..., [model.pad_id, model.bos_id]] = float("-inf")  # a live beam never emits PAD or BOS
        log_probs = torch.where(finished[..., None], stay, log_probs)
        candidates = (score[..., None] + log_probs).view(batch, k * vocab)  # (batch, k·vocab)
        score, index = candidates.topk(k, dim=-1)  # (batch, k)
        parent, token = index // vocab, index % vocab  # which beam each survivor extends, with which token
        rows = (parent + torch.arange(batch, device=src.device)[:, None] * k).view(-1)  # (batch·k,)
        prefix = torch.cat([prefix[rows], token.view(-1, 1)], dim=1)
        was_finished = finished.gather(1, parent)
        length = length.gather(1, parent) + (~was_finished).float()
        finished = was_finished | (token == model.eos_id)
        if bool(finished.all()):
            break
    normalised = score / length.clamp(min=1) ** length_penalty  # (batch, k)
    best = normalised.argmax(-1)  # (batch,)
    chosen = prefix.view(batch, k, -1)[torch.arange(batch), best, 1:]  # (batch, steps) without BOS
    model.train(was_training)
    return chosen, normalised[torch.arange(batch), best]


@torch.no_grad()
def sequence_log_prob(model: nn.Module, src: Tensor, tokens: Tensor) -> Tensor:
    """The model's log-probability of each output, read by teacher forcing.

    src (batch, L_src), tokens (batch, L) an output without BOS, ending with EOS and then PAD (as
    ``greedy_decode`` and :func:`beam_search` return it) -> (batch,) the sum of log p(token_t | prefix) over the
    tokens up to and including the first EOS (all of them when there is none).
    """
    model = _check_model(model)
    require_token_ids("src", src, model.vocab_size)
    require_token_ids("tokens", tokens, model.vocab_size)
    if tokens.shape[0] != src.shape[0]:
        raise ValueError(f"tokens must have src's batch size {src.shape[0]}; got shape {shape_str(tokens.shape)}")
    was_training = model.training
    model.eval()
    bos = torch.full((tokens.shape[0], 1), model.bos_id, dtype=torch.long, device=tokens.device)
    tgt_in = torch.cat([bos, tokens[:, :-1]], dim=1)  # (batch, L)
    log_probs = torch.log_softmax(model(src, tgt_in), dim=-1)  # (batch, L, vocab)
    picked = log_probs.gather(-1, tokens[..., None])[..., 0]  # (batch, L)
    eos_seen = (tokens == model.eos_id).long().cumsum(1)  # positions after the first EOS have count >= 1 ...
    counted = (eos_seen - (tokens == model.eos_id).long()) == 0  # ... except the EOS itself
    model.train(was_training)
    return (picked * counted).sum(1)
