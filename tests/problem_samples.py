"""One problem in each of the four shapes that carry it (check, user error, chat error, crash diagnosis), all with
the same sentence, next step, evidence and fix: the renderers must show them alike."""

from __future__ import annotations

from app.core.chat import errors
from app.core.chat.errors import ChatError
from app.core.diagnosis.value import Diagnosis
from app.core.problem import Check, Problem, Status, UserError, change_settings
from app.core.text import T

MESSAGE = T("Port 8080 is already in use.", "端口 8080 已被占用。")
NEXT_STEP = T("Pick a free port and start again.", "请选择一个空闲端口后重新启动。")
EVIDENCE = ("bind: Address already in use", "listen on 127.0.0.1:8080 failed")
ACTION = change_settings({"port": 0})


def four_kinds() -> dict[str, Problem]:
    return {
        "check": Check("port", Status.ERROR, MESSAGE, NEXT_STEP, EVIDENCE, ACTION),
        "user_error": UserError(MESSAGE, NEXT_STEP, list(EVIDENCE), action=ACTION),
        "chat_error": ChatError(errors.SERVER_CRASHED, MESSAGE, NEXT_STEP, evidence=EVIDENCE, action=ACTION),
        "diagnosis": Diagnosis(cause="port_in_use", message=MESSAGE, next_step=NEXT_STEP, action=ACTION,
                               evidence=EVIDENCE),
    }
