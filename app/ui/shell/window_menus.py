"""The window's menu bar: File (open, recent, demo, quit), Server (start, stop, restart, find safe settings), Chat
(new chat, go to the message box), View (zoom), Language (English / 简体中文), Help. Every shortcut lives here."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow

from app.ui import i18n

if TYPE_CHECKING:
    from app.ui.logs.lazy_logs import LazyLogs
    from app.ui.steps.model.model_panel import ModelPanel


class WindowMenus(QObject):
    def __init__(self, window: QMainWindow, model: ModelPanel, logs: LazyLogs,
                 set_language: Callable[[str], None]) -> None:
        super().__init__(window)
        self.window, self.model = window, model
        bar = window.menuBar()
        self.file_menu = bar.addMenu("")
        self.open_action = QAction(window, shortcut=QKeySequence(QKeySequence.StandardKey.Open))
        self.open_action.triggered.connect(model.choose_file)
        self.demo_action = QAction(window)
        self.demo_action.triggered.connect(model.make_demo)
        self.quit_action = QAction(window, shortcut=QKeySequence(QKeySequence.StandardKey.Quit))
        self.quit_action.triggered.connect(window.close)
        self.file_menu.addAction(self.open_action)
        self.file_menu.addMenu(model.recent_menu)
        self.file_menu.addAction(self.demo_action)
        self.file_menu.addSeparator()
        self.file_menu.addAction(self.quit_action)
        self.server_menu = bar.addMenu("")
        self.chat_menu = bar.addMenu("")
        self.view_menu = bar.addMenu("")
        self.language_menu = bar.addMenu("")
        self.language_group = QActionGroup(self)
        self.language_actions: dict[str, QAction] = {}
        for code, name in i18n.LANGUAGES.items():  # each language in its own words: not translated
            action = QAction(name, window, checkable=True)
            action.triggered.connect(lambda _=False, c=code: set_language(c))
            self.language_group.addAction(action)
            self.language_menu.addAction(action)
            self.language_actions[code] = action
        self.help_menu = bar.addMenu("")
        self.log_folder_action = QAction(window)
        self.log_folder_action.triggered.connect(logs.open_log_folder)
        self.report_action = QAction(window)  # the window connects it to its diagnostics report
        self.about_action = QAction(window)
        self.about_action.triggered.connect(self.about)
        self.help_menu.addAction(self.log_folder_action)
        self.help_menu.addAction(self.report_action)
        self.help_menu.addAction(self.about_action)

    def add_commands(self, commands: dict[str, Callable[[], None]]) -> None:
        """The window's commands with their shortcuts: start, stop, restart, recover, probe, new_chat, focus_chat,
        zoom_in, zoom_out, zoom_reset, presenter (on/off), checklist."""
        def action(name: str, keys: list[QKeySequence | str], menu) -> QAction:
            act = QAction(self.window)
            act.triggered.connect(lambda _=False: commands[name]())
            act.setShortcuts([QKeySequence(k) for k in keys])
            act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            menu.addAction(act)
            self.command_actions[name] = act
            return act

        self.command_actions: dict[str, QAction] = {}
        action("start", ["F5"], self.server_menu)  # not Ctrl+Enter: in the message box that is a key of its own
        action("stop", ["Shift+F5"], self.server_menu)
        action("restart", ["Ctrl+R"], self.server_menu)
        action("recover", ["F8"], self.server_menu)
        self.server_menu.addSeparator()
        action("probe", ["Ctrl+P"], self.server_menu)
        action("new_chat", ["Ctrl+N"], self.chat_menu)
        action("focus_chat", ["Ctrl+L"], self.chat_menu)
        action("zoom_in", ["Ctrl++", "Ctrl+="], self.view_menu)  # Ctrl+= : the + key without Shift
        action("zoom_out", ["Ctrl+-"], self.view_menu)
        action("zoom_reset", ["Ctrl+0"], self.view_menu)
        self.view_menu.addSeparator()
        action("presenter", ["F11"], self.view_menu).setCheckable(True)
        action("checklist", [], self.view_menu)
        self.retranslate()

    def shortcut_text(self, name: str) -> str:
        """"F5" for a command: what tooltips show after their sentence."""
        act = getattr(self, "command_actions", {}).get(name)
        return act.shortcut().toString(QKeySequence.SequenceFormat.NativeText) if act is not None else ""

    def check_language(self, lang: str) -> None:
        self.language_actions[lang].setChecked(True)

    def retranslate(self) -> None:
        self.file_menu.setTitle(self.tr("&File"))
        self.open_action.setText(self.tr("&Open a GGUF model…"))
        self.model.recent_menu.setTitle(self.tr("Recent models"))
        self.demo_action.setText(self.tr("Try the &demo model"))
        self.quit_action.setText(self.tr("&Quit"))
        self.server_menu.setTitle(self.tr("&Server"))
        self.chat_menu.setTitle(self.tr("&Chat"))
        self.view_menu.setTitle(self.tr("&View"))
        names = {
            "start": self.tr("Start the server"), "stop": self.tr("Stop the server"),
            "restart": self.tr("Restart the server"), "probe": self.tr("Find safe settings"),
            "new_chat": self.tr("New chat"), "focus_chat": self.tr("Go to the message box"),
            "zoom_in": self.tr("Zoom in"), "zoom_out": self.tr("Zoom out"), "zoom_reset": self.tr("Actual size"),
            "recover": self.tr("Recover (last settings that worked, last question again)"),
            "presenter": self.tr("Presenter mode"), "checklist": self.tr("Before the talk: checklist…"),
        }
        for name, act in getattr(self, "command_actions", {}).items():
            act.setText(names[name])
        self.language_menu.setTitle(self.tr("&Language"))
        self.help_menu.setTitle(self.tr("&Help"))
        self.log_folder_action.setText(self.tr("Open the log folder"))
        self.report_action.setText(self.tr("Save a diagnostics report…"))
        self.about_action.setText(self.tr("About GGUF Launcher"))

    def about(self) -> None:
        from PySide6.QtWidgets import QMessageBox  # imported when used: faster start-up

        from app import __version__

        QMessageBox.about(self.window, self.tr("About GGUF Launcher"), self.tr(
            "GGUF Launcher {version}\nRuns a local GGUF model with llama.cpp: checks the file, plans the memory, "
            "measures safe settings, keeps the server running and lets you chat with it.").format(version=__version__))
