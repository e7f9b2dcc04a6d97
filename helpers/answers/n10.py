"""Answers to notebook 10's exercises (attention today)."""

from helpers.answers import Choice, Number

PREDICTIONS = {
    "10-memory-against-length": {
        "x4": ("The (heads, L, L) scores and weights hold one number per (query, key) pair: twice the tokens, four "
               "times the pairs. The (heads, L, d_head) tensors only double, and at L = 1024 each L × L matrix is "
               "already 16 times larger than them, so the total is a little under 4 times.",
               "(heads, L, L) 的分数和权重对每一对（查询, 键）存一个数：词元数翻倍，对数就变成 4 倍。"
               "(heads, L, d_head) 的张量只翻一倍，而在 L = 1024 时每个 L × L 矩阵已经比它们大 16 倍，"
               "所以总量略低于 4 倍。"),
        "x2": ("x2 is what the (heads, L, d_head) tensors do (Q, K, V, the output); the L × L scores and weights, "
               "which dominate here, grow with the square of L.",
               "翻一倍的是 (heads, L, d_head) 的张量（Q、K、V 和输出）；这里占大头的是 L × L 的分数和权重，"
               "它们随 L 的平方增长。"),
        "x1": ("Every tensor of attention has an L axis, and the largest ones have two: nothing here stays the same.",
               "注意力里的每个张量都有一个 L 轴，最大的那些还有两个：这里没有哪一样保持不变。"),
    },
    "10-window-share": {
        "1/4": ("Twice too many: a window row holds w = 128 keys, a causal row L/2 = 1024 on average.",
                "多了一倍：窗口的一行有 w = 128 个键，而因果注意力的一行平均有 L/2 = 1024 个。"),
        "1/8": ("About w·L entries against about L²/2 for causal attention: 2w / L = 1/8 (0.121 exactly, since "
                "the first w rows see fewer keys).",
                "窗口大约有 w·L 个元素，因果注意力大约 L²/2 个：2w / L = 1/8（精确值 0.121，因为前 w 行看到的键更少）。"),
        "1/16": ("w / L = 1/16 compares a window row with a full row of L keys; a causal row has L/2 on average.",
                 "w / L = 1/16 是拿窗口的一行和完整的 L 个键相比；而因果注意力的一行平均只有 L/2 个键。"),
    },
}

NUMBERS = {
    "10-gqa-cache-gib": Number(
        expected=4.0,
        mistakes={
            16.0: ("that is the cache with 32 key/value heads: with GQA only the 8 key/value heads are cached",
                   "这是 32 个键/值头时的缓存：用了 GQA 以后只缓存 8 个键/值头"),
            2.0: ("K and V are both cached: count them twice", "K 和 V 都要缓存：要算两份"),
            8.0: ("float16 takes 2 bytes, not 4", "float16 每个数占 2 字节，不是 4 字节"),
            4.0 * 2**30: ("that is in bytes: divide by 2**30 for GiB", "这是字节数：除以 2**30 才是 GiB"),
        },
        hint=("multiply what one token leaves in the cache of one layer by the layers and the tokens",
              "先算一个词在一层里留下多少缓存，再乘以层数和词数"),
    ),
}

CHOICES = {
    "10-rope-relative": Choice(
        correct="c",
        explanations={
            "a": ("The angles are fixed, p · 10000^(-2i/d), the frequencies of notebook 06: nothing is learned.",
                  "这些角度是固定的，p · 10000^(-2i/d)，就是笔记本 06 里的那些频率：没有任何东西是学出来的。"),
            "b": ("True, but not the reason: a rotation of q alone by m would keep lengths too and still leave an "
                  "absolute m in the score. It is the pairing of two rotations that matters.",
                  "这句话没错，但不是原因：只把 q 旋转 m 同样保持长度，分数里却仍然留着绝对位置 m。关键在于两个旋转成对出现。"),
            "c": ("A rotation by m, then the inverse of a rotation by n, is one rotation by n − m: "
                  "(R_m q)ᵀ(R_n k) = qᵀ R_mᵀ R_n k = qᵀ R_(n−m) k.",
                  "先转 m 再乘以转 n 的逆，等于转 n − m：(R_m q)ᵀ(R_n k) = qᵀ R_mᵀ R_n k = qᵀ R_(n−m) k。"),
            "d": ("Values are not rotated at all; the property is about the score q · k, before any value is used.",
                  "值向量根本不旋转；这个性质说的是分数 q · k，与值向量无关。"),
        },
        hint=("write the dot product of two rotated vectors as qᵀ Aᵀ B k: what is Aᵀ B for two rotations?",
              "把两个旋转后的向量的点积写成 qᵀ Aᵀ B k：两个旋转矩阵的 Aᵀ B 是什么？"),
    ),
}
