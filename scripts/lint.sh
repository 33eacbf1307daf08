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
for platform in Linux Windows; do  # errors only: the report is one line when there are none
  if ! types=$(.venv/bin/basedpyright --project . --level error --pythonplatform "$platform" 2>&1); then
    echo "$types"
    echo "lint: basedpyright found type errors for $platform (listed above); fix the code or its annotation." >&2
    status=1
  else
    echo "types ($platform): ${types##*$'\n'}"
  fi
done
exit "$status"
