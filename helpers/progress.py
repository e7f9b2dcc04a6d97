"""Progress bars that read well live and saved: tqdm's text bar, shown in one output that updates in place.

In a notebook, ``tqdm.auto`` draws an ipywidgets bar; a saved notebook keeps no widget state, so GitHub, nbviewer
and the course's site would show a frozen ``0%`` in its place. Here tqdm writes its usual text bar into one
display (an IPython display with an id, updated at each refresh): JupyterLab shows it moving, and the saved
output is the final bar, ``100%|██████████| 400/400 [...]``. Outside IPython it is tqdm on stderr.

    for step in progress(range(400), desc="tiny ViT"):
        ...
"""

from __future__ import annotations

from collections.abc import Iterable

from tqdm.std import tqdm

__all__ = ["progress"]


class _DisplayFile:
    """A file for tqdm: every bar it writes replaces the text of one IPython display."""

    def __init__(self) -> None:
        from IPython.display import display

        self.handle = display({"text/plain": ""}, raw=True, display_id=True)

    def write(self, text: str) -> None:
        bar = text.strip("\r\n")
        if bar:
            self.handle.update({"text/plain": bar}, raw=True)

    def flush(self) -> None:
        pass


def _in_kernel() -> bool:
    """True in a Jupyter kernel (a notebook), False in plain Python or a bare IPython shell."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and hasattr(shell, "kernel")


def progress(iterable: Iterable, *, desc: str | None = None, disable: bool = False, **options) -> tqdm:
    """``tqdm(iterable, desc=desc, ...)``, drawn as text in one updating output when run in a notebook kernel.

    ``options`` go to tqdm (``total``, ``postfix``, ...); the bar refreshes at most twice a second.
    """
    file = _DisplayFile() if _in_kernel() and not disable else None
    return tqdm(iterable, desc=desc, disable=disable, file=file, mininterval=0.5, ascii=False, leave=True,
                dynamic_ncols=False, ncols=100, **options)
