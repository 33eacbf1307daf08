"""`python -m app` and the `gguf-launcher` command: the desktop app, or a CLI command when one is given.

The choice is made here, so the CLI does not sit on top of the UI: ``app.cli`` never imports ``app.ui``."""

import sys


def _run_embedded_server(server_args: list[str]) -> int:
    """A packaged app has no `python -m`: the supervisor re-launches the app with this switch instead."""
    from app.core.launch.embedded_server import main as serve

    return serve(server_args)


def open_window() -> int:
    """The desktop app; a machine without the system libraries Qt needs gets a sentence, not a traceback, and
    one without those of the display plugin Qt will load gets two lines (what is missing, the install command)
    instead of Qt's abort: checked before any QApplication exists."""
    from app.core.platform import qt_libs

    missing = qt_libs.check()
    if missing is not None:
        from app.cli._output import report_user_error

        return report_user_error(missing.problem(qt_libs.distro_family()))
    try:
        from app.ui.shell.main import run_gui
    except ImportError as exc:
        from app.cli._output import report_user_error
        from app.core.problem import UserError
        from app.core.text import T

        return report_user_error(UserError(
            T("The window cannot open: a system library that Qt needs is missing ({detail}).",
              "无法打开窗口：缺少 Qt 需要的系统库（{detail}）。", detail=str(exc)),
            T("On Debian/Ubuntu run: sudo apt-get install libegl1 libgl1 libxkbcommon-x11-0 libfontconfig1 "
              "libglib2.0-0 libxcb-cursor0 libdbus-1-3 — the command-line tools (gguf-launcher --help) work meanwhile.",
              "在 Debian/Ubuntu 上运行：sudo apt-get install libegl1 libgl1 libxkbcommon-x11-0 libfontconfig1 "
              "libglib2.0-0 libxcb-cursor0 libdbus-1-3；在此期间命令行工具（gguf-launcher --help）仍可使用。")))
    return run_gui()


def main(argv: list[str] | None = None) -> int:
    from app.core.launch.config import EMBEDDED_SERVER_SWITCH
    from app.core.process.frozen import RUN_CHILD_SWITCH, restore_library_path, run_child

    restore_library_path()  # a packaged app's children get the user's LD_LIBRARY_PATH, not the bundle's
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [EMBEDDED_SERVER_SWITCH]:
        return _run_embedded_server(argv[1:])
    if argv[:1] == [RUN_CHILD_SWITCH]:  # a packaged app runs its own Python children this way (app.core.process.frozen)
        return run_child(argv[1:])
    if not argv:  # no command: the window, without importing every command's module to build the parser
        return open_window()
    from app.cli import main as run_command

    return run_command(argv, open_window=open_window)


if __name__ == "__main__":
    sys.exit(main())
