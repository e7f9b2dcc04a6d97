"""Notebook 01's two readers of one sequence, a GRU and one self-attention step, and their training.

Both read a row of :func:`helpers.tasks.relation_batch` (symbols x_1 .. x_n, then the token that asks) and answer
yes or no at the last token, with the same small classifier on top and about the same number of weights
(24 k). Notebook 01 uses them as black boxes; their parts are built later in the course (multi-head attention
in 05, the residual connection and the positional encoding in 06).

    model, loaded = trained_reader("AttentionReader", "seen")
    reader_accuracy(model, "seen")     # (15,) accuracy for n = 2 .. 16
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from helpers.attention import MultiHeadAttention
from helpers.checkpoints import train_or_load
from helpers.course import say
from helpers.layers import sinusoidal_table
from helpers.progress import progress
from helpers.reproducibility import seed_everything
from helpers.tasks import relation_batch
from helpers.training import TrainResult

__all__ = ["SYMBOLS", "READ_LENGTHS", "GRUReader", "AttentionReader", "READERS", "trained_reader", "reader_accuracy"]

SYMBOLS = 40                          # token ids 3..39 are symbols (0, 1, 2: PAD, BOS, EOS)
READ_LENGTHS = list(range(2, 17))     # the row lengths n, in turn while training, each one when measuring
STEPS, BATCH, LR = 1000, 64, 3e-3     # the same budget for both readers


def _classifier(width: int) -> nn.Module:
    """(batch, width) -> (batch, 1): the same small classifier on top of both readers."""
    return nn.Sequential(nn.Linear(width, 64), nn.ReLU(), nn.Linear(64, 1))


class GRUReader(nn.Module):
    """Reads the row left to right and answers from its last state, as a Seq2Seq encoder would."""

    def __init__(self, d: int = 32, hidden: int = 64) -> None:
        super().__init__()
        self.embed, self.gru = nn.Embedding(SYMBOLS, d), nn.GRU(d, hidden, batch_first=True)
        self.classify = _classifier(hidden)

    def forward(self, tokens: Tensor) -> Tensor:
        """tokens (batch, n + 1) -> (batch,) logits of "yes"."""
        states, _ = self.gru(self.embed(tokens))                 # (batch, n + 1, hidden), read left to right
        return self.classify(states[:, -1]).squeeze(-1)          # the state after the last token


class AttentionReader(nn.Module):
    """The last token attends to every token of the row in one step (4 heads), adds what it gathered to itself
    and answers from that. No positions unless ``positions=True``; a learned vector marks the asking token."""

    def __init__(self, d: int = 64, heads: int = 4, positions: bool = False) -> None:
        super().__init__()
        self.embed, self.attention = nn.Embedding(SYMBOLS, d), MultiHeadAttention(d, heads)
        self.classify = _classifier(d)
        self.asking = nn.Parameter(torch.zeros(d))               # added to the last token: "I ask the question"
        self.positions = positions                               # False, as in the note: no positional encoding

    def forward(self, tokens: Tensor) -> Tensor:
        """tokens (batch, n + 1) -> (batch,) logits of "yes"."""
        x = self.embed(tokens)                                   # (batch, n + 1, d)
        x = torch.cat([x[:, :-1], x[:, -1:] + self.asking], dim=1)
        if self.positions:
            x = x + sinusoidal_table(tokens.shape[1], x.shape[-1])
        question = x[:, -1:]                                     # (batch, 1, d): the one query
        gathered, _ = self.attention(question, x, x)             # (batch, 1, d): one step to every token
        return self.classify((question + gathered)[:, 0]).squeeze(-1)


READERS = {"GRUReader": GRUReader, "AttentionReader": AttentionReader}


def _check_task(task: str) -> None:
    if task not in ("seen", "sorted"):
        raise ValueError(say(f"task must be 'seen' or 'sorted'; got {task!r}",
                             f"task 只能是 'seen' 或 'sorted'；收到的是 {task!r}"))


def _fit(model: nn.Module, task: str, desc: str) -> TrainResult:
    """Adam at LR on seeded batches of BATCH rows, n going round READ_LENGTHS; binary cross-entropy."""
    generator = torch.Generator().manual_seed(0)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    result = TrainResult()
    model.train()
    for step in progress(range(STEPS), desc=desc):
        tokens, labels = relation_batch(task, BATCH, length=READ_LENGTHS[step % len(READ_LENGTHS)],
                                        vocab_size=SYMBOLS, generator=generator)
        loss = F.binary_cross_entropy_with_logits(model(tokens), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        result.losses.append(loss.item())
    return result


def trained_reader(reader: str, task: str) -> tuple[nn.Module, bool]:
    """(the reader trained on ``task`` in eval mode, True when it was loaded rather than trained now).

    ``reader``: "GRUReader" or "AttentionReader"; ``task``: "seen" or "sorted". Trained once, with the same
    initial draw (seed 0) and the same batches for both readers, then kept by :mod:`helpers.checkpoints`.
    """
    if reader not in READERS:
        raise ValueError(say(f"reader must be one of {sorted(READERS)}; got {reader!r}",
                             f"reader 只能是 {sorted(READERS)} 之一；收到的是 {reader!r}"))
    _check_task(task)

    def build() -> nn.Module:
        seed_everything(0)                                       # the same initial draw for every run
        return READERS[reader]()

    recipe = {"reader": reader, "task": task, "steps": STEPS, "batch": BATCH, "lr": LR, "lengths": READ_LENGTHS}
    model, _, loaded = train_or_load(f"reader_{reader}_{task}", build,
                                     lambda model: _fit(model, task, f"{reader}, {task}"), recipe)
    return model, loaded


@torch.no_grad()
def reader_accuracy(model: nn.Module, task: str) -> np.ndarray:
    """(len(READ_LENGTHS),) accuracy on 512 new rows (a seed of their own) for each n in READ_LENGTHS."""
    _check_task(task)
    model.eval()
    scores = []
    for n in READ_LENGTHS:
        tokens, labels = relation_batch(task, 512, length=n, vocab_size=SYMBOLS,
                                        generator=torch.Generator().manual_seed(100 + n))
        scores.append(((model(tokens) > 0).float() == labels).float().mean().item())
    return np.array(scores)
