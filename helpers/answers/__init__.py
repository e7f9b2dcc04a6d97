"""The answers to the exercises, kept out of the notebooks so that no exercise cell shows its own answer.

One module per notebook (``n04`` for notebook 04, ...). An exercise's id starts with its notebook's number
(``"04-mask-order"``), and :func:`lookup` finds its entry in that module's tables:

* ``NUMBERS[id] = Number(expected, mistakes={wrong value: (en, zh)}, hint=(en, zh), rel=...)``;
* ``CHOICES[id] = Choice(correct, explanations={choice: (en, zh)}, hint=(en, zh))``: one explanation per choice;
* ``PREDICTIONS[id] = {outcome: (en, zh)}``: why each outcome of a predict-then-run experiment happens.

Text is given in English and Chinese, ``(en, zh)``; :mod:`helpers.checks` picks the edition's language. Reading
these files is a deliberate act, like opening a solution.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

Text = tuple[str, str]  # (English, Chinese)


@dataclass(frozen=True)
class Number:
    expected: float
    mistakes: dict[float, Text] = field(default_factory=dict)
    hint: Text | None = None
    rel: float = 1e-6


@dataclass(frozen=True)
class Choice:
    correct: str
    explanations: dict[str, Text]
    hint: Text | None = None

    def __post_init__(self) -> None:
        if self.correct not in self.explanations:
            raise ValueError(f"correct must be one of {sorted(self.explanations)}; got {self.correct!r}")


def lookup(table: str, exercise: str) -> object:
    """The entry of ``exercise`` (e.g. "04-mask-order") in ``table`` ("NUMBERS", "CHOICES" or "PREDICTIONS")."""
    if not isinstance(exercise, str) or len(exercise) < 3 or not exercise[:2].isdigit():
        raise ValueError(f"exercise must be an id like '04-mask-order'; got {exercise!r}")
    try:
        module = importlib.import_module(f"helpers.answers.n{exercise[:2]}")
    except ModuleNotFoundError:
        raise ValueError(f"no answers for notebook {exercise[:2]} (helpers/answers/n{exercise[:2]}.py)") from None
    entries = getattr(module, table, {})
    if exercise not in entries:
        raise ValueError(f"no {table.lower()[:-1]} exercise {exercise!r} in helpers/answers/n{exercise[:2]}.py; "
                         f"known: {sorted(entries)}")
    return entries[exercise]
