"""The course map: each notebook, the section of the lecture note it covers, and what it shows.

This is the one place the map is kept. Notebook 00 prints it, each notebook's first cell quotes its section
(``> **Article:** ...`` in English, ``> **讲义章节：** ...`` in Chinese) and README's table lists it;
tests/test_course_map.py checks that they all agree. The lecture note is 【NLP251】Transformer中的Attention机制.

It also says which edition is running. The edition belongs to the notebook: each built notebook's first (hidden)
code cell sets ``COURSE_LANG`` to its own language (tools/colab_bootstrap.py), so a Chinese notebook speaks
Chinese wherever its kernel runs (notebooks/zh/, Colab, Binder, a renamed folder, nbclient) and an English one
speaks English.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

NOTE_TITLE = "【NLP251】Transformer中的Attention机制"


EDITIONS = ("en", "zh")


def edition() -> str:
    """The edition being run, ``"zh"`` or ``"en"``: ``COURSE_LANG`` (set by the notebook's first cell), else
    English. A value other than en or zh (``zh_CN``, ``ZH``) is read by its first two letters."""
    chosen = os.environ.get("COURSE_LANG", "").strip().lower()[:2]
    return chosen if chosen in EDITIONS else "en"


def say(en: str, zh: str) -> str:
    """``en`` or ``zh``, by the edition: the words on a figure (axis labels, titles, legends) in its language."""
    return zh if edition() == "zh" else en


@dataclass(frozen=True)
class Notebook:
    name: str
    section: str  # the note's own heading(s), as the English edition's first cell quotes them
    what: str  # what the learner sees, runs and checks (English)
    what_zh: str  # the same, for the Chinese edition
    section_zh: str = ""  # the heading(s) as the Chinese edition quotes them, when not the same as ``section``

    def describe(self) -> str:
        """What the notebook shows, in the edition's language."""
        return self.what_zh if edition() == "zh" else self.what

    def heading(self, lang: str | None = None) -> str:
        """The note's section this notebook covers, as the ``lang`` edition (default: the running one) quotes it."""
        lang = edition() if lang is None else lang
        return (self.section_zh or self.section) if lang == "zh" else self.section


NOTEBOOKS = [
    Notebook("00_start_here", "the whole note", "how to use the course, environment check, this map",
             "课程使用说明、环境检查、讲义与笔记本的对照", section_zh="整份讲义"),
    Notebook("01_why_self_attention", "问题一：Seq2Seq有什么缺点吗？ / 问题二：模型具有更强的上下文权重信息会怎样？",
             "what Seq2Seq lacks: a fixed context vector vs attention, measured; relations inside one sequence, "
             "self-attention vs a GRU; gradient reach of an RNN",
             "Seq2Seq 缺什么：固定上下文向量与注意力的实测对比；序列内部的关系，自注意力对 GRU；RNN 的梯度能传多远"),
    Notebook("02_qkv_toy_matrix", "1.1 Transformer中的自注意力机制运算流程",
             "Q, K, V on the 4 words × 6 columns matrix, by hand, in torch and by the helpers",
             "在 4 个词 × 6 列的小矩阵上手算 Q、K、V，再用 torch 和 helpers 验证"),
    Notebook("03_scaled_dot_product", "1.3.1 Scaled Dot-Product Attention",
             "the five steps; why √d_k and not d_k, by measurement", "五个步骤；用测量说明为什么除以 √d_k 而不是 d_k"),
    Notebook("04_masking", "1.3.1 Scaled Dot-Product Attention — 可选的掩码",
             "padding, causal and combined masks; −∞ in the softmax; the mask conventions",
             "填充掩码、因果掩码及其组合；softmax 里的 −∞；三种掩码约定"),
    Notebook("05_multi_head", "1.2.1 单头自注意力机制 / 1.2.2 多头自注意力机制 / 1.3.2 Multi-Head Attention",
             "heads as reshapes; 8 heads; equality with nn.MultiheadAttention",
             "用 reshape 拆分与拼接多头；8 个头；与 nn.MultiheadAttention 完全一致"),
    Notebook("06_encoder", "2. Attention与Transformer的关系 — 编码器（Encoder）",
             "residual, LayerNorm, feed-forward, positional encoding; post-LN vs pre-LN",
             "残差连接、层标准化、前馈网络、位置编码；Post-LN 与 Pre-LN"),
    Notebook("07_decoder", "2. Attention与Transformer的关系 — 解码器（Decoder）",
             "masked self-attention, cross-attention; the future cannot leak",
             "带掩码的自注意力、交叉注意力；未来的信息不会泄露"),
    Notebook("08_full_transformer", "2. Attention与Transformer的关系 — N×（N = 6）",
             "an N = 6 English→Chinese translator trained on the CPU; greedy vs beam; cross-attention vs the true "
             "alignment; type your own sentence",
             "在 CPU 上训练 N = 6 的英译中模型；贪心解码与束搜索；交叉注意力与真实词对齐的对比；自己输入句子"),
    Notebook("09_attention_everywhere", "1. 自注意力机制 — the list of architectures that borrow attention",
             "what attention costs against length; the fused kernel; a tiny ViT; a pretrained model's real heads "
             "on your own sentence, English and Chinese",
             "注意力的开销随长度的变化；融合内核；一个小小的 ViT；真实预训练模型的注意力头，用你自己输入的中英文句子",
             section_zh="1. 自注意力机制——开头列出的借用注意力的各种架构"),
    Notebook("10_attention_today", "beyond the note",
             "online softmax, the KV cache, MQA/GQA, RoPE, sliding windows",
             "在线 softmax、KV 缓存、MQA/GQA、RoPE、滑动窗口", section_zh="讲义之外"),
]


def notebook(name: str) -> Notebook:
    """The map's entry for notebook ``name`` (e.g. ``"03_scaled_dot_product"``)."""
    for entry in NOTEBOOKS:
        if entry.name == name:
            return entry
    raise ValueError(f"name must be one of the course's notebooks {[n.name for n in NOTEBOOKS]}; got {name!r}")


def section(name: str, lang: str = "en") -> str:
    """The note's section that notebook ``name`` covers, as the ``lang`` edition quotes it."""
    if lang not in EDITIONS:
        raise ValueError(f"lang must be one of {EDITIONS}; got {lang!r}")
    return notebook(name).heading(lang)


#: the label before the quoted section in each edition's first cell
SECTION_LABEL = {"en": "> **Article:**", "zh": "> **讲义章节：**"}
