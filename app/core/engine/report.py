"""An engine self-test (or its absence) as the one problem shape every face renders: a Check row."""

from __future__ import annotations

from app.core.engine import build_record
from app.core.engine.selftest import EngineCheck
from app.core.problem import Check, Fix, FixAction, Status, fix_action
from app.core.text import T, Text

CHECK_ID = "engine_runs"


def engine_name(engine: str) -> Text:
    if engine == "embedded":
        return T("The built-in engine", "内置引擎")
    return T("The llama-server engine", "llama-server 引擎")


def check_row(check: EngineCheck | None, engine: str, server_bin: str | None = None) -> Check:
    name = engine_name(engine)
    if check is None:
        return Check(CHECK_ID, Status.WARNING,
                     T("{engine} has not been tested on this processor yet.",
                       "{engine}尚未在这台电脑的处理器上测试过。",
                       engine=name),
                     T("Run the engine test (it takes a few seconds).", "请运行引擎测试（只需几秒）。"),
                     action=fix_action(Fix.TEST_ENGINE, engine=engine))
    evidence = tuple(f"{r.quant}: {r.outcome.value}{' — ' + r.detail if r.detail else ''}" for r in check.results)
    if check.ok:
        return Check(CHECK_ID, Status.OK,
                     T("{engine} runs quantized models on this processor ({types}).",
                       "{engine}可以在这台电脑的处理器上运行量化模型（{types}）。",
                       engine=name, types=", ".join(r.quant for r in check.results)), evidence=evidence)
    if check.illegal_instruction:
        return illegal_instruction_row(engine, server_bin, evidence)
    first = check.failed()[0]
    return Check(CHECK_ID, Status.ERROR,
                 T("{engine} could not run a {quant} model here: {detail}.",
                   "{engine}在这里无法运行 {quant} 模型：{detail}。",
                   engine=name, quant=first.quant, detail=first.detail.rstrip(".")),
                 _other_engine_fix(engine), evidence=evidence, action=switch_to(_other(engine)))


def illegal_instruction_row(engine: str, server_bin: str | None = None, evidence: tuple[str, ...] = ()) -> Check:
    """The true sentence for SIGILL: which instruction set, whether it was built here, and the way out."""
    name = engine_name(engine)
    record = build_record.for_engine(engine, server_bin)
    faulting = ", ".join(feature.label for feature in _faulting_here())
    if record is None:
        message = T("{engine} uses processor instructions that this computer cannot run, so every quantized model "
                    "stops it.", "{engine}使用了这台电脑无法运行的处理器指令，因此任何量化模型都会让它停止。",
                    engine=name)
    elif faulting:
        message = T("{engine} was built on this computer, yet quantized models stop it with an illegal instruction: "
                    "this processor advertises {features} but cannot run it here.",
                    "{engine}是在这台电脑上构建的，但量化模型仍因非法指令让它停止："
                    "这台处理器声称支持 {features}，但在这里无法运行。",
                    engine=name, features=faulting)
    else:
        message = T("{engine} was built on this computer, yet quantized models stop it with an illegal instruction.",
                    "{engine}是在这台电脑上构建的，但量化模型仍因非法指令让它停止。", engine=name)
    if engine != "embedded":  # only the built-in engine is built by this app; another llama-server is the user's
        return Check(CHECK_ID, Status.ERROR, message, _other_engine_fix(engine), evidence=evidence,
                     action=switch_to(_other(engine)))
    fix = T("Rebuild the engine for this processor (a few minutes), or use the other engine.",
            "为这台处理器重新构建引擎（需要几分钟），或改用另一个引擎。")
    return Check(CHECK_ID, Status.ERROR, message, fix, evidence=evidence,
                 action=fix_action(Fix.REBUILD_ENGINE, engine=engine))


def switch_to(engine: str) -> FixAction:
    """The fix "use the other engine": switch to ``engine``."""
    return fix_action(Fix.SWITCH_ENGINE, engine=engine)


def _faulting_here() -> list:
    from app.core.engine import isa_cache

    try:
        return isa_cache.current_report().unusable()
    except OSError:
        return []


def _other(engine: str) -> str:
    return "llama-server" if engine == "embedded" else "embedded"


def _other_engine_fix(engine: str) -> Text:
    if engine == "embedded":
        return T("Choose a llama-server file in Settings, or rebuild the built-in engine.",
                 "请在设置中选择 llama-server 文件，或重新构建内置引擎。")
    return T("Use the built-in engine, or choose another llama-server file.",
             "请改用内置引擎，或选择另一个 llama-server 文件。")
