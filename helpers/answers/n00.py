"""Answers to notebook 00's self-test: five questions on what the course assumes (issue 33, point 5).

Each wrong choice's explanation says what is wrong and where to learn the idea: PyTorch's own documentation
("Broadcasting semantics", "A Gentle Introduction to torch.autograd", "Build the Neural Network", the nn.GRU
reference) and d2l.ai's chapters (3.4 softmax regression, 10.2 GRU), all of which have Chinese editions.
"""

from helpers.answers import Choice

WHERE_BROADCASTING = ("learn it in PyTorch's documentation, 'Broadcasting semantics'",
                      "可以读 PyTorch 文档的 “Broadcasting semantics”（广播语义）一节")
WHERE_AUTOGRAD = ("learn it in PyTorch's tutorial 'A Gentle Introduction to torch.autograd'",
                  "可以读 PyTorch 教程 “A Gentle Introduction to torch.autograd”")
WHERE_MODULE = ("learn it in PyTorch's tutorial 'Build the Neural Network' (nn.Module and nn.Parameter)",
                "可以读 PyTorch 教程 “Build the Neural Network”，看 nn.Module 和 nn.Parameter")
WHERE_SOFTMAX = ("learn it in d2l.ai (Dive into Deep Learning), section 3.4, softmax regression",
                 "可以读《动手学深度学习》3.4 节 softmax 回归")
WHERE_GRU = ("learn it in d2l.ai (Dive into Deep Learning), section 10.2 on the GRU, and the nn.GRU reference",
             "可以读《动手学深度学习》10.2 节门控循环单元（GRU），以及 nn.GRU 的文档")


def _with(text: tuple[str, str], where: tuple[str, str]) -> tuple[str, str]:
    return f"{text[0]}; {where[0]}.", f"{text[1]}。{where[1]}。"


CHOICES = {
    "00-prereq-broadcasting": Choice(
        correct="a",
        explanations={
            "a": _with(("Shapes line up from the right: (3, 1) and (4,) become (3, 4), each size-1 axis stretched",
                        "形状从右往左对齐：(3, 1) 和 (4,) 得到 (3, 4)，长度为 1 的轴被拉伸"), WHERE_BROADCASTING),
            "b": _with(("The result takes the larger size on every axis, so it cannot stay (3, 1)",
                        "结果在每个轴上取较大的那个长度，所以不会还是 (3, 1)"), WHERE_BROADCASTING),
            "c": _with(("No error: an axis of size 1, or a missing one, broadcasts against any size",
                        "不会报错：长度为 1 的轴，或者缺少的轴，可以和任意长度对齐"), WHERE_BROADCASTING),
            "d": _with(("Axes are matched from the right, so b's 4 meets a's last axis, the 1: the 4 comes last",
                        "轴是从右边开始对齐的，b 的 4 对上 a 的最后一个轴（长度 1），所以 4 在最后"),
                       WHERE_BROADCASTING),
        },
    ),
    "00-prereq-backward": Choice(
        correct="b",
        explanations={
            "a": _with(("8 is the value of y = x³ at x = 2, not its derivative",
                        "8 是 y = x³ 在 x = 2 处的值，不是导数"), WHERE_AUTOGRAD),
            "b": _with(("dy/dx = 3x² = 12 at x = 2, and backward() stores it in x.grad",
                        "dy/dx = 3x²，在 x = 2 处等于 12，backward() 把它存进 x.grad"), WHERE_AUTOGRAD),
            "c": _with(("6 would be 3x; the derivative of x³ is 3x²", "6 是 3x；x³ 的导数是 3x²"), WHERE_AUTOGRAD),
            "d": _with(("x was made with requires_grad=True, so backward() fills x.grad",
                        "x 创建时设了 requires_grad=True，所以 backward() 会填好 x.grad"), WHERE_AUTOGRAD),
        },
    ),
    "00-prereq-module": Choice(
        correct="c",
        explanations={
            "a": _with(("A plain tensor attribute is not a parameter: only nn.Parameter (or a sub-module's) counts",
                        "普通张量属性不算参数：只有 nn.Parameter（或子模块里的参数）才会被登记"), WHERE_MODULE),
            "b": _with(("parameters() yields nothing here: self.w is a plain tensor, so nn.Module does not register it",
                        "这里 parameters() 什么也不会给出：self.w 只是普通张量，nn.Module 不会登记它"), WHERE_MODULE),
            "c": _with(("A plain tensor is not registered; wrap it, self.w = nn.Parameter(torch.randn(3, 3)), and the "
                        "optimiser sees it",
                        "普通张量不会被登记；写成 self.w = nn.Parameter(torch.randn(3, 3))，优化器才能看到它"),
                       WHERE_MODULE),
            "d": _with(("Nothing fails: the module is built, it just has no parameters",
                        "不会报错：模块能建好，只是没有参数"), WHERE_MODULE),
        },
    ),
    "00-prereq-softmax": Choice(
        correct="b",
        explanations={
            "a": _with(("Those are e^s before the division: softmax divides each e^s by their sum, so the weights "
                        "sum to 1",
                        "这是还没做除法的 e^s：softmax 要把每个 e^s 除以它们的和，权重加起来才等于 1"), WHERE_SOFTMAX),
            "b": _with(("e^0 = 1 and e^(ln 3) = 3, so the weights are 1/4 and 3/4",
                        "e^0 = 1，e^(ln 3) = 3，所以权重是 1/4 和 3/4"), WHERE_SOFTMAX),
            "c": _with(("Equal weights need equal scores; here one score is larger",
                        "只有分数相等时权重才相等；这里有一个分数更大"), WHERE_SOFTMAX),
            "d": _with(("That divides the scores by their sum; softmax divides the exponentials e^s by theirs",
                        "这是把分数除以分数之和；softmax 是把 e^s 除以所有 e^s 之和"), WHERE_SOFTMAX),
        },
    ),
    "00-prereq-gru-state": Choice(
        correct="b",
        explanations={
            "a": _with(("(2, 5, 16) is the output, one state per time step; h is the last state only",
                        "(2, 5, 16) 是 output，每个时间步一个状态；h 只是最后一步的状态"), WHERE_GRU),
            "b": _with(("h is (num_layers, batch, hidden) = (1, 2, 16), even with batch_first=True",
                        "h 的形状是 (num_layers, batch, hidden) = (1, 2, 16)，即使设了 batch_first=True 也一样"),
                       WHERE_GRU),
            "c": _with(("h keeps a leading layer axis, (num_layers, batch, hidden)",
                        "h 前面还有一个层数的轴：(num_layers, batch, hidden)"), WHERE_GRU),
            "d": _with(("h does not keep the 5 time steps: it is the state after the last one",
                        "h 不保留 5 个时间步，它是最后一步之后的状态"), WHERE_GRU),
        },
    ),
}
