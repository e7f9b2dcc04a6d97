"""Answers to notebook 02's exercises (Q, K and V on the 4 × 6 toy matrix)."""

from __future__ import annotations

import numpy as np

from helpers.answers import Choice, Number
from helpers.tasks import TOY_WORDS, toy_matrix, toy_projections


def _softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max())
    return e / e.sum()


def _without_self(word: str, target: str, *, scale: float, by_column: bool = False) -> float:
    """The weight ``word`` gives ``target`` once ``word``'s own key is removed from its row (scores times scale)."""
    x = toy_matrix()                                   # (4, 6)
    w_q, w_k, _ = toy_projections()                    # (6, 3) each
    scores = (x @ w_q) @ (x @ w_k).T                   # (4, 4): row = query, column = key
    i, j = TOY_WORDS.index(word), TOY_WORDS.index(target)
    others = [n for n in range(len(TOY_WORDS)) if n != i]
    line = scores[others, i] if by_column else scores[i, others]   # (3,)
    return float(_softmax(line * scale)[others.index(j)])


def _with_self(word: str, target: str) -> float:
    """r[word, target] of the notebook: the weight with the word's own key still in its row."""
    x = toy_matrix()
    w_q, w_k, _ = toy_projections()
    scores = (x @ w_q) @ (x @ w_k).T
    return float(_softmax(scores[TOY_WORDS.index(word)] / np.sqrt(3))[TOY_WORDS.index(target)])


NUMBERS = {
    "02-down-without-itself": Number(
        expected=_without_self("down", "cat", scale=1 / np.sqrt(3)),
        mistakes={
            _with_self("down", "cat"): (
                "that is r[down, cat] with 'down' still in its own row. Removing a key removes its exp from the "
                "softmax's denominator, so the weights left over grow until they sum to 1 again",
                "这是 “down” 自己还留在这一行里时的 r[down, cat]。拿掉一个键，它的 exp 也就从 softmax 的分母里消失了，"
                "剩下的权重会变大，直到重新加起来等于 1"),
            _without_self("down", "cat", scale=1.0): (
                "the scores were not scaled: divide them by √d_k before the softmax",
                "分数没有缩放：做 softmax 之前要先除以 √d_k"),
            _without_self("down", "cat", scale=1 / 3): (
                "the scores were divided by d_k = 3 (the lecture note's slip); the paper divides by √d_k",
                "分数除以了 d_k = 3（讲义的笔误）；论文除以的是 √d_k"),
            _without_self("down", "cat", scale=1 / np.sqrt(3), by_column=True): (
                "this uses column 'down' of the scores (how the others score 'down'), not the row of the query 'down'",
                "这里用的是分数矩阵中 “down” 那一列（别的词给 “down” 打的分），而不是查询 “down” 的那一行"),
        },
        hint=("it is a softmax over fewer keys: which scores are left in the row of the query 'down', and what is "
              "each divided by first?",
              "这是在更少的键上做 softmax：查询 “down” 那一行里还剩下哪些分数？每个分数先要除以什么？"),
        rel=1e-3,
    ),
}

PREDICTIONS = {
    "02-shuffle-the-words": {
        "reordered": (
            "Each output row is computed from its own word's query and from ALL the keys and values, whatever "
            "order they come in: a sum over j does not care about the order of its terms. Shuffling the input rows "
            "only shuffles the output rows, the same way. Self-attention sees a set of words, not a sequence; that "
            "is why a Transformer adds positional encodings to its inputs (notebook 06).",
            "每一行输出都只由这个词自己的查询，以及全部的键和值算出来，不管它们以什么顺序出现：对 j 求和与各项的先后次序无关。"
            "打乱输入的各行，只会以同样的方式打乱输出的各行。自注意力看到的是一个词的集合，而不是一个序列；"
            "这正是 Transformer 要给输入加上位置编码（positional encoding）的原因（笔记本 06）。"),
        "changed": (
            "New numbers would need something in the computation that knows positions. Nothing here does: Q, K and V "
            "are computed row by row, and each output sums over all keys and values, in any order.",
            "要得到新的数值，计算里就得有某个东西知道位置。这里没有：Q、K、V 都是逐行算的，每个输出对全部的键和值求和，"
            "与它们的顺序无关。"),
        "same": (
            "Z would keep its row order only if each output row stayed at its position; but each output row follows "
            "its own word, so the rows move with the words.",
            "只有每个输出行都留在原来的位置上，Z 的行序才会保持不变；但每个输出行跟着它自己的词走，所以各行随着词一起移动。"),
    },
}

CHOICES = {
    "02-what-r-says": Choice(
        correct="a",
        explanations={
            "a": ("Row i of r holds the weights of the query i: Z[i] = Σ_j r[i, j] V[j]. The softmax runs along the "
                  "row, over the keys, so every row sums to 1 (asserted in step 3).",
                  "r 的第 i 行是查询 i 的权重：Z[i] = Σ_j r[i, j] V[j]。softmax 沿着这一行、在所有键上做，"
                  "所以每一行加起来都等于 1（第 3 步里有断言）。"),
            "b": ("The softmax normalises each row, not each column: the columns of r add up to other numbers "
                  "(column 'the' to more than 1 here). Normalising the columns is the planted bug of exercise 4.",
                  "softmax 是对每一行归一化，而不是每一列：r 的各列加起来是别的数（这里 “the” 那一列之和大于 1）。"
                  "按列归一化正是练习 4 里埋下的错误。"),
            "c": ("The score of i for j is q_i · k_j, and the score of j for i is q_j · k_i: queries and keys are "
                  "different projections, so these differ. Even with W_K = W_Q (symmetric scores) r is not symmetric, "
                  "because each row is normalised on its own.",
                  "i 对 j 的分数是 q_i · k_j，j 对 i 的分数是 q_j · k_i：查询和键是不同的投影，所以两者不同。"
                  "即使 W_K = W_Q（分数对称），r 也不对称，因为每一行是各自归一化的。"),
            "d": ("A weight says where the mix came from, not what mattered: above, two rows of weights that differ by "
                  "more than 0.1 give exactly the same output. Whether a word mattered is measured by changing the "
                  "input.",
                  "权重说明的是混合从哪里来，而不是什么真正起了作用：上面两行相差超过 0.1 的权重给出了完全相同的输出。"
                  "某个词是否起作用，要通过改变输入来测量。"),
        },
        hint=("write Z[i] as a sum over j, and recall along which axis the softmax of step 3 normalises",
              "把 Z[i] 写成对 j 的求和，再想一想第 3 步的 softmax 是沿哪个轴归一化的"),
    ),
}
