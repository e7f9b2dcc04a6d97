"""Every bad input raises a clear ValueError / TypeError naming the argument and the shapes."""

from __future__ import annotations

import re

import pytest
import torch
from torch import nn

from helpers.attention import (
    MultiHeadAttention,
    causal_mask,
    fused_scaled_dot_product_attention,
    lengths_mask,
    padding_mask,
    scaled_dot_product_attention,
)
from helpers.kv_cache import KVCache
from helpers.layers import DecoderLayer, EncoderLayer, FeedForward, PositionalEncoding
from helpers.plotting import heatmap
from helpers.rnn import GRUSeq2Seq
from helpers.seq2seq import Seq2SeqTransformer
from helpers.tasks import make_batch, relation_batch
from helpers.transformer import Transformer

q, k, v = torch.randn(2, 5, 8), torch.randn(2, 7, 8), torch.randn(2, 7, 4)
qh, kh, vh = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 7, 8), torch.randn(2, 3, 7, 4)  # per-head (batch 2, 3 heads)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: scaled_dot_product_attention(q.long(), k, v), TypeError, "query must be a floating-point tensor"),
        (lambda: scaled_dot_product_attention(q.numpy(), k, v), TypeError, "query must be a torch.Tensor"),
        (lambda: scaled_dot_product_attention(q, k[..., :6], v), ValueError,
         "key must have last dimension d_k of query = 8; got shape (2, 7, 6)"),
        (lambda: scaled_dot_product_attention(q, k, v[:, :6]), ValueError,
         "value must have as many rows as key, L_k = 7; got value shape (2, 6, 4)"),
        (lambda: scaled_dot_product_attention(q[0, 0], k, v), ValueError, "query must have at least 2 dimensions"),
        (lambda: scaled_dot_product_attention(q, k.double(), v), TypeError, "must share one dtype"),
        (lambda: scaled_dot_product_attention(q, k, v, torch.ones(2, 5, 7)), TypeError,
         "mask must be a torch.bool tensor"),
        (lambda: scaled_dot_product_attention(q, k, v, torch.ones(2, 7, 5, dtype=torch.bool)), ValueError,
         "mask must broadcast to (..., L_q, L_k) = (2, 5, 7); got (2, 7, 5)"),
        (lambda: scaled_dot_product_attention(q, torch.randn(3, 7, 8), torch.randn(3, 7, 4)), ValueError,
         "leading (batch) dimensions"),
        (lambda: causal_mask(0), ValueError, "length must be at least 1; got 0"),
        (lambda: causal_mask(2.5), TypeError, "length must be an int"),
        (lambda: padding_mask(torch.ones(2, 3), 0), TypeError, "tokens must hold integer token ids"),
        (lambda: padding_mask(torch.ones(3, dtype=torch.long), 0), ValueError,
         "tokens must be 2-D (batch, L); got shape (3,)"),
        (lambda: padding_mask(torch.ones(2, 3, dtype=torch.long), None), TypeError, "pad_id must be an int"),
        # per-head scores (2, 3, 5, 7): a 3-D (batch, 1, L_k) mask would line its batch axis up with the heads
        (lambda: scaled_dot_product_attention(qh, kh, vh, torch.ones(2, 1, 7, dtype=torch.bool)), ValueError,
         "mask must be 2-D (L_q, L_k) or 4-D like the scores (..., L_q, L_k) = (2, 3, 5, 7); got 3-D (2, 1, 7). "
         "A (batch, 1, L_k) padding mask would line its batch axis up with the heads"),
        (lambda: fused_scaled_dot_product_attention(qh, kh, vh, torch.ones(3, 1, 7, dtype=torch.bool)), ValueError,
         "mask must be 2-D (L_q, L_k) or 4-D like the scores"),
        (lambda: scaled_dot_product_attention(q, k, v, torch.ones(7, dtype=torch.bool)), ValueError,
         "mask must be 2-D (L_q, L_k) or 3-D like the scores (..., L_q, L_k) = (2, 5, 7); got 1-D (7,)"),
        (lambda: scaled_dot_product_attention(q[..., :0], k[..., :0], v), ValueError,
         "query must have a last dimension d_k of at least 1; got shape (2, 5, 0)"),
        (lambda: scaled_dot_product_attention(q, k, v, is_causal=True), ValueError,
         "is_causal=True needs as many queries as keys (query i sees keys 0..i); got L_q = 5, L_k = 7"),
        (lambda: fused_scaled_dot_product_attention(q, k, v, is_causal=1), TypeError,
         "is_causal must be a bool; got int"),
        (lambda: fused_scaled_dot_product_attention(q, k, v, dropout_p=1.0), ValueError,
         "dropout_p must be a number in [0, 1); got 1.0"),
        (lambda: fused_scaled_dot_product_attention(q, k.half(), v), TypeError, "must share one dtype"),
        (lambda: lengths_mask(torch.tensor([2, 5]), 4), ValueError, "lengths must be in [0, length = 4]; got values"),
        (lambda: lengths_mask(torch.tensor([2.0]), 4), TypeError, "lengths must hold integers"),
        (lambda: lengths_mask(torch.tensor([[2]]), 4), ValueError, "lengths must be 1-D (batch,); got shape (1, 1)"),
    ],
)
def test_functions_reject_bad_input(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()


mha = MultiHeadAttention(8, 2)
x = torch.randn(2, 5, 8)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: MultiHeadAttention(10, 3), ValueError,
         "d_model must be divisible by num_heads; got d_model = 10, num_heads = 3"),
        (lambda: MultiHeadAttention(8, 0), ValueError, "num_heads must be positive"),
        (lambda: MultiHeadAttention(8.0, 2), TypeError, "d_model must be an int"),
        (lambda: MultiHeadAttention(8, 2, dropout=1.5), ValueError, "dropout must be in [0, 1)"),
        (lambda: mha(torch.randn(2, 5, 6), x, x), ValueError,
         "query must have last dimension d_model = 8; got shape (2, 5, 6)"),
        (lambda: mha(x[0], x, x), ValueError, "query must be 3-D (batch, L, d_model); got shape (5, 8)"),
        (lambda: mha(x, x[:1], x[:1]), ValueError,
         "query, key, value must share the batch size; got shapes (2, 5, 8), (1, 5, 8), (1, 5, 8)"),
        (lambda: mha(x, x, x[:, :4]), ValueError, "value must have the same length as key, L_k = 5"),
        (lambda: mha(x, x, x, torch.ones(2, 2, 5, 5, dtype=torch.bool)), ValueError,
         "mask must broadcast to (batch, L_q, L_k) = (2, 5, 5) (no head axis); got (2, 2, 5, 5)"),
        (lambda: mha(x, x, x, torch.ones(2, 5, 4, dtype=torch.bool)), ValueError, "got (2, 5, 4)"),
        (lambda: mha(x, x, x, torch.ones(5, 5)), TypeError, "mask must be a torch.bool tensor"),
        (lambda: mha(x.int(), x, x), TypeError, "query must be a floating-point tensor"),
        (lambda: mha(x.double(), x, x), TypeError,
         "query must have the dtype of the module's weights, torch.float32; got torch.float64"),
        (lambda: mha(x, x, x.half()), TypeError, "value must have the dtype of the module's weights"),
        # a (batch, L_k) padding mask: a 2-D mask means (L_q, L_k), so this one is pointed to (batch, 1, L_k)
        (lambda: mha(x[:, :3], x, x, torch.ones(2, 5, dtype=torch.bool)), ValueError,
         "mask must broadcast to (batch, L_q, L_k) = (2, 3, 5) (no head axis); got (2, 5). A 2-D mask means "
         "(L_q, L_k); for a padding mask of shape (batch, L_k) use padding_mask's (batch, 1, L_k) form"),
        (lambda: mha(x[:, :3], x, x, is_causal=True), ValueError, "is_causal=True needs as many queries as keys"),
        (lambda: mha(x, x, x, is_causal=None), TypeError, "is_causal must be a bool; got NoneType"),
    ],
)
def test_multi_head_attention_rejects_bad_input(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()


model = Transformer(8, 2, 1, 1, 16)
seq2seq = Seq2SeqTransformer(vocab_size=10, d_model=8, num_heads=2,
                             num_encoder_layers=1, num_decoder_layers=1, d_ff=16)
tokens = torch.tensor([[3, 4, 5], [6, 7, 0]])


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: model(torch.randn(2, 5, 6), torch.randn(2, 4, 8)), ValueError,
         "src must have last dimension d_model = 8; got shape (2, 5, 6)"),
        (lambda: model(torch.randn(2, 5, 8), torch.randn(3, 4, 8)), ValueError,
         "src, tgt must share the batch size; got shapes (2, 5, 8), (3, 4, 8)"),
        (lambda: model(torch.randn(5, 8), torch.randn(4, 8)), ValueError, "src must be 3-D"),
        (lambda: model(torch.randn(2, 5, 8), torch.randn(2, 4, 8), tgt_mask=torch.ones(4, 5, dtype=torch.bool)),
         ValueError, "mask must broadcast to (batch, L_q, L_k) = (2, 4, 4)"),
        (lambda: seq2seq(tokens.float(), tokens), TypeError, "src must hold integer token ids"),
        (lambda: seq2seq(tokens + 5, tokens), ValueError,
         "src must hold token ids in [0, 10); got values from 5 to 12"),
        (lambda: seq2seq(tokens, tokens - 1), ValueError, "tgt must hold token ids in [0, 10); got values from -1"),
        (lambda: seq2seq(tokens, tokens[:1]), ValueError, "src, tgt must share the batch size"),
        (lambda: seq2seq.greedy_decode(tokens[0], 3), ValueError, "src must be 2-D (batch, L)"),
        (lambda: PositionalEncoding(8, max_len=4)(torch.randn(1, 5, 8)), ValueError,
         "x must have length L <= max_len = 4; got shape (1, 5, 8)"),
        (lambda: PositionalEncoding(8)(torch.randn(1, 5, 6)), ValueError, "x must have last dimension d_model = 8"),
        (lambda: make_batch("sort", 2, min_length=2, max_length=4, vocab_size=10, generator=torch.Generator()),
         ValueError, "task must be 'copy' or 'reverse'; got 'sort'"),
        (lambda: make_batch("copy", 2, min_length=5, max_length=4, vocab_size=10, generator=torch.Generator()),
         ValueError, "min_length <= max_length"),
        (lambda: relation_batch("count", 2, length=4, vocab_size=10, generator=torch.Generator()), ValueError,
         "task must be 'seen' or 'sorted'; got 'count'"),
        (lambda: relation_batch("seen", 2, length=1, vocab_size=10, generator=torch.Generator()), ValueError,
         "length must be at least 2; got 1"),
        (lambda: relation_batch("seen", 2.0, length=4, vocab_size=10, generator=torch.Generator()), TypeError,
         "batch_size must be an int; got float 2.0"),
        (lambda: relation_batch("sorted", 2, length=7, vocab_size=10, generator=torch.Generator()), ValueError,
         "vocab_size must leave more than length = 7 symbols after the 3 special tokens (a symbol outside the "
         "row); got vocab_size = 10"),
        (lambda: heatmap(torch.rand(3, 4), ["a", "b"], ["w", "x", "y", "z"]), ValueError,
         "row_tokens must have 3 labels for a 3 x 4 matrix; got 2"),
        (lambda: heatmap(torch.rand(3, 4, 2)), ValueError, "matrix must be 2-D (queries, keys)"),
    ],
)
def test_models_reject_bad_input(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: MultiHeadAttention.from_torch(nn.Linear(4, 4)), TypeError, "module must be an nn.MultiheadAttention"),
        (lambda: MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2)), ValueError, "batch_first=True"),
        (lambda: MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, batch_first=True, kdim=4)), ValueError,
         "kdim = vdim = embed_dim"),
        (lambda: EncoderLayer.from_torch(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, activation="gelu")),
         ValueError, "ReLU"),
        (lambda: EncoderLayer.from_torch(nn.TransformerEncoderLayer(8, 2, 16)), ValueError, "batch_first=True"),
        (lambda: EncoderLayer.from_torch(nn.TransformerDecoderLayer(8, 2, 16, batch_first=True)), TypeError,
         "layer must be an nn.TransformerEncoderLayer"),
        (lambda: Transformer.from_torch(nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 1,
                                                              enable_nested_tensor=False)),
         TypeError, "module must be an nn.Transformer"),
    ],
)
def test_from_torch_rejects_what_it_cannot_copy(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()


# Issue 20's model-level cases: each a clear error naming the argument, at the entry point.
float32_model = Transformer(8, 2, 1, 1, 16)
src8, tgt8 = torch.randn(2, 5, 8), torch.randn(2, 4, 8)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: float32_model(src8.double(), tgt8.double()), TypeError,
         "src must have the module's dtype torch.float32; got torch.float64"),
        (lambda: float32_model(src8, tgt8.half()), TypeError,
         "tgt must have the module's dtype torch.float32; got torch.float16"),
        (lambda: float32_model.encode(src8.half()), TypeError, "src must have the module's dtype torch.float32"),
        (lambda: float32_model.decode(tgt8, src8.double()), TypeError,
         "memory must have the module's dtype torch.float32; got torch.float64"),
        (lambda: EncoderLayer(8, 2, 16)(src8.double()), TypeError,
         "x must have the module's dtype torch.float32; got torch.float64"),
        (lambda: DecoderLayer(8, 2, 16)(tgt8.half(), src8), TypeError, "x must have the module's dtype"),
        (lambda: FeedForward(8, 16)(src8.double()), TypeError, "x must have the module's dtype torch.float32"),
        (lambda: FeedForward(8, -1), ValueError, "d_ff must be positive; got -1"),
        (lambda: FeedForward(8, 2.5), TypeError, "d_ff must be an int; got float 2.5"),
        (lambda: Transformer(d_ff=-5), ValueError, "d_ff must be positive; got -5"),
        (lambda: Transformer(d_model=0), ValueError, "d_model must be positive; got 0"),
        (lambda: Transformer(8, 2, -1, 1, 16), ValueError, "num_encoder_layers must be at least 0; got -1"),
        (lambda: Transformer(8, 2, 1, 1.0, 16), TypeError, "num_decoder_layers must be an int"),
        (lambda: Transformer(8, 2, 1, 1, 16, dropout=1.0), ValueError, "dropout must be in [0, 1); got 1.0"),
        (lambda: FeedForward(8, 16)(torch.randn(2, 5, 6)), ValueError,
         "x must have last dimension d_model = 8; got shape (2, 5, 6)"),
        (lambda: FeedForward(8, 16)(torch.randn(5, 8)), ValueError, "x must be 3-D (batch, L, d_model)"),
        (lambda: PositionalEncoding(8, max_len=0), ValueError, "max_len must be positive; got 0"),
        (lambda: PositionalEncoding(8, max_len=6)(torch.randn(1, 3, 8), start=4), ValueError,
         "x must have length L <= max_len = 6 - start = 2; got shape (1, 3, 8)"),
        (lambda: MultiHeadAttention(0, 2), ValueError, "d_model must be positive"),  # d_k = 0 cannot be built
        (lambda: seq2seq(tokens.to(torch.uint8), tokens), TypeError,
         "src must hold token ids as torch.long (or torch.int32); got dtype torch.uint8"),
        (lambda: seq2seq(tokens, tokens.to(torch.int16)), TypeError, "tgt must hold token ids as torch.long"),
        (lambda: seq2seq.greedy_decode(tokens, 2.5), TypeError, "max_new_tokens must be an int; got float 2.5"),
        (lambda: seq2seq.greedy_decode(tokens, 0), ValueError, "max_new_tokens must be positive; got 0"),
        (lambda: Seq2SeqTransformer(vocab_size=0), ValueError, "vocab_size must be positive; got 0"),
        (lambda: Seq2SeqTransformer(vocab_size=3), ValueError,
         "vocab_size must leave room for at least one real symbol besides the 3 special ids; got vocab_size = 3"),
        (lambda: Seq2SeqTransformer(vocab_size=10, pad_id=10), ValueError,
         "pad_id must be a token id in [0, vocab_size = 10); got 10"),
        (lambda: Seq2SeqTransformer(vocab_size=10, eos_id=-1), ValueError, "eos_id must be at least 0; got -1"),
        (lambda: Seq2SeqTransformer(vocab_size=10, pad_id=1), ValueError,
         "pad_id, bos_id, eos_id must be distinct ids (each special token its own id); "
         "got pad_id = 1, bos_id = 1, eos_id = 2"),
        (lambda: Seq2SeqTransformer(10, num_layers=2), TypeError, "unexpected keyword argument 'num_layers'"),
        (lambda: GRUSeq2Seq(0, attention=True), ValueError, "vocab_size must be positive; got 0"),
        (lambda: GRUSeq2Seq(10, attention=False, bos_id=0), ValueError, "must be distinct ids"),
        (lambda: GRUSeq2Seq(10, attention=True)(tokens.to(torch.uint8), tokens), TypeError,
         "src must hold token ids as torch.long"),
        (lambda: GRUSeq2Seq(10, attention=True).greedy_decode(tokens, 1.5), TypeError, "max_new_tokens must be an int"),
        (lambda: float32_model.decode(tgt8, src8, cache=object()), TypeError,
         "cache must be a KVCache (Transformer.new_cache()); got object"),
        (lambda: float32_model.decode(tgt8, src8, cache=KVCache(3)), ValueError,
         "cache must hold one entry per decoder layer, 1; got 3"),
        (lambda: float32_model.decode(tgt8, src8, causal_mask(4), cache=float32_model.new_cache()), ValueError,
         "tgt_mask must be None with a cache"),
    ],
)
def test_models_reject_bad_arguments_and_dtypes(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()


LATIN_WORD = re.compile(r"\b(?:must|got|shape|share|hold|tensor|the)\b")


@pytest.mark.parametrize("call", [
    lambda: MultiHeadAttention(8, 2)(torch.randn(5, 8), torch.randn(5, 8), torch.randn(5, 8)),       # 2-D input
    lambda: EncoderLayer(8, 2, 16)(torch.randn(1, 5, 6)),                                             # d_model 6
    lambda: scaled_dot_product_attention(q, k, v, torch.zeros(5, 7)),                                # float mask
    lambda: scaled_dot_product_attention([1.0], k, v),                                               # not a tensor
    lambda: MultiHeadAttention(8, 2)(torch.randn(2, 5, 8), torch.randn(3, 7, 8), torch.randn(3, 7, 8)),  # batch
], ids=["ndim", "last-dim", "bool-mask", "tensor", "batch"])
def test_the_shared_input_checks_speak_the_notebooks_language(monkeypatch, call):
    """helpers.validation's messages follow the edition: a Chinese notebook's learner reads them in Chinese."""
    with pytest.raises((TypeError, ValueError)) as english:
        call()
    assert LATIN_WORD.search(str(english.value)), str(english.value)
    monkeypatch.setenv("COURSE_LANG", "zh")
    with pytest.raises(type(english.value)) as chinese:
        call()
    message = str(chinese.value)
    assert re.search(r"[\u4e00-\u9fff]", message) and not LATIN_WORD.search(message), message
