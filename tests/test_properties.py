"""Property-based tests (Hypothesis) of the attention functions and MultiHeadAttention.

Over small random shapes, masks (random, causal, padding, fully masked rows), dtypes and batch/head sizes
(with B == H and B == L_q on purpose: the cases where a misread axis would go unnoticed), every call either
equals PyTorch's reference or raises a clear ValueError / TypeError, and never gives NaN on finite input.

PyTorch's references differ from the course on fully masked rows (nn.MultiheadAttention gives NaN there, the
course gives zeros): those rows are compared with zeros. Derandomized, so CI runs the same examples each time.
"""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

from helpers.attention import MultiHeadAttention, fused_scaled_dot_product_attention, scaled_dot_product_attention

SETTINGS = settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
TOLERANCE = {torch.float32: dict(atol=2e-5, rtol=2e-4), torch.float64: dict(atol=1e-10, rtol=1e-10)}
MASK_KINDS = ("none", "random", "causal", "padding", "empty rows")


@st.composite
def problems(draw):
    """Per-head q, k, v (B, H, L_q, d), (B, H, L_k, d), (B, H, L_k, d_v), a mask in one accepted form, is_causal."""
    batch, heads = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    if draw(st.booleans()):
        heads = batch  # B == H: a (B, 1, L_k) mask would silently line up with the heads
    l_q, l_k = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    if draw(st.booleans()):
        l_q = batch  # B == L_q
    kind = draw(st.sampled_from(MASK_KINDS))
    is_causal = draw(st.booleans())
    if kind == "causal" or is_causal:
        l_k = l_q
    dtype = draw(st.sampled_from([torch.float32, torch.float64]))
    d, d_v = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    g = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))
    q = torch.randn(batch, heads, l_q, d, generator=g, dtype=dtype)
    k = torch.randn(batch, heads, l_k, d, generator=g, dtype=dtype)
    v = torch.randn(batch, heads, l_k, d_v, generator=g, dtype=dtype)
    if kind == "none":
        mask = None
    elif kind == "random":
        shape = draw(st.sampled_from([(l_q, l_k), (batch, 1, l_q, l_k), (batch, heads, l_q, l_k)]))
        mask = torch.rand(shape, generator=g) > 0.3
    elif kind == "causal":
        mask = torch.ones(l_q, l_k, dtype=torch.bool).tril()
    elif kind == "padding":
        lengths = torch.randint(1, l_k + 1, (batch,), generator=g)
        mask = (torch.arange(l_k) < lengths[:, None])[:, None, None, :]  # (B, 1, 1, L_k)
    else:  # some rows may attend to nothing
        mask = torch.rand(batch, heads, l_q, l_k, generator=g) > 0.5
        mask[..., torch.randint(0, l_q, (1,), generator=g), :] = False
    return q, k, v, mask, is_causal


def reference(q, k, v, mask, is_causal):
    """F.scaled_dot_product_attention with the course's mask, empty rows set to zeros; and the weights."""
    if is_causal:
        causal = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
        mask = causal if mask is None else mask & causal
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    if mask is None:
        return out, torch.softmax(scores, -1)
    empty = ~mask.any(-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), -1).masked_fill(empty, 0.0)
    return out.masked_fill(empty, 0.0), weights


@SETTINGS
@given(problems())
def test_both_paths_equal_torch_sdpa_and_are_finite(problem):
    q, k, v, mask, is_causal = problem
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    expected, expected_weights = reference(q, k, v, mask, is_causal)
    out, weights = scaled_dot_product_attention(q, k, v, mask, is_causal=is_causal)
    fused = fused_scaled_dot_product_attention(q, k, v, mask, is_causal=is_causal)
    tol = TOLERANCE[q.dtype]
    for result in (out, weights, fused):
        assert torch.isfinite(result).all()
    torch.testing.assert_close(out, expected.detach(), **tol)
    torch.testing.assert_close(weights, expected_weights.detach(), **tol)
    torch.testing.assert_close(fused, expected.detach(), **tol)
    for result in (out, fused):
        grads = torch.autograd.grad(result.square().sum(), (q, k, v))
        assert all(torch.isfinite(grad).all() for grad in grads)


@SETTINGS
@given(problems(), st.sampled_from([float("nan"), float("inf"), -float("inf"), 1e30]))
def test_padded_keys_cannot_change_the_output(problem, garbage):
    q, k, v, _, is_causal = problem
    batch, _, l_k, _ = k.shape
    lengths = torch.randint(1, l_k + 1, (batch,), generator=torch.Generator().manual_seed(l_k))
    real = torch.arange(l_k) < lengths[:, None]  # (B, L_k)
    mask = real[:, None, None, :]  # (B, 1, 1, L_k)
    pads = ~real[:, None, :].expand(-1, k.shape[1], -1)  # (B, H, L_k): the padded key rows
    dirty_k, dirty_v = k.clone(), v.clone()
    dirty_k[pads], dirty_v[pads] = garbage, garbage
    for attend in (lambda *a, **kw: scaled_dot_product_attention(*a, **kw)[0], fused_scaled_dot_product_attention):
        clean = attend(q, k, v, mask, is_causal=is_causal)
        dirty = attend(q, dirty_k, dirty_v, mask, is_causal=is_causal)
        assert torch.isfinite(dirty).all()
        torch.testing.assert_close(dirty, clean, atol=0, rtol=0)


AXIS = st.sampled_from(["one", "same", "wrong"])


@SETTINGS
@given(problems(), st.lists(AXIS, min_size=1, max_size=5))
def test_a_mask_is_read_as_documented_or_rejected(problem, axes):
    """Any bool mask shape: 2-D or as many axes as the scores and broadcastable -> that meaning; else ValueError."""
    q, k, v, _, _ = problem
    scores_shape = (*q.shape[:-1], k.shape[-2])  # (B, H, L_q, L_k)
    target = scores_shape[-len(axes):] if len(axes) <= 4 else (2, *scores_shape)
    shape = tuple(1 if a == "one" else (n if a == "same" else n + 1) for a, n in zip(axes, target))
    mask = torch.rand(shape, generator=torch.Generator().manual_seed(sum(shape))) > 0.3
    accepted = len(shape) in (2, 4) and "wrong" not in axes
    for attend in (lambda *a: scaled_dot_product_attention(*a)[0], fused_scaled_dot_product_attention):
        if not accepted:
            with pytest.raises(ValueError, match=re.escape("mask must ")):
                attend(q, k, v, mask)
            continue
        expected, _ = reference(q, k, v, mask.expand(scores_shape), False)
        torch.testing.assert_close(attend(q, k, v, mask), expected, **TOLERANCE[q.dtype])


@st.composite
def mha_problems(draw):
    """x_q (B, L_q, d_model), x_kv (B, L_k, d_model), a mask in one of MultiHeadAttention's forms."""
    batch, heads, d_head = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    if draw(st.booleans()):
        heads = batch
    l_q, l_k = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    if draw(st.booleans()):
        l_q = batch  # B == L_q: a (B, L_k) mask would be read as (L_q, L_k); only (B, 1, L_k) is padding
    form = draw(st.sampled_from(["none", "(L_q, L_k)", "(B, L_q, L_k)", "(B, 1, L_k)"]))
    dtype = draw(st.sampled_from([torch.float32, torch.float64]))
    g = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))
    d_model = heads * d_head
    x_q = torch.randn(batch, l_q, d_model, generator=g, dtype=dtype)
    x_kv = torch.randn(batch, l_k, d_model, generator=g, dtype=dtype)
    mask = {
        "none": None,
        "(L_q, L_k)": torch.rand(l_q, l_k, generator=g) > 0.3,
        "(B, L_q, L_k)": torch.rand(batch, l_q, l_k, generator=g) > 0.3,
        "(B, 1, L_k)": torch.rand(batch, 1, l_k, generator=g) > 0.3,
    }[form]
    return heads, x_q, x_kv, mask, draw(st.integers(0, 1000))


@SETTINGS
@given(mha_problems())
def test_multi_head_attention_equals_torch(problem):
    heads, x_q, x_kv, mask, seed = problem
    batch, l_q, d_model = x_q.shape
    torch.manual_seed(seed)
    torch_mha = nn.MultiheadAttention(d_model, heads, batch_first=True, dtype=x_q.dtype).eval()
    ours = MultiHeadAttention.from_torch(torch_mha).eval()
    options = {}
    if mask is not None and mask.shape[-2] == 1 and mask.ndim == 3:
        options["key_padding_mask"] = ~mask[:, 0]  # PyTorch: True = blocked
    elif mask is not None and mask.ndim == 3:
        options["attn_mask"] = (~mask).repeat_interleave(heads, dim=0)  # (B * heads, L_q, L_k), batch-major
    elif mask is not None:
        options["attn_mask"] = ~mask
    with torch.no_grad():
        expected, expected_weights = torch_mha(x_q, x_kv, x_kv, average_attn_weights=False, **options)
        out, weights = ours(x_q, x_kv, x_kv, mask)
        fast, _ = ours(x_q, x_kv, x_kv, mask, need_weights=False)
    assert torch.isfinite(out).all() and torch.isfinite(weights).all() and torch.isfinite(fast).all()
    tol = TOLERANCE[x_q.dtype]
    full = torch.ones(batch, l_q, dtype=torch.bool)
    if mask is not None:  # rows with no allowed key: PyTorch gives NaN, the course zeros
        full = mask.expand(batch, l_q, -1).any(-1)
        assert torch.all(weights.transpose(1, 2)[~full] == 0)
    torch.testing.assert_close(out[full], expected[full], **tol)
    torch.testing.assert_close(fast[full], expected[full], **tol)
    torch.testing.assert_close(weights.transpose(1, 2)[full], expected_weights.transpose(1, 2)[full], **tol)


@SETTINGS
@given(mha_problems(), st.booleans())
def test_multi_head_is_causal_equals_the_explicit_mask(problem, need_weights):
    heads, x, _, mask, seed = problem
    batch, length, d_model = x.shape
    if mask is not None and mask.shape[-1] != length:
        mask = None
    if mask is not None and mask.ndim == 2:
        mask = mask[:length, :length] if mask.shape[0] >= length else None
    torch.manual_seed(seed)
    ours = MultiHeadAttention(d_model, heads).to(x.dtype).eval()
    causal = torch.ones(length, length, dtype=torch.bool).tril()
    explicit = causal if mask is None else causal & mask
    with torch.no_grad():
        out, _ = ours(x, x, x, mask, is_causal=True, need_weights=need_weights)
        expected, _ = ours(x, x, x, explicit, need_weights=True)
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out, expected, **TOLERANCE[x.dtype])
