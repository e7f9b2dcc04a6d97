"""Quiet JupyterLab for `make lab`: no news toast, no kernel warning per start. Writes into the venv only.

    .venv/bin/python tools/lab_settings.py      # into sys.prefix, the venv running it
    .venv/bin/python tools/lab_settings.py --locale zh_CN DIR   # a user-settings folder with JupyterLab in Chinese

- ``share/jupyter/lab/settings/overrides.json``: JupyterLab's defaults for this install, here the notification
  settings: no news fetched and no update check, so no toast in the corner of every notebook. A learner can still
  change them in Settings (overrides set the defaults; user settings win).
- ``etc/ipython/ipython_kernel_config.json``: the kernel logs errors only, so the terminal of `make lab` does
  not repeat "Kernel is running over TCP without encryption" at each kernel start (the kernel listens on
  127.0.0.1 only; the server's own log level is set on its command line in the Makefile).

Existing settings in those files are kept; only these keys are set.

``--locale`` writes a JupyterLab user-settings folder (``--LabApp.user_settings_dir``) whose display language is
the given one: `make lab LANG=zh` starts JupyterLab with it, so that its menus and dialogs are in Chinese (the
language pack is jupyterlab-language-pack-zh-CN, installed with the course), while a plain `make lab` keeps
the learner's own settings and English menus.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

#: file under the prefix -> {section: {key: value}}
SETTINGS: dict[str, dict[str, dict[str, object]]] = {
    "share/jupyter/lab/settings/overrides.json": {
        "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    },
    "etc/ipython/ipython_kernel_config.json": {
        "IPKernelApp": {"log_level": "ERROR"},
    },
}


def write_settings(prefix: Path) -> list[Path]:
    """Merge :data:`SETTINGS` into the JSON files under ``prefix``; return the files written."""
    prefix = Path(prefix)
    if not prefix.is_dir():
        raise ValueError(f"prefix must be an existing folder (a venv); got {prefix}")
    written = []
    for relative, sections in SETTINGS.items():
        def merge(current: dict, sections=sections) -> None:
            for section, values in sections.items():
                current.setdefault(section, {}).update(values)

        written.append(_update_json(prefix / relative, merge))
    return written


def _update_json(path: Path, change) -> Path:
    """Read the JSON object in ``path`` ({} when missing), let ``change`` edit it in place, write it back."""
    current = json.loads(path.read_text()) if path.exists() else {}
    change(current)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(current, indent=2) + "\n")
    return path


LOCALES = ("en", "zh_CN")  # English is JupyterLab's own; zh_CN is the language pack's name for Chinese
LOCALE_SETTINGS = Path("@jupyterlab/translation-extension/plugin.jupyterlab-settings")


def write_locale(user_settings: Path, locale: str) -> Path:
    """Set JupyterLab's display language in the user-settings folder ``user_settings`` (made if missing); other
    settings in it are kept. Returns the file written."""
    if locale not in LOCALES:
        raise ValueError(f"locale must be one of {LOCALES}; got {locale!r}")
    return _update_json(Path(user_settings) / LOCALE_SETTINGS, lambda current: current.update(locale=locale))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--locale"]:
        if len(sys.argv) != 4:
            raise SystemExit("usage: lab_settings.py --locale LOCALE USER_SETTINGS_DIR")
        write_locale(Path(sys.argv[3]), sys.argv[2])
    else:
        write_settings(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(sys.prefix))
