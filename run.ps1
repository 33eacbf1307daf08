# Set up .venv\ (first time only) and open GGUF Launcher. Arguments go to the app, e.g. `.\run.ps1 doctor model.gguf`.
$ErrorActionPreference = "Stop"
Set-Location $PSScriptRoot
& (Join-Path $PSScriptRoot "scripts\setup.ps1")
if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
& (Join-Path $PSScriptRoot ".venv\Scripts\python.exe") -m app @args
exit $LASTEXITCODE
