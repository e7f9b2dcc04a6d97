"""The Chinese edition's mechanical style rules (docs/zh/style.md): banned variants, spaces, and colons.

The zh text checked is every ``+++ {"lang": "zh"}`` prose cell of notebooks/src/*.md (read with jupytext, as
tools/build_notebooks.py reads a source) and every docs/zh/*.md. What is not prose is taken out first: fenced
code, inline code and MyST roles (`` {doc}`x` ``), math ($...$, $$...$$), URLs (a link keeps its label), HTML
tags, a table's column headed 英文 (the glossary's English terms), and the lecture note's own words where the
course quotes them (its title, its section headings and the few terms in NOTE_WORDS): the note writes
"Transformer中的Attention机制" without spaces, and a quotation is not rewritten. The note itself is not in the
repository, so the list is here. A "token" inside full-width parentheses that hold no Chinese is the English of a
term at its first use (词元（token）, 词元准确率（token accuracy）) and allowed; anywhere else it is 词元.

One test per file and per kind of rule, so that a failure names the file; each message names the cell (the
line in the .md file where the cell starts, and the line inside it) or the line of a doc, the text found and what
to write instead. The colon rule is over all the zh prose together (style.md, 二、句子).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.md"))
DOCS_ZH = sorted((ROOT / "docs" / "zh").glob("*.md"))
# style.md is the rule book: it names the banned forms in its "不要写" columns, so it is spared that one check
RULE_BOOK = ROOT / "docs" / "zh" / "style.md"
MAX_COLON_RATIO = 0.45  # "：" per "。" over all zh prose (style.md: a colon only where it introduces something)

# The note's title, section headings and terms, as the course quotes them (spaces may differ from the note's).
NOTE_WORDS = [
    "【NLP251】Transformer中的Attention机制",
    "问题一：Seq2Seq有什么缺点吗？",
    "问题二：模型具有更强的上下文权重信息会怎样？",
    "1.1 Transformer中的自注意力机制运算流程",
    "1.3.1 Scaled Dot-Product Attention",
    "1.3.2 Multi-Head Attention",
    "2.Attention与Transformer的关系",
    "黄色圈C",  # the context vector C of the note's figure
    "h个头",
    "N×（N = 6）",
    "序列A的样本之于序列B的重要程度",  # 问题一答
    "序列A的样本之于序列B的特征信息",
    "序列A各token之间的信息",
]
ENGLISH_COLUMN = {"英文", "English"}  # a table's column of English terms (the glossary's) is data, not prose

CJK = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
LATIN = r"[A-Za-z0-9]"
CODE = "\x00"  # what an inline code span or a formula becomes: neither CJK nor Latin

# (pattern, what to write instead). Patterns run on the prose with code, math and URLs taken out.
BANNED = [
    (re.compile(r"第\s*[0-9０-９]+\s*(?:个笔记本|本)"), "笔记本 NN"),
    (re.compile(r"(?<![A-Za-z])(?:post|pre)-(?:LN|ln|Ln)(?![A-Za-z])|(?<![A-Za-z])(?:Post|Pre)-(?:ln|Ln)(?![A-Za-z])"),
     "Post-LN / Pre-LN"),
    (re.compile(r"找错误"), "找错"),
    (re.compile(r"参考文献"), "参考资料"),
    (re.compile(r"层归一化"), "层标准化"),
    (re.compile(r"读真话"), "读入真实的前缀 / 以参考译文作输入"),
    (re.compile(r"合上了"), "对上了 / 吻合"),
    (re.compile(r"机械性"), "机制上的 / 必然的"),
    (re.compile(r"没有意思"), "没有意义 / 不代表任何内容"),
    (re.compile(r"GRU\s*读者"), "GRU 读取器"),
    # a bare "token": allowed only as the English of a term at its first use, 词元（token）, 词元准确率（token
    # accuracy）: inside full-width parentheses that hold no Chinese (GLOSS)
    (TOKEN := re.compile(r"(?<![A-Za-z_])[Tt]okens?(?![A-Za-z_])"), "词元（第一次出现写“词元（token）”）"),
]
GLOSS = re.compile(r"（[^（）\n]*）")
MISSING_SPACE = [
    # a lookahead, so that both sides of one letter (中a中) or of one code span are found
    (re.compile(f"(?=({CJK}{LATIN}|{LATIN}{CJK}))"), "a space between the Chinese and the Latin letter or digit"),
    (re.compile(f"(?=({CJK}{CODE}|{CODE}{CJK}))"), "a space between the Chinese and the inline code or formula"),
]


@dataclass
class Text:
    """One piece of zh prose: where it is, its lines (code and math taken out), where its first line is."""

    where: str  # "notebooks/src/03_x.md, cell 14 (line 120)" or "docs/zh/glossary.md"
    lines: list[str]
    first_line: int  # the line number of lines[0] in the file
    in_cell: bool

    def place(self, index: int) -> str:
        if self.in_cell:
            return f"{self.where}, line {index + 1} of the cell (file line {self.first_line + index})"
        return f"{self.where}:{self.first_line + index}"


def _note_quotes() -> list[re.Pattern]:
    """Patterns for the note's headings, whatever the spaces between their characters."""
    def spaced(text: str) -> re.Pattern:
        return re.compile(r"\s*".join(re.escape(ch) for ch in text if not ch.isspace()))
    return [spaced(h) for h in NOTE_WORDS]


NOTE_QUOTES = _note_quotes()


def _blank(match: re.Match, keep: str = "") -> str:
    """The match replaced by ``keep``, with its newlines kept so that line numbers stay right."""
    return keep + "\n" * match.group(0).count("\n")


def prose(text: str) -> str:
    """``text`` with everything that is not prose taken out (see the module's docstring), lines kept."""
    # fenced code (``` or ~~~; a MyST directive other than code keeps its body, without its :option: lines)
    def fence(match: re.Match) -> str:
        info, body = match.group(2).strip(), match.group(3)
        if info.startswith("{") and not re.match(r"\{(?:code-cell|code|code-block|math|eval-rst)\}", info):
            return "\n" + re.sub(r"(?m)^:[\w-]+:.*$", "", body) + "\n"
        return _blank(match)
    text = re.sub(r"(?ms)^(`{3,}|~{3,})(.*?)$\n(.*?)^\1[ \t]*$", fence, text)
    text = re.sub(r"(?s)<!--.*?-->", _blank, text)
    text = re.sub(r"(?s)\$\$.+?\$\$", _blank, text)
    text = re.sub(r"(?:\{[\w:-]+\})?(`+)(.+?)\1", lambda m: _blank(m, CODE), text)  # inline code, MyST roles
    text = re.sub(r"(?<![\\$])\$(?!\s)([^$\n]+?)(?<![\s\\])\$", CODE, text)  # inline math
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", text)  # an image: its alt text is not prose
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link keeps its label
    text = re.sub(r"\[([^\]]*)\]\[[^\]]*\]", r"\1", text)
    text = re.sub(r"</?[A-Za-z][^>\n]*>", " ", text)  # HTML tags, autolinks
    text = re.sub(r"https?://\S+", " ", text)
    for pattern in NOTE_QUOTES:
        text = pattern.sub(" ", text)
    return "\n".join(without_english_columns(text.split("\n")))


def without_english_columns(lines: list[str]) -> list[str]:
    """Markdown table rows with the cells of an English column (ENGLISH_COLUMN) emptied."""
    out, blank = [], set()
    for number, line in enumerate(lines):
        if not line.lstrip().startswith("|"):
            blank = set()
        elif number + 1 < len(lines) and re.fullmatch(r"\s*\|(?:\s*:?-+:?\s*\|)+\s*", lines[number + 1]):
            blank = {i for i, cell in enumerate(line.split("|")) if cell.strip() in ENGLISH_COLUMN}  # a header
        elif blank:
            line = "|".join(" " if i in blank else cell for i, cell in enumerate(line.split("|")))
        out.append(line)
    return out


def notebook_texts(path: Path) -> list[Text]:
    """The zh prose cells of one source, each with the line of the .md file where its text starts."""
    raw = path.read_text(encoding="utf-8")
    notebook = jupytext.read(path, fmt="md:myst")
    texts, position = [], 0
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "markdown" or cell.metadata.get("lang") != "zh":
            continue
        found = raw.find(cell.source, position) if cell.source else -1
        if found >= 0:
            position = found + len(cell.source)
        line = raw.count("\n", 0, found) + 1 if found >= 0 else 0
        where = f"{path.relative_to(ROOT).as_posix()}, cell {index}" + (f" (line {line})" if line else "")
        texts.append(Text(where, prose(cell.source).split("\n"), line, True))
    return texts


GENERATED = re.compile(r"<!-- [^>]*generated by .*?<!-- end of [^>]*-->", re.DOTALL)  # e.g. teaching.md's table


def doc_texts(path: Path) -> list[Text]:
    """A doc's prose, without a block generated from the checkers' messages (their own test keeps those)."""
    text = GENERATED.sub(lambda m: "\n" * m.group(0).count("\n"), path.read_text(encoding="utf-8"))
    return [Text(path.relative_to(ROOT).as_posix(), prose(text).split("\n"), 1, False)]


def texts_of(path: Path) -> list[Text]:
    return doc_texts(path) if path.parent.name == "zh" and path.parent.parent.name == "docs" else notebook_texts(path)


def failures(texts: list[Text], rules: list[tuple[re.Pattern, str]]) -> list[str]:
    found = []
    for text in texts:
        for index, line in enumerate(text.lines):
            glossed = GLOSS.sub(lambda m: m.group(0) if re.search(CJK, m.group(0)) else " " * len(m.group(0)), line)
            for pattern, instead in rules:
                for match in pattern.finditer(glossed if pattern is TOKEN else line):
                    group = 1 if pattern.groups else 0
                    shown = line[max(0, match.start(group) - 8):match.end(group) + 8].replace(CODE, "`…`").strip()
                    found.append(f"{text.place(index)}: {match.group(group).replace(CODE, '`…`')!r} "
                                 f"(in “{shown}”) -> {instead}")
    return found


ALL = SOURCES + DOCS_ZH


def ids(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("path", [p for p in ALL if p != RULE_BOOK], ids=ids)
def test_no_banned_variant(path):
    found = failures(texts_of(path), BANNED)
    if found:
        pytest.fail(f"{len(found)} banned form(s) (docs/zh/style.md):\n" + "\n".join(found), pytrace=False)


@pytest.mark.parametrize("path", ALL, ids=ids)
def test_a_space_between_chinese_and_latin(path):
    found = failures(texts_of(path), MISSING_SPACE)
    if found:
        pytest.fail(f"{len(found)} missing space(s) (docs/zh/style.md, 三):\n" + "\n".join(found), pytrace=False)


def test_colons_are_few_against_full_stops():
    colons = stops = 0
    per_file = []
    for path in ALL:
        text = "\n".join("\n".join(t.lines) for t in texts_of(path))
        c, s = text.count("："), text.count("。")
        colons, stops = colons + c, stops + s
        per_file.append(f"{ids(path)}: {c} ： / {s} 。" + (f" = {c / s:.2f}" if s else ""))
    if not stops or colons / stops > MAX_COLON_RATIO:
        pytest.fail(f"all zh prose: {colons} ： for {stops} 。 = {colons / max(stops, 1):.2f} > {MAX_COLON_RATIO} "
                    "(docs/zh/style.md, 二: use full sentences, at most one colon a paragraph)\n" + "\n".join(per_file),
                    pytrace=False)


def test_the_checks_find_what_they_should_and_spare_code_math_and_quotes():
    text = prose("见第 06 本和 post-LN。用`torch.bool`的 token，$d_k$ 与 [笔记本 03](../03_x.ipynb) 。\n"
                 "```python\n找错误 = 'token'\n```\n"
                 "【NLP251】Transformer中的Attention机制，词元（token），准确率（token accuracy）\n"
                 "讲义说“将注意力分数除以 dk”，并写了“黄色圈C”。共4个词。\n\n"
                 "| 术语 | 英文 |\n|---|---|\n| 词元 | token |")
    lines = text.split("\n")
    banned = failures([Text("t", lines, 1, False)], BANNED)
    assert [f.split(": ", 1)[1].split(" ")[0] for f in banned] == ["'第", "'post-LN'", "'token'"]
    spaces = failures([Text("t", lines, 1, False)], MISSING_SPACE)
    assert len(spaces) == 4  # 用`…`, `…`的, 共4, 4个; the note's title and the quotes of the note are spared
    assert "找错误" not in text and "tokenizer" not in prose("`tokenizer`")
