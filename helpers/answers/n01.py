"""Answers to notebook 01's exercises (why self-attention)."""

from helpers.answers import Choice, Number

_L = 48           # the sequence length of the reach measurement
_FIRST_HEARD = 38  # the first position whose relative gradient norm through the GRU is >= 0.01

NUMBERS = {
    "01-gru-reach": Number(
        expected=_FIRST_HEARD,
        mistakes={
            _FIRST_HEARD - 1: ("that is the LAST position still below 1 %; the question asks for the first one at or "
                               "above it",
                               "这是最后一个仍低于 1 % 的位置；题目问的是第一个达到或超过 1 % 的位置"),
            _L - 1 - _FIRST_HEARD: ("that counts the steps back from position 47; the question asks for the "
                                    "position t itself",
                                    "这是从位置 47 往回数的步数；题目要的是位置 t 本身"),
            _L - _FIRST_HEARD: ("that is how many positions are heard at >= 1 %; the question asks for the first "
                                "position t among them",
                                "这是达到 1 % 的位置一共有几个；题目要的是其中第一个位置 t"),
            0: ("position 0 is the one the GRU hears least (its relative reach is below 1e-6): look for the first "
                "position whose value is at least 0.01, not the first position of the tensor",
                "位置 0 恰恰是 GRU 听得最弱的位置（相对可达度低于 1e-6）：要找的是第一个数值不小于 0.01 的位置，"
                "而不是张量的第一个位置"),
        },
        hint=("compare the whole tensor with 0.01 at once: the comparison gives a bool tensor, and torch.nonzero "
              "lists where it is True",
              "把整个张量一次性和 0.01 比较，得到一个布尔张量；torch.nonzero 会列出其中为 True 的位置"),
    ),
}

PREDICTIONS = {
    "01-fixed-context-positions": {
        "last": ("The first symbol can be read straight out of C at the first step. Every later symbol has to be "
                 "carried by the decoder's own 64 numbers through all the steps before it, together with everything "
                 "still to be said; and greedy decoding feeds each output back in, so an early mistake throws the "
                 "rest off. The source token read first by the encoder is therefore NOT the one lost: what is lost "
                 "is whatever the decoder must still hold when it gets there.",
                 "第一个符号在第一步就能直接从 C 中读出来。之后的每个符号，都要靠解码器自己那 64 个数，连同所有还没说出口的"
                 "内容一起，一步步带过它之前的所有步骤；而且贪心解码会把每一步的输出再喂回去，前面错一个，后面就跟着乱。"
                 "所以丢得最多的并不是编码器最早读到的那个词，而是解码器走到那里时还得记着的那些内容。"),
        "first": ("It is tempting: the encoder read the first symbol longest ago, so it should have faded most in C. "
                  "But the decoder says the first symbol first, straight from C, and it is the best copied of all; "
                  "the losses pile up later, in the decoder.",
                  "这个猜想很自然：编码器最早读到第一个符号，它在 C 里应该衰减得最厉害。可是解码器第一步就直接从 C 说出第一个"
                  "符号，它反而是复制得最好的；错误是在后面、在解码器里累积起来的。"),
        "middle": ("A U-shaped curve (the first and last symbols best) is what one might expect from 'first read, "
                   "last read'. Here the last third is clearly the worst: the decoder has to carry the end of the "
                   "sequence through all its earlier steps.",
                   "“最早读的和最后读的记得最牢”会让人猜出一条 U 形曲线。但这里最差的明显是最后三分之一：序列的结尾要被解码器"
                   "带着走过前面所有的步骤。"),
    },
}

CHOICES = {
    "01-why-gru-fades": Choice(
        correct="b",
        explanations={
            "a": ("A wider hidden state holds more, but the gradient still has to pass through one recurrent step per "
                  "position: a GRU of any width has the same chain of L − 1 − t steps from x_t to the last output.",
                  "隐藏状态更宽能存更多东西，但梯度仍然要每个位置经过一步循环：无论多宽的 GRU，从 x_t 到最后一个输出都是同样 "
                  "L − 1 − t 步的链条。"),
            "b": ("By the chain rule, ∂y_{L-1}/∂x_t is a product of L − 1 − t recurrent Jacobians (times the input "
                  "step). When they shrink vectors, as here, the product shrinks geometrically with the distance: "
                  "the straight line on the log axis. Self-attention has one step from every x_t to the output.",
                  "根据链式法则，∂y_{L-1}/∂x_t 是 L − 1 − t 个循环雅可比矩阵（再乘上输入那一步）的乘积。像这里这样每个矩阵都"
                  "会把向量缩短时，乘积就随距离按几何级数变小：对数坐标上的一条直线。自注意力从每个 x_t 到输出都只有一步。"),
            "c": ("A GRU does not add its inputs up: its gates mix the old state with the new input at every step. "
                  "The decay comes from the length of the chain, not from an overwriting sum.",
                  "GRU 并不是把输入加起来：它的门控在每一步把旧状态和新输入混合。衰减来自链条的长度，而不是来自被覆盖的求和。"),
            "d": ("Training can tune the gates so that the decay is slower, but every path from x_t still runs "
                  "through L − 1 − t steps; self-attention's flat curve, by contrast, holds untrained, by its "
                  "architecture alone.",
                  "训练可以调节门控让衰减变慢，但从 x_t 出发的每条路径仍然要经过 L − 1 − t 步；而自注意力那条平坦的曲线在"
                  "未训练时就成立，完全来自它的结构。"),
        },
        hint=("write y_{L-1} as a function of x_t through the recurrence, and apply the chain rule: how many factors "
              "does the derivative have?",
              "把 y_{L-1} 通过循环写成 x_t 的函数，再用链式法则：导数里一共有多少个因子相乘？"),
    ),
}
