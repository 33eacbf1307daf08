#!/usr/bin/env bash
# Install GGUF Launcher for the current user, without root, from this source tree:
#   ~/.local/share/gguf-launcher/venv          the app and its dependencies (a private virtual environment)
#   ~/.local/bin/gguf-launcher                 the command (also opens the app)
#   ~/.local/share/applications/gguf-launcher.desktop   the menu entry
#   ~/.local/share/metainfo/io.github.gguf_launcher.metainfo.xml
# Running it again upgrades in place. `install.sh --uninstall` removes exactly these; settings, logs and
# models are kept. PREFIX=/some/dir moves everything from ~/.local (used by the tests).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd -P)
prefix="${PREFIX:-$HOME/.local}"
home_dir="$prefix/share/gguf-launcher"
venv="$home_dir/venv"
launcher="$prefix/bin/gguf-launcher"
desktop="$prefix/share/applications/gguf-launcher.desktop"
metainfo="$prefix/share/metainfo/io.github.gguf_launcher.metainfo.xml"
icon="$prefix/share/icons/hicolor/scalable/apps/io.github.gguf_launcher.svg"

usage() {
  echo "usage: $0 [--uninstall]"
  echo "Installs GGUF Launcher into $prefix (venv in $venv)."
}

find_python() {
  for candidate in "${PYTHON:-}" python3.13 python3.12 python3.11 python3 python; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  echo "GGUF Launcher needs Python 3.11 or newer; install it and run this again." >&2
  return 1
}

refresh_menus() {
  if command -v update-desktop-database >/dev/null 2>&1; then
    update-desktop-database "$prefix/share/applications" >/dev/null 2>&1 || true
  fi
}

uninstall() {
  rm -rf "$venv"
  rm -f "$launcher" "$desktop" "$metainfo" "$icon"
  rmdir "$home_dir" 2>/dev/null || true
  refresh_menus
  echo "GGUF Launcher is uninstalled (your settings and models are kept)."
}

install_venv() {
  if [ ! -x "$venv/bin/python" ]; then
    py=$(find_python)
    echo "Creating $venv with $py ..."
    mkdir -p "$home_dir"
    "$py" -m venv "$venv"
  fi
  echo "Installing GGUF Launcher into $venv (the first time builds llama.cpp: several minutes) ..."
  "$venv/bin/python" -m pip install --quiet --upgrade pip wheel
  "$venv/bin/python" -m pip install --quiet --upgrade "$repo"
}

install_files() {
  mkdir -p "$(dirname "$launcher")" "$(dirname "$desktop")" "$(dirname "$metainfo")"
  # A script, not a symlink: it keeps working if the venv's Python is recreated.
  printf '#!/bin/sh\nexec "%s/bin/gguf-launcher" "$@"\n' "$venv" > "$launcher.tmp"
  chmod 755 "$launcher.tmp"
  mv -f "$launcher.tmp" "$launcher"
  # Desktop sessions often lack ~/.local/bin on PATH: the menu entry names the launcher by full path.
  sed "s|^Exec=.*|Exec=$launcher|" "$repo/packaging/gguf-launcher.desktop" > "$desktop"
  cp "$repo/packaging/io.github.gguf_launcher.metainfo.xml" "$metainfo"
  if [ -f "$repo/resources/icons/gguf-launcher.svg" ]; then
    mkdir -p "$(dirname "$icon")"
    cp "$repo/resources/icons/gguf-launcher.svg" "$icon"
  fi
  refresh_menus
}

main() {
  case "${1:-}" in
    --uninstall) uninstall; return ;;
    -h|--help) usage; return ;;
    "") ;;
    *) usage >&2; return 2 ;;
  esac
  install_venv
  install_files
  echo "GGUF Launcher is installed: open it from the applications menu or run 'gguf-launcher'."
  case ":$PATH:" in
    *":$prefix/bin:"*) ;;
    *) echo "Note: $prefix/bin is not on your PATH; add it to run 'gguf-launcher' from a terminal." ;;
  esac
}

main "$@"
