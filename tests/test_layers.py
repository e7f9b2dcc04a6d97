"""EncoderLayer, DecoderLayer, Transformer and the small layers against PyTorch (post- and pre-LN)."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn
from torch_parity import assert_close, blocked, lengths_to_tokens

from helpers.attention import causal_mask, padding_mask
from helpers.layers import DecoderLayer, EncoderLayer, FeedForward, PositionalEncoding, Residual
from helpers.tokens import PAD
from helpers.transformer import Transformer, build_on_meta, count_parameters

D_MODEL, HEADS, D_FF = 16, 4, 32


def perturb(module: nn.Module) -> nn.Module:
    """Non-trivial LayerNorm and bias values, so that every copied tensor matters."""
    g = torch.Generator().manual_seed(11)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.1 * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return module.eval()


@pytest.fixture(params=[False, True], ids=["post-LN", "pre-LN"])
def norm_first(request) -> bool:
    return request.param


def batch(dtype, src_lengths=(6, 3), tgt_lengths=(5, 2), seed=5):
    g = torch.Generator().manual_seed(seed)
    src_tokens = lengths_to_tokens(list(src_lengths), max(src_lengths), g)
    tgt_tokens = lengths_to_tokens(list(tgt_lengths), max(tgt_lengths), g)
    src = torch.randn(len(src_lengths), max(src_lengths), D_MODEL, generator=g, dtype=dtype)
    tgt = torch.randn(len(tgt_lengths), max(tgt_lengths), D_MODEL, generator=g, dtype=dtype)
    return src, tgt, padding_mask(src_tokens, PAD), padding_mask(tgt_tokens, PAD)


def real_positions(pad: torch.Tensor) -> torch.Tensor:
    """(batch, 1, L) padding mask -> (batch, L): the positions whose outputs PyTorch and we both define."""
    return pad[:, 0]


def test_encoder_layer_matches_torch(dtype, norm_first):
    reference = perturb(nn.TransformerEncoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0, batch_first=True,
                                                   norm_first=norm_first, dtype=dtype))
    ours = EncoderLayer.from_torch(reference)
    src, _, src_pad, _ = batch(dtype)
    out = ours(src, src_pad)
    expected = reference(src, src_key_padding_mask=blocked(src_pad[:, 0]))
    real = real_positions(src_pad)
    assert_close(out[real], expected[real], dtype)


def test_encoder_layer_matches_torch_with_causal_mask(dtype, norm_first):
    reference = perturb(nn.TransformerEncoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0, batch_first=True,
                                                   norm_first=norm_first, dtype=dtype))
    ours = EncoderLayer.from_torch(reference)
    src, _, _, _ = batch(dtype)
    assert_close(ours(src, causal_mask(6)), reference(src, src_mask=blocked(causal_mask(6))), dtype)


def test_decoder_layer_matches_torch(dtype, norm_first):
    reference = perturb(nn.TransformerDecoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0, batch_first=True,
                                                   norm_first=norm_first, dtype=dtype))
    ours = DecoderLayer.from_torch(reference)
    memory, tgt, src_pad, tgt_pad = batch(dtype)
    tgt_mask = causal_mask(tgt.shape[1]) & tgt_pad  # (batch, L_tgt, L_tgt)
    out = ours(tgt, memory, tgt_mask, src_pad)
    expected = reference(
        tgt, memory, tgt_mask=blocked(causal_mask(tgt.shape[1])),
        tgt_key_padding_mask=blocked(tgt_pad[:, 0]), memory_key_padding_mask=blocked(src_pad[:, 0]),
    )
    assert_close(out, expected, dtype)


# torch's own note that its nested-tensor fast path is off for pre-LN layers: about torch's speed, not our parity
@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True:UserWarning")
@pytest.mark.parametrize("layers", [(1, 1), (6, 6), (2, 3)], ids=["N=1", "N=6", "2+3"])
def test_transformer_matches_torch(dtype, norm_first, layers):
    reference = perturb(nn.Transformer(D_MODEL, HEADS, layers[0], layers[1], D_FF, dropout=0.0, batch_first=True,
                                       norm_first=norm_first, dtype=dtype))
    ours = Transformer.from_torch(reference).eval()
    src, tgt, src_pad, tgt_pad = batch(dtype)
    causal = causal_mask(tgt.shape[1])
    out = ours(src, tgt, src_pad, causal & tgt_pad, src_pad)
    expected = reference(
        src, tgt, tgt_mask=blocked(causal), src_key_padding_mask=blocked(src_pad[:, 0]),
        tgt_key_padding_mask=blocked(tgt_pad[:, 0]), memory_key_padding_mask=blocked(src_pad[:, 0]),
    )
    assert_close(out, expected, dtype)
    maps = ours.attention_maps()
    batch_size, l_src, l_tgt = src.shape[0], src.shape[1], tgt.shape[1]
    assert maps["encoder_self"].shape == (layers[0], batch_size, HEADS, l_src, l_src)
    assert maps["decoder_self"].shape == (layers[1], batch_size, HEADS, l_tgt, l_tgt)
    assert maps["cross"].shape == (layers[1], batch_size, HEADS, l_tgt, l_src)
    assert torch.all(maps["cross"][:, 1, :, :, 3:] == 0)  # item 1 has 3 source tokens: no weight on the padding
    assert torch.all(maps["decoder_self"].triu(1) == 0)  # nothing from the future


def test_transformer_fast_path_in_training_mode_matches_eval_numbers():
    torch.manual_seed(0)
    model = Transformer(D_MODEL, HEADS, 2, 2, D_FF, dropout=0.0)
    src, tgt, src_pad, tgt_pad = batch(torch.float32)
    masks = (src_pad, causal_mask(tgt.shape[1]) & tgt_pad, src_pad)
    model.eval()
    slow = model(src, tgt, *masks)
    model.train()
    fast = model(src, tgt, *masks)  # need_weights=None: fused kernel in training mode, no weights kept
    assert_close(fast, slow, torch.float32)
    with pytest.raises(RuntimeError, match="no attention weights"):
        model.attention_maps()


def test_paper_base_parameter_count_matches_torch():
    ours = Transformer()
    reference = nn.Transformer(batch_first=True)
    count = lambda m: sum(p.numel() for p in m.parameters())
    assert count(ours) == count(reference) == 44_140_544  # the stacks only, without embeddings


def test_positional_encoding_is_the_papers_formula():
    pe = PositionalEncoding(8, max_len=50)
    x = torch.zeros(1, 50, 8)
    table = pe(x)[0]
    pos, i = 7, 2
    assert table[pos, 2 * i].item() == pytest.approx(math.sin(pos / 10000 ** (2 * i / 8)), abs=1e-6)
    assert table[pos, 2 * i + 1].item() == pytest.approx(math.cos(pos / 10000 ** (2 * i / 8)), abs=1e-6)
    assert torch.equal(pe(torch.ones(2, 5, 8)), torch.ones(2, 5, 8) + table[:5])


def test_feed_forward_is_position_wise():
    torch.manual_seed(0)
    ff = FeedForward(8, 16)
    x = torch.randn(2, 5, 8)
    out = ff(x)
    torch.testing.assert_close(out[:, 3], ff(x[:, 3:4])[:, 0])
    torch.testing.assert_close(out, ff.linear2(torch.relu(ff.linear1(x))))


def test_from_torch_keeps_training_mode_and_dropout():
    reference = nn.TransformerEncoderLayer(D_MODEL, HEADS, D_FF, dropout=0.2, batch_first=True)
    ours = EncoderLayer.from_torch(reference)
    assert ours.training and ours.self_attn_residual.dropout.p == 0.2 and ours.self_attn.dropout == 0.2


def test_residual_is_the_post_and_pre_ln_formula():
    torch.manual_seed(0)
    x, sublayer = torch.randn(2, 3, D_MODEL), nn.Linear(D_MODEL, D_MODEL)
    post = Residual(D_MODEL, dropout=0.0, norm_first=False, layer_norm_eps=1e-5, bias=True)
    pre = Residual(D_MODEL, dropout=0.0, norm_first=True, layer_norm_eps=1e-5, bias=True)
    perturb(post), perturb(pre)
    torch.testing.assert_close(post(x, sublayer), post.norm(x + sublayer(x)))
    torch.testing.assert_close(pre(x, sublayer), x + sublayer(pre.norm(x)))


def test_layers_hold_one_residual_per_sub_layer_with_pytorchs_norms(norm_first):
    reference = perturb(nn.TransformerDecoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0, batch_first=True,
                                                   norm_first=norm_first))
    ours = DecoderLayer.from_torch(reference)
    residuals = (ours.self_attn_residual, ours.cross_attn_residual, ours.feed_forward_residual)
    for residual, norm in zip(residuals, (reference.norm1, reference.norm2, reference.norm3)):
        assert residual.norm_first == norm_first
        assert torch.equal(residual.norm.weight, norm.weight) and torch.equal(residual.norm.bias, norm.bias)


def test_is_causal_equals_the_causal_mask(dtype, norm_first):
    torch.manual_seed(3)
    decoder = perturb(DecoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0, norm_first=norm_first).to(dtype))
    encoder = perturb(EncoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0, norm_first=norm_first).to(dtype))
    memory, tgt, src_pad, tgt_pad = batch(dtype)
    causal = causal_mask(tgt.shape[1])
    for need_weights in (True, False):  # the step-by-step and the fused path
        for padding in (None, tgt_pad):  # causal alone, and causal combined with padding
            masked = causal if padding is None else causal & padding
            flagged = decoder(tgt, memory, padding, src_pad, tgt_is_causal=True, need_weights=need_weights)
            assert_close(flagged, decoder(tgt, memory, masked, src_pad, need_weights=need_weights), dtype)
            assert_close(encoder(tgt, padding, is_causal=True, need_weights=need_weights),
                         encoder(tgt, masked, need_weights=need_weights), dtype)
    decoder(tgt, memory, tgt_pad, src_pad, tgt_is_causal=True, need_weights=True)
    assert torch.all(decoder.self_attention_weights.triu(1) == 0)  # nothing from the future
    assert torch.all(decoder.self_attention_weights[1, :, :, 2:] == 0)  # nor from item 1's padding


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True:UserWarning")
def test_transformer_with_tgt_is_causal_matches_torch(dtype, norm_first):
    reference = perturb(nn.Transformer(D_MODEL, HEADS, 2, 2, D_FF, dropout=0.0, batch_first=True,
                                       norm_first=norm_first, dtype=dtype))
    ours = Transformer.from_torch(reference).eval()
    src, tgt, src_pad, tgt_pad = batch(dtype)
    expected = reference(
        src, tgt, tgt_mask=blocked(causal_mask(tgt.shape[1])), tgt_is_causal=True,
        src_key_padding_mask=blocked(src_pad[:, 0]), tgt_key_padding_mask=blocked(tgt_pad[:, 0]),
        memory_key_padding_mask=blocked(src_pad[:, 0]),
    )
    assert_close(ours(src, tgt, src_pad, tgt_pad, src_pad, tgt_is_causal=True), expected, dtype)
    ours.train()  # the fused path: PyTorch's is_causal kernel when there is no other target mask
    without_padding = reference(src, tgt, tgt_mask=blocked(causal_mask(tgt.shape[1])), tgt_is_causal=True,
                                src_key_padding_mask=blocked(src_pad[:, 0]),
                                memory_key_padding_mask=blocked(src_pad[:, 0]))
    assert_close(ours(src, tgt, src_pad, None, src_pad, tgt_is_causal=True), without_padding, dtype)


def test_meta_device_counts_the_same_parameters_without_allocating():
    small = lambda: Transformer(D_MODEL, HEADS, 2, 3, D_FF)
    state = torch.random.get_rng_state()
    on_meta = build_on_meta(small)
    assert torch.equal(torch.random.get_rng_state(), state)  # no random initialisation happened
    assert all(p.is_meta for p in on_meta.parameters())
    assert count_parameters(on_meta) == count_parameters(small()) > 0
    torch_small = lambda: nn.Transformer(D_MODEL, HEADS, 2, 3, D_FF, batch_first=True)
    assert count_parameters(build_on_meta(torch_small)) == count_parameters(torch_small())
    big = build_on_meta(lambda: nn.Transformer(1024, 16, 6, 6, 4096, batch_first=True))
    attention, ffn, norm = 4 * 1024 * 1024 + 4 * 1024, 2 * 1024 * 4096 + 4096 + 1024, 2 * 1024
    assert count_parameters(big) == 6 * (attention + ffn + 2 * norm) + 6 * (2 * attention + ffn + 3 * norm) + 2 * norm


def decode_step_by_step(model: Transformer, tgt: torch.Tensor, memory, memory_mask, chunk: int = 1):
    """Transformer.decode with a KV cache, ``chunk`` target positions at a time."""
    cache = model.new_cache()
    outputs = [model.decode(tgt[:, i : i + chunk], memory, None, memory_mask, cache=cache)
               for i in range(0, tgt.shape[1], chunk)]
    assert cache.length == tgt.shape[1]
    return torch.cat(outputs, dim=1)


@pytest.mark.parametrize("chunk", [1, 2], ids=["one position a step", "two positions a step"])
def test_kv_cache_decodes_like_the_whole_prefix(dtype, norm_first, chunk):
    torch.manual_seed(4)
    model = perturb(Transformer(D_MODEL, HEADS, 1, 3, D_FF, dropout=0.0, norm_first=norm_first).to(dtype))
    src, tgt, src_pad, _ = batch(dtype)  # item 1 of the source is padded
    memory = model.encode(src, src_pad)
    full = model.decode(tgt, memory, None, src_pad, tgt_is_causal=True)
    assert_close(decode_step_by_step(model, tgt, memory, src_pad, chunk), full, dtype)
    for prefix in (1, 3):  # and any prefix: what the next step reads is the same
        assert_close(decode_step_by_step(model, tgt[:, :prefix], memory, src_pad, chunk)[:, -1], full[:, prefix - 1],
                     dtype)
    decode_step_by_step(model, tgt[:, : 2 * chunk], memory, src_pad, chunk)  # two steps of ``chunk`` positions
    layer = model.decoder_layers[0]
    assert layer.cross_attention_weights.shape == (2, HEADS, chunk, src.shape[1])  # the last step's rows
    assert torch.all(layer.cross_attention_weights[1, :, :, 3:] == 0)  # no weight on the source padding
