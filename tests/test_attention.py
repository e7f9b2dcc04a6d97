"""scaled_dot_product_attention, the masks and MultiHeadAttention against PyTorch."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch_parity import assert_close, blocked, lengths_to_tokens

from helpers.attention import (
    MultiHeadAttention,
    causal_mask,
    fused_scaled_dot_product_attention,
    lengths_mask,
    padding_mask,
    scaled_dot_product_attention,
)


def random_qkv(dtype, batch=2, l_q=5, l_k=7, d_k=8, d_v=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(batch, l_q, d_k, generator=g, dtype=dtype),
        torch.randn(batch, l_k, d_k, generator=g, dtype=dtype),
        torch.randn(batch, l_k, d_v, generator=g, dtype=dtype),
    )


def test_attention_is_the_formula(dtype):
    q, k, v = random_qkv(dtype)
    out, weights = scaled_dot_product_attention(q, k, v)
    expected_weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(8), dim=-1)
    assert_close(weights, expected_weights, dtype)
    assert_close(out, expected_weights @ v, dtype)
    assert out.shape == (2, 5, 6) and weights.shape == (2, 5, 7)


def test_attention_matches_torch_sdpa_with_mask(dtype):
    q, k, v = random_qkv(dtype)
    mask = torch.rand(2, 5, 7, generator=torch.Generator().manual_seed(3)) > 0.4
    mask[:, :, 0] = True  # every row keeps a key: torch then has no empty rows to differ on
    out, _ = scaled_dot_product_attention(q, k, v, mask)
    assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), dtype)
    assert_close(fused_scaled_dot_product_attention(q, k, v, mask), out, dtype)


def test_masked_keys_get_zero_weight_and_rows_sum_to_one():
    q, k, v = random_qkv(torch.float64)
    mask = causal_mask(7)[:5]  # (5, 7): query i sees keys 0..i
    _, weights = scaled_dot_product_attention(q, k, v, mask)
    assert torch.all(weights[:, ~mask] == 0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 5, dtype=torch.float64))


@pytest.mark.parametrize("fn", ["naive", "fused"])
def test_fully_masked_row_gives_zeros_and_finite_gradients(fn):
    q, k, v = (t.requires_grad_() for t in random_qkv(torch.float64))
    mask = torch.ones(2, 5, 7, dtype=torch.bool)
    mask[0, 2] = False  # query 2 of item 0 may attend to nothing
    if fn == "naive":
        out, weights = scaled_dot_product_attention(q, k, v, mask)
        assert torch.all(weights[0, 2] == 0)
    else:
        out = fused_scaled_dot_product_attention(q, k, v, mask)
    assert torch.all(out[0, 2] == 0)
    assert torch.isfinite(out).all()
    out.sum().backward()
    for t in (q, k, v):
        assert torch.isfinite(t.grad).all()
    assert torch.all(q.grad[0, 2] == 0)


@pytest.mark.parametrize("fn", ["naive", "fused"])
def test_gradcheck_in_float64(fn):
    q, k, v = (t.requires_grad_() for t in random_qkv(torch.float64, batch=1, l_q=3, l_k=4, d_k=3, d_v=2))
    mask = torch.tensor([[True, True, False, True], [False, False, False, False], [True, False, False, False]])
    if fn == "naive":
        f = lambda q, k, v: scaled_dot_product_attention(q, k, v, mask)
    else:
        f = lambda q, k, v: fused_scaled_dot_product_attention(q, k, v, mask)
    assert torch.autograd.gradcheck(f, (q, k, v))


def test_causal_mask():
    mask = causal_mask(4)
    assert mask.dtype == torch.bool and mask.shape == (4, 4)
    assert mask[2, 0] and mask[2, 2] and not mask[2, 3]
    assert torch.equal(mask, ~torch.nn.Transformer.generate_square_subsequent_mask(4).isinf())


def test_padding_mask():
    tokens = torch.tensor([[5, 6, 0], [7, 0, 0]])
    mask = padding_mask(tokens, 0)
    assert mask.shape == (2, 1, 3)
    assert mask.tolist() == [[[True, True, False]], [[True, False, False]]]


def make_mha_pair(dtype, d_model=16, heads=4, bias=True):
    torch.manual_seed(0)
    reference = nn.MultiheadAttention(d_model, heads, batch_first=True, bias=bias, dtype=dtype).eval()
    with torch.no_grad():  # non-zero biases, so that copying them is tested too
        for p in reference.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return reference, MultiHeadAttention.from_torch(reference)


@pytest.mark.parametrize("bias", [True, False])
def test_multi_head_matches_torch_with_padding_and_causal_masks(dtype, bias):
    reference, ours = make_mha_pair(dtype, bias=bias)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(3, 6, 16, generator=g, dtype=dtype)
    tokens = lengths_to_tokens([6, 4, 2], 6, g)
    # causal AND padding: (6, 6) & (3, 1, 6) -> (3, 6, 6); each query keeps key 0, so no row is empty
    mask = causal_mask(6) & padding_mask(tokens, 0)
    out, weights = ours(x, x, x, mask)
    ref_out, ref_weights = reference(
        x, x, x, attn_mask=blocked(causal_mask(6)), key_padding_mask=blocked(padding_mask(tokens, 0)[:, 0]),
        average_attn_weights=False,
    )
    assert_close(out, ref_out, dtype)
    assert_close(weights, ref_weights, dtype)
    assert weights.shape == (3, 4, 6, 6)


def test_multi_head_cross_attention_lengths(dtype):
    reference, ours = make_mha_pair(dtype)
    g = torch.Generator().manual_seed(2)
    query, memory = torch.randn(2, 3, 16, generator=g, dtype=dtype), torch.randn(2, 5, 16, generator=g, dtype=dtype)
    out, weights = ours(query, memory, memory)
    ref_out, _ = reference(query, memory, memory)
    assert_close(out, ref_out, dtype)
    assert weights.shape == (2, 4, 3, 5)


def test_fast_path_gives_the_same_output(dtype):
    _, ours = make_mha_pair(dtype)
    x = torch.randn(2, 5, 16, dtype=dtype, generator=torch.Generator().manual_seed(4))
    mask = causal_mask(5)
    out, weights = ours(x, x, x, mask)
    fast, no_weights = ours(x, x, x, mask, need_weights=False)
    assert no_weights is None
    assert_close(fast, out, dtype)


def test_per_head_weights_are_attention_of_the_projected_heads():
    _, ours = make_mha_pair(torch.float64)
    x = torch.randn(1, 4, 16, dtype=torch.float64)
    _, weights = ours(x, x, x)
    q, k = ours.split_heads(ours.w_q(x)), ours.split_heads(ours.w_k(x))
    torch.testing.assert_close(weights, torch.softmax(q @ k.transpose(-2, -1) / 2.0, dim=-1))  # d_head = 4
    torch.testing.assert_close(ours.merge_heads(ours.split_heads(x)), x)


def test_dropout_is_used_only_in_training():
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 2, dropout=0.5)
    x = torch.randn(2, 5, 8)
    mha.train()
    a, _ = mha(x, x, x)
    b, _ = mha(x, x, x)
    assert not torch.allclose(a, b)
    mha.eval()
    c, _ = mha(x, x, x)
    d, _ = mha(x, x, x, need_weights=False)
    torch.testing.assert_close(c, d)


def per_head_qkv(dtype, batch=3, heads=2, length=6, d=4, seed=5, requires_grad=False):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(batch, heads, length, d, generator=g, dtype=dtype).requires_grad_(requires_grad)
                 for _ in range(3))


@pytest.mark.parametrize("fn", ["naive", "fused"])
@pytest.mark.parametrize("with_padding", [False, True])
def test_is_causal_equals_the_causal_mask(fn, with_padding):
    """is_causal=True gives the masked path's output (and gradients) to 1e-10 in float64, with or without padding."""
    q, k, v = per_head_qkv(torch.float64, requires_grad=True)
    tokens = lengths_to_tokens([6, 4, 1], 6, torch.Generator().manual_seed(1))
    padding = padding_mask(tokens, 0)[:, None] if with_padding else None  # (batch, 1, 1, L)
    explicit = causal_mask(6) if padding is None else causal_mask(6) & padding
    if fn == "naive":
        out, weights = scaled_dot_product_attention(q, k, v, padding, is_causal=True)
        ref, ref_weights = scaled_dot_product_attention(q, k, v, explicit)
        assert_close(weights, ref_weights, torch.float64)
    else:
        out = fused_scaled_dot_product_attention(q, k, v, padding, is_causal=True)
        ref = fused_scaled_dot_product_attention(q, k, v, explicit)
    assert_close(out, ref, torch.float64)
    if padding is None:  # PyTorch's own causal kernel, the reference of the fast path
        assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True), torch.float64)
    grads = torch.autograd.grad(out.sum(), (q, k, v))
    ref_grads = torch.autograd.grad(ref.sum(), (q, k, v))
    for grad, ref_grad in zip(grads, ref_grads):
        assert_close(grad, ref_grad, torch.float64)


def test_multi_head_is_causal_equals_the_causal_mask(dtype):
    _, ours = make_mha_pair(dtype)
    x = torch.randn(3, 6, 16, dtype=dtype, generator=torch.Generator().manual_seed(7))
    padding = padding_mask(lengths_to_tokens([6, 3, 5], 6, torch.Generator().manual_seed(2)), 0)
    for mask in (None, padding):
        explicit = causal_mask(6) if mask is None else causal_mask(6) & mask
        expected, expected_weights = ours(x, x, x, explicit)
        out, weights = ours(x, x, x, mask, is_causal=True)
        fast, _ = ours(x, x, x, mask, is_causal=True, need_weights=False)
        assert_close(out, expected, dtype)
        assert_close(weights, expected_weights, dtype)
        assert_close(fast, expected, dtype)


@pytest.mark.parametrize("fn", ["naive", "fused"])
@pytest.mark.parametrize("garbage", [float("nan"), float("inf"), -float("inf")])
def test_padded_keys_cannot_leak_garbage(fn, garbage):
    """A key no query may attend to (padding) changes nothing, even holding NaN or inf; gradients stay finite."""
    q, k, v = per_head_qkv(torch.float64)
    padding = padding_mask(lengths_to_tokens([6, 4, 2], 6, torch.Generator().manual_seed(3)), 0)[:, None]
    dirty_k, dirty_v = k.clone(), v.clone()
    pad_rows = ~padding[:, 0, 0]  # (batch, L): True at the padded positions
    dirty_k[pad_rows.unsqueeze(1).expand(3, 2, 6)] = garbage
    dirty_v[pad_rows.unsqueeze(1).expand(3, 2, 6)] = garbage
    dirty_k.requires_grad_()
    attend = (lambda *a, **kw: scaled_dot_product_attention(*a, **kw)[0]) if fn == "naive" else (
        fused_scaled_dot_product_attention)
    for is_causal in (False, True):
        clean = attend(q, k, v, padding, is_causal=is_causal)
        dirty = attend(q, dirty_k, dirty_v, padding, is_causal=is_causal)
        assert torch.isfinite(dirty).all()
        torch.testing.assert_close(dirty, clean, atol=0, rtol=0)
        (grad,) = torch.autograd.grad(dirty.sum(), dirty_k)
        assert torch.isfinite(grad).all()


def test_weights_are_returned_before_dropout():
    q, k, v = random_qkv(torch.float64)
    keep = torch.rand(2, 5, 7, generator=torch.Generator().manual_seed(8)) > 0.5
    dropout = lambda w: w * keep * 2.0  # a fixed "dropout": its effect on the output is known
    out, weights = scaled_dot_product_attention(q, k, v, dropout=dropout)
    plain_out, plain_weights = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(weights, plain_weights, atol=0, rtol=0)  # before dropout: rows sum to 1
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 5, dtype=torch.float64))
    torch.testing.assert_close(out, dropout(plain_weights) @ v)  # the output uses the dropped weights
    assert not torch.allclose(out, plain_out)


def test_multi_head_weights_are_before_dropout_in_training():
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 2, dropout=0.5).train()
    x = torch.randn(2, 5, 8)
    _, weights = mha(x, x, x)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 2, 5))  # dropout would zero or double entries


def test_one_pass_masking_keeps_zero_rows_and_finite_gradients_in_float32():
    q, k, v = (t.requires_grad_() for t in random_qkv(torch.float32))
    mask = torch.rand(2, 5, 7, generator=torch.Generator().manual_seed(9)) > 0.5
    mask[1, 3] = False  # an empty row
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    assert torch.all(weights[1, 3] == 0) and torch.all(out[1, 3] == 0)
    assert torch.all(weights[~mask] == 0)
    full = mask.any(-1)
    torch.testing.assert_close(weights.sum(-1)[full], torch.ones(int(full.sum())))
    out.square().sum().backward()
    assert all(torch.isfinite(t.grad).all() for t in (q, k, v))


def test_lengths_mask_equals_padding_mask():
    tokens = lengths_to_tokens([4, 1, 3], 4, torch.Generator().manual_seed(0))
    assert torch.equal(lengths_mask(torch.tensor([4, 1, 3]), 4), padding_mask(tokens, 0))
    assert lengths_mask(torch.tensor([0]), 2).tolist() == [[[False, False]]]
