; NSIS script: installs the PyInstaller one-folder app (dist\gguf-launcher\, see packaging/gguf-launcher.spec)
; into Program Files with a Start-menu shortcut and an uninstaller. NSIS's makensis runs on Windows and on Linux
; (Debian's nsis package), so the suite compiles this script (tests/integration/packaging/test_windows_installer.py):
;   makensis /DVERSION=0.1.0 installers\windows\gguf-launcher.nsi
;     -> dist\gguf-launcher-0.1.0-windows-x86_64-setup.exe
; /DSOURCE_DIR=<folder> and /DOUT_FILE=<file> override where the app is taken from and where the installer goes.
; Uninstalling removes the program's files only: settings, conversations, models and logs in the user's AppData stay.

Unicode true
!include "MUI2.nsh"
!include "LogicLib.nsh"
!include "x64.nsh"

!ifndef VERSION
  !define VERSION "0.1.0"
!endif
!ifndef SOURCE_DIR
  !define SOURCE_DIR "..\..\dist\gguf-launcher"
!endif
!ifndef OUT_FILE
  !define OUT_FILE "..\..\dist\gguf-launcher-${VERSION}-windows-x86_64-setup.exe"
!endif
!define APP_NAME "GGUF Launcher"
!define APP_EXE "gguf-launcher.exe"
!define CLI_EXE "gguf-launcher-cli.exe"
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\GGUFLauncher"

; The bundle layout this script installs; a missing piece stops the compile instead of shipping a broken installer.
!if ! /FileExists "${SOURCE_DIR}\${APP_EXE}"
  !error "${SOURCE_DIR}\${APP_EXE} is missing: build the bundle first (PyInstaller, packaging/gguf-launcher.spec)."
!endif
!if ! /FileExists "${SOURCE_DIR}\${CLI_EXE}"
  !error "${SOURCE_DIR}\${CLI_EXE} is missing: the Windows bundle has a console program for the commands."
!endif
!if ! /FileExists "${SOURCE_DIR}\_internal\*.*"
  !error "${SOURCE_DIR}\_internal\ is missing: the bundle's libraries are not there."
!endif

Name "${APP_NAME} ${VERSION}"
OutFile "${OUT_FILE}"
InstallDir "$PROGRAMFILES64\${APP_NAME}"
InstallDirRegKey HKLM "${UNINSTALL_KEY}" "InstallLocation"
RequestExecutionLevel admin
SetCompressor /SOLID lzma
BrandingText "${APP_NAME} ${VERSION}"
VIProductVersion "${VERSION}.0"
VIAddVersionKey /LANG=0 "ProductName" "${APP_NAME}"
VIAddVersionKey /LANG=0 "ProductVersion" "${VERSION}"
VIAddVersionKey /LANG=0 "FileVersion" "${VERSION}"
VIAddVersionKey /LANG=0 "FileDescription" "${APP_NAME} installer"
VIAddVersionKey /LANG=0 "LegalCopyright" "GGUF Launcher contributors (MIT)"

!define MUI_ABORTWARNING
!define MUI_ICON "..\..\resources\icons\gguf-launcher.ico"  ; the program's own icon (packaging/gguf-launcher.spec)
!define MUI_UNICON "..\..\resources\icons\gguf-launcher.ico"
!define MUI_FINISHPAGE_RUN "$INSTDIR\${APP_EXE}"
!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"
!insertmacro MUI_LANGUAGE "SimpChinese"

LangString NEEDS_64BIT ${LANG_ENGLISH} "${APP_NAME} needs 64-bit Windows."
LangString NEEDS_64BIT ${LANG_SIMPCHINESE} "${APP_NAME} 需要 64 位 Windows。"

Function .onInit
  ${IfNot} ${RunningX64}
    MessageBox MB_ICONSTOP "$(NEEDS_64BIT)"
    Abort
  ${EndIf}
  SetRegView 64
  !insertmacro MUI_LANGDLL_DISPLAY
FunctionEnd

Function un.onInit
  SetRegView 64
FunctionEnd

Section "Install"
  SetOutPath "$INSTDIR"
  RMDir /r "$INSTDIR\_internal"  ; an upgrade must not keep libraries the new version no longer ships
  File "${SOURCE_DIR}\${APP_EXE}"
  File "${SOURCE_DIR}\${CLI_EXE}"
  File /r "${SOURCE_DIR}\_internal"
  WriteUninstaller "$INSTDIR\uninstall.exe"
  CreateShortcut "$SMPROGRAMS\${APP_NAME}.lnk" "$INSTDIR\${APP_EXE}"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "DisplayName" "${APP_NAME}"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "Publisher" "GGUF Launcher contributors"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\${APP_EXE}"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegDWORD HKLM "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD HKLM "${UNINSTALL_KEY}" "NoRepair" 1
SectionEnd

Section "Uninstall"
  Delete "$SMPROGRAMS\${APP_NAME}.lnk"
  ; Only what the installer put there: a folder the user chose that holds other files keeps them.
  Delete "$INSTDIR\${APP_EXE}"
  Delete "$INSTDIR\${CLI_EXE}"
  RMDir /r "$INSTDIR\_internal"
  Delete "$INSTDIR\uninstall.exe"
  RMDir "$INSTDIR"
  DeleteRegKey HKLM "${UNINSTALL_KEY}"
SectionEnd
