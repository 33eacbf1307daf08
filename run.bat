@echo off
rem Set up .venv and open GGUF Launcher (for double-click and cmd.exe); see run.ps1.
powershell -NoProfile -ExecutionPolicy Bypass -File "%~dp0run.ps1" %*
exit /b %ERRORLEVEL%
