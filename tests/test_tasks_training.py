"""The toy tasks, the Seq2Seq model, greedy decoding and the training loop."""

from __future__ import annotations

import pytest
import torch

from helpers.reproducibility import seed_everything
from helpers.seq2seq import Seq2SeqTransformer
from helpers.tasks import BOS, EOS, FIRST_SYMBOL, PAD, make_batch, relation_batch, toy_matrix, toy_projections
from helpers.training import evaluate, exact_match, sequence_loss, token_accuracy, train


def test_toy_matrix_is_four_words_by_six_columns():
    assert toy_matrix().shape == (4, 6)
    assert all(w.shape == (6, 3) for w in toy_projections())


def test_reverse_batch_is_reversed_with_eos_and_padding():
    g = torch.Generator().manual_seed(0)
    batch = make_batch("reverse", 64, min_length=2, max_length=6, vocab_size=12, generator=g)
    for src, tgt_in, tgt_out in zip(batch.src, batch.tgt_in, batch.tgt_out):
        real = src[src != PAD]
        n = len(real)
        assert 2 <= n <= 6 and torch.all(real >= FIRST_SYMBOL)
        assert torch.equal(tgt_out[:n], real.flip(0)) and tgt_out[n] == EOS and torch.all(tgt_out[n + 1:] == PAD)
        assert tgt_in[0] == BOS and torch.equal(tgt_in[1 : n + 1], tgt_out[:n])
        assert torch.all(tgt_in[n + 1 :] == PAD)


def test_copy_batch_copies():
    batch = make_batch("copy", 8, min_length=3, max_length=3, vocab_size=9, generator=torch.Generator().manual_seed(1))
    assert torch.equal(batch.tgt_out[:, :3], batch.src) and torch.all(batch.tgt_out[:, 3] == EOS)


@pytest.mark.parametrize("task", ["seen", "sorted"])
def test_relation_batches_answer_their_question(task):
    tokens, labels = relation_batch(task, 400, length=6, vocab_size=20, generator=torch.Generator().manual_seed(3))
    assert tokens.shape == (400, 7) and labels.shape == (400,) and labels.dtype == torch.float32
    x, last = tokens[:, :-1], tokens[:, -1]
    assert torch.all(x >= FIRST_SYMBOL) and torch.all(x < 20)
    assert all(len(set(row.tolist())) == 6 for row in x), "the symbols of a row are distinct"
    if task == "seen":
        truth = (x == last[:, None]).any(dim=1)
        assert torch.all(last >= FIRST_SYMBOL)
    else:
        truth = (x[:, 1:] > x[:, :-1]).all(dim=1)
        assert torch.all(last == EOS)
        # a "no" row is sorted but for one swapped pair of neighbours: exactly one descent
        assert torch.all((x[~truth, 1:] < x[~truth, :-1]).sum(dim=1) == 1)
    assert torch.equal(labels, truth.float())
    assert 0.4 < labels.mean() < 0.6, "about half of the answers are yes"
    again, _ = relation_batch(task, 400, length=6, vocab_size=20, generator=torch.Generator().manual_seed(3))
    assert torch.equal(tokens, again), "seeded"


def test_batches_are_seeded():
    a = make_batch("reverse", 4, min_length=1, max_length=5, vocab_size=9, generator=torch.Generator().manual_seed(7))
    b = make_batch("reverse", 4, min_length=1, max_length=5, vocab_size=9, generator=torch.Generator().manual_seed(7))
    assert torch.equal(a.src, b.src) and torch.equal(a.tgt_out, b.tgt_out)


def test_exact_match_pads_and_compares_whole_rows():
    predicted = torch.tensor([[5, 4, EOS], [5, 4, 4]])
    target = torch.tensor([[5, 4, EOS, PAD], [5, 4, EOS, PAD]])
    assert exact_match(predicted, target).tolist() == [True, False]


def test_token_accuracy_counts_missing_tokens_as_wrong():
    target = torch.tensor([[5, 4, EOS, PAD], [6, 7, 8, EOS]])
    assert token_accuracy(torch.tensor([[5, 4, EOS], [6, 7, PAD]]), target) == pytest.approx(5 / 7)


def test_greedy_decode_stops_at_eos_and_pads_after():
    seed_everything(0)
    model = Seq2SeqTransformer(vocab_size=8, d_model=16, num_heads=2,
                               num_encoder_layers=1, num_decoder_layers=1, d_ff=32).eval()
    with torch.no_grad():
        model.generator.bias.fill_(0.0)
        model.generator.bias[EOS] = 100.0  # always says EOS
    out = model.greedy_decode(torch.tensor([[3, 4, 5], [6, 7, 0]]), 5)
    assert out.tolist() == [[EOS], [EOS]]


def test_greedy_decode_matches_full_forward_argmax():
    seed_everything(0)
    model = Seq2SeqTransformer(vocab_size=10, d_model=16, num_heads=2,
                               num_encoder_layers=2, num_decoder_layers=2, d_ff=32).eval()
    with torch.no_grad():  # never PAD nor EOS, so the full pass sees the same tokens without a padding mask
        model.generator.bias[PAD] = model.generator.bias[EOS] = -100.0
    src = torch.tensor([[3, 4, 5, 6]])
    out = model.greedy_decode(src, 4)
    tgt_in = torch.cat([torch.tensor([[BOS]]), out[:, :-1]], dim=1)
    assert torch.equal(model(src, tgt_in).argmax(-1), out)  # the incremental loop = one causal pass


def test_training_learns_the_copy_task():
    seed_everything(0)
    g = torch.Generator().manual_seed(0)
    model = Seq2SeqTransformer(vocab_size=8, d_model=32, num_heads=4,
                               num_encoder_layers=1, num_decoder_layers=1, d_ff=64)
    next_batch = lambda: make_batch("copy", 32, min_length=2, max_length=4, vocab_size=8, generator=g)
    held_out = make_batch("copy", 128, min_length=2, max_length=4, vocab_size=8,
                          generator=torch.Generator().manual_seed(99))
    before = evaluate(model, held_out)
    result = train(model, next_batch, steps=1500, lr=2e-3, eval_batch=held_out, eval_every=100,
                   target_accuracy=0.98, progress=False)
    assert result.final_accuracy >= 0.98 > before
    assert result.losses[-1] < result.losses[0] / 5
    assert sequence_loss(model(held_out.src, held_out.tgt_in), held_out.tgt_out) < 0.2


def test_gru_models_decode_like_their_teacher_forced_pass():
    from helpers.rnn import GRUSeq2Seq

    for attention in (False, True):
        seed_everything(0)
        model = GRUSeq2Seq(10, 16, attention=attention).eval()
        with torch.no_grad():
            model.out.bias[PAD] = model.out.bias[EOS] = -100.0
        src = torch.tensor([[3, 4, 5, 6], [7, 8, 0, 0]])  # padding in row 1: packed, so it changes nothing
        out = model.greedy_decode(src, 5)
        tgt_in = torch.cat([torch.full((2, 1), BOS), out[:, :-1]], dim=1)
        assert torch.equal(model(src, tgt_in).argmax(-1), out)
        if attention:
            assert torch.all(model.cross_attention_weights[1, :, 2:] == 0)  # no weight on the source padding
        padded_more = torch.tensor([[7, 8, 0, 0, 0, 0]])
        assert torch.equal(model.greedy_decode(padded_more, 5), out[1:])


def test_images_have_one_stroke_of_the_labelled_shape():
    from helpers.tasks import make_images

    images, labels = make_images(40, noise=0.0, generator=torch.Generator().manual_seed(0))
    assert images.shape == (40, 1, 16, 16) and set(labels.tolist()) == {0, 1, 2, 3}
    for image, label in zip(images[:, 0], labels):
        rows, cols = torch.nonzero(image, as_tuple=True)
        assert len(rows) == 6
        if label == 0:
            assert len(set(rows.tolist())) == 1
        elif label == 1:
            assert len(set(cols.tolist())) == 1
        else:
            sign = 1 if label == 2 else -1
            assert len(set((cols - sign * rows).tolist())) == 1


def test_special_tokens_live_in_one_module_and_tasks_re_export_them():
    import helpers.tasks
    import helpers.tokens

    assert (helpers.tasks.PAD, helpers.tasks.BOS, helpers.tasks.EOS) == (helpers.tokens.PAD, helpers.tokens.BOS,
                                                                         helpers.tokens.EOS)
    assert helpers.tasks.FIRST_SYMBOL == helpers.tokens.FIRST_SYMBOL > max(PAD, BOS, EOS)
    from helpers.tokens import token_label

    assert [token_label(t) for t in (PAD, BOS, EOS, FIRST_SYMBOL)] == ["PAD", "BOS", "EOS", str(FIRST_SYMBOL)]


def biased_model(**ids) -> Seq2SeqTransformer:
    """A small model whose generator never says PAD nor EOS nor BOS (so every decoded row has full length)."""
    seed_everything(0)
    model = Seq2SeqTransformer(vocab_size=12, d_model=16, num_heads=2, num_encoder_layers=2, num_decoder_layers=2,
                               d_ff=32, **ids).eval()
    with torch.no_grad():
        for token in (model.pad_id, model.bos_id, model.eos_id):
            model.generator.bias[token] = -100.0
    return model


def test_kv_cache_greedy_decode_gives_the_same_tokens_and_logits():
    model = biased_model()
    src = torch.tensor([[3, 4, 5, 6, 7], [8, 9, 0, 0, 0], [5, 0, 0, 0, 0]])  # padding in the batch
    cached = model.greedy_decode(src, 6)
    assert torch.equal(cached, model.greedy_decode(src, 6, use_cache=False))
    # the logits of each cached step against the teacher-forced pass over the whole prefix
    tgt_in = torch.cat([torch.full((3, 1), BOS), cached[:, :-1]], dim=1)
    with torch.no_grad():
        full = model(src, tgt_in)  # (batch, L_tgt, vocab)
        src_mask = (src != PAD).unsqueeze(1)
        memory = model.transformer.encode(model.embed(src), src_mask)
        cache = model.transformer.new_cache()
        for step in range(tgt_in.shape[1]):
            hidden = model.transformer.decode(model.embed(tgt_in[:, step : step + 1], start=step), memory, None,
                                              src_mask, cache=cache)
            torch.testing.assert_close(model.generator(hidden[:, -1]), full[:, step], atol=1e-5, rtol=1e-5)
    assert torch.equal(full.argmax(-1), cached)


def test_model_uses_its_own_special_ids():
    ids = dict(pad_id=11, bos_id=10, eos_id=9)
    model = biased_model(**ids)
    src = torch.tensor([[3, 4, 5, 11], [6, 7, 11, 11]])  # 11 is this model's PAD
    out = model.greedy_decode(src, 4)
    tgt_in = torch.cat([torch.full((2, 1), 10), out[:, :-1]], dim=1)  # starts from bos_id = 10
    assert torch.equal(model(src, tgt_in).argmax(-1), out)
    padded_more = torch.tensor([[6, 7, 11, 11, 11, 11]])  # more of its PAD changes nothing
    assert torch.equal(model.greedy_decode(padded_more, 4), out[1:])
    with torch.no_grad():
        model.generator.bias[9] = 100.0  # now it always says its EOS
    assert model.greedy_decode(src, 4).tolist() == [[9], [9]]


def test_training_functions_take_the_pad_id_from_the_model():
    from helpers.tasks import Seq2SeqBatch
    from helpers.training import model_pad_id

    model = biased_model(pad_id=11, bos_id=10, eos_id=9)
    assert model_pad_id(model) == 11 and model_pad_id(model, 0) == 0 and model_pad_id(torch.nn.Linear(1, 1)) == PAD
    with torch.no_grad():
        model.generator.bias[9] = 100.0  # it always says its EOS at once
    target = torch.tensor([[9, 11, 11]])  # EOS, then this model's PAD
    batch = Seq2SeqBatch(torch.tensor([[3, 4, 5]]), torch.tensor([[10, 11, 11]]), target)
    assert evaluate(model, batch) == 1.0  # the model's PAD fills the decoded row: an exact match
    assert evaluate(model, batch, pad_id=PAD) == 0.0  # filled with 0 instead, the row differs
    expected = sequence_loss(model(batch.src, batch.tgt_in), target, 11)  # the loss of position 0 only
    assert expected == sequence_loss(model(batch.src, batch.tgt_in)[:, :1], target[:, :1], 11)
    result = train(model, lambda: batch, steps=1, progress=False)
    assert result.losses[0] == pytest.approx(expected.item())
