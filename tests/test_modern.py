"""helpers.modern: online softmax, grouped-query attention, RoPE, sliding windows, KV cache size, checkers.

Parity with PyTorch where it has a reference: F.scaled_dot_product_attention (with enable_gqa for the groups),
complex multiplication for the rotations (how Meta's reference code writes RoPE).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from helpers.attention import MultiHeadAttention, causal_mask, scaled_dot_product_attention
from helpers.layers import sinusoidal_table
from helpers.modern import (
    GroupedQueryAttention,
    apply_rope,
    expand_kv,
    kv_cache_bytes,
    online_softmax_steps,
    peak_tensor_bytes,
    rope_angles,
    sliding_window_mask,
    tiled_attention,
)


def randn(*shape, dtype=torch.float64, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


# --- online softmax ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("block_size", [1, 5, 16, 64])
@pytest.mark.parametrize("masked", [False, True], ids=["no mask", "causal"])
def test_tiled_attention_equals_pytorch(block_size, masked, dtype):
    q = randn(2, 3, 17, 8, dtype=dtype)
    k, v = randn(2, 3, 23, 8, dtype=dtype, seed=1), randn(2, 3, 23, 4, dtype=dtype, seed=2)
    mask = torch.ones(17, 23, dtype=torch.bool).tril(diagonal=6) if masked else None
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    tolerance = 1e-12 if dtype == torch.float64 else 1e-5
    torch.testing.assert_close(tiled_attention(q, k, v, mask, block_size=block_size), expected,
                               atol=tolerance, rtol=tolerance)


def test_tiled_attention_is_stable_for_large_scores():
    q = randn(1, 4, 8) * 1000
    out = tiled_attention(q, q, q, block_size=2)
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out, scaled_dot_product_attention(q, q, q)[0])


def test_fully_masked_row_gives_zeros_not_nan():
    q, k, v = randn(1, 4, 8), randn(1, 6, 8, seed=1), randn(1, 6, 3, seed=2)
    mask = torch.ones(4, 6, dtype=torch.bool)
    mask[1] = False
    mask[2, :3] = False  # the first block of row 2 is empty, the second is not
    out = tiled_attention(q, k, v, mask, block_size=3)
    assert not torch.isnan(out).any()
    torch.testing.assert_close(out[:, 1], torch.zeros(1, 3, dtype=torch.float64))
    torch.testing.assert_close(out, scaled_dot_product_attention(q, k, v, mask)[0])


def test_steps_cover_the_keys_and_the_last_state_is_the_answer():
    q, k, v = randn(5, 8), randn(11, 8, seed=1), randn(11, 4, seed=2)
    states = list(online_softmax_steps(q, k, v, block_size=4))
    assert [(s.start, s.stop) for s in states] == [(0, 4), (4, 8), (8, 11)]
    scores = q @ k.T / 8**0.5
    for state in states:  # after each block: the exact softmax statistics of the keys seen so far
        seen = scores[:, : state.stop]
        torch.testing.assert_close(state.running_max, seen.amax(-1))
        torch.testing.assert_close(state.running_sum, torch.exp(seen - seen.amax(-1, keepdim=True)).sum(-1))
        torch.testing.assert_close(state.output, torch.softmax(seen, -1) @ v[: state.stop])


def test_tiled_attention_bad_input():
    q = randn(1, 4, 8)
    with pytest.raises(ValueError, match="block_size must be at least 1; got 0"):
        tiled_attention(q, q, q, block_size=0)
    with pytest.raises(TypeError, match="block_size must be an int"):
        tiled_attention(q, q, q, block_size=2.0)
    with pytest.raises(TypeError, match="mask must be a torch.bool"):
        tiled_attention(q, q, q, torch.ones(4, 4))
    with pytest.raises(ValueError, match="key must have last dimension"):
        tiled_attention(q, randn(1, 4, 6), randn(1, 4, 6))


def test_peak_tensor_bytes_sees_the_materialised_matrix_and_not_the_tiles():
    q, k, v = (randn(1, 2, 512, 16, dtype=torch.float32, seed=s) for s in range(3))
    weights_bytes = 2 * 512 * 512 * 4
    full = peak_tensor_bytes(lambda: torch.softmax(q @ k.transpose(-2, -1), -1) @ v)
    assert full >= 2 * weights_bytes  # the scores and the weights are alive together
    tiled = peak_tensor_bytes(tiled_attention, q, k, v, block_size=32)
    assert tiled < weights_bytes / 2  # not even half of one (L, L) matrix
    assert peak_tensor_bytes(lambda: q.transpose(-2, -1)) == 0  # a view allocates nothing
    with pytest.raises(TypeError, match="fn must be callable"):
        peak_tensor_bytes(3)


# --- grouped-query attention ------------------------------------------------------------------------------------


def test_gqa_with_as_many_groups_as_heads_is_multi_head_attention():
    torch.manual_seed(0)
    mha = MultiHeadAttention(32, 4).double().eval()
    gqa = GroupedQueryAttention.from_multi_head(mha)
    x, memory = randn(2, 5, 32), randn(2, 7, 32, seed=1)
    torch.testing.assert_close(gqa(x, x, x, causal_mask(5)), mha(x, x, x, causal_mask(5))[0])
    torch.testing.assert_close(gqa(x, memory, memory), mha(x, memory, memory)[0])


@pytest.mark.parametrize("kv_heads", [1, 2, 4])
def test_gqa_equals_multi_head_attention_on_repeated_kv_heads(kv_heads):
    torch.manual_seed(1)
    gqa = GroupedQueryAttention(32, 8, kv_heads).double()
    x = randn(2, 6, 32)
    q = gqa._split(gqa.w_q(x), 8)
    k, v = gqa.project_kv(x, x)
    assert k.shape == (2, kv_heads, 6, 4)
    heads = scaled_dot_product_attention(q, expand_kv(k, 8), expand_kv(v, 8), causal_mask(6))[0]
    expected = gqa.w_o(heads.transpose(1, 2).reshape(2, 6, 32))
    torch.testing.assert_close(gqa(x, x, x, causal_mask(6)), expected)
    assert gqa.w_k.weight.shape == (kv_heads * 4, 32)


def test_expand_kv_groups_consecutive_heads():
    x = torch.arange(2.0).reshape(1, 2, 1, 1)  # two kv heads holding 0 and 1
    assert expand_kv(x, 6).flatten().tolist() == [0, 0, 0, 1, 1, 1]
    with pytest.raises(ValueError, match="num_heads must be a multiple of the kv_heads"):
        expand_kv(x, 3)
    with pytest.raises(ValueError, match=r"x must be 4-D"):
        expand_kv(torch.zeros(2, 3, 4), 4)


def test_gqa_bad_arguments():
    with pytest.raises(ValueError, match="multiple of num_kv_heads; got num_heads = 8, num_kv_heads = 3"):
        GroupedQueryAttention(32, 8, 3)
    with pytest.raises(ValueError, match="d_model must be divisible by num_heads"):
        GroupedQueryAttention(30, 8, 2)
    with pytest.raises(TypeError, match="num_kv_heads must be an int"):
        GroupedQueryAttention(32, 8, 2.0)
    gqa = GroupedQueryAttention(32, 8, 2)
    with pytest.raises(ValueError, match="query must have last dimension d_model = 32"):
        gqa(torch.zeros(1, 3, 16), torch.zeros(1, 3, 32), torch.zeros(1, 3, 32))
    empty = torch.ones(3, 3, dtype=torch.bool)
    empty[0] = False
    with pytest.raises(ValueError, match="a row of mask is all False"):
        gqa(torch.zeros(1, 3, 32), torch.zeros(1, 3, 32), torch.zeros(1, 3, 32), empty)
    with pytest.raises(TypeError, match="module must be a helpers.attention.MultiHeadAttention"):
        GroupedQueryAttention.from_multi_head(torch.nn.Linear(2, 2))


# --- RoPE -------------------------------------------------------------------------------------------------------


def test_rope_equals_complex_multiplication(dtype):
    x = randn(2, 3, 10, 8, dtype=dtype)
    angles = rope_angles(torch.arange(10), 8)
    turn = torch.polar(torch.ones_like(angles), angles)  # e^{i·angle}, (10, 4)
    expected = torch.view_as_real(torch.view_as_complex(x.double().reshape(2, 3, 10, 4, 2).contiguous()) * turn)
    torch.testing.assert_close(apply_rope(x), expected.flatten(-2).to(dtype))


def test_rope_scores_depend_only_on_the_offset():
    q, k = randn(1, 8), randn(1, 8, seed=1)

    def score(m, n):
        return (apply_rope(q, torch.tensor([m])) @ apply_rope(k, torch.tensor([n])).T).item()

    for offset in (0, 3, -5):
        assert score(10 + offset, 10) == pytest.approx(score(100 + offset, 100), abs=1e-10)
    assert score(3, 0) != pytest.approx(score(5, 0), abs=1e-3)


def test_rope_keeps_norms_and_uses_the_sinusoidal_frequencies():
    x = randn(6, 16)
    torch.testing.assert_close(apply_rope(x).norm(dim=-1), x.norm(dim=-1))
    table = sinusoidal_table(6, 16).double()  # PE[p, 2i] = sin(p w_i), PE[p, 2i + 1] = cos(p w_i)
    angles = rope_angles(torch.arange(6), 16)
    torch.testing.assert_close(table[:, 0::2], angles.sin(), atol=1e-6, rtol=0)


def test_rope_bad_input():
    with pytest.raises(ValueError, match="d_head must be even"):
        apply_rope(randn(4, 7))
    with pytest.raises(ValueError, match="positions must have one entry per row of x, L = 4"):
        apply_rope(randn(4, 8), torch.arange(5))
    with pytest.raises(TypeError, match="x must be a floating-point tensor"):
        apply_rope(torch.zeros(4, 8, dtype=torch.long))


# --- windows and cache ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("window", [1, 3, 9])
def test_sliding_window_mask_equals_a_loop(window, causal):
    length = 7
    expected = torch.zeros(length, length, dtype=torch.bool)
    for i in range(length):
        for j in range(length):
            expected[i, j] = (0 <= i - j < window) if causal else (abs(i - j) < window)
    assert torch.equal(sliding_window_mask(length, window, causal=causal), expected)


def test_a_wide_causal_window_is_the_causal_mask():
    assert torch.equal(sliding_window_mask(5, 5), causal_mask(5))
    assert sliding_window_mask(5, 2).dtype == torch.bool


def test_sliding_window_bad_arguments():
    with pytest.raises(ValueError, match="window must be at least 1; got 0"):
        sliding_window_mask(4, 0)
    with pytest.raises(TypeError, match="length must be an int; got float"):
        sliding_window_mask(4.0, 2)


def test_kv_cache_bytes_equals_the_bytes_of_cached_tensors():
    layers, kv_heads, d_head, length, batch = 3, 2, 4, 5, 2
    cache = [(torch.zeros(batch, kv_heads, length, d_head, dtype=torch.float16),) * 2 for _ in range(layers)]
    measured = sum(t.nbytes for layer in cache for t in layer)
    assert kv_cache_bytes(layers=layers, kv_heads=kv_heads, d_head=d_head, length=length, batch=batch) == measured
    assert kv_cache_bytes(layers=32, kv_heads=32, d_head=128, length=4096) == 2 * 2**30
    with pytest.raises(ValueError, match="length must be at least 1; got 0"):
        kv_cache_bytes(layers=1, kv_heads=1, d_head=1, length=0)


# --- checkers ---------------------------------------------------------------------------------------------------


WRONG = {"a": "a is wrong because of x.", "c": "c is wrong because of y."}


