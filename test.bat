@echo off
rem Set up .venv with test tools and run the whole test suite (cmd.exe); see test.ps1.
powershell -NoProfile -ExecutionPolicy Bypass -File "%~dp0test.ps1" %*
exit /b %ERRORLEVEL%
