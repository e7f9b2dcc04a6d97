"""The special token ids of the toy tasks and models, in one place.

Every task of :mod:`helpers.tasks` and every model's default uses these ids:

* ``PAD = 0`` fills a sequence up to the batch's length; attention never looks at it;
* ``BOS = 1`` starts what the decoder reads;
* ``EOS = 2`` ends what the decoder says;
* ids from ``FIRST_SYMBOL = 3`` up are real symbols.

A model takes its own ``pad_id``, ``bos_id`` and ``eos_id`` (defaulting to these); it treats every other id
as a real token, so the three must be distinct (:func:`check_special_ids`).
"""

from __future__ import annotations

import torch
from torch import Tensor

from helpers.arguments import require_int
from helpers.validation import require_tokens

__all__ = ["PAD", "BOS", "EOS", "FIRST_SYMBOL", "SPECIAL_NAMES", "token_label", "check_special_ids",
           "require_token_ids"]

PAD, BOS, EOS = 0, 1, 2
#: the first token id that is a real symbol (ids below it are PAD, BOS, EOS)
FIRST_SYMBOL = 3
#: how figures and printouts name the special ids
SPECIAL_NAMES: dict[int, str] = {PAD: "PAD", BOS: "BOS", EOS: "EOS"}


def token_label(token: int) -> str:
    """``"PAD"``, ``"BOS"``, ``"EOS"`` for the special ids, the id itself (``"7"``) for a real symbol."""
    return SPECIAL_NAMES.get(int(token), str(int(token)))


def check_special_ids(vocab_size: int, **ids: int) -> None:
    """``vocab_size`` leaves room for a real symbol; the special ``ids`` (given by name) are distinct, in range.

    >>> check_special_ids(10, pad_id=PAD, bos_id=BOS, eos_id=EOS)
    """
    require_int("vocab_size", vocab_size, minimum=1)
    for name, value in ids.items():
        require_int(name, value, minimum=0)
        if value >= vocab_size:
            raise ValueError(f"{name} must be a token id in [0, vocab_size = {vocab_size}); got {value}")
    if len(set(ids.values())) < len(ids):
        given = ", ".join(f"{name} = {value}" for name, value in ids.items())
        raise ValueError(f"{', '.join(ids)} must be distinct ids (each special token its own id); got {given}")
    if vocab_size <= len(ids):
        raise ValueError(
            f"vocab_size must leave room for at least one real symbol besides the {len(ids)} special ids; "
            f"got vocab_size = {vocab_size}"
        )


def require_token_ids(name: str, tokens: object, vocab_size: int) -> Tensor:
    """A (batch, L) tensor of torch.long or torch.int32 ids in [0, vocab_size) (what ``nn.Embedding`` reads)."""
    tensor = require_tokens(name, tokens, vocab_size)
    if tensor.dtype not in (torch.long, torch.int32):
        raise TypeError(
            f"{name} must hold token ids as torch.long (or torch.int32); got dtype {tensor.dtype}. "
            f"Convert with {name}.long()"
        )
    return tensor
