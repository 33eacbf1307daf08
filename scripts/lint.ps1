# Lint (Windows): ruff (style, likely bugs, import order; [tool.ruff] in pyproject.toml) and the import-linter layer
# contracts ([tool.importlinter]: core imports no Qt, no ui, no cli; ui and cli do not import each other;
# core's packages import only downward, in the layers listed there).
# Mirrors scripts/lint.sh.
#   scripts\lint.ps1       needs .venv\ with the test extra (scripts\setup.ps1 test)
$ErrorActionPreference = "Stop"
Set-Location (Join-Path $PSScriptRoot "..")
$venvPython = Join-Path (Get-Location) ".venv\Scripts\python.exe"
$lintImports = Join-Path (Get-Location) ".venv\Scripts\lint-imports.exe"
if (-not (Test-Path $lintImports)) {
    Write-Host "lint: .venv\ lacks ruff and import-linter; run scripts\setup.ps1 test first."
    exit 1
}
$status = 0
& $venvPython -m ruff check app tests benchmarks scripts
if ($LASTEXITCODE -ne 0) {
    Write-Host "lint: ruff found the problems above; fix them by hand (never ruff format: it rewrites whole files)."
    $status = 1
}
& $lintImports
if ($LASTEXITCODE -ne 0) {
    Write-Host "lint: a layer contract is broken: a module imports across a boundary that pyproject.toml forbids (see above)."
    $status = 1
}
exit $status
