#!/usr/bin/env bash
# Install the GGUF Launcher bundle (no Python needed) for the current user, without root:
#   ~/.local/lib/gguf-launcher/                          the bundle (a copy of dist/gguf-launcher/)
#   ~/.local/bin/gguf-launcher                           the command (also opens the app)
#   ~/.local/share/applications/gguf-launcher.desktop    the menu entry
#   ~/.local/share/icons/hicolor/*/apps/io.github.gguf_launcher.{png,svg}
#   ~/.local/share/metainfo/io.github.gguf_launcher.metainfo.xml
#
#   install.sh [BUNDLE_DIR]    install or upgrade (default: dist/gguf-launcher/ of this source tree, or the
#                              bundle this script sits in)
#   install.sh --uninstall     remove exactly those files; settings, logs and models are kept
#                              (the installed copy, ~/.local/lib/gguf-launcher/uninstall.sh, does the same)
# PREFIX=/some/dir installs there instead of ~/.local.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd -P)
prefix="${PREFIX:-$HOME/.local}"
app_dir="$prefix/lib/gguf-launcher"
launcher="$prefix/bin/gguf-launcher"
desktop="$prefix/share/applications/gguf-launcher.desktop"
metainfo="$prefix/share/metainfo/io.github.gguf_launcher.metainfo.xml"
icons="$prefix/share/icons/hicolor"
icon_name="io.github.gguf_launcher"
png_sizes="16 24 32 48 64 128 256 512"

usage() {
  echo "usage: $0 [BUNDLE_DIR] | --uninstall"
  echo "Installs the GGUF Launcher bundle (a folder holding the program gguf-launcher) into $app_dir."
}

# The desktop entry, AppStream file and icons: from this source tree (or the unpacked archive this script sits
# in), else from the bundle's own resources.
find_source() {
  for root in "$here/../.." "$here" "$1/_internal" "$1"; do
    if [ -f "$root/packaging/gguf-launcher.desktop" ] && [ -f "$root/resources/icons/gguf-launcher.svg" ]; then
      (cd "$root" && pwd -P); return 0
    fi
  done
  return 1
}

default_bundle() {
  if [ -x "$here/gguf-launcher" ] && [ -f "$here/gguf-launcher" ]; then echo "$here"; return; fi
  echo "$here/../../dist/gguf-launcher"
}

# Menus watch ~/.local/share/applications themselves (the entry has no MimeType, so no database to update);
# GTK's icon cache is refreshed only where one is kept.
refresh_menus() {
  if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$icons/index.theme" ]; then
    gtk-update-icon-cache --quiet --ignore-theme-index "$icons" >/dev/null 2>&1 || true
  fi
}

uninstall() {
  rm -rf "$app_dir"
  rm -f "$launcher" "$desktop" "$metainfo" "$icons/scalable/apps/$icon_name.svg"
  for size in $png_sizes; do
    rm -f "$icons/${size}x${size}/apps/$icon_name.png"
    rmdir "$icons/${size}x${size}/apps" "$icons/${size}x${size}" 2>/dev/null || true  # only when now empty
  done
  rmdir "$icons/scalable/apps" "$icons/scalable" "$icons" 2>/dev/null || true
  refresh_menus
  echo "GGUF Launcher is uninstalled (your settings and models are kept)."
}

install_bundle() {
  local bundle=$1
  if [ ! -f "$bundle/gguf-launcher" ] || [ ! -x "$bundle/gguf-launcher" ]; then
    echo "No GGUF Launcher bundle in $bundle (the program $bundle/gguf-launcher is missing)." >&2
    echo "Build it with packaging/build-bundle.sh, or name the unpacked bundle folder: $0 FOLDER" >&2
    return 1
  fi
  bundle=$(cd "$bundle" && pwd -P)
  # Copy beside, then swap: a failed copy leaves the installed version as it was.
  mkdir -p "$(dirname "$app_dir")"
  rm -rf "$app_dir.new"
  cp -a "$bundle/." "$app_dir.new/"
  cp "$here/$(basename "$0")" "$app_dir.new/uninstall.sh"
  chmod 755 "$app_dir.new/uninstall.sh"
  rm -rf "$app_dir.old"
  if [ -e "$app_dir" ]; then mv "$app_dir" "$app_dir.old"; fi
  mv "$app_dir.new" "$app_dir"
  rm -rf "$app_dir.old"
}

install_files() {
  local source=$1
  mkdir -p "$(dirname "$launcher")" "$(dirname "$desktop")" "$(dirname "$metainfo")"
  # A script, not a symlink: the bundle finds its files beside its real path.
  printf '#!/bin/sh\nexec "%s/gguf-launcher" "$@"\n' "$app_dir" > "$launcher.tmp"
  chmod 755 "$launcher.tmp"
  mv -f "$launcher.tmp" "$launcher"
  # Desktop sessions often lack ~/.local/bin on PATH: the menu entry names the program by its full path.
  sed "s|^Exec=.*|Exec=\"$app_dir/gguf-launcher\"|" "$source/packaging/gguf-launcher.desktop" > "$desktop.tmp"
  mv -f "$desktop.tmp" "$desktop"
  cp "$source/packaging/io.github.gguf_launcher.metainfo.xml" "$metainfo"
  mkdir -p "$icons/scalable/apps"
  cp "$source/resources/icons/gguf-launcher.svg" "$icons/scalable/apps/$icon_name.svg"
  for size in $png_sizes; do
    mkdir -p "$icons/${size}x${size}/apps"
    cp "$source/resources/icons/gguf-launcher-$size.png" "$icons/${size}x${size}/apps/$icon_name.png"
  done
  refresh_menus
}

main() {
  if [ "$(basename "$0")" = uninstall.sh ] && [ $# -eq 0 ]; then set -- --uninstall; fi  # the installed copy
  case "${1:-}" in
    --uninstall) uninstall; return ;;
    -h|--help) usage; return ;;
    -*) usage >&2; return 2 ;;
  esac
  local bundle="${1:-$(default_bundle)}" source
  install_bundle "$bundle"
  if ! source=$(find_source "$app_dir"); then
    echo "The menu entry and icons were not found beside $0 or in the bundle; the program is installed in $app_dir." >&2
    return 1
  fi
  install_files "$source"
  echo "GGUF Launcher is installed: open it from the applications menu or run 'gguf-launcher'."
  echo "To remove it: $app_dir/uninstall.sh"
  case ":$PATH:" in
    *":$prefix/bin:"*) ;;
    *) echo "Note: $prefix/bin is not on your PATH; add it to run 'gguf-launcher' from a terminal." ;;
  esac
}

main "$@"
