#!/usr/bin/env bash
# Lint: ruff (style, likely bugs, import order; [tool.ruff] in pyproject.toml) and the import-linter layer contracts
# ([tool.importlinter]: core imports no Qt, no ui, no cli; ui and cli do not import each other; core's packages
# import only downward, in the layers listed there).
#   scripts/lint.sh        needs .venv/ with the test extra (scripts/setup.sh test)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/lint-imports ]; then
  echo "lint: .venv/ lacks ruff and import-linter; run scripts/setup.sh test first." >&2
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
exit "$status"
