"""The course's own Sphinx extension: pages made from the notebooks and docs/, and a build that stays offline.

- ``read_notebook``: myst-nb's reader for .ipynb. A widget output (live only in a kernel) becomes a short note;
  every other stored output is kept as it is.
- ``source-read``: the article-section map (map.md) gets its table from each notebook's title and
  "> **Article:**" line; each page of DOC_PAGES (glossary, corrections, conventions, and their Chinese twins
  zh/glossary, zh/corrections, zh/conventions) takes its docs/ file when that exists (its links to ../notebooks/
  and to the other docs pages are rewritten for the site); index.md lists the Chinese edition when
  notebooks/zh/ has notebooks. A Chinese notebook's links to docs/glossary.md (or corrections, conventions) go to
  the Chinese page when docs/zh/ has it.
- ``build-finished``: fails the build when a page or style sheet loads anything over http(s).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
from filelock import FileLock
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
DOCS = ROOT / "docs"
BUILD = ROOT / "build"
# `make site` runs exactly this: warnings are errors, the doctree cache stays outside the site.
SPHINX_ARGS = ["-m", "sphinx", "-b", "html", "-q", "-W", "--keep-going", "-d", str(BUILD / ".doctrees"),
               str(ROOT / "site"), str(BUILD / "site")]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_NOTE = (
    '<p class="course-widget-note"><strong>Interactive widget.</strong> It runs in a live kernel: open this '
    "notebook in JupyterLab (<code>make lab</code>), Colab or Binder to move its controls. The static figure "
    "above shows its default state.</p>"
)
MARKERS = {"map": "<!-- course-site: map table -->", "index": "<!-- course-site: chinese edition -->"}
# An asset that the browser would fetch: src=, a <link href=> (style sheet, icon, preload), a CSS url().
EXTERNAL_ASSET = re.compile(
    r"""(?:\bsrc\s*=\s*["']?\s*(?:https?:)?//|<link\b[^>]*\bhref\s*=\s*["']?\s*(?:https?:)?//|"""
    r"""url\(\s*["']?\s*(?:https?:)?//|@import\s+["']?\s*(?:https?:)?//)""",
    re.IGNORECASE,
)


# "[中文版](zh/03_x.ipynb)" or "[English edition](../03_x.ipynb)" at a notebook's top (tools/build_notebooks.py)
EDITION_LINK = re.compile(r"\[([^\]]+)\]\(((?:zh/|\.\./)[0-9]{2}_\w+)\.ipynb\)")


# The site's pages made from docs/: page name -> its file under docs/ (a stub site/<page>.md stands in until then).
DOC_PAGES = {name: f"{name}.md" for name in (
    "glossary", "corrections", "conventions", "teaching", "zh/glossary", "zh/corrections", "zh/conventions",
    "zh/teaching")}
DOCS_LINK = re.compile(r"\[([^\]]*)\]\((?:\.\./)+docs/((?:zh/)?(?:glossary|corrections|conventions|teaching))\.md\)")


def course_notebooks(edition: str = "") -> list[Path]:
    """notebooks/NN_*.ipynb (``edition`` "") or notebooks/<edition>/NN_*.ipynb, in course (file-name) order."""
    return sorted((NOTEBOOKS / edition).glob("[0-9][0-9]_*.ipynb"))


def read_notebook(text: str) -> nbformat.NotebookNode:
    """The notebook in ``text`` with each widget output replaced by ``WIDGET_NOTE`` (shown once per cell)."""
    notebook = nbformat.reads(text, as_version=4)
    edition = notebook.metadata.get("course", {}).get("edition", "en")
    for cell in notebook.cells:
        outputs, noted = [], False
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW in data and "data-course-explorer" in str(data.get("text/html", "")):
                # a client-side explorer (helpers.explorer): its HTML carries its data and module and runs on
                # the page, with no kernel; drop the widget view, keep the live HTML, no note
                outputs.append(nbformat.v4.new_output("display_data", data={"text/html": data["text/html"]}))
                continue
            if WIDGET_VIEW in data:
                if not noted:
                    outputs.append(nbformat.v4.new_output("display_data", data={"text/html": WIDGET_NOTE}))
                    noted = True
                if "image/png" in output["data"]:  # a live figure carries its picture: show it, drop the view
                    picture = {"image/png": output["data"]["image/png"]}
                    outputs.append(nbformat.v4.new_output("display_data", data=picture))
                continue
            outputs.append(output)
        if cell.cell_type == "code":
            cell.outputs = outputs
        elif cell.cell_type == "markdown":  # the link to the other edition, as a page of the site
            cell.source = EDITION_LINK.sub(lambda m: f"{{doc}}`{m.group(1)} <{m.group(2)}>`", cell.source)
            # a link to a docs/ page (from notebooks/ or notebooks/zh/): the site's page, from the root; in the
            # Chinese edition the Chinese page when there is one
            cell.source = DOCS_LINK.sub(lambda m: doc_link(m.group(1), "/" + edition_doc(m.group(2), edition)),
                                        cell.source)
    return notebook


def edition_doc(name: str, edition: str) -> str:
    """The page for docs/<name>.md in an edition: zh/<name> for the Chinese one when docs/zh/<name>.md exists."""
    twin = f"{edition}/{name}"
    return twin if edition != "en" and twin in DOC_PAGES and (DOCS / DOC_PAGES[twin]).exists() else name


def title_and_article(path: Path) -> tuple[str, str]:
    """The first "# " heading of a notebook and the text of its "> **Article:**" line ("" when absent)."""
    notebook = nbformat.read(path, as_version=4)
    title, article = path.stem, ""
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            if line.startswith("# ") and title == path.stem:
                title = line[2:].strip()
            if line.startswith("> **Article:**") and not article:
                article = line.removeprefix("> **Article:**").strip()
        if article:
            break
    return title, article


def doc_link(label: str, docname: str) -> str:
    """A MyST link to a page by its document name (a path link would resolve through the symlink, off the site)."""
    label = label.replace("<", "&lt;").replace("`", "'")
    return f"{{doc}}`{label} <{docname}>`"


def map_table() -> str:
    """The markdown table: notebook (linked), the article's section, and the Chinese twin when there is one."""
    zh = {p.name for p in course_notebooks("zh")}
    rows = ["| notebook | article section |" + (" 中文 |" if zh else ""), "|---|---|" + ("---|" if zh else "")]
    for path in course_notebooks():
        title, article = title_and_article(path)
        row = f"| {doc_link(title, 'notebooks/' + path.stem)} | {article.replace('|', '/') or '—'} |"
        if zh:
            zh_title = title_and_article(NOTEBOOKS / "zh" / path.name)[0] if path.name in zh else ""
            row += f" {doc_link(zh_title, 'notebooks/zh/' + path.stem)} |" if zh_title else " — |"
        rows.append(row)
    return "\n".join(rows) + "\n"


def rewrite_doc_links(text: str, folder: Path | None = None) -> str:
    """Links of a docs/ page (in ``folder``, docs/ by default) made right for the site: ../notebooks/X ->
    notebooks/X, a link to another docs/ page -> that page of the site; every other link kept."""
    folder = DOCS if folder is None else folder
    pages = {(DOCS / path).resolve(): name for name, path in DOC_PAGES.items()}

    def fix(match: re.Match) -> str:
        label, target = match.group(1), match.group(2)
        if re.match(r"^(?:[a-z]+:|#|/)", target):
            return match.group(0)
        path = target.partition("#")[0]  # a {doc} link names a page; an anchor inside it is dropped
        resolved = (folder / path).resolve()
        if resolved.is_relative_to(NOTEBOOKS.resolve()):
            docname = "notebooks/" + resolved.relative_to(NOTEBOOKS.resolve()).with_suffix("").as_posix()
            return doc_link(label, "/" + docname if folder != DOCS else docname)
        if resolved in pages:
            return doc_link(label, "/" + pages[resolved] if folder != DOCS else pages[resolved])
        return match.group(0)

    return re.sub(r"\[([^\]]*)\]\(([^)\s]+)\)", fix, text)


def on_source_read(app: Sphinx, docname: str, source: list[str]) -> None:
    if docname == "map":
        source[0] = source[0].replace(MARKERS["map"], map_table())
    elif docname in DOC_PAGES and (DOCS / DOC_PAGES[docname]).exists():
        path = DOCS / DOC_PAGES[docname]
        source[0] = rewrite_doc_links(path.read_text(encoding="utf-8"), path.parent)
    elif docname == "index":
        toctree = ""
        if course_notebooks("zh"):
            toctree = "```{toctree}\n:caption: 中文版\n:maxdepth: 1\n:glob:\n\nnotebooks/zh/[0-9][0-9]_*\n```\n"
        source[0] = source[0].replace(MARKERS["index"], toctree)


def always_reread(app: Sphinx, env, added, changed, removed) -> list[str]:
    """The pages made from other files (docs/, the notebooks' first cells, notebooks/zh/) are re-read each build:
    Sphinx's incremental build sees only their own .md, unchanged when docs/glossary.md appears."""
    return [name for name in MARKERS.keys() | DOC_PAGES.keys() if name in env.found_docs]


def external_assets(outdir: Path) -> list[str]:
    """Every "file: excerpt" in the built HTML and CSS that makes the browser fetch from another host."""
    found = []
    for path in sorted([*outdir.rglob("*.html"), *outdir.rglob("*.css")]):
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in EXTERNAL_ASSET.finditer(text):
            found.append(f"{path.relative_to(outdir)}: {text[match.start():match.end() + 60]!r}")
    return found


def on_build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        found = external_assets(Path(app.outdir))
        if found:
            raise ExtensionError("the site must load nothing from another host:\n" + "\n".join(found[:20]))


def build() -> Path:
    """Build (or bring up to date) build/site/ as `make site` does; return the folder. Raises on any warning."""
    BUILD.mkdir(parents=True, exist_ok=True)
    with FileLock(BUILD / ".site.lock"):  # two test processes never build build/site/ at the same time
        result = subprocess.run([sys.executable, *SPHINX_ARGS], capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        raise RuntimeError(f"the site did not build:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return BUILD / "site"


def setup(app: Sphinx) -> dict:
    app.connect("source-read", on_source_read)
    app.connect("env-get-outdated", always_reread)
    app.connect("build-finished", on_build_finished, priority=900)  # after sphinx-mathjax-offline's copy
    return {"parallel_read_safe": True, "parallel_write_safe": True}
