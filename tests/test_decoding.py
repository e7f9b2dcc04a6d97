"""Beam search, sequence scores, the trained-model cache and the type-your-own-sentence box."""

from __future__ import annotations

import itertools

import pytest
import torch

from helpers.checkpoints import checkpoint_path, train_or_load
from helpers.decoding import beam_search, sequence_log_prob
from helpers.reproducibility import seed_everything
from helpers.sentence_box import sentence_box
from helpers.seq2seq import Seq2SeqTransformer
from helpers.tokens import EOS, PAD
from helpers.training import TrainResult
from helpers.translation import translation_task
from helpers.widgets import move_every_control


def small_model(vocab: int = 7, seed: int = 0) -> Seq2SeqTransformer:
    """An untrained model that, like a trained one, never prefers PAD or BOS (beam search never emits them)."""
    seed_everything(seed)
    model = Seq2SeqTransformer(vocab, d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=2,
                               d_ff=32).double().eval()
    with torch.no_grad():
        model.generator.bias[[model.pad_id, model.bos_id]] = -1e4
    return model


SRC = torch.tensor([[3, 4, 5, 6], [6, 5, PAD, PAD], [4, 4, 4, PAD]])


@pytest.mark.parametrize("seed", range(3))
def test_a_beam_of_one_is_greedy_decoding(seed):
    model = small_model(seed=seed)
    greedy = model.greedy_decode(SRC, 6)
    tokens, _ = beam_search(model, SRC, 6, beam_size=1)
    assert torch.equal(tokens, greedy)


@pytest.mark.parametrize("seed", range(3))
def test_the_score_is_the_outputs_log_probability(seed):
    model = small_model(seed=seed)
    tokens, score = beam_search(model, SRC, 6, beam_size=3)
    torch.testing.assert_close(score, sequence_log_prob(model, SRC, tokens))


def all_outputs(vocab: int, length: int) -> list[list[int]]:
    """Every output of at most ``length`` tokens: real tokens then EOS, or ``length`` real tokens."""
    real = [t for t in range(vocab) if t not in (PAD, 1, EOS)]
    outputs = []
    for n in range(length + 1):
        for body in itertools.product(real, repeat=n):
            outputs.append([*body, EOS] if n < length else list(body))
    return outputs


@pytest.mark.parametrize("seed", range(3))
def test_a_beam_as_wide_as_every_prefix_finds_the_most_likely_output(seed):
    # vocab 6: PAD, BOS, EOS and 3 real tokens; 3 steps. A beam of 4² = 16 keeps every prefix of 2 real tokens,
    # so it is an exhaustive search: its best output is the most likely of all 1 + 3 + 9 + 27 outputs.
    model = small_model(vocab=6, seed=seed)
    src = torch.tensor([[3, 4, 5]])
    outputs = all_outputs(6, 3)
    padded = torch.tensor([o + [PAD] * (3 - len(o)) for o in outputs])
    scores = sequence_log_prob(model, src.expand(len(outputs), -1), padded)
    _, best = beam_search(model, src, 3, beam_size=16)
    torch.testing.assert_close(best[0], scores.max())


def test_beam_search_is_never_worse_than_greedy_here():
    model = small_model(seed=1)
    greedy = model.greedy_decode(SRC, 6)
    tokens, score = beam_search(model, SRC, 6, beam_size=4)
    assert bool((score >= sequence_log_prob(model, SRC, greedy) - 1e-9).all())


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(beam_size=0), ValueError, "beam_size must be positive; got 0"),
    (dict(beam_size=2.0), TypeError, "beam_size must be an int"),
    (dict(length_penalty=-1.0), ValueError, "length_penalty must be a number >= 0"),
    (dict(max_new_tokens=0), ValueError, "max_new_tokens must be positive"),
])
def test_beam_search_rejects_bad_arguments(kwargs, error, words):
    arguments = dict(max_new_tokens=4) | kwargs
    with pytest.raises(error, match=words):
        beam_search(small_model(), SRC, **arguments)


def test_decoding_wants_the_course_model():
    with pytest.raises(TypeError, match="model must be a helpers.seq2seq.Seq2SeqTransformer; got Linear"):
        beam_search(torch.nn.Linear(2, 2), SRC, 4)
    with pytest.raises(ValueError, match="tokens must have src's batch size 3"):
        sequence_log_prob(small_model(), SRC, torch.tensor([[3, EOS]]))  # 1 output for 3 sources


# ---------------------------------------------------------------------------------------------- the model cache


def test_a_trained_model_is_loaded_the_second_time(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_CACHE", str(tmp_path))
    monkeypatch.delenv("COURSE_RETRAIN", raising=False)
    fits = []

    def fit(model):
        with torch.no_grad():
            model.weight.fill_(len(fits) + 2.0)
        fits.append(1)
        return TrainResult([1.0, 0.5], [(2, 0.9)], 3.0)

    build = lambda: torch.nn.Linear(2, 2)  # noqa: E731
    first, result, loaded = train_or_load("toy", build, fit, {"lr": 1})
    again, result_again, loaded_again = train_or_load("toy", build, fit, {"lr": 1})
    assert (loaded, loaded_again, len(fits)) == (False, True, 1)
    assert torch.equal(again.weight, first.weight) and result_again == result
    other, _, loaded_other = train_or_load("toy", build, fit, {"lr": 2})  # another recipe trains anew
    assert not loaded_other and float(other.weight[0, 0].detach()) == 3.0
    monkeypatch.setenv("COURSE_RETRAIN", "1")
    assert not train_or_load("toy", build, fit, {"lr": 1})[2] and len(fits) == 3
    assert checkpoint_path("toy", {"lr": 1}).parent == tmp_path


def test_the_cache_rejects_a_bad_name_or_recipe():
    with pytest.raises(ValueError, match="name must be a plain identifier"):
        checkpoint_path("../x", {})
    with pytest.raises(TypeError, match="recipe must be a dict"):
        checkpoint_path("x", [1])


# -------------------------------------------------------------------------------------- type your own sentence


@pytest.fixture(scope="module")
def box():
    task = translation_task(0, n_train=3000)
    seed_everything(0)
    model = Seq2SeqTransformer(len(task.vocab), d_model=16, num_heads=2, num_encoder_layers=2,
                               num_decoder_layers=2, d_ff=32).eval()
    return sentence_box(model, task, layer=1, head=1)


@pytest.mark.parametrize("text, words", [
    ("", "type an English sentence"),
    ("   !!! ", "type an English sentence"),
    ("The zebra eats fish", "does not know the word 'zebra'"),
    ("The cta eats fish.", "did you mean tea, cat"),
    ("x" * 5000, "too long"),
    ("I " * 40, "at most 30 words"),
])
def test_the_sentence_box_explains_what_it_cannot_translate(box, text, words):
    box.controls["text"].value = text
    assert words in box.text and "Traceback" not in box.text


@pytest.mark.parametrize("text", ["🐱 THE CAT eats FISH!!", "What does the cat eat", "My mother drinks TEA, at home!"])
def test_the_sentence_box_translates_odd_but_known_input(box, text):
    before = box.redraws
    box.controls["text"].value = text
    assert "→" in box.text and box.redraws == before + 1


def test_every_control_of_the_sentence_box_redraws_it_faithfully(box):
    box.controls["text"].value = "Lily sees two black cats in the park."
    assert move_every_control(box) >= 10  # raises StaleBlitError if a fast redraw differs from a full draw


def test_the_sentence_box_checks_layer_and_head(box):
    task = translation_task(0, n_train=3000)
    model = Seq2SeqTransformer(len(task.vocab), d_model=16, num_heads=2, num_encoder_layers=1,
                               num_decoder_layers=1, d_ff=32)
    with pytest.raises(ValueError, match=r"head must be an int in \[0, 2\); got 2"):
        sentence_box(model, task, head=2)
    with pytest.raises(TypeError, match="task must be a helpers.translation.TranslationTask; got list"):
        sentence_box(model, [], layer=0)
