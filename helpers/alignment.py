"""Cross-attention against a true word alignment: precision, recall, alignment error rate, attention mass.

A *link* (t, s) says that target token t was produced by source token s. For one head, the argmax of
its cross-attention row t is the predicted link (t, argmax_s w[t, s]); with A the predicted links and S the
true ones (all links are "sure", so S = P in Och & Ney's definition):

    precision = |A ∩ S| / |A|,   recall = |A ∩ S| / |S|,   AER = 1 - 2 |A ∩ S| / (|A| + |S|).

A head whose argmax always lands on a source token that produced the target token has AER 0 when every
target token has exactly one true link (as in :mod:`helpers.translation`). The *mass* is the mean, over
target tokens, of the attention weight on the true source tokens: 1 for a head that looks only there.
Only target rows marked valid (real tokens, not EOS or PAD) count; the counts are pooled over the batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from helpers.validation import require_float, require_tensor, shape_str

__all__ = ["AlignmentScores", "HeadScore", "gold_alignment", "alignment_scores", "rank_heads"]


def _require_bool(name: str, value: object) -> Tensor:
    tensor = require_tensor(name, value)
    if tensor.dtype != torch.bool:
        raise TypeError(f"{name} must be a torch.bool tensor (True = a true link / a row to score); "
                        f"got dtype {tensor.dtype}")
    return tensor


def gold_alignment(alignments: Sequence[Sequence[Sequence[int]]], tgt_len: int, src_len: int
                   ) -> tuple[Tensor, Tensor]:
    """Per-sentence alignments (for each source token, the target indices it produced) -> two bool tensors.

    Returns gold (batch, tgt_len, src_len), True at each link (t, s), and valid (batch, tgt_len), True on the
    target rows that have a link (the real target tokens; not EOS, not PAD).
    """
    gold = torch.zeros(len(alignments), tgt_len, src_len, dtype=torch.bool)
    for b, alignment in enumerate(alignments):
        if len(alignment) > src_len:
            raise ValueError(f"src_len must be >= the {len(alignment)} source tokens of sentence {b}; got {src_len}")
        for s, targets in enumerate(alignment):
            for t in targets:
                if not 0 <= t < tgt_len:
                    raise ValueError(f"target index {t} of sentence {b} is outside [0, tgt_len = {tgt_len})")
                gold[b, t, s] = True
    return gold, gold.any(-1)


@dataclass(frozen=True)
class AlignmentScores:
    """Per-head scores, each a tensor (layers, heads) (or (heads,) for one layer's weights)."""

    precision: Tensor
    recall: Tensor
    aer: Tensor
    mass: Tensor


@dataclass(frozen=True)
class HeadScore:
    layer: int
    head: int
    precision: float
    recall: float
    aer: float
    mass: float


def alignment_scores(weights: Tensor, gold: Tensor, valid: Tensor | None = None) -> AlignmentScores:
    """Score every head's cross-attention against the true links.

    weights: (layers, batch, heads, L_tgt, L_src) or (batch, heads, L_tgt, L_src), rows summing to 1;
    gold: (batch, L_tgt, L_src) bool; valid: (batch, L_tgt) bool, the target rows to score (default: rows
    with a link). Returns :class:`AlignmentScores` of shape (layers, heads) or (heads,).
    """
    require_float("weights", weights)
    gold = _require_bool("gold", gold)
    one_layer = weights.dim() == 4
    if one_layer:
        weights = weights[None]
    if weights.dim() != 5:
        raise ValueError(f"weights must be (layers, batch, heads, L_tgt, L_src) or (batch, heads, L_tgt, L_src); "
                         f"got shape {shape_str(weights.shape)}")
    _, batch, _, tgt_len, src_len = weights.shape
    if gold.shape != (batch, tgt_len, src_len):
        raise ValueError(f"gold must have shape (batch, L_tgt, L_src) = {shape_str((batch, tgt_len, src_len))}; "
                         f"got {shape_str(gold.shape)}")
    valid = gold.any(-1) if valid is None else _require_bool("valid", valid)
    if valid.shape != (batch, tgt_len):
        raise ValueError(f"valid must have shape (batch, L_tgt) = {shape_str((batch, tgt_len))}; "
                         f"got {shape_str(valid.shape)}")
    rows = valid[None, :, None, :]  # (1, batch, 1, L_tgt)
    n_predicted = valid.sum().clamp(min=1).to(weights.dtype)  # |A|: one link per valid row
    n_gold = (gold & valid[..., None]).sum().clamp(min=1).to(weights.dtype)  # |S|
    top = weights.argmax(-1, keepdim=True)  # (layers, batch, heads, L_tgt, 1)
    hit = gold[None, :, None].expand(weights.shape[0], -1, weights.shape[2], -1, -1).gather(-1, top)[..., 0]
    hits = (hit & rows).sum(dim=(1, 3)).to(weights.dtype)  # (layers, heads)
    mass = (weights * gold[None, :, None]).sum(-1)  # (layers, batch, heads, L_tgt)
    mass = (mass * rows).sum(dim=(1, 3)) / n_predicted
    precision, recall = hits / n_predicted, hits / n_gold
    aer = 1 - 2 * hits / (n_predicted + n_gold)
    scores = AlignmentScores(precision, recall, aer, mass)
    if one_layer:
        scores = AlignmentScores(*(s[0] for s in (precision, recall, aer, mass)))
    return scores


def rank_heads(scores: AlignmentScores) -> list[HeadScore]:
    """Every (layer, head), best aligned first: lowest AER, then the highest attention mass."""
    aer = scores.aer if scores.aer.dim() == 2 else scores.aer[None]
    table = [
        HeadScore(layer, head, *(float((s if s.dim() == 2 else s[None])[layer, head])
                                 for s in (scores.precision, scores.recall, scores.aer, scores.mass)))
        for layer in range(aer.shape[0]) for head in range(aer.shape[1])
    ]
    return sorted(table, key=lambda h: (round(h.aer, 9), -h.mass, h.layer, h.head))
