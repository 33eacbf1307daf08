#!/usr/bin/env bash
# Lint: ruff (style, likely bugs, import order; [tool.ruff] in pyproject.toml), the import-linter layer contracts
# ([tool.importlinter]: core imports no Qt, no ui, no cli; ui and cli do not import each other; core's packages
# import only downward, in the layers listed there) and basedpyright's types in basic mode over app/
# ([tool.basedpyright]), once for Linux and once for Windows, so the win32 branches type-check too.
#   scripts/lint.sh        needs .venv/ with the test extra (scripts/setup.sh test)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/lint-imports ] || [ ! -x .venv/bin/basedpyright ]; then
  echo "lint: .venv/ lacks ruff, import-linter or basedpyright; run scripts/setup.sh test first." >&2
  exit 1
fi
status=0
if ! .venv/bin/python -m ruff check app tests benchmarks scripts; then
  echo "lint: ruff found the problems above; fix them by hand (never ruff format: it rewrites whole files)." >&2
  status=1
fi
if ! .venv/bin/lint-imports; then
  echo "lint: a layer contract is broken: a module imports across a boundary that pyproject.toml forbids (see above)." >&2
  status=1
fi
# basedpyright is nearly all of lint's time (about 16 s a platform): both platforms run at once, and a platform whose
# inputs (app/'s sources, pyproject.toml, the installed packages' names and versions) are those of its last clean run
# is not checked again: its result could not differ. A fresh checkout has no stamp and checks both.
stamps=.venv/lint-stamps
mkdir -p "$stamps"
inputs=$({ find app \( -name "*.py" -o -name "*.pyi" \) -print0 | sort -z | xargs -0 sha256sum; sha256sum pyproject.toml; ls .venv/lib/python*/site-packages | grep -E '\.dist-info$'; } \
         | sha256sum | cut -d' ' -f1)
declare -A pid out
for platform in Linux Windows; do  # errors only: the report is one line when there are none
  out[$platform]=$(mktemp)
  if [ "$(cat "$stamps/types-$platform" 2>/dev/null)" = "$inputs" ]; then
    echo "unchanged since its last clean run" > "${out[$platform]}"
    pid[$platform]=""
  else
    .venv/bin/basedpyright --project . --level error --pythonplatform "$platform" > "${out[$platform]}" 2>&1 &
    pid[$platform]=$!
  fi
done
for platform in Linux Windows; do
  if [ -n "${pid[$platform]}" ] && ! wait "${pid[$platform]}"; then
    cat "${out[$platform]}"
    echo "lint: basedpyright found type errors for $platform (listed above); fix the code or its annotation." >&2
    status=1
  else
    [ -n "${pid[$platform]}" ] && echo "$inputs" > "$stamps/types-$platform"
    echo "types ($platform): $(tail -n 1 "${out[$platform]}")"
  fi
  rm -f "${out[$platform]}"
done
exit "$status"
