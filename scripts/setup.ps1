# Create or update .venv\ in the repo root (Windows). Idempotent: a second run with nothing changed does
# nothing but one hash comparison. Mirrors scripts/setup.sh.
#   scripts\setup.ps1          app dependencies and both engines, llama-server and the built-in llama-cpp-python,
#                              each built for this processor once (several minutes each), then kept
#   scripts\setup.ps1 test     app + test dependencies
# One stamp, .venv\.installed, says "<hash> app" or "<hash> test": a test set-up includes the app's. The console
# gets a few progress lines; pip's whole log is .venv\setup.log. Building llama.cpp needs the Visual Studio C++
# Build Tools (CMake and Ninja come from pip during the build).
param([string]$Level = "app")
$ErrorActionPreference = "Stop"
$PSDefaultParameterValues["Out-File:Encoding"] = "utf8"  # what ">>" writes into the log (Windows PowerShell: UTF-16)
$PSDefaultParameterValues["Add-Content:Encoding"] = "utf8"
Set-Location (Join-Path $PSScriptRoot "..")
if ($Level -eq "") { $Level = "app" }
if ($Level -ne "app" -and $Level -ne "test") {
    Write-Host "usage: scripts\setup.ps1 [test]"
    exit 2
}
$venvPython = Join-Path (Get-Location) ".venv\Scripts\python.exe"
$stamp = ".venv\.installed"
$log = Join-Path (Get-Location) ".venv\setup.log"
$started = Get-Date

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
    Write-Host "GGUF Launcher needs Python 3.11 or newer; install it from python.org and run this again."
    exit 1
}

# What decides the install: pyproject.toml and the engine build code (scripts/setup.sh also adds the CPU's
# flags). $Suffix: the line the old per-level stamps added.
function Get-InputsHash([string]$Suffix = "") {
    $bytes = @()
    foreach ($file in @("pyproject.toml", "app\core\engine\cpu_isa.py", "app\core\engine\build_flags.py",
                        "app\core\engine\build.py")) {
        $bytes += [System.IO.File]::ReadAllBytes((Join-Path (Get-Location) $file))
    }
    if ($Suffix) { $bytes += [System.Text.Encoding]::UTF8.GetBytes("$Suffix`n") }
    $sha = [System.Security.Cryptography.SHA256]::Create()
    return ([System.BitConverter]::ToString($sha.ComputeHash([byte[]]$bytes)) -replace "-", "").ToLower()
}

# .venv\.installed-app and .installed-test (one per level) from before the single stamp.
function Convert-OldStamps([string]$Want) {
    if (-not (Test-Path $stamp)) {
        foreach ($old in @("test", "app")) {
            $oldFile = ".venv\.installed-$old"
            $oldExtra = if ($old -eq "app") { "" } else { $old }
            if ((Test-Path $oldFile) -and
                ((Get-Content $oldFile -Raw).Trim() -eq (Get-InputsHash "pyproject.toml $oldExtra"))) {
                Set-Content -Path $stamp -Value "$Want $old" -Encoding ascii
                break
            }
        }
    }
    Remove-Item -Path ".venv\.installed-app", ".venv\.installed-test" -ErrorAction SilentlyContinue
}

function Test-Satisfied([string]$Want) {
    if (-not (Test-Path $venvPython) -or -not (Test-Path $stamp)) { return $false }
    $parts = @((Get-Content $stamp -Raw).Trim() -split "\s+")
    return ($parts[0] -eq $Want) -and (($parts.Count -gt 1 -and $parts[1] -eq "test") -or $Level -eq "app")
}

function Assert-Compiler {
    if (Get-Command cl.exe -ErrorAction SilentlyContinue) { return }
    $vswhere = Join-Path ${env:ProgramFiles(x86)} "Microsoft Visual Studio\Installer\vswhere.exe"
    if (Test-Path $vswhere) {
        $found = & $vswhere -latest -products * -requiresAny -requires `
            Microsoft.VisualStudio.Component.VC.Tools.x86.x64 Microsoft.VisualStudio.Component.VC.Tools.ARM64 `
            -property installationPath
        if ($found) { return }
    }
    Write-Host ("Building llama.cpp needs the Visual Studio C++ Build Tools and none were found: run " +
        "'winget install Microsoft.VisualStudio.2022.BuildTools --override ""--quiet --wait --add " +
        "Microsoft.VisualStudio.Workload.VCTools --includeRecommended""', then run this again.")
    exit 1
}

function Format-Elapsed([datetime]$Since) {
    $s = [int]((Get-Date) - $Since).TotalSeconds
    if ($s -ge 60) { return "{0} min {1:00} s" -f [math]::Floor($s / 60), ($s % 60) }
    return "$s s"
}

function Stop-Failed([string]$What, [datetime]$Began) {
    Write-Host "Set-up failed during this step: $What (after $(Format-Elapsed $Began)). The whole log is $log; its last lines:"
    Get-Content $log -Tail 12 | ForEach-Object { Write-Host "  | $_" }
    exit 1
}

# One line for a step; the command's output goes to the log. (Native programs' stderr would stop the script
# under "Stop", so the step runs with "Continue" and judges the exit code.)
function Invoke-Step([string]$What, [scriptblock]$Command) {
    $ErrorActionPreference = "Continue"
    $began = Get-Date
    Write-Host -NoNewline "$What ... "
    Add-Content -Path $log -Value "`n== $What"
    & $Command *>> $log
    if ($LASTEXITCODE -ne 0) { Write-Host ""; Stop-Failed $What $began }
    Write-Host "done ($(Format-Elapsed $began))."
}

# The engine build says what it builds; its "progress DONE TOTAL PACKAGE" lines become a line per quarter.
function Invoke-EngineBuild([string[]]$Arguments) {
    $ErrorActionPreference = "Continue"
    $began = Get-Date
    $script:shown = -1
    $script:lineStart = Get-Date
    Add-Content -Path $log -Value "`n== engine build"
    # stderr joins the pipe (one writer for the log): on failure it holds the build log's tail and path.
    & $venvPython -m app.core.engine.build --progress @Arguments 2>&1 | ForEach-Object {
        $line = "$_"
        Add-Content -Path $log -Value $line
        if ($line -match "^progress (\d+) (\d+) (\S+)") {
            $percent = if ([int]$Matches[2] -gt 0) { [math]::Floor(100 * [int]$Matches[1] / [int]$Matches[2]) } else { 0 }
            if ([math]::Floor($percent / 25) -gt $script:shown) {
                $script:shown = [math]::Floor($percent / 25)
                Write-Host "  $($Matches[3]): $percent % ($(Format-Elapsed $script:lineStart))"
            }
        } else {
            Write-Host $line
            $script:shown = -1
            $script:lineStart = Get-Date
        }
    }
    if ($LASTEXITCODE -eq 3) { return $false }  # only llama-server failed; the built-in engine is installed
    if ($LASTEXITCODE -ne 0) { Stop-Failed "Building the llama.cpp engines" $began }
    return $true
}

$want = Get-InputsHash
if (Test-Path ".venv") { Convert-OldStamps $want }
if (Test-Satisfied $want) { exit 0 }
Assert-Compiler
if (-not (Test-Path $venvPython)) {
    $python = Find-Python
    $exe = $python[0]
    $rest = @($python | Select-Object -Skip 1)
    Write-Host "Creating .venv with $($python -join ' ') ..."
    & $exe @rest -m venv .venv
    if ($LASTEXITCODE -ne 0) { Write-Host "Could not create .venv."; exit 1 }
}
Set-Content -Path $log -Value "GGUF Launcher set-up ($Level), $(Get-Date -Format o)" -Encoding utf8
$what = if ($Level -eq "test") { "the app and its tests" } else { "the app" }
Write-Host "Setting up .venv for $what (the first time builds llama.cpp from source: several minutes; log: $log)"
Invoke-Step "Updating pip" { & $venvPython -m pip install --upgrade pip wheel }
# The app runs without llama-server (its built-in engine is the fallback): at the app level a llama-server that
# cannot be built or does not pass its check costs one sentence, not the set-up; the tests need it.
function Skip-Server([string]$Cause) {
    if ($Level -eq "test") { Write-Host "Set-up failed: $Cause. The whole log is $log."; exit 1 }
    Write-Host "$Cause, so GGUF Launcher will use its built-in engine instead (the whole log is $log)."
}
# The engines first, built from source into a wheel folder keyed by their build flags (app\core\engine\build.py).
$server = Invoke-EngineBuild @()
if (-not $server) { Skip-Server "llama-server could not be built on this computer" }
if ($Level -eq "test") {
    Invoke-Step "Installing GGUF Launcher with the test tools" { & $venvPython -m pip install -e ".[test]" }
} elseif ($server) {
    Invoke-Step "Installing GGUF Launcher and its dependencies" { & $venvPython -m pip install -e ".[server]" }
} else {
    Invoke-Step "Installing GGUF Launcher and its dependencies" { & $venvPython -m pip install -e . }
}
# Prove the engines run here (quantized models must load and generate); the tests need both to pass.
Write-Host "Testing the engines on this processor ..."
& $venvPython -m app engine-check
if ($Level -eq "test" -and $LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
if ($server) {
    $serverBin = & $venvPython -m app.core.engine.shipped
    if (-not $serverBin) {
        Skip-Server "llama-server was built but its program is missing"
    } else {
        & $venvPython -m app engine-check --server-bin $serverBin
        if ($LASTEXITCODE -ne 0) { Skip-Server "llama-server did not pass its check on this processor" }
    }
}
Set-Content -Path $stamp -Value "$want $Level" -Encoding ascii
Write-Host "Set-up done in $(Format-Elapsed $started)."
exit 0
