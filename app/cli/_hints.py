"""The command-line flags a fix means, for the CLI only.

Core sentences never name flags: the window shows the same sentences, and its users have no command line. A problem's
``action`` says what to do as data; here the CLI turns the kinds that a flag answers into a short hint after the next
step ("(on the command line: --server-bin PATH, or --backend embedded)").
"""

from __future__ import annotations

from app.core.problem import Fix, FixAction
from app.core.text import T, Text


def flag_hint(action: FixAction | None) -> Text | None:
    """The flags that apply ``action`` on the command line; None when no flag does."""
    if action is None:
        return None
    if action.kind is Fix.CHOOSE_SERVER_BIN:
        return T("on the command line: --server-bin PATH, or --backend embedded",
                 "命令行：--server-bin 路径，或 --backend embedded")
    if action.kind is Fix.SWITCH_ENGINE and action.get("engine"):
        return T("on the command line: --backend {engine}", "命令行：--backend {engine}", engine=action.get("engine"))
    return None


def with_flag_hint(next_step: Text | str, action: FixAction | None) -> str:
    """The next step as the CLI prints it: the sentence, then the flags in brackets when a flag applies it."""
    hint = flag_hint(action)
    return f"{next_step} ({hint})" if hint is not None else str(next_step)
