"""A CJK font for matplotlib, so Chinese tokens on the figures never fall back to empty boxes.

The course's set-up installs Debian's ``fonts-wqy-microhei`` (WenQuanYi Micro Hei, 5 MB); any of
:data:`CJK_FAMILIES` works as well. :func:`use_cjk_font` sets matplotlib's font family to DejaVu Sans followed
by the first one found: Latin text keeps its look, and matplotlib (>= 3.6) takes each glyph DejaVu Sans
lacks from the CJK font.
"""

from __future__ import annotations

import matplotlib
from matplotlib import font_manager

from helpers.course import say

__all__ = ["CJK_FAMILIES", "INSTALL_HINT", "find_cjk_font", "use_cjk_font"]

#: font families with Chinese glyphs, in order of preference
CJK_FAMILIES: tuple[str, ...] = (
    "WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC",
    "Noto Sans CJK JP", "Droid Sans Fallback", "PingFang SC", "Heiti SC", "Microsoft YaHei", "SimHei",
)
#: the file names of those fonts, to register them when matplotlib's font cache predates their install
_FILES = ("wqy-microhei", "wqy-zenhei", "notosanscjk", "notosanssc", "sourcehansans", "droidsansfallback")
INSTALL_HINT = "apt-get install -y fonts-wqy-microhei (Debian/Ubuntu; on Binder: a line in apt.txt)"


def find_cjk_font() -> str | None:
    """The name of the first installed family of :data:`CJK_FAMILIES`, or None."""
    names = {entry.name for entry in font_manager.fontManager.ttflist}
    for family in CJK_FAMILIES:
        if family in names:
            return family
    # a font installed after matplotlib built its cache: register the files we know by name
    for path in font_manager.findSystemFonts():
        if any(key in path.lower().replace("-", "").replace("_", "") or key in path.lower() for key in _FILES):
            try:
                font_manager.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):
                continue
    names = {entry.name for entry in font_manager.fontManager.ttflist}
    known = next((family for family in CJK_FAMILIES if family in names), None)
    # e.g. conda-forge's font-ttf-noto-cjk names its variable fonts differently
    return known or next((name for name in sorted(names) if "CJK" in name and "Mono" not in name), None)


def use_cjk_font() -> str:
    """Make matplotlib draw Chinese with the installed CJK font; returns its family name.

    Raises RuntimeError, naming the install line, when no CJK font is installed.
    """
    family = find_cjk_font()
    if family is None:
        raise RuntimeError(say(f"no CJK font found for the Chinese labels; install one: {INSTALL_HINT}",
                               f"找不到中文字体，图上的中文标签无法显示。请先安装一个：{INSTALL_HINT}"))
    rest = [name for name in matplotlib.rcParams["font.sans-serif"] if name not in ("DejaVu Sans", family)]
    matplotlib.rcParams["font.sans-serif"] = ["DejaVu Sans", family, *rest]
    # a generic family ("sans-serif") resolves to one font; an explicit list is what matplotlib falls back along
    matplotlib.rcParams["font.family"] = ["DejaVu Sans", family]  # DejaVu first: Latin text and "−" unchanged
    return family
