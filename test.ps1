# Set up .venv\ with test dependencies (first time only) and run the whole test suite.
$ErrorActionPreference = "Stop"
Set-Location $PSScriptRoot
& (Join-Path $PSScriptRoot "scripts\setup.ps1") test
if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
& (Join-Path $PSScriptRoot "scripts\lint.ps1")  # style and the layer contracts first
if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
$env:QT_QPA_PLATFORM = "offscreen"
& (Join-Path $PSScriptRoot ".venv\Scripts\python.exe") -m pytest @args
$status = $LASTEXITCODE
if ($status -eq 5) {
    Write-Host "pytest collected no tests: treating that as a failure."
    exit 1
}
exit $status
