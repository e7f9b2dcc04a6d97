"""Answers to notebook 06's exercises (the encoder layer)."""

from helpers.answers import Choice, Number

NUMBERS = {
    "06-dropout-factor": Number(
        expected=1 / (1 - 0.2),
        mistakes={
            1 + 0.2: ("1 + p is close to the printed 1.111 at p = 0.1 (1.1), but it is not the rule: a weight survives "
                      "with probability 1 - p, and (1 - p) times the factor must give 1",
                      "1 + p 在 p = 0.1 时（1.1）和打印出来的 1.111 很接近，但规律不是这样：一个权重以 1 - p 的概率留下，"
                      "(1 - p) 乘以这个因子必须等于 1"),
            1 - 0.2: ("that is the share of weights kept; PyTorch divides by it while training (inverted dropout), so "
                      "the kept weights grow",
                      "这是留下的权重所占的比例；PyTorch 训练时要除以它（inverted dropout），所以留下的权重会变大"),
            0.2: ("0.2 is the probability of being dropped, not the factor for the weights that stay",
                  "0.2 是被丢弃的概率，不是留下来的权重要乘的因子"),
            1 / 0.2: ("that divides by p; the kept weights are divided by the share that is KEPT, 1 - p",
                      "这是除以 p；留下的权重要除以的是留下的比例 1 - p"),
            1.0: ("without a factor the expected value of each weight would shrink to (1 - p) times itself, and a "
                  "row would sum to 0.8 on average",
                  "不乘因子的话，每个权重的期望会缩小为原来的 (1 - p) 倍，一行的和平均只有 0.8"),
        },
        hint=("a weight is kept with probability 1 - p and then multiplied by the factor: what must its expected "
              "value be?",
              "一个权重以 1 - p 的概率被留下，然后乘以这个因子：它的期望应该等于多少？"),
    ),
}

PREDICTIONS = {
    "06-scale-the-input": {
        "same": ("LayerNorm subtracts each token's mean and divides by its standard deviation: multiply x by 10 and "
                 "both the centred vector and the standard deviation grow 10 times, so the ratio does not move. Only "
                 "eps could tell them apart, and 1e-5 is tiny next to a variance of about 900. This is what keeps a "
                 "post-LN stack at norm √d_model whatever the sub-layers add.",
                 "层标准化先减去每个词自己的均值，再除以它自己的标准差：把 x 乘以 10，中心化后的向量和标准差都变成 10 倍，"
                 "两者之比不变。只有 eps 能让它们有一点差别，而 1e-5 和大约 900 的方差相比微不足道。正因为如此，"
                 "不管子层加进来多少，Post-LN 的堆叠里每个词的范数都保持在 √d_model 左右。"),
        "x10": ("That is what a linear map without bias would do. LayerNorm divides by the standard deviation, "
                "which grows 10 times as well, so the factor 10 cancels.",
                "不带偏置的线性映射才会这样。层标准化要除以标准差，而标准差也变成了 10 倍，所以因子 10 被约掉了。"),
        "other": ("Scaling changes nothing but the tiny effect of eps: the centred vector and the standard deviation "
                  "scale together.",
                  "缩放只改变了 eps 那一点点微小的影响：中心化后的向量和标准差是一起缩放的。"),
    },
    "06-change-the-padding": {
        "pad": ("The padding mask removes the PAD keys from every query's softmax, so no real token reads them; the "
                "feed-forward network, the residual connections and the LayerNorms act on each position on its own. "
                "The PAD positions themselves do change: each is still a query with its own residual. Their outputs "
                "are never read, which is why the comparison with PyTorch above skips them.",
                "填充掩码把 PAD 键从每个查询的 softmax 里去掉了，所以没有哪个真实词会读到它们；前馈网络、残差连接和层标准化"
                "都是逐位置各自计算的。PAD 位置本身的输出会变：它们仍然是查询，也有自己的残差。这些输出从来不会被使用，"
                "所以上面和 PyTorch 的比较跳过了它们。"),
        "all": ("Only attention mixes positions, and the padding mask hides the PAD keys from every query; the other "
                "parts of the layer work position by position. So the real tokens cannot see the change.",
                "只有注意力会在位置之间混合信息，而填充掩码对每个查询都遮住了 PAD 键；层里的其他部分都是逐位置计算的。"
                "所以真实词看不到这个改动。"),
        "none": ("The PAD positions are still queries: their own output is computed from their own (changed) vector "
                 "through the residual connection and the feed-forward network, so those rows do change.",
                 "PAD 位置仍然是查询：它们自己的输出由它们自己（被改动过）的向量经过残差连接和前馈网络算出来，"
                 "所以这几行会变。"),
    },
}

CHOICES = {
    "06-why-pre-ln": Choice(
        correct="b",
        explanations={
            "a": ("Pre-LN and post-LN layers have exactly the same parameters; only the place of the LayerNorm "
                  "differs (pre-LN adds one final LayerNorm after the stack).",
                  "Pre-LN 层和 Post-LN 层的参数完全一样，不同的只是层标准化的位置（Pre-LN 只在整个堆叠之后多一个最终的层标准化）。"),
            "b": ("In pre-LN the input reaches the output through additions only (zeroed sub-layers left x exactly "
                  "unchanged above), so the gradient too has a direct path to every layer, as in x + f(x). In post-LN "
                  "it must pass through a LayerNorm after every layer, and early in training a large learning rate "
                  "then makes the updates unstable: hence the warm-up (Xiong et al., 2020).",
                  "在 Pre-LN 里，输入只经过加法就能到达输出（上面把子层清零后 x 完全不变），所以梯度也有一条通往每一层的直接"
                  "通路，就像 x + f(x) 那样。在 Post-LN 里，梯度每经过一层都要穿过一个层标准化，训练初期学习率一大，"
                  "更新就不稳定：所以需要预热（warm-up）（Xiong 等，2020）。"),
            "c": ("Pre-LN does not remove the LayerNorm: it moves it inside the residual branch, before the sub-layer, "
                  "and adds one after the last layer.",
                  "Pre-LN 并没有去掉层标准化：它把层标准化挪进了残差分支、放在子层之前，并在最后一层之后再加一个。"),
            "d": ("That is post-LN: it re-normalises after every layer, so each token keeps norm ≈ √d_model = 8. In the "
                  "measurement above the pre-LN stream grows with depth.",
                  "那是 Post-LN：它在每一层之后都重新标准化，所以每个词的范数保持在 √d_model = 8 左右。上面的测量里，"
                  "Pre-LN 的残差流随深度增长。"),
        },
        hint=("look again at the two measurements of the post-LN / pre-LN section: which one is about a direct path "
              "from the input to the output?",
              "回头看 Post-LN / Pre-LN 一节里的两个测量：哪一个说的是从输入到输出的直接通路？"),
    ),
}
