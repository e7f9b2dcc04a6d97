"""Train once, then reuse: a model trained by a notebook is kept on disk, keyed by everything that made it.

    model, result, loaded = train_or_load("translator", build, fit, recipe)

The first run calls ``build()`` (a fresh, seeded model) and ``fit(model)`` (its training, which returns a
:class:`helpers.training.TrainResult`), then saves the weights and the learning curve. A later run with the
same ``recipe``, the same source code of ``helpers`` and the same PyTorch loads them instead: training is
seeded and single-threaded, so it would give the same weights again. Anything else trains anew.

The folder is ``$COURSE_CACHE`` if set, else ``~/.cache/attention-step-by-step``; ``COURSE_RETRAIN=1`` always
trains (and replaces what is kept). `make test` gives each run a fresh folder, so the tests train once.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

from helpers.training import TrainResult

__all__ = ["cache_folder", "checkpoint_path", "train_or_load"]

HELPERS = Path(__file__).resolve().parent


def cache_folder() -> Path:
    """Where trained models are kept: ``$COURSE_CACHE``, else ``~/.cache/attention-step-by-step``."""
    chosen = os.environ.get("COURSE_CACHE")
    return Path(chosen) if chosen else Path.home() / ".cache" / "attention-step-by-step"


def _code_digest() -> str:
    """A digest of every module of ``helpers``: a change to any of them trains again."""
    digest = hashlib.sha256()
    for path in sorted(HELPERS.rglob("*.py")):
        digest.update(path.relative_to(HELPERS).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def checkpoint_path(name: str, recipe: dict) -> Path:
    """The file for model ``name`` trained with ``recipe`` by this code and this PyTorch."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a plain identifier such as 'translator'; got {name!r}")
    if not isinstance(recipe, dict):
        raise TypeError(f"recipe must be a dict of the settings that make the model; got {type(recipe).__name__}")
    key = json.dumps({"recipe": recipe, "torch": torch.__version__, "code": _code_digest(),
                      "threads": torch.get_num_threads()}, sort_keys=True, default=str)
    return cache_folder() / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.pt"


def train_or_load(
    name: str, build: Callable[[], nn.Module], fit: Callable[[nn.Module], TrainResult], recipe: dict
) -> tuple[nn.Module, TrainResult, bool]:
    """(model in eval mode, its training's result, True when it was loaded rather than trained now)."""
    model = build()
    path = checkpoint_path(name, recipe)  # after build(): its seed_everything() may set the threads, part of the key
    if path.exists() and os.environ.get("COURSE_RETRAIN") != "1":
        try:
            saved = torch.load(path, map_location="cpu", weights_only=True)
            model.load_state_dict(saved["state"])
            result = TrainResult(saved["losses"], [tuple(a) for a in saved["accuracies"]], saved["seconds"])
            return model.eval(), result, True
        except (RuntimeError, KeyError, EOFError, OSError):  # unreadable or from other code: train instead
            model = build()
    result = fit(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    saved = {"state": model.state_dict(), "losses": result.losses,
             "accuracies": [list(a) for a in result.accuracies], "seconds": result.seconds}
    with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".tmp", delete=False) as handle:
        torch.save(saved, handle)
    os.replace(handle.name, path)  # whole or not at all, even with two kernels training at once
    return model.eval(), result, False
