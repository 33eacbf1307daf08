"""The presenter's pre-flight checklist: one click, one row per thing that can spoil a demo, green or not, each
with what to do. Pure: every input is gathered by the caller (``PreflightInputs``); only the test question needs
the running server (``ask_test_question``)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from app.core.problem import Check, Status
from app.core.server.events import State
from app.core.text import T, Text

ANSWER_WITHIN_S = 10.0
ROOMY_FRACTION = 0.75  # memory in use below this: room to spare for a long talk
TIGHT_FRACTION = 0.85  # the watchdog's warning level


@dataclass(frozen=True)
class PreflightInputs:
    model_usable: bool
    settings: Any | None = None  # the LaunchConfig the server starts with
    recommendation: Any | None = None  # the probe's measured Recommendation for this model, if any
    engine_ok: bool | None = None  # the engine's self-test on this computer; None: never run
    server_state: State = State.STOPPED
    port_free: bool | None = None  # the settings' port, when no server of ours runs
    answer_seconds: float | None = None
    answer_error: Text | None = None
    memory_fraction: float | None = None
    battery: tuple[float, bool] | None = None  # (percent, plugged in); None: no battery
    awake: bool = False
    awake_reason: Text | None = None
    answer_within_s: float = ANSWER_WITHIN_S


def _row(check_id: str, ok: bool | None, good: Text, bad: Text, step: Text | None = None, *,
         warn: bool = False) -> Check:
    if ok:
        return Check(check_id, Status.OK, good)
    return Check(check_id, Status.WARNING if warn else Status.ERROR, bad, step)


def _engine(i: PreflightInputs) -> Check:
    return _row("engine", i.engine_ok, T("The engine runs quantized models on this computer.",
                                         "引擎可以在这台电脑上运行量化模型。"),
                T("The engine has not passed its test on this computer.", "引擎尚未在这台电脑上通过测试。"),
                T("Run the engine test in the Machine step.", "请在“本机”步骤中运行引擎测试。"))


def _model(i: PreflightInputs) -> Check:
    return _row("model", i.model_usable, T("The model passed its checks.", "模型已通过检查。"),
                T("No model that passed its checks is open.", "没有打开通过检查的模型。"),
                T("Open the model for the talk in the Model step.", "请在“模型”步骤中打开演讲要用的模型。"))


def _measured(i: PreflightInputs) -> Check:
    rec, cfg = i.recommendation, i.settings
    within = rec is not None and cfg is not None and cfg.ctx <= rec.ctx and _layers(cfg) <= rec.gpu_layers
    return _row("measured", within,
                T("The settings were measured on this computer with real loads.", "设置已在这台电脑上用真实加载测过。"),
                T("These settings were not measured on this computer.", "这些设置没有在这台电脑上测过。"),
                T("Press Find safe settings once before the talk.", "演讲前请按一次“查找安全设置”。"), warn=True)


def _layers(config: Any) -> int:
    layers = int(getattr(config, "gpu_layers", 0) or 0)
    return 0 if layers < 0 else layers


def _server(i: PreflightInputs) -> Check:
    return _row("server", i.server_state is State.READY,
                T("The server is running and warm.", "服务器正在运行，已预热。"),
                T("The server is not running.", "服务器没有运行。"),
                T("Start it now, so the first question on stage is answered at once.",
                  "请现在启动它，这样台上的第一个问题能立刻得到回答。"))


def _port(i: PreflightInputs) -> Check:
    if i.server_state is State.READY or i.port_free is None:
        return Check("port", Status.OK, T("The server's port is its own.", "服务器的端口归它使用。"))
    return _row("port", i.port_free, T("The server's port is free.", "服务器的端口空闲。"),
                T("Another program uses the server's port; the app will pick another one.",
                  "另一个程序占用了服务器的端口；应用会另选一个。"), warn=True)


def _answer(i: PreflightInputs) -> Check:
    if i.answer_error is not None:
        return Check("answer", Status.ERROR, i.answer_error,
                     T("Restart the server, then run the checklist again.", "请重启服务器，然后再运行一次检查清单。"))
    if i.answer_seconds is None:
        return Check("answer", Status.ERROR, T("No test question could be asked: the server is not running.",
                                                "无法提问测试问题：服务器没有运行。"))
    seconds = f"{i.answer_seconds:.1f}"
    if i.answer_seconds <= i.answer_within_s:
        return Check("answer", Status.OK, T("A test question was answered in {s} s.", "测试问题在 {s} 秒内得到回答。",
                                             s=seconds))
    return Check("answer", Status.WARNING,
                 T("A test question took {s} s to answer.", "测试问题用了 {s} 秒才得到回答。", s=seconds),
                 T("Use a smaller model or a shorter context for a snappy demo.",
                   "想让演示更流畅，请使用更小的模型或更短的上下文。"))


def _memory(i: PreflightInputs) -> Check:
    if i.memory_fraction is None:
        return Check("memory", Status.WARNING, T("Memory use could not be read.", "无法读取内存占用。"))
    percent = f"{100 * i.memory_fraction:.0f}"
    if i.memory_fraction < ROOMY_FRACTION:
        return Check("memory", Status.OK, T("Memory: {p} % in use, room to spare.", "内存：已用 {p}%，还有余量。",
                                             p=percent))
    status = Status.WARNING if i.memory_fraction < TIGHT_FRACTION else Status.ERROR
    return Check("memory", status,
                 T("Memory: {p} % in use, little room left.", "内存：已用 {p}%，余量不多。", p=percent),
                 T("Close other programs before the talk.", "演讲前请关闭其他程序。"))


def _power(i: PreflightInputs) -> Check:
    if i.battery is None:
        return Check("power", Status.OK, T("No battery: the computer runs on mains power.", "没有电池：电脑使用市电。"))
    percent, plugged = i.battery
    if plugged:
        return Check("power", Status.OK, T("The charger is plugged in.", "已接上充电器。"))
    return Check("power", Status.WARNING,
                 T("Running on battery ({p} %).", "正在使用电池（{p}%）。", p=f"{percent:.0f}"),
                 T("Plug in the charger: on battery the processor may slow down.",
                   "请接上充电器：使用电池时处理器可能降速。"))


def _awake(i: PreflightInputs) -> Check:
    if i.awake:
        return Check("awake", Status.OK, T("The screen is kept awake while presenting.", "演示期间屏幕保持常亮。"))
    return Check("awake", Status.WARNING, i.awake_reason or T("The screen is not kept awake.", "屏幕没有保持常亮。"))


def preflight_checks(inputs: PreflightInputs) -> list[Check]:
    """Every row, in the order a presenter reads them."""
    return [row(inputs) for row in (_engine, _model, _measured, _server, _port, _answer, _memory, _power, _awake)]


def ask_test_question(client: Any, timeout_s: float = ANSWER_WITHIN_S * 3) -> tuple[float | None, Text | None]:
    """Ask the running server a short question; (seconds to the full answer, None) or (None, the problem)."""
    from app.core.chat.params import ChatParams
    from app.core.chat.session import DONE, ERROR, ChatSession

    session = ChatSession(client, params=ChatParams(max_tokens=8), save=False)
    started = time.monotonic()
    for event in session.send("Say hello in one word."):
        if event.kind == ERROR and event.error is not None:
            return None, event.error.message
        if event.kind == DONE:
            return time.monotonic() - started, None
        if time.monotonic() - started > timeout_s:
            session.stop()
            return None, T("The test question got no answer within {s} s.", "测试问题在 {s} 秒内没有得到回答。",
                           s=f"{timeout_s:.0f}")
    return None, T("The test question got no answer.", "测试问题没有得到回答。")


def battery_state() -> tuple[float, bool] | None:
    import psutil

    try:
        battery = psutil.sensors_battery()
    except (AttributeError, NotImplementedError, OSError):  # no sensors on this platform
        return None
    return (float(battery.percent), bool(battery.power_plugged)) if battery is not None else None
