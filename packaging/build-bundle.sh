#!/usr/bin/env bash
# Build the one-folder app that runs without Python, and its archive:
#   dist/gguf-launcher/gguf-launcher                      the program (window, commands, built-in engine)
#   dist/gguf-launcher/_internal/llama-server/            llama-server, the default engine, as the set-up built it
#   dist/gguf-launcher-<version>-linux-<machine>.tar.gz   that folder, for download
# Uses the set-up's .venv (./run or ./test makes it), or the Python in $PYTHON; installs the `bundle` extra of
# pyproject.toml (PyInstaller) into it when missing. Writes only build/ and dist/ of this folder.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-.venv/bin/python}"
if ! "$python" -c 'import sys' 2>/dev/null; then
  echo "No Python at $python: run ./run once (it makes .venv/), or set PYTHON to one with the app installed." >&2
  exit 1
fi
if [ -z "$("$python" -m app.core.engine.shipped 2>/dev/null)" ]; then
  echo "The bundle ships llama-server and $python has none: run ./run once (it builds llama-server)." >&2
  exit 1
fi
if ! "$python" -c 'import PyInstaller' 2>/dev/null; then
  requirements=$("$python" -c 'import tomllib; print(" ".join(tomllib.load(open("pyproject.toml", "rb"))
                 ["project"]["optional-dependencies"]["bundle"]))')
  echo "Installing $requirements ..."
  "$python" -m pip install --quiet $requirements
fi
version=$("$python" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
archive="dist/gguf-launcher-${version}-linux-$(uname -m).tar.gz"
started=$SECONDS
echo "Building dist/gguf-launcher/ with PyInstaller (a few minutes; log: build/pyinstaller.log) ..."
mkdir -p build
if ! "$python" -m PyInstaller --noconfirm --clean --log-level WARN --distpath dist --workpath build/pyinstaller \
     packaging/gguf-launcher.spec >build/pyinstaller.log 2>&1; then
  tail -n 30 build/pyinstaller.log >&2
  echo "PyInstaller failed; its whole log is build/pyinstaller.log." >&2
  exit 1
fi
rm -f "$archive"
tar -C dist -czf "$archive" gguf-launcher
echo "Built dist/gguf-launcher/ ($(du -sh dist/gguf-launcher | cut -f1)) and $archive" \
     "($(du -sh "$archive" | cut -f1)) in $((SECONDS - started)) s."
