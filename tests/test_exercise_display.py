"""In IPython a failed exercise shows its message alone, not a 30-line traceback through helpers/checks.py;
a cell run before the one it needs says which cell to run first.

Runs cells in IPython's own InteractiveShell (what the notebook kernel is built on) and reads what it prints.
"""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from helpers import checks


@pytest.fixture
def shell():
    shell = InteractiveShell.instance()
    shell.run_cell("import helpers.checks as checks\nimport torch", store_history=False)
    checks.show_exercise_errors(shell)  # the module may have been imported before IPython ran
    checks.reset_attempts()
    yield shell
    shell.set_custom_exc((), None)


def run(shell, code: str) -> tuple[str, object]:
    with capture_output() as captured:
        result = shell.run_cell(code, store_history=True)
    return captured.stdout + captured.stderr, result


def test_a_wrong_answer_shows_the_message_alone(shell):
    output, result = run(shell, "checks.check_value('sum', 3.0, 4.0, hint='add the four numbers')")
    assert output.strip() == "sum: 3 is not the expected value\n(Try again: the next wrong answer also gets a hint.)"
    again, _ = run(shell, "checks.check_value('sum', 3.0, 4.0, hint='add the four numbers')")
    assert again.strip().endswith("Hint: add the four numbers"), "the second wrong answer gets the hint"
    assert "Traceback" not in output and "checks.py" not in output
    assert isinstance(result.error_in_exec, checks.ExerciseError), "the cell still fails (Run All stops)"


def test_a_wrong_answer_deep_in_a_checker_too(shell):
    output, result = run(shell, "checks.check_softmax(lambda s: torch.exp(s) / torch.exp(s).sum())")
    assert output.startswith("softmax: values differ by up to")
    assert "Traceback" not in output and "helpers/checks.py" not in output and "_compare" not in output
    assert len(output.strip().splitlines()) == 2


def test_other_errors_keep_their_traceback(shell):
    output, result = run(shell, "1 / 0")
    assert "ZeroDivisionError" in output and "Traceback" in output
    assert isinstance(result.error_in_exec, ZeroDivisionError)


def test_a_name_from_an_earlier_cell_says_to_run_it(shell):
    output, result = run(shell, "undefined_toy_model + 1")
    assert "NameError" in output, "the usual message and where it happened stay"
    assert "If an earlier cell defines `undefined_toy_model`, run that cell first" in output
    assert isinstance(result.error_in_exec, NameError)


def test_require_names_the_cell_to_run_first(shell):
    output, result = run(shell, "checks.require({'toy': '7 · the model', 'torch': 'imports'})")
    assert output.strip() == ('`toy` is not defined yet: run the cell "7 · the model" first.\n'
                              "(After a kernel restart: Run > Run All Above Selected Cell.)")
    assert isinstance(result.error_in_exec, checks.RunEarlierCellError)
    output, result = run(shell, "toy = 1\nchecks.require('toy', '7 · the model')\nprint('ready')")
    assert output.strip() == "ready" and result.success


def test_require_outside_ipython_takes_a_namespace():
    checks.require("x", "the cell that sets x", namespace={"x": 1})
    with pytest.raises(checks.RunEarlierCellError, match='run the cell "the cell that sets x" first'):
        checks.require("x", "the cell that sets x", namespace={})


@pytest.mark.parametrize(("args", "match"), [
    (("x",), "cell must name the cell that defines 'x'; got None"),
    (({},), "names must be a variable name or a non-empty dict"),
    ((["x"],), "names must be a variable name or a non-empty dict"),
])
def test_require_rejects_bad_arguments(args, match):
    with pytest.raises(TypeError, match=match):
        checks.require(*args, namespace={})


def test_without_ipython_registration_is_a_no_op():
    assert checks.show_exercise_errors(object()) is False
