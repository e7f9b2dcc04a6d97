"""Answers to notebook 09's exercises (the cost of attention, a tiny ViT, and real attention heads)."""

from helpers.answers import Choice, Number

_tokens = (224 // 16) ** 2                    # ViT-Base: 14 x 14 patches of 16 x 16 pixels
_mib_2048 = 4 * 2048 * 2048 * 4 / 2**20       # the notebook's 64 MiB: 4 heads, L = 2048, float32
_mib_8192 = 8 * 8192 * 8192 * 2 / 2**20       # 8 heads, L = 8192, float16
# all-MiniLM-L6-v2 over helpers.heads.SENTENCES, measured (tests/test_heads.py measures them again): the heads whose
# word pieces put on average more than half of their weight on [CLS], per layer
_cls_heads_per_layer = (0, 7, 9, 10, 9, 2)
_cls_heads = sum(_cls_heads_per_layer)        # 37 of the 72 heads
_cls_heads_all_rows = 39                      # the same count with the rows of [CLS] and [SEP] themselves averaged in

NUMBERS = {
    "09-vit-patch-tokens": Number(
        expected=_tokens,
        mistakes={
            224 // 16: ("that is the number of patches along ONE side of the image; the patches tile a square",
                        "这只是图像一条边上的 patch 数；patch 铺满的是整个正方形"),
            _tokens + 1: ("the question asks for the patch tokens without [CLS]",
                          "题目问的是不含 [CLS] 的 patch 词元数"),
            224 * 224 // 16: ("a 16 × 16 patch holds 16 · 16 = 256 pixels, not 16",
                              "一个 16 × 16 的 patch 含有 16 · 16 = 256 个像素，而不是 16 个"),
            224 * 224: ("that counts pixels: each token is a whole patch of pixels",
                        "这数的是像素：每个词元是一整块像素（一个 patch）"),
        },
        hint=("how many patches fit along one side, and how many rows of them are there?",
              "一条边上能放下几个 patch？这样的 patch 一共有几行？"),
    ),
    "09-vit-weights-per-head": Number(
        expected=(_tokens + 1) ** 2,
        mistakes={
            _tokens ** 2: ("[CLS] is a token too: it has its own row (as a query) and its own column (as a key)",
                           "[CLS] 也是一个词元：它有自己的一行（作为查询）和一列（作为键）"),
            _tokens + 1: ("that is one row of the weights; the weights have one row per query AND one column per key",
                          "这只是权重矩阵的一行；权重矩阵每个查询一行，每个键一列"),
            12 * (_tokens + 1) ** 2: ("that counts all 12 heads of ViT-Base; the question asks for one head",
                                      "这把 ViT-Base 的 12 个头都算进去了；题目问的是一个头"),
            12 * _tokens ** 2: ("one head, not 12; and [CLS] has a row and a column too",
                                "只算一个头，不是 12 个；另外 [CLS] 也有自己的一行和一列"),
        },
        hint=("the weights of one head form a (tokens, tokens) matrix, and [CLS] counts as a token",
              "一个头的注意力权重是一个 (词元数, 词元数) 的矩阵，[CLS] 也算一个词元"),
    ),
    "09-weights-memory": Number(
        expected=_mib_8192,
        mistakes={
            _mib_2048 * 4 * 2 * 0.5: ("that scales the memory linearly with L; the weights are L × L",
                                      "这是让显存随 L 线性增长；但注意力权重是 L × L 的"),
            _mib_2048 * 16 * 0.5: ("each head holds its own L × L weights: twice the heads, twice the memory",
                                   "每个头都有自己的一份 L × L 权重：头数翻倍，显存也翻倍"),
            _mib_2048 * 16 * 2: ("float16 takes 2 bytes per number, half of float32's 4",
                                 "float16 每个数占 2 个字节，是 float32（4 个字节）的一半"),
            _mib_8192 * 2**20: ("that is in bytes; give the answer in MiB (2²⁰ bytes)",
                                "这是以字节为单位的；请用 MiB（2²⁰ 字节）作答"),
            _mib_8192 * 2**20 / 1e6: ("that is in MB (10⁶ bytes); the notebook counts MiB (2²⁰ = 1 048 576 bytes)",
                                      "这是 MB（10⁶ 字节）；本笔记本用的是 MiB（2²⁰ = 1 048 576 字节）"),
        },
        hint=("start from the 64 MiB and change one factor at a time: the length (it enters squared), the number of "
              "heads, the bytes per number",
              "从 64 MiB 出发，一次只改一个因素：序列长度（它以平方出现）、头数、每个数的字节数"),
    ),
    "09-cls-heads": Number(
        expected=_cls_heads,
        mistakes={
            _cls_heads_all_rows: ("the rows of [CLS] and [SEP] are averaged in too; the claim is about the word "
                                  "pieces, the queries 1 .. L - 2",
                                  "这里把 [CLS] 和 [SEP] 自己的那两行也平均进去了；题目问的是词片（word piece）的行，"
                                  "也就是第 1 到第 L - 2 个查询"),
            0: ("no head passes the threshold here: is that the weight on [SEP] (the last position, L - 1), or layer "
                "0 alone? [CLS] is position 0, and the question asks for all six layers",
                "这样一个头都不超过一半：你算的是不是 [SEP]（最后一个位置 L - 1）的权重，或者只数了第 0 层？"
                "[CLS] 在位置 0，题目问的是全部 6 层"),
            72 - _cls_heads: ("that counts the heads at or BELOW one half; the question asks for those above it",
                              "这数的是不超过一半的头；题目问的是超过一半的头"),
            **{count: ("that is the count of one layer; the question asks for all six layers together",
                       "这只是某一层的个数；题目问的是 6 层加在一起")
               for count in sorted(set(_cls_heads_per_layer) - {0})},
        },
        hint=("cls_share(attentions) is attentions[..., 1:L - 1, 0].mean(-1), one number per head; average it over "
              "the 30 sentences with head_table, then count the entries above 0.5 in the whole (6, 12) table",
              "cls_share(attentions) 就是 attentions[..., 1:L - 1, 0].mean(-1)，每个头一个数；用 head_table 在 30 个句子上"
              "求平均，再数整张 (6, 12) 表里大于 0.5 的元素"),
    ),
}

PREDICTIONS = {
    "09-head-size-costs": {
        "only-work": ("The weights are softmax(QKᵀ/√d_k): one number per (query, key) pair, (heads, L, L) whatever the "
                      "head size, so their memory stays. But each of those numbers is now a dot product twice as long, "
                      "and weights × V mixes vectors twice as long: the work, 2·2·h·L²·d_head FLOPs, doubles "
                      "(FlopCounterMode counted it).",
                      "注意力权重是 softmax(QKᵀ/√d_k)：每一对（查询, 键）只有一个数，不管头多大，形状总是 (heads, L, L)，"
                      "所以内存不变。但每个数现在来自长一倍的点积，“权重 × V”混合的向量也长了一倍："
                      "计算量 2·2·h·L²·d_head FLOPs 翻倍了（FlopCounterMode 数出来的）。"),
        "neither": ("The memory of the weights stays, but the work does not: each score is a dot product of length "
                    "d_head, and each output mixes value vectors of length d_head, so both matrix products double.",
                    "权重的内存确实不变，但计算量变了：每个分数是长度为 d_head 的点积，每个输出混合的值向量长度也是 d_head，"
                    "所以两次矩阵乘法的计算量都翻倍。"),
        "only-memory": ("The other way round: the weights are (heads, L, L) whatever the head size, one number per "
                        "(query, key) pair; what grows is the length of each dot product, the work.",
                        "正好反过来：不管头多大，权重都是 (heads, L, L)，每一对（查询, 键）一个数；变长的是每个点积，也就是计算量。"),
        "both": ("The work doubles, the weights do not: each dot product, however long, gives one score, so the "
                 "weights stay (heads, L, L).",
                 "计算量翻倍，权重却不变：点积无论多长，都只得到一个分数，所以权重仍是 (heads, L, L)。"),
    },
    "09-shuffled-patches": {
        "stays": ("Each 4 × 4 patch already shows a piece of the stroke, and the direction of that piece (horizontal, "
                  "vertical, diagonal, anti-diagonal) is visible inside the patch itself. The class needs only the "
                  "direction, not where the stroke is, and self-attention mixes the tokens whatever their order: "
                  "this tiny ViT hardly needs the patches' positions. Shuffling the pixels instead destroys the pieces "
                  "of stroke inside the patches, and the accuracy falls to chance (measured in the same cell).",
                  "每个 4 × 4 的 patch 里本来就有笔画的一段，而这一段的方向（水平、竖直、对角、反对角）在 patch 内部就看得出来。"
                  "分类只需要方向，不需要笔画在哪里；而自注意力不管词元的顺序如何都会把它们混合起来："
                  "这个小 ViT 几乎用不到 patch 的位置。反过来，如果打乱的是像素，patch 里的笔画片段就被破坏了，"
                  "准确率会掉到随机猜测的水平（同一个单元格里测量了）。"),
        "chance": ("That is what shuffling the PIXELS does (measured in the same cell). Shuffling whole patches keeps "
                   "each piece of stroke intact, and its direction is visible inside the patch.",
                   "那是打乱像素的结果（同一个单元格里测量了）。打乱整块 patch 时，每段笔画都完好无损，它的方向在 patch 内部就能看出来。"),
        "between": ("The drop is much smaller than that: a piece of stroke inside one patch already tells its "
                    "direction, so the positions of the patches matter little for this task.",
                    "下降远比这小：一个 patch 内的笔画片段就已经说明了方向，所以对这个任务来说，patch 的位置几乎不重要。"),
    },
    "09-shuffled-determiner-head": {
        "weaker": ("It falls from 0.89 to about 0.4 (measured over this shuffle), yet stays well above what any fixed "
                   "distance finds in the shuffled sentences (best_offset: about 0.15) and above a random pick. So the "
                   "head uses both: the words themselves (a determiner's weight is drawn to nouns wherever they are) "
                   "and their order (in English the noun follows its determiner closely; shuffled, it is often on the "
                   "left or far away, and the head then picks another word). A head that only counted positions would "
                   "fall to the fixed-distance level; one that only read meaning would stay.",
                   "它从 0.89 降到 0.4 左右（这一次打乱测得），但仍远高于打乱后任何固定距离规则能找到的比例"
                   "（best_offset：约 0.15），也高于随便挑一个词。可见这个头两样都用：一是词本身（不管名词在哪里，"
                   "限定词的权重都会被名词吸引），二是词序（英语里名词紧跟在限定词后面不远；打乱以后，名词常常跑到左边或很远的地方，"
                   "这个头就挑中了别的词）。只会数位置的头会降到固定距离规则的水平；只看词义的头则不会下降。"),
        "stays": ("It does not stay: it falls to about 0.4. The head relies on word order as well as on the words: once "
                  "the noun is no longer just to the right of its determiner, the head often picks another word.",
                  "并没有保持住：它降到了 0.4 左右。这个头除了看词本身，也依赖词序：名词一旦不在限定词右边不远处，"
                  "这个头就常常挑中别的词。"),
        "gone": ("It does not fall to chance: it still finds the noun for about 0.4 of the determiners, far above a fixed "
                 "distance (about 0.15) and a random pick. The words themselves still draw the weight: a determiner "
                 "looks for a noun even in a scrambled sentence.",
                 "它并没有降到随机水平：仍有 0.4 左右的限定词找到了自己的名词，远高于固定距离规则（约 0.15）和随便挑一个词。"
                 "词本身仍在吸引权重：即使句子被打乱，限定词也还在找名词。"),
    },
}

CHOICES = {
    "09-what-fused-saves": Choice(
        correct="b",
        explanations={
            "a": ("It computes every score: the cell that measures the memory asserts that both paths give the same output "
                  "to 1e-5. Sparse attention is a different model, not a faster kernel.",
                  "它计算了每一个分数：测量内存的那个单元格断言两条路径的输出在 1e-5 以内相同。"
                  "稀疏注意力是另一种模型，而不是更快的内核。"),
            "b": ("The fused kernel walks over tiles of keys with a running softmax, so the (heads, L, L) weights are "
                  "never held at once: the memory of the weights is saved. But every query still meets every key, so "
                  "the work stays 2·2·h·L²·d_head FLOPs: quadratic.",
                  "融合内核按块遍历键，边算边更新 softmax，所以 (heads, L, L) 的权重从来不会同时存在内存里：省下的是权重的内存。"
                  "但每个查询仍然要和每个键相遇，计算量仍是 2·2·h·L²·d_head FLOPs：依然是平方级。"),
            "c": ("No kernel can skip pairs and still give the exact output: each of the L² scores enters some "
                  "softmax. It is faster by a constant factor (less memory traffic), not by a lower power of L.",
                  "没有哪个内核能跳过某些（查询, 键）对还给出精确的输出：L² 个分数中的每一个都要进入 softmax。"
                  "它快的是一个常数倍（内存读写更少），而不是 L 的幂次更低。"),
            "d": ("It scales by 1/√d_k like the step-by-step path: otherwise the two outputs could not agree.",
                  "它和逐步计算的路径一样乘以 1/√d_k：否则两者的输出不可能一致。"),
        },
        hint=("compare what the memory cell asserts about the two outputs with what each path must keep in memory",
              "对比测量内存的单元格对两条路径输出的断言，以及每条路径必须在内存里保存什么"),
    ),
    "09-determiner-head": Choice(
        correct="c",
        explanations={
            "a": ("The measurement says nothing about how the model computes: it shows where one head's largest "
                  "weight lands, for one relation, on 30 short sentences written for it. BERT builds no parse tree, "
                  "and one head that matches one relation is not a grammar.",
                  "这个测量完全没有说明模型是怎么计算的：它只显示了一个头在一种关系上、在 30 个专门写的短句里，"
                  "最大的权重落在哪里。BERT 并不构造句法树，一个头对上一种关系，也不等于模型掌握了语法。"),
            "b": ("The accuracy is compared with the best rule that only counts positions (always 2 words to the "
                  "right), which gets about 0.65: head 3.1 does better than that, and is right at both distances. "
                  "Being wrong on about one pair in ten does not make it random: a random word piece would be right "
                  "about one time in ten.",
                  "这个准确率是和只数位置的最好规则（总是往右数 2 个词）比较的，那条规则约为 0.65；头 3.1 比它好，"
                  "而且在两种距离上都对。大约十对里错一对，并不说明它是随机的：随机挑一个词片，大约十次才对一次。"),
            "c": ("Right. The claim is exactly what was measured: from a determiner, head 3.1's largest weight lands on "
                  "its noun far more often than any fixed distance would, in these sentences. In every one of them the "
                  "noun of a determiner is also the first noun to its right, so the measurement cannot tell "
                  "\"attends to its own noun\" from \"attends to the next noun\": only sentences where the two "
                  "differ could.",
                  "对。结论正好就是测到的东西：在这些句子里，从限定词出发，头 3.1 的最大权重落在它的名词上，"
                  "比任何固定距离的规则都准得多。但在每一个句子里，限定词的名词同时也是它右边的第一个名词，"
                  "所以这个测量分不清“看向自己的名词”和“看向下一个名词”；要分清，需要两者不同的句子。"),
            "d": ("Nothing here measures what the sentence embedding uses: all-MiniLM-L6-v2 averages the last layer's "
                  "outputs of every token, and layer 3 is followed by two more layers that mix everything again.",
                  "这里没有任何测量涉及句子嵌入用了什么：all-MiniLM-L6-v2 对最后一层所有词元的输出取平均，"
                  "而第 3 层之后还有两层，会把所有信息再混合一遍。"),
        },
        hint=("read the claim cell again: what exactly was counted, on which sentences, against which baseline? Then "
              "ask what else, in those same sentences, would give the same count",
              "再读一遍那个断言单元格：到底数的是什么，在哪些句子上，和什么基准比较？再想一想，在这些句子里，还有什么别的规则会数出同样的结果"),
    ),
}
