"""Toy data: the article's 4 words x 6 columns matrix and seeded sequence-to-sequence tasks.

Nothing is downloaded: every data set here is generated from a seed. The special ids PAD, BOS, EOS and
FIRST_SYMBOL live in :mod:`helpers.tokens`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from helpers.arguments import require_int
from helpers.tokens import BOS, EOS, FIRST_SYMBOL, PAD  # re-exported: `from helpers.tasks import PAD` still works

__all__ = [
    "TOY_WORDS",
    "toy_matrix",
    "toy_projections",
    "PAD",
    "BOS",
    "EOS",
    "FIRST_SYMBOL",
    "Seq2SeqBatch",
    "make_batch",
    "relation_batch",
    "IMAGE_CLASSES",
    "make_images",
]

#: the four words of the toy sentence, one row of the toy matrix each
TOY_WORDS: tuple[str, ...] = ("the", "cat", "sat", "down")


def toy_matrix() -> np.ndarray:
    """X, the article's 4 words x 6 columns matrix: one 6-number word vector per row. Shape (4, 6)."""
    return np.array(
        [
            [1.0, 0.0, 1.0, 0.0, 0.5, 0.0],  # the
            [0.0, 1.0, 0.0, 1.0, 0.0, 0.5],  # cat
            [1.0, 1.0, 0.5, 0.0, 0.0, 0.0],  # sat
            [0.0, 0.5, 0.0, 1.0, 1.0, 1.0],  # down
        ]
    )


def toy_projections() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """W_Q, W_K, W_V for the toy matrix, each (6, 3): small integers, so the arithmetic can be followed by hand.

    Chosen so that each word attends most to a different word: the -> down, cat -> sat, sat -> the, down -> cat.
    """
    w_q = np.array([[0, 0, -1], [0, 1, -1], [1, -1, 0], [-1, -1, -1], [-1, 0, 0], [0, -1, 0]], dtype=float)
    w_k = np.array([[0, 1, 0], [-1, 0, 0], [0, 1, -1], [1, -1, 1], [1, 0, 0], [-1, -1, 0]], dtype=float)
    w_v = np.array([[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0], [0, 0, 1], [2, 0, 1]], dtype=float)
    return w_q, w_k, w_v


@dataclass(frozen=True)
class Seq2SeqBatch:
    """One batch of a toy task.

    src (batch, L_src): the input symbols, padded with PAD;
    tgt_in (batch, L_tgt): BOS + answer, what the decoder reads (teacher forcing);
    tgt_out (batch, L_tgt): answer + EOS, what it must predict, padded with PAD.
    """

    src: Tensor
    tgt_in: Tensor
    tgt_out: Tensor


def make_batch(
    task: str,
    batch_size: int,
    *,
    min_length: int,
    max_length: int,
    vocab_size: int,
    generator: torch.Generator,
) -> Seq2SeqBatch:
    """A seeded batch of the ``"copy"`` or ``"reverse"`` task, lengths drawn in [min_length, max_length]."""
    if task not in ("copy", "reverse"):
        raise ValueError(f"task must be 'copy' or 'reverse'; got {task!r}")
    if not 1 <= min_length <= max_length:
        raise ValueError(f"lengths must satisfy 1 <= min_length <= max_length; got {min_length}, {max_length}")
    if vocab_size <= FIRST_SYMBOL:
        raise ValueError(f"vocab_size must exceed the {FIRST_SYMBOL} special tokens; got {vocab_size}")
    lengths = torch.randint(min_length, max_length + 1, (batch_size,), generator=generator)
    symbols = torch.randint(FIRST_SYMBOL, vocab_size, (batch_size, max_length), generator=generator)
    positions = torch.arange(max_length)
    real = positions < lengths[:, None]  # (batch, max_length)
    src = symbols.masked_fill(~real, PAD)
    if task == "reverse":
        # position i of the answer is symbol (length - 1 - i) of the input
        index = (lengths[:, None] - 1 - positions).clamp(min=0)
        answer = symbols.gather(1, index).masked_fill(~real, PAD)
    else:
        answer = src
    tgt_out = torch.full((batch_size, max_length + 1), PAD)
    tgt_out[:, :max_length] = answer
    tgt_out[torch.arange(batch_size), lengths] = EOS
    tgt_in = torch.cat([torch.full((batch_size, 1), BOS), tgt_out[:, :-1]], dim=1)
    tgt_in = tgt_in.masked_fill(tgt_in == EOS, PAD)
    return Seq2SeqBatch(src, tgt_in, tgt_out)


def relation_batch(
    task: str, batch_size: int, *, length: int, vocab_size: int, generator: torch.Generator
) -> tuple[Tensor, Tensor]:
    """A seeded batch of a yes/no question about relations inside one sequence (notebook 01).

    Each row is ``length`` distinct symbols x_1 .. x_n, then one last token at which the answer is asked:

    - ``"seen"``: the last token is a symbol q; yes when q is one of x_1 .. x_n (half of the rows);
    - ``"sorted"``: the last token is EOS; yes when x_1 < x_2 < ... < x_n. Half of the rows are sorted, the
      other half are sorted but for one swapped pair of neighbours.

    Returns tokens (batch, length + 1) and labels (batch,), float 1.0 for yes, 0.0 for no.
    """
    if task not in ("seen", "sorted"):
        raise ValueError(f"task must be 'seen' or 'sorted'; got {task!r}")
    require_int("batch_size", batch_size, minimum=1)
    require_int("length", length, minimum=2)
    symbols = vocab_size - FIRST_SYMBOL
    if vocab_size <= FIRST_SYMBOL + length:
        raise ValueError(f"vocab_size must leave more than length = {length} symbols after the {FIRST_SYMBOL} "
                         f"special tokens (a symbol outside the row); got vocab_size = {vocab_size}")
    rows = torch.arange(batch_size)
    # a random order of all symbols per row: its first `length` are the row, the next one is surely not in it
    order = torch.rand(batch_size, symbols, generator=generator).argsort(dim=1) + FIRST_SYMBOL  # (batch, symbols)
    x = order[:, :length]                                                                       # (batch, n)
    yes = torch.rand(batch_size, generator=generator) < 0.5                                     # (batch,)
    if task == "seen":
        inside = x[rows, torch.randint(0, length, (batch_size,), generator=generator)]
        last = torch.where(yes, inside, order[:, length])                                       # (batch,)
    else:
        ordered = x.sort(dim=1).values
        swap = torch.randint(0, length - 1, (batch_size,), generator=generator)  # swap neighbours i, i + 1
        swapped = ordered.clone()
        swapped[rows, swap], swapped[rows, swap + 1] = ordered[rows, swap + 1], ordered[rows, swap]
        x = torch.where(yes[:, None], ordered, swapped)
        last = torch.full((batch_size,), EOS)
    return torch.cat([x, last[:, None]], dim=1), yes.float()


#: the four shapes of the synthetic image task
IMAGE_CLASSES: tuple[str, ...] = ("horizontal", "vertical", "diagonal", "anti-diagonal")


def make_images(n: int, *, size: int = 16, length: int = 6, noise: float = 0.3,
                generator: torch.Generator) -> tuple[Tensor, Tensor]:
    """n noisy grey images, each with one stroke of ``length`` pixels at a random place.

    Returns images (n, 1, size, size) and labels (n,) indexing :data:`IMAGE_CLASSES`.
    """
    if not 1 <= length <= size:
        raise ValueError(f"length must be in [1, size = {size}]; got {length}")
    labels = torch.randint(0, len(IMAGE_CLASSES), (n,), generator=generator)
    images = noise * torch.randn(n, 1, size, size, generator=generator)
    starts = torch.randint(0, size - length + 1, (n, 2), generator=generator)
    steps = torch.arange(length)
    for i in range(n):
        r, c = int(starts[i, 0]), int(starts[i, 1])
        kind = int(labels[i])
        rows = {0: r + 0 * steps, 1: r + steps, 2: r + steps, 3: r + steps}[kind]
        cols = {0: c + steps, 1: c + 0 * steps, 2: c + steps, 3: c + length - 1 - steps}[kind]
        images[i, 0, rows, cols] += 1.0
    return images, labels
