"""Answers to notebook 07's exercises (the decoder)."""

from helpers.answers import Choice

PREDICTIONS = {
    "07-change-the-first-token": {
        "all": ("Every later position may attend to position 0 (the causal mask only hides what comes AFTER a "
                "position), so a change at position 0 reaches every output. Only changes later in the sequence are "
                "hidden from earlier positions.",
                "后面的每个位置都可以关注位置 0（因果掩码只遮住一个位置之后的内容），所以位置 0 的改动会传到每个输出。"
                "只有序列后面的改动才对前面的位置不可见。"),
        "first": ("Only position 0 would change if the other positions could not see it; but the causal mask lets "
                  "position i see 0..i, so they all see position 0.",
                  "只有在其他位置看不到位置 0 时才只会改变位置 0；但因果掩码允许位置 i 看到 0..i，所以它们都能看到位置 0。"),
        "none": ("The causal mask hides the future, not the past: position 0 is in everyone's past.",
                 "因果掩码遮住的是未来而不是过去：位置 0 是每个位置的过去。"),
    },
}

CHOICES = {
    "07-what-is-cross": Choice(
        correct="b",
        explanations={
            "a": ("The formula is the same softmax(QKᵀ/√d_k)V; only where Q, K and V come from differs.",
                  "公式完全相同，都是 softmax(QKᵀ/√d_k)V；不同的只是 Q、K、V 的来源。"),
            "b": ("Queries from the decoder ask; keys and values from the encoder's output answer: each target "
                  "position reads the whole source sentence. That is the 'cross' between the two sequences.",
                  "查询来自解码器，负责“提问”；键和值来自编码器的输出，负责“回答”：每个目标位置都能读整句源语言。"
                  "这就是两个序列之间的“交叉”。"),
            "c": ("That is the planted bug of exercise 3: the output would then have the source's length.",
                  "这正是练习 3 里埋下的错误：那样输出的长度会变成源句的长度。"),
            "d": ("Cross-attention needs no causal mask: the whole source sentence is known before decoding starts "
                  "(only a padding mask on the source keys).",
                  "交叉注意力不需要因果掩码：解码开始前整句源语言都已知（只需要在源语言的键上加填充掩码）。"),
        },
        hint=("compare the shapes: which side's length does the output of this block have?",
              "比较形状：这个模块输出的长度是哪一方的长度？"),
    ),
}
