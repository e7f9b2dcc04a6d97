"""Answers to notebook 04's exercises (masks)."""

from helpers.answers import Choice

PREDICTIONS = {
    "04-key-padding-mask": {
        "same": ("Both agree only when both read True the same way; here they do not.",
                 "只有两边对 True 的理解相同，结果才会一致；这里并不相同。"),
        "nan": ("PyTorch's key_padding_mask means True = IGNORE this key. The course's mask is True on every real "
                "token, so PyTorch blocks every key: each row of scores is all −∞ and its softmax is 0/0 = NaN. "
                "Pass ~mask to PyTorch.",
                "PyTorch 的 key_padding_mask 里 True 表示“忽略这个键”。本课程的掩码在每个真实词上都是 True，所以 PyTorch "
                "把所有键都屏蔽了：每一行分数全是 −∞，softmax 得到 0/0 = NaN。传给 PyTorch 时要用 ~mask。"),
        "error": ("PyTorch accepts any bool mask of shape (batch, L_k): it cannot know which convention you meant.",
                  "PyTorch 接受任何形状为 (batch, L_k) 的布尔掩码：它无从知道你用的是哪种约定。"),
    },
}

CHOICES = {
    "04-mask-order": Choice(
        correct="b",
        explanations={
            "a": ("They do not give the same weights: multiplied after the softmax, the rows sum to less than 1 and "
                  "the kept weights were divided by a sum that included the masked keys (bug 4 of the gallery).",
                  "两者的权重并不相同：在 softmax 之后再乘掩码，每行之和小于 1，而且保留下来的权重是除以一个包含了被屏蔽键的和"
                  "得到的（见错误示例 4）。"),
            "b": ("Softmax normalises over every score it is given. Only a score that is −∞ before the softmax adds "
                  "exp(−∞) = 0 to the denominator, so only then are the masked keys truly absent.",
                  "softmax 会对它拿到的所有分数做归一化。只有在 softmax 之前就是 −∞ 的分数，才会给分母贡献 exp(−∞) = 0，"
                  "被屏蔽的键才真正不存在。"),
            "c": ("The opposite: exp(−∞) = 0 has zero gradient, so nothing flows into masked positions, as it should.",
                  "恰恰相反：exp(−∞) = 0 的梯度为零，被屏蔽的位置不会得到任何梯度，这正是我们想要的。"),
            "d": ("It can (the bool mask is promoted to 0/1), which is exactly why bug 4 runs without any error.",
                  "可以相乘（布尔掩码会被提升为 0/1），正因为如此，错误示例 4 运行时不会报任何错。"),
        },
        hint=("Write the softmax of one row out by hand: which scores appear in the denominator?",
              "把一行的 softmax 手写出来：分母里出现了哪些分数？"),
    ),
}
