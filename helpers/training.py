"""Training loop with a progress bar, greedy-decoding accuracy, for the toy sequence tasks.

A model here is any ``nn.Module`` with ``forward(src, tgt_in) -> logits (batch, L_tgt, vocab)``,
``greedy_decode(src, max_new_tokens) -> tokens (batch, <= max_new_tokens)`` and a ``pad_id``: the
Transformer of :mod:`helpers.seq2seq` and the GRU models of :mod:`helpers.rnn` all are.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from helpers.progress import progress as show_progress
from helpers.tasks import Seq2SeqBatch
from helpers.tokens import PAD
from helpers.validation import require_tokens, shape_str

__all__ = ["TrainResult", "sequence_loss", "exact_match", "token_accuracy", "model_pad_id", "evaluate", "train"]


@dataclass
class TrainResult:
    """What :func:`train` measured: the loss of each step, accuracy at each evaluation, wall time."""

    losses: list[float] = field(default_factory=list)
    accuracies: list[tuple[int, float]] = field(default_factory=list)  # (step, exact-match accuracy)
    seconds: float = 0.0

    @property
    def steps(self) -> int:
        return len(self.losses)

    @property
    def final_accuracy(self) -> float:
        return self.accuracies[-1][1] if self.accuracies else float("nan")


def sequence_loss(logits: Tensor, target: Tensor, pad_id: int = PAD) -> Tensor:
    """Mean cross-entropy over the non-PAD target positions. logits (batch, L, vocab), target (batch, L)."""
    if logits.shape[:2] != target.shape:
        raise ValueError(
            f"target must have shape (batch, L) = {shape_str(logits.shape[:2])}; got {shape_str(target.shape)}"
        )
    return F.cross_entropy(logits.flatten(0, 1), target.flatten(), ignore_index=pad_id)


def exact_match(predicted: Tensor, target: Tensor, pad_id: int = PAD) -> Tensor:
    """Per-row True when the prediction equals the target everywhere (PAD-padded to the same length).

    predicted (batch, L_p), target (batch, L_t) -> (batch,) bool.
    """
    require_tokens("predicted", predicted)
    require_tokens("target", target)
    if predicted.shape[0] != target.shape[0]:
        raise ValueError(
            f"predicted must have batch size {target.shape[0]}; got shape {shape_str(predicted.shape)}"
        )
    length = max(predicted.shape[1], target.shape[1])
    predicted = F.pad(predicted, (0, length - predicted.shape[1]), value=pad_id)
    target = F.pad(target, (0, length - target.shape[1]), value=pad_id)
    return (predicted == target).all(dim=1)


def token_accuracy(predicted: Tensor, target: Tensor, pad_id: int = PAD) -> float:
    """Fraction of the target's non-PAD positions that the prediction gets right (a missing token is wrong).

    predicted (batch, L_p), target (batch, L_t) -> a number in [0, 1].
    """
    require_tokens("predicted", predicted)
    require_tokens("target", target)
    length = target.shape[1]
    predicted = F.pad(predicted, (0, max(0, length - predicted.shape[1])), value=pad_id)[:, :length]
    real = target != pad_id
    return float((predicted == target)[real].float().mean())


def model_pad_id(model: nn.Module, pad_id: int | None = None) -> int:
    """``pad_id`` if given, else the model's own ``pad_id``, else :data:`helpers.tokens.PAD`."""
    return getattr(model, "pad_id", PAD) if pad_id is None else pad_id


@torch.no_grad()
def evaluate(model: nn.Module, batch: Seq2SeqBatch, *, pad_id: int | None = None) -> float:
    """Exact-match accuracy of greedy decoding on ``batch``, in [0, 1] (``pad_id``: the model's by default)."""
    was_training = model.training
    model.eval()
    predicted = model.greedy_decode(batch.src, batch.tgt_out.shape[1])
    model.train(was_training)
    return float(exact_match(predicted, batch.tgt_out, model_pad_id(model, pad_id)).float().mean())


def train(
    model: nn.Module,
    next_batch: Callable[[], Seq2SeqBatch],
    *,
    steps: int,
    lr: float = 1e-3,
    warmup: int = 50,
    final_lr: float = 1.0,
    eval_batch: Seq2SeqBatch | None = None,
    eval_every: int = 50,
    target_accuracy: float | None = None,
    progress: bool = True,
    desc: str = "training",
    pad_id: int | None = None,
) -> TrainResult:
    """Adam with a linear warm-up, teacher forcing, gradient clipping at 1.

    After the warm-up the learning rate stays at ``lr`` or, with ``final_lr < 1``, falls linearly to
    ``final_lr * lr`` at the last step.

    Evaluates exact-match accuracy on ``eval_batch`` every ``eval_every`` steps and at the end; stops
    early once it reaches ``target_accuracy``. Shows a tqdm progress bar with loss and accuracy.
    The loss ignores ``pad_id`` targets (by default the model's ``pad_id``).
    """
    pad_id = model_pad_id(model, pad_id)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98))

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 1.0 - (1.0 - final_lr) * (step - warmup) / max(1, steps - warmup)

    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
    result = TrainResult()
    start = time.perf_counter()
    model.train()
    bar = show_progress(range(1, steps + 1), desc=desc, disable=not progress)
    for step in bar:
        batch = next_batch()
        loss = sequence_loss(model(batch.src, batch.tgt_in), batch.tgt_out, pad_id)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        result.losses.append(loss.item())
        if eval_batch is not None and (step % eval_every == 0 or step == steps):
            accuracy = evaluate(model, eval_batch, pad_id=pad_id)
            result.accuracies.append((step, accuracy))
            bar.set_postfix(loss=f"{loss.item():.3f}", accuracy=f"{accuracy:.3f}")
            if target_accuracy is not None and accuracy >= target_accuracy:
                break
    bar.close()
    model.eval()
    result.seconds = time.perf_counter() - start
    return result
