#!/bin/sh
# Print the command of a Python that the course supports (the versions pyproject.toml's requires-python allows,
# which are those PyTorch 2.13.0 ships wheels for). Used by the Makefile to create .venv.
#
#   tools/find_python.sh            # the first of python3.11 python3.12 python3.13 python3.10 python3.14 python3
#   tools/find_python.sh python3.12 # exactly this one (make ... PYTHON=python3.12), checked like the others
#
# python3.11 comes first: it is the version the course's tests run on. Exits 1 with a message naming what is
# needed when no candidate fits. tests/test_laptop.py keeps MIN and MAX equal to pyproject.toml.
MIN_MINOR=10
MAX_MINOR=14

fits() {
    "$1" -c "import sys; sys.exit(0 if sys.version_info[:2] >= (3, $MIN_MINOR) and sys.version_info[:2] <= (3, $MAX_MINOR) else 1)" \
        >/dev/null 2>&1
}

describe() {
    "$1" -c "import sys; print('Python %d.%d.%d' % sys.version_info[:3])" 2>/dev/null || echo "not a working Python"
}

need="Python 3.$MIN_MINOR to 3.$MAX_MINOR"
if [ -n "$1" ]; then
    if ! command -v "$1" >/dev/null 2>&1; then
        echo "PYTHON=$1: no such command. The course needs $need; give one with make PYTHON=/path/to/python3.X" >&2
        exit 1
    fi
    if fits "$1"; then echo "$1"; exit 0; fi
    echo "PYTHON=$1 is $(describe "$1"); the course needs $need (the versions PyTorch 2.13.0 supports)." >&2
    exit 1
fi

tried=""
for candidate in python3.11 python3.12 python3.13 python3.10 python3.14 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then
        if fits "$candidate"; then echo "$candidate"; exit 0; fi
        tried="$tried $candidate ($(describe "$candidate"))"
    fi
done
echo "No suitable Python found. The course needs $need (the versions PyTorch 2.13.0 supports)." >&2
if [ -n "$tried" ]; then echo "Found, but outside that range:$tried." >&2; fi
echo "Install one (python.org, your package manager, pyenv or uv), then run make again, or name it:" >&2
echo "  make lab PYTHON=/path/to/python3.12" >&2
exit 1
