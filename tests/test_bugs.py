"""Every planted bug really fails the property check its exercise names, and its fix passes that check."""

from __future__ import annotations

import pytest

from helpers import bugs, checks


@pytest.fixture(autouse=True)
def fresh_attempts():
    checks.reset_attempts()


@pytest.mark.parametrize("name", sorted(bugs.SYMPTOM_CHECK))
def test_the_bug_fails_its_check_and_the_fix_passes(name, capsys):
    check = getattr(checks, bugs.SYMPTOM_CHECK[name])
    with pytest.raises(checks.ExerciseError):
        check(getattr(bugs, name))
    check(bugs._references()[name])
    assert "[x]" in capsys.readouterr().out


def test_every_bug_has_a_check_and_is_exported():
    assert set(bugs.SYMPTOM_CHECK) == set(bugs.__all__) - {"show", "SYMPTOM_CHECK"}
    assert set(bugs.SYMPTOM_CHECK) == set(bugs._references())


def test_show_numbers_the_lines(capsys):
    bugs.show(bugs.attention)
    out = capsys.readouterr().out
    assert out.startswith(" 1 | def attention(") and "/ d_k" in out
