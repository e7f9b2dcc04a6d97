"""Answers to notebook 05's exercises (multi-head attention)."""

from helpers.answers import Choice, Number

_d, _h = 256, 4
_linear = _d * _d + _d                       # one nn.Linear(d_model, d_model): weight and bias

NUMBERS = {
    "05-parameters": Number(
        expected=4 * _linear,
        mistakes={
            4 * _d * _d: ("the biases are missing: each of the four linear layers also has a bias of size d_model",
                          "少算了偏置：四个线性层每个还有一个大小为 d_model 的偏置"),
            3 * _linear: ("that counts W_Q, W_K and W_V only: the output projection W_O is a fourth linear layer",
                          "这里只数了 W_Q、W_K、W_V：输出投影 W_O 是第四个线性层"),
            _h * 4 * _linear: ("the number of heads does not multiply the count: the heads share the four "
                               "d_model × d_model matrices, each head using d_model / heads of their columns",
                               "头数不会让参数量成倍增加：所有头共用这四个 d_model × d_model 的矩阵，每个头只用其中 "
                               "d_model / 头数 列"),
            _h * 3 * _linear + _linear: ("each head's W_i^Q, W_i^K, W_i^V is d_model × d_head (256 × 64), not "
                                         "d_model × d_model",
                                         "每个头的 W_i^Q、W_i^K、W_i^V 是 d_model × d_head（256 × 64），不是 "
                                         "d_model × d_model"),
            4 * (64 * 64 + 64): ("a projection reads all d_model = 256 input features: its weight is 256 × 256, "
                                 "not d_head × d_head",
                                 "投影读入的是全部 d_model = 256 个输入特征：它的权重是 256 × 256，不是 d_head × d_head"),
        },
        hint=("list the layers MultiHeadAttention holds (section 'With the helpers, and with PyTorch') and the shapes "
              "of each one's weight and bias",
              "列出 MultiHeadAttention 里有哪些层（见“用 helpers，以及用 PyTorch”一节），以及每层的权重和偏置的形状"),
    ),
}

PREDICTIONS = {
    "05-swap-heads": {
        "different": ("Each head still computes exactly what it did (same weights r, same z); exchanging them only "
                      "exchanges the halves of the concatenation, [z₂ | z₁] instead of [z₁ | z₂]. But W^O's rows 0–2 "
                      "still multiply whatever sits in features 0–2: each head's output now meets the rows of W^O "
                      "meant for the other head, so Z changes. Exchange W^O's rows as well and Z comes back exactly "
                      "(asserted in the cell): the heads' order is only a convention shared by the concatenation and "
                      "W^O.",
                      "每个头算出的东西和原来完全一样（同样的权重 r、同样的 z）；交换两个头只是交换了拼接结果的两半，"
                      "变成 [z₂ | z₁] 而不是 [z₁ | z₂]。但 W^O 的第 0–2 行仍然乘在第 0–2 个特征上：每个头的输出现在遇到的是 "
                      "W^O 里原本为另一个头准备的那几行，所以 Z 变了。把 W^O 的行也对应交换，Z 就完全恢复（单元格里有断言）："
                      "头的顺序只是拼接和 W^O 共同遵守的一个约定。"),
        "same": ("It would stay the same only if W^O's rows were exchanged too (asserted in the cell). Exchanging "
                 "the projections alone moves each head's output onto the rows of W^O meant for the other head.",
                 "只有把 W^O 的行也一起交换，Z 才会保持不变（单元格里有断言）。只交换投影矩阵，会让每个头的输出落到 "
                 "W^O 里原本属于另一个头的那几行上。"),
        "columns": ("The exchange swaps the halves of the concatenation, not of Z: W^O mixes every head's features "
                    "into every output column, so Z changes everywhere, not by a simple swap of its columns.",
                    "被交换的是拼接结果的两半，而不是 Z 的两半：W^O 把每个头的特征混进每一个输出列，所以 Z 处处都变了，"
                    "而不只是列的位置互换。"),
    },
}

CHOICES = {
    "05-why-heads": Choice(
        correct="b",
        explanations={
            "a": ("No: each head's W_i^Q is d_model × d_k, so every head reads all 512 input features. Only the "
                  "projected features are split into heads (the split comes after the matmul X @ W_Q).",
                  "不对：每个头的 W_i^Q 是 d_model × d_k，所以每个头都读入全部 512 个输入特征。被切分给各个头的只是投影之后"
                  "的特征（拆分发生在矩阵乘法 X @ W_Q 之后）。"),
            "b": ("One head has one softmax per query: a single distribution over the keys, which must share its "
                  "weight between every relation the token needs. Eight heads give each query eight distributions, "
                  "each in its own subspace, so one token can attend strongly to several different words at once "
                  "(the note's 不同的表示子空间); W^O then combines them.",
                  "一个头对每个查询只有一次 softmax：在所有键上只有一个概率分布，这个词需要的各种关系只能分享这一份权重。"
                  "八个头给每个查询八个分布，每个分布在自己的子空间里，所以一个词可以同时强烈地关注几个不同的词"
                  "（讲义所说的“不同的表示子空间”）；最后由 W^O 把它们整合起来。"),
            "c": ("No: every head attends over the whole sequence; the weights have shape (batch, heads, L_q, L_k), "
                  "with all L_k keys in every head.",
                  "不对：每个头都在整个序列上做注意力；权重的形状是 (batch, heads, L_q, L_k)，每个头里都有全部 L_k 个键。"),
            "d": ("No: each head still divides its scores by √d_k = √64 = 8; the scaling is per head, not skipped.",
                  "不对：每个头仍然要把分数除以 √d_k = √64 = 8；缩放是按每个头来做的，并没有省掉。"),
        },
        hint=("count the softmaxes: how many distributions over the keys does one query get in each case?",
              "数一数 softmax：两种情况下，一个查询各得到几个在键上的概率分布？"),
    ),
}
