"""Notebook 01's readers (helpers.readers): their errors, their budgets, and what they can and cannot see."""

from __future__ import annotations

import pytest
import torch

from helpers.readers import READ_LENGTHS, READERS, SYMBOLS, AttentionReader, reader_accuracy, trained_reader
from helpers.tasks import relation_batch


@pytest.mark.parametrize("lang, words", [("en", "must be"), ("zh", "只能是")])
@pytest.mark.parametrize("call, named", [
    (lambda: trained_reader("LSTMReader", "seen"), "'LSTMReader'"),
    (lambda: trained_reader("GRUReader", "sort"), "'sort'"),
    (lambda: reader_accuracy(AttentionReader(), "copy"), "'copy'"),
])
def test_a_wrong_reader_or_task_is_named_in_the_edition_s_language(monkeypatch, lang, words, call, named):
    monkeypatch.setenv("COURSE_LANG", lang)
    with pytest.raises(ValueError, match=words) as error:
        call()
    assert named in str(error.value)


def test_both_readers_have_the_same_budget_and_answer_one_logit_per_row():
    tokens, _ = relation_batch("seen", 5, length=7, vocab_size=SYMBOLS, generator=torch.Generator().manual_seed(0))
    sizes = {name: sum(p.numel() for p in reader().parameters()) for name, reader in READERS.items()}
    assert abs(sizes["GRUReader"] / sizes["AttentionReader"] - 1) < 0.05
    for reader in READERS.values():
        assert reader()(tokens).shape == (5,)


def test_without_positions_the_attention_reader_cannot_see_the_order_and_with_them_it_can():
    torch.manual_seed(0)
    rows, _ = relation_batch("seen", 64, length=9, vocab_size=SYMBOLS, generator=torch.Generator().manual_seed(1))
    shuffled = torch.cat([rows[:, torch.randperm(9)], rows[:, -1:]], dim=1)
    blind, seeing = AttentionReader().eval(), AttentionReader(positions=True).eval()
    with torch.no_grad():
        assert (blind(shuffled) - blind(rows)).abs().max() < 1e-5
        assert (seeing(shuffled) - seeing(rows)).abs().max() > 1e-3


def test_a_trained_reader_is_kept_and_loaded_the_second_time(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_CACHE", str(tmp_path))
    monkeypatch.setattr("helpers.readers.STEPS", 30)  # the mechanism, not the accuracy
    first, loaded_first = trained_reader("GRUReader", "sorted")
    second, loaded_second = trained_reader("GRUReader", "sorted")
    assert (loaded_first, loaded_second) == (False, True)
    for a, b in zip(first.state_dict().values(), second.state_dict().values()):
        assert torch.equal(a, b)
    assert reader_accuracy(second, "sorted").shape == (len(READ_LENGTHS),)
