"""Answers to notebook 08's exercises (the full Transformer)."""

from helpers.answers import Choice, Number


def _stacks(d: int, d_ff: int, *, norms: bool = True, final_norms: bool = True, biases: bool = True) -> int:
    """Parameters of nn.Transformer's two N = 6 stacks (no embeddings)."""
    attention = 4 * d * d + (4 * d if biases else 0)
    ffn = 2 * d * d_ff + (d_ff + d if biases else 0)
    norm = 2 * d if norms else 0
    final = 2 * 2 * d if final_norms else 0
    return 6 * (attention + ffn + 2 * norm) + 6 * (2 * attention + ffn + 3 * norm) + final


NUMBERS = {
    "08-big-model-parameters": Number(
        expected=_stacks(1024, 4096),
        mistakes={
            _stacks(1024, 4096, final_norms=False): (
                "nn.Transformer adds a final LayerNorm after each stack (2 × 2 × 1024 parameters): count them here",
                "nn.Transformer 在每个堆叠的最后还各加了一个层标准化（2 × 2 × 1024 个参数）：这里要算上"),
            _stacks(1024, 4096, norms=False, final_norms=False): (
                "the LayerNorms have parameters too: a gain and a bias of size d_model each, one per sub-layer",
                "层标准化也有参数：每个子层后面一个，各有大小为 d_model 的缩放和偏置"),
            _stacks(1024, 4096, norms=False): (
                "the LayerNorm of every sub-layer is missing (2 per encoder layer, 3 per decoder layer)",
                "少算了每个子层的层标准化（每个编码器层 2 个，每个解码器层 3 个）"),
            _stacks(1024, 4096, biases=False): (
                "the biases of the linear maps are missing", "少算了各个线性层的偏置"),
            _stacks(512, 2048): (
                "that is the base model (d_model = 512, d_ff = 2048); use the big model's sizes",
                "这是 base 模型（d_model = 512，d_ff = 2048）的参数量；请换成 big 模型的尺寸"),
            6 * (4 * 1024 * 1024 + 4 * 1024 + 2 * 1024 * 4096 + 4096 + 1024 + 2 * 2 * 1024)
            + 6 * (4 * 1024 * 1024 + 4 * 1024 + 2 * 1024 * 4096 + 4096 + 1024 + 3 * 2 * 1024) + 4 * 1024: (
                "a decoder layer has TWO attention blocks: masked self-attention and cross-attention",
                "一个解码器层有两个注意力块：带掩码的自注意力和交叉注意力"),
        },
        hint=("the base model's formula with d_model and d_ff replaced; the number of heads changes nothing, since "
              "the heads share the four d_model × d_model projections",
              "把 base 模型公式里的 d_model 和 d_ff 换掉就行；头的个数不影响参数量，因为所有头共用四个 d_model × d_model 的投影矩阵"),
    ),
    "08-attention-matrices": Number(
        expected=3 * 6 * 4,
        mistakes={
            2 * 6 * 4: ("there are three kinds of attention: encoder self-attention, decoder self-attention and "
                        "cross-attention",
                        "注意力有三种：编码器自注意力、解码器自注意力和交叉注意力"),
            6 * 4: ("that is one kind only; count all three (encoder self, decoder self, cross)",
                    "这只是一种注意力；三种都要数（编码器自注意力、解码器自注意力、交叉注意力）"),
            3 * 6: ("each head computes its own weight matrix: multiply by the number of heads",
                    "每个头都会算出自己的权重矩阵：还要乘以头的个数"),
            3 * 4: ("each of the 6 layers has its own attention: multiply by the number of layers",
                    "6 层中的每一层都有自己的注意力：还要乘以层数"),
            3 * 6 * 4 * 6: ("a weight matrix is a whole (L_q, L_k) table, not one row per query",
                            "一个权重矩阵是整张 (L_q, L_k) 的表，不是每个查询一行"),
        },
        hint=("the shapes printed above are (layers, batch, heads, L_q, L_k): one matrix per layer, head and kind",
              "上面打印的形状是 (层, 批次, 头, L_q, L_k)：每一层、每个头、每种注意力各一个矩阵"),
    ),
}

PREDICTIONS = {
    "08-change-one-word": {
        "one": ("The memory does change at every source position, but a changed vector is not a changed decision. "
                "At each step the decoder's choice depends mostly on the source word it is translating now (the "
                "cross-attention measured above peaks there), so only the step that translates cat -> dog picks "
                "another token; the other steps still find the same words in the memory and choose as before.",
                "记忆确实在每个源位置都变了，但向量变了不等于决策变了。解码器每一步的选择主要取决于它此刻正在翻译的那个源词"
                "（上面测到的交叉注意力峰值就落在那里），所以只有翻译 cat -> dog 的那一步换了词元；其他各步在记忆里找到的仍然是"
                "同样的词，选择也和原来一样。"),
        "several": ("Here more than one token changed. The memory changes everywhere, and this model's later steps "
                    "also read the token it produced before, so one different word can change the words after it: "
                    "print before and after to see which.",
                    "这里不止一个词元变了。记忆在所有位置都变了，而且这个模型后面的步骤还会读它之前产生的词元，"
                    "所以一个词不同，后面的词也可能跟着变：把 before 和 after 打印出来，找出是哪些。"),
        "none": ("Here the output did not change: the model translated dog as it translated cat. It does know both "
                 "words (they are in its vocabulary); print before and after to see the mistake.",
                 "这里输出没有变：模型把 dog 译成了和 cat 一样的词。这两个词它都认识（都在词表里）；"
                 "把 before 和 after 打印出来看看错在哪里。"),
    },
}

CHOICES = {
    "08-which-memory": Choice(
        correct="a",
        explanations={
            "a": ("The encoder runs all N = 6 layers (and nn.Transformer's final LayerNorm) once; that final output "
                  "is the memory, and every decoder layer's cross-attention takes its keys and values from it. "
                  "Greedy decoding even runs the encoder only once and reuses the memory at every step.",
                  "编码器先把 N = 6 层（以及 nn.Transformer 最后的层标准化）完整地跑一遍；这个最终输出就是记忆，"
                  "每个解码器层的交叉注意力都从它取键和值。贪心解码甚至只运行一次编码器，在每一步都重复使用这个记忆。"),
            "b": ("A layer-by-layer pairing is not the paper's design: the memory variable is computed completely "
                  "before the decoder loop starts, and the same tensor is passed to all 6 decoder layers.",
                  "逐层配对不是论文的设计：`memory` 在解码器循环开始之前就已经完整算好，传给 6 个解码器层的是同一个张量。"),
            "c": ("The embeddings are only where the encoder starts (memory = src before the loop); the loop then "
                  "replaces memory by the output of each encoder layer.",
                  "嵌入只是编码器的起点（循环之前 memory = src）；循环随后用每个编码器层的输出替换 memory。"),
            "d": ("The previous decoder layer's output is the decoder layer's own input y (its queries); the keys "
                  "and values of cross-attention come from the encoder.",
                  "上一个解码器层的输出是这一层自己的输入 y（提供查询）；交叉注意力的键和值来自编码器。"),
        },
        hint=("read the loop at the top of the notebook: when is memory last assigned, and what is passed to "
              "each decoder layer?",
              "读一读笔记本开头的循环：memory 最后一次被赋值是在什么时候？传给每个解码器层的又是什么？"),
    ),
}
