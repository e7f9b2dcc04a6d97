"""EncoderLayer, DecoderLayer, Transformer and the small layers against PyTorch (post- and pre-LN)."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn
from torch_parity import assert_close, blocked, lengths_to_tokens

from helpers.attention import causal_mask, padding_mask
from helpers.layers import DecoderLayer, EncoderLayer, FeedForward, PositionalEncoding
from helpers.transformer import Transformer

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
    return src, tgt, padding_mask(src_tokens, 0), padding_mask(tgt_tokens, 0)


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
