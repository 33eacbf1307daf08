; Inno Setup script: packages the PyInstaller output into one Windows installer.
;   1. pyinstaller --noconfirm packaging\gguf-launcher.spec      (from the repo root; makes dist\gguf-launcher\)
;   2. iscc installers\windows\gguf-launcher.iss                  (makes dist\installer\gguf-launcher-<version>-setup.exe)
; Installs per user by default (no administrator needed); settings, logs and models in the user's
; AppData are left in place on uninstall.

#define AppName "GGUF Launcher"
#define AppVersion "0.1.0"
#define AppExe "gguf-launcher.exe"
#define SourceDir "..\..\dist\gguf-launcher"

[Setup]
AppId={{60AC3076-6663-414B-85D1-62CE0E77ED76}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=GGUF Launcher contributors
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir=..\..\dist\installer
OutputBaseFilename=gguf-launcher-{#AppVersion}-setup
Compression=lzma2
SolidCompression=yes
WizardStyle=modern
UninstallDisplayIcon={app}\{#AppExe}
UninstallDisplayName={#AppName}

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"
; Add a Chinese installer UI where ChineseSimplified.isl (an Inno Setup translation) is installed:
; Name: "chinesesimplified"; MessagesFile: "compiler:Languages\ChineseSimplified.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#AppExe}"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; Tasks: desktopicon

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

