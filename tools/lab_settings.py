"""Quiet JupyterLab for `make lab`: no news toast, no kernel warning per start. Writes into the venv only.

    .venv/bin/python tools/lab_settings.py      # into sys.prefix, the venv running it

- ``share/jupyter/lab/settings/overrides.json``: JupyterLab's defaults for this install, here the notification
  settings: no news fetched and no update check, so no toast in the corner of every notebook. A learner can still
  change them in Settings (overrides set the defaults; user settings win).
- ``etc/ipython/ipython_kernel_config.json``: the kernel logs errors only, so the terminal of `make lab` does
  not repeat "Kernel is running over TCP without encryption" at each kernel start (the kernel listens on
  127.0.0.1 only; the server's own log level is set on its command line in the Makefile).

Existing settings in those files are kept; only these keys are set.
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
        path = prefix / relative
        current = json.loads(path.read_text()) if path.exists() else {}
        for section, values in sections.items():
            current.setdefault(section, {}).update(values)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(current, indent=2) + "\n")
        written.append(path)
    return written


if __name__ == "__main__":
    write_settings(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(sys.prefix))
