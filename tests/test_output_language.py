"""Each edition speaks its own language in everything it prints, wherever it runs.

The stored outputs are what strict nbval compares every run with, so reading them reads what each notebook prints.
A Chinese notebook must print no English sentence, an English notebook no Chinese one. What may stay in the other
language is small and named here: code listings (``helpers.bugs.show``), the translator's data (English input
sentences, Chinese tokens), the note's own headings and title. Then two notebooks are run where the folder says
the opposite of the notebook: the edition is the notebook's own.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from helpers import course
from helpers.translation import chinese_tokens, english_words

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
NAMES = [n.name for n in course.NOTEBOOKS]

ANSI = re.compile(r"\x1b\[[0-9;]*m")
ENGLISH_RUN = re.compile(r"[A-Za-z][A-Za-z'’-]+(?:[ ,;:]+[A-Za-z][A-Za-z'’-]*){2,}")  # three or more words
CJK_RUN = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]+")
CODE_LISTING = re.compile(r"^\s*\d+ \| ")  # helpers.bugs.show: a planted bug's source, line by line
TENSOR = re.compile(r"tensor\([^()]*(?:\([^()]*\)[^()]*)*\)|\b(?:nan|inf)\b")  # reprs: nan, inf are numbers
SHAPE_NAMES = re.compile(r"\((?:[A-Za-z_]\w*|\d+)(?:, ?(?:[A-Za-z_]\w*|\d+))+\)")  # (batch, heads, L_q, L_k)
ENGLISH_DATA = english_words() | {"i"}  # the translator's English (lower case; "I" is the pronoun)
CHINESE_DATA = "".join(chinese_tokens()) + "。？∅"


def output_lines(nb: nbformat.NotebookNode):
    """(cell index, line) of every text a code cell shows: streams, text/plain, errors."""
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                text = output.text
            elif output.output_type in ("execute_result", "display_data"):
                text = output.get("data", {}).get("text/plain", "")
            elif output.output_type == "error":
                text = "\n".join(output.traceback)
            else:
                continue
            for line in ANSI.sub("", text).splitlines():
                yield index, line


def _note_text() -> set[str]:
    """The note's own words: its title and the headings the course map quotes, in both editions."""
    texts = {course.NOTE_TITLE}
    for entry in course.NOTEBOOKS:
        texts |= {course.section(entry.name, "en"), course.section(entry.name, "zh")}
    return texts


NOTE_TEXT = sorted(_note_text(), key=len, reverse=True)  # longest first: a heading before its prefix


def english_sentences(line: str) -> list[str]:
    """The runs of three or more English words in ``line`` that are neither code, the note's headings nor data."""
    if CODE_LISTING.match(line):
        return []
    for text in NOTE_TEXT:
        line = line.replace(text, " ")
    line = SHAPE_NAMES.sub(" ", TENSOR.sub(" ", line))
    found = []
    for run in ENGLISH_RUN.findall(line):
        words = re.findall(r"[A-Za-z'’]+", run)
        if all(w.lower() in ENGLISH_DATA for w in words):
            continue  # a sentence of the translator's language: data, not the course speaking
        found.append(run)
    return found


def chinese_text(line: str) -> list[str]:
    """The runs of Chinese in ``line`` that are neither the note's words nor the translator's tokens."""
    for text in NOTE_TEXT:
        line = line.replace(text, " ")
    return [run for run in CJK_RUN.findall(line) if set(run) - set(CHINESE_DATA)]


def other_language(nb: nbformat.NotebookNode, lang: str) -> list[str]:
    find = english_sentences if lang == "zh" else chinese_text
    return [f"cell {i}: {line.strip()[:140]}" for i, line in output_lines(nb) if find(line)]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", NAMES)
def test_stored_outputs_speak_the_editions_language(name, lang):
    path = NOTEBOOKS / (f"{name}.ipynb" if lang == "en" else f"zh/{name}.ipynb")
    found = other_language(nbformat.read(path, as_version=4), lang)
    assert not found, f"{path.relative_to(ROOT)} prints the other language:\n" + "\n".join(found)


@pytest.mark.parametrize(("line", "lang", "flagged"), [
    ("weight on PAD keys, without mask: True", "zh", True),
    ("不加掩码时，PAD 键上的权重：True", "zh", False),
    (" 3 |     key = value = decoder_states  # (batch, L, d)", "zh", False),
    ("  The small cat sees the white car in the garden at weekends.", "zh", False),
    ("inline FFN = helpers.FeedForward; it acts on each position", "zh", True),
    ("03_scaled_dot_product      1.3.1 Scaled Dot-Product Attention", "zh", False),
    ("i drink tea at home every morning . → 我每天早上在家喝茶。", "en", False),
    ("实测：注意力更好", "en", True),
    ("tensor([0.200, 0.200])", "zh", False),
    ("直接做 softmax：tensor([nan, nan, nan, nan, nan])", "zh", False),
    ("cross         (6, 1, 4, 12, 11)  (layers, batch, heads, L_q, L_k)", "zh", False),
])
def test_the_detector_tells_prose_from_code_and_data(line, lang, flagged):
    find = english_sentences if lang == "zh" else chinese_text
    assert bool(find(line)) is flagged


@pytest.mark.parametrize(("lang", "name", "folder", "env_lang"), [
    ("zh", "04_masking", "content", None),  # where Colab puts a notebook; no COURSE_LANG in the environment
    ("en", "03_scaled_dot_product", "zh", "zh"),  # an English notebook in a folder named zh, COURSE_LANG=zh set
])
def test_the_edition_is_the_notebooks_wherever_it_runs(tmp_path, monkeypatch, lang, name, folder, env_lang):
    source = NOTEBOOKS / (f"{name}.ipynb" if lang == "en" else f"zh/{name}.ipynb")
    where = tmp_path / folder
    where.mkdir()
    shutil.copy(source, where / source.name)
    nb = nbformat.read(where / source.name, as_version=4)
    if env_lang is None:
        monkeypatch.delenv("COURSE_LANG", raising=False)
    else:
        monkeypatch.setenv("COURSE_LANG", env_lang)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(where)}}).execute()
    found = other_language(nb, lang)
    assert not found, f"{lang}/{name} run in {folder}/ prints the other language:\n" + "\n".join(found)
    unanswered = [line for _, line in output_lines(nb) if line.startswith("[ ] ")]
    assert unanswered, "the exercises' checkers spoke"
    said = "还没有作答" if lang == "zh" else "not answered yet"
    assert all(said in line for line in unanswered), unanswered
