"""Sphinx + myst-nb configuration of the course's static site: `make site` writes it to build/site/.

Nothing is executed: every page is a notebook's STORED outputs (nb_execution_mode = "off"). The notebooks are
reached through the symlink site/notebooks -> ../notebooks, so notebooks/*.ipynb (English) and notebooks/zh/*.ipynb
(Chinese, when present) are pages, in file-name order, which is course order. Everything the pages load is local:
MathJax 3 comes from the sphinx-mathjax-offline wheel, the theme bundles its fonts and icons, the ipywidgets
JavaScript (a CDN by default in myst-nb) is off, and _ext/course_site.py fails the build on any http(s) asset.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE / "_ext"), str(ROOT / "tools")]

from colab_bootstrap import BRANCH, REPOSITORY  # noqa: E402

project = "Attention, step by step"
author = "the course's authors"
copyright = "the course's authors, MIT licence"
language = "en"

extensions = ["myst_nb", "sphinx-mathjax-offline", "course_site"]
root_doc = "index"
# Only these are pages (notebooks/src/*.md, the MyST sources, are not: the .ipynb has the outputs).
include_patterns = ["index.md", "map.md", "glossary.md", "corrections.md", "conventions.md", "teaching.md", "zh/*.md",
                    "notebooks/*.ipynb", "notebooks/zh/*.ipynb"]
exclude_patterns = ["_build", "**/.ipynb_checkpoints"]

nb_execution_mode = "off"  # the stored outputs, never re-run
nb_ipywidgets_js = {}  # myst-nb would load require.js and the widget manager from a CDN
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
suppress_warnings = ["mystnb.unknown_mime_type"]

html_theme = "sphinx_book_theme"
html_title = project
html_static_path = ["_static"]
html_css_files = ["course.css"]
html_last_updated_fmt = None
html_copy_source = True  # the download button offers the .ipynb itself
html_show_sourcelink = False
# The theme reads default_mode from the context; left empty, its script logs a console error on each first visit.
html_context = {"default_mode": "light"}
html_theme_options = {
    "repository_url": f"https://github.com/{REPOSITORY}",
    "repository_branch": BRANCH,
    "use_repository_button": True,
    "use_download_button": True,
    "use_fullscreen_button": False,
    "show_toc_level": 2,
    "navigation_with_keys": False,
}

# The notebooks are read by the course's reader: a widget output becomes a note (see _ext/course_site.py).
nb_custom_formats = {".ipynb": ["course_site.read_notebook", {}, False]}
