"""Answers to notebook 03's exercises (scaled dot-product attention, and why √d_k)."""

import math

from helpers.answers import Choice, Number

NUMBERS = {
    "03-score-variance": Number(
        expected=32 * 1 * 4,
        mistakes={
            32: ("that would be right if the keys had unit variance too; here each k_i has variance 4",
                 "如果键的每个分量方差也是 1，这个答案就对了；但这里每个 k_i 的方差是 4"),
            64: ("that uses the keys' standard deviation, 2, where their variance, 4, belongs",
                 "这里用的是键的标准差 2，而应该用的是它的方差 4"),
            32 * 16: ("the variance of k_i is already 4; do not square it again",
                      "k_i 的方差已经是 4 了，不要再平方一次"),
            4: ("that is the variance of ONE product q_i k_i; q·k adds up d_k = 32 of them",
                "这只是一个乘积 q_i k_i 的方差；q·k 是 d_k = 32 个这样的乘积之和"),
            1: ("1 is what a good scale aims for AFTER scaling; the question asks for the UNSCALED score",
                "1 是缩放“之后”想要达到的方差；题目问的是没有缩放的分数"),
            math.sqrt(128): ("that is a standard deviation, not a variance: variances of independent terms add up",
                             "这是标准差，不是方差：独立项的方差相加"),
            0: ("0 is the MEAN of q·k (every product has mean 0); the question asks for its variance",
                "0 是 q·k 的均值（每个乘积的均值都是 0）；题目问的是方差"),
        },
        hint=("write q·k = Σ q_i k_i. For independent q_i, k_i of mean 0, Var(q_i k_i) = Var(q_i)·Var(k_i); "
              "and the variances of independent terms add up",
              "把 q·k 写成 Σ q_i k_i。q_i、k_i 相互独立且均值为 0 时，Var(q_i k_i) = Var(q_i)·Var(k_i)；"
              "而相互独立的项相加时，方差也相加"),
    ),
    "03-saturation-gap": Number(
        expected=math.log(99),
        mistakes={
            99: ("99 is the ratio of the two weights, e^Δ; Δ itself is its logarithm",
                 "99 是两个权重之比，也就是 e^Δ；Δ 本身是它的对数"),
            0.99: ("0.99 is the weight asked for, not the gap between the two scores",
                   "0.99 是题目要的权重，不是两个分数之差"),
            math.log10(99): ("that is a base-10 logarithm; the softmax exponentiates with e, so use the natural log",
                             "这是以 10 为底的对数；softmax 用的是 e 的指数，所以要用自然对数"),
            math.log(100): ("0.99 = e^Δ / (e^Δ + 1) gives e^Δ = 0.99 / 0.01, not 1 / 0.01",
                            "由 0.99 = e^Δ / (e^Δ + 1) 得到 e^Δ = 0.99 / 0.01，而不是 1 / 0.01"),
            4.6: ("the right idea, rounded too coarsely: give at least three decimals, or let math.log compute it",
                  "思路对了，但四舍五入得太粗：至少保留三位小数，或者直接用 math.log 计算"),
            -math.log(99): ("the sign is flipped: the key that takes 99 % has the LARGER score",
                            "符号反了：拿到 99 % 权重的那个键，分数更大"),
        },
        hint=("with two keys the softmax is e^{s_1} / (e^{s_1} + e^{s_2}) = 1 / (1 + e^{-Δ}); set it to 0.99 and "
              "solve for Δ (math.log is the natural logarithm)",
              "只有两个键时，softmax 给第一个键的权重是 e^{s_1} / (e^{s_1} + e^{s_2}) = 1 / (1 + e^{-Δ})；"
              "令它等于 0.99，解出 Δ（math.log 是自然对数）"),
        rel=1e-3,
    ),
}

PREDICTIONS = {
    "03-scale-and-top-key": {
        "same": ("Every score of a row is multiplied by the same positive number, which keeps their order, and the "
                 "softmax is increasing: the key with the largest score gets the largest weight under every scale. "
                 "The scale decides how MUCH the top key gets (one-hot, balanced or nearly uniform), not WHICH key "
                 "it is. That is why the choice of scale shows up in the gradients and in the spread of the "
                 "weights, and can be so easy to miss.",
                 "同一行的每个分数都乘以同一个正数，大小顺序不变，而 softmax 又是单调递增的：无论怎样缩放，分数最大的键"
                 "总是拿到最大的权重。缩放决定的是排第一的键拿到“多少”权重（接近独热、比较均衡，还是几乎均匀），而不是"
                 "“哪一个”键排第一。所以缩放选错了，只会体现在梯度和权重的分散程度上，很容易被忽略。"),
        "unscaled": ("Saturation makes the top key's weight close to 1, but it does not change which key is on top: "
                     "dividing every score of a row by the same positive number keeps their order.",
                     "饱和会让排第一的键的权重接近 1，但不会改变哪个键排第一：同一行的分数都除以同一个正数，大小顺序不变。"),
        "changed": ("A positive scale cannot reorder the scores of a row, and the softmax keeps their order: the same "
                    "key wins under every scale, only with a different share of the weight.",
                    "正的缩放因子不会打乱同一行分数的顺序，softmax 也保持这个顺序：无论怎样缩放，胜出的都是同一个键，"
                    "只是它分到的权重不同。"),
    },
}

CHOICES = {
    "03-vanishing-not-exploding": Choice(
        correct="b",
        explanations={
            "a": ("Half of it is right. The softmax cannot explode a gradient: whatever the scores, it passes at most "
                  "half of the gradient it receives (the notebook's largest ratio stays below 0.5). Only the "
                  "vanishing side is real.",
                  "只对了一半。softmax 不可能让梯度爆炸：无论分数是多少，它传回去的梯度最多是收到的一半（笔记本里测得的最大"
                  "比值低于 0.5）。真正存在的只有梯度消失这一面。"),
            "b": ("Unscaled scores have variance d_k; at large d_k the softmax becomes nearly one-hot and the gradient "
                  "through it shrinks towards zero (measured: a thousand times smaller at d_k = 1024). Dividing by "
                  "√d_k keeps the variance at 1, so the softmax stays in the same regime for every d_k.",
                  "未缩放的分数方差是 d_k；d_k 很大时 softmax 几乎变成独热（one-hot），穿过它的梯度缩小到接近 0（测得 "
                  "d_k = 1024 时小了一千多倍）。除以 √d_k 让方差保持为 1，无论 d_k 多大，softmax 都处在同样的状态。"),
            "c": ("The opposite: large scores saturate the softmax, and saturation SHRINKS the gradient. The softmax "
                  "never amplifies one (its Jacobian's eigenvalues lie in [0, 1/2]).",
                  "恰恰相反：分数太大会让 softmax 饱和，而饱和会让梯度“变小”。softmax 从不放大梯度（它的雅可比矩阵的"
                  "特征值都在 [0, 1/2] 之内）。"),
            "d": ("Overflow is handled by subtracting each row's maximum inside the softmax, with or without a scale; "
                  "and the measurements show that the scale does change the gradients, by orders of magnitude.",
                  "溢出问题靠 softmax 内部先减去每行的最大值来解决，与是否缩放无关；而测量表明，缩放确实会改变梯度，"
                  "而且是数量级上的改变。"),
        },
        hint=("look again at Measurement 3: which ratio can the softmax never exceed, and what happens to the "
              "gradient when the weights become one-hot?",
              "回头看测量 3：softmax 传回的梯度与收到的梯度之比永远不会超过多少？权重变成独热时，梯度会怎样？"),
    ),
}
