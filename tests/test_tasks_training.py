"""The toy tasks, the Seq2Seq model, greedy decoding and the training loop."""

from __future__ import annotations

import pytest
import torch

from helpers.reproducibility import seed_everything
from helpers.seq2seq import Seq2SeqTransformer
from helpers.tasks import BOS, EOS, FIRST_SYMBOL, PAD, make_batch, toy_matrix, toy_projections
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
    model = Seq2SeqTransformer(vocab_size=8, d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=32).eval()
    with torch.no_grad():
        model.generator.bias.fill_(0.0)
        model.generator.bias[EOS] = 100.0  # always says EOS
    out = model.greedy_decode(torch.tensor([[3, 4, 5], [6, 7, 0]]), 5)
    assert out.tolist() == [[EOS], [EOS]]


def test_greedy_decode_matches_full_forward_argmax():
    seed_everything(0)
    model = Seq2SeqTransformer(vocab_size=10, d_model=16, num_heads=2, num_encoder_layers=2, num_decoder_layers=2, d_ff=32).eval()
    with torch.no_grad():  # never PAD nor EOS, so the full pass sees the same tokens without a padding mask
        model.generator.bias[PAD] = model.generator.bias[EOS] = -100.0
    src = torch.tensor([[3, 4, 5, 6]])
    out = model.greedy_decode(src, 4)
    tgt_in = torch.cat([torch.tensor([[BOS]]), out[:, :-1]], dim=1)
    assert torch.equal(model(src, tgt_in).argmax(-1), out)  # the incremental loop = one causal pass


def test_training_learns_the_copy_task():
    seed_everything(0)
    g = torch.Generator().manual_seed(0)
    model = Seq2SeqTransformer(vocab_size=8, d_model=32, num_heads=4, num_encoder_layers=1, num_decoder_layers=1, d_ff=64)
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
