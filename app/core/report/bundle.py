"""``write_report()``: one zip for whoever helps the user, with everything redacted (``redact.Redactor``).

Inside: ``README.txt`` (what each file is), ``scan.json`` (machine), ``engine.json`` (engine builds and their
self-tests), ``settings.json`` (app settings and the model's profile, secrets removed), ``doctor.json`` and
``plan.json`` for the model (the last one opened unless another is named), ``probe.json`` (its cached
"Find safe settings" result), ``diagnoses.json`` (the servers' last diagnoses) and ``logs/`` (the last
``LOG_LINES`` lines of each server log and of the app's own log). A part that cannot be made is listed in
``problems.txt`` and the rest is still written; the zip itself appears whole or not at all.
"""

from __future__ import annotations

import io
import json
import logging
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.atomic import write_bytes_atomic
from app.core.paths import data_dir, log_dir
from app.core.problem import UserError
from app.core.report.redact import Redactor
from app.core.text import T, Text

logger = logging.getLogger(__name__)

LOG_LINES = 3000
MAX_LOG_FILES = 40  # the newest server logs; older ones say nothing about the problem at hand


@dataclass(frozen=True)
class ReportOptions:
    out: Path | None = None  # the zip to write; None: a new name in reports_dir()
    model: str | None = None  # the model to check and plan; None: the last one opened
    keep_host_names: bool = False
    log_lines: int = LOG_LINES


@dataclass
class ReportResult:
    path: Path
    files: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # parts that could not be made, in English

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "files": self.files, "problems": self.problems}


def reports_dir() -> Path:
    return data_dir() / "reports"


def _default_path() -> Path:
    return reports_dir() / time.strftime("gguf-launcher-report-%Y%m%d-%H%M%S.zip")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1, default=str, sort_keys=True) + "\n"


# --- the parts -----------------------------------------------------------------------------------------------


def _scan() -> str:
    from app.core.hardware.scan import scan_hardware

    return _json(scan_hardware().to_dict())


def _engine() -> str:
    from app.core.engine import build_record, selftest

    builds = {name: vars(record) for name, record in build_record.read_all().items()}
    checks = {}
    for engine in ("embedded", "llama-server"):
        check = selftest.cached(engine)
        checks[engine] = check.to_dict() if check is not None else None
    return _json({"builds": builds, "self_tests": checks})


def _model_parts(settings, model: str | None) -> dict[str, str]:
    """doctor.json, plan.json and probe.json for ``model`` (no model known: none of them)."""
    if not model:
        return {}
    from app.core.gguf.validate import validate
    from app.core.hardware.scan import scan_hardware
    from app.core.plan.memory import make_plan
    from app.core.session import launch_config_for, with_engine

    parts: dict[str, str] = {}
    profile = settings.profile(model)
    parts["probe.json"] = _json(profile.get("probe"))
    report = validate(model, compute_sha256=False)
    parts["doctor.json"] = _json(report.to_dict("en"))
    if report.info is not None and not report.has_errors:
        config = with_engine(launch_config_for(model, report.info, profile.get("launch_config")),
                             settings.engine_for(model))
        parts["plan.json"] = _json({"config": config.to_dict(),
                                    "plan": make_plan(report.info, config, scan_hardware()).to_dict("en")})
    return parts


def _diagnoses() -> str:
    from app.core.server.diagnosis_log import read_diagnoses

    return _json(read_diagnoses())


def _tail(path: Path, lines: int) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        kept = handle.readlines()[-lines:]
    return "".join(kept)


def _log_files() -> list[Path]:
    folder = log_dir()
    logs = [p for p in folder.glob("*.log") if p.is_file()] if folder.is_dir() else []
    return sorted(logs, key=lambda p: p.stat().st_mtime, reverse=True)[:MAX_LOG_FILES]


def _secrets_of(settings) -> list[str]:
    """API keys the app knows (a saved launch config may hold one)."""
    found = []
    for profile in settings.data.get("profiles", {}).values():
        config = profile.get("launch_config") if isinstance(profile, dict) else None
        if isinstance(config, dict) and isinstance(config.get("api_key"), str):
            found.append(config["api_key"])
    return found


def _readme(files: list[str], problems: list[str], keep_host: bool) -> str:
    lines = ["GGUF Launcher diagnostics report", time.strftime("made %Y-%m-%d %H:%M:%S %z"), "",
             "Redacted: API keys and tokens (<secret>), the home folder (~), the user name (<user>)"
             + ("" if keep_host else ", the host name (<host>)") + ".", "", "Files:"]
    lines += [f"  {name}" for name in files]
    if problems:
        lines += ["", "Parts that could not be made (see problems.txt):"] + [f"  {p}" for p in problems]
    return "\n".join(lines) + "\n"


def _attempt(name: str, make: Callable[[], Any], problems: list[str]) -> Any:
    """One part of the report; whatever goes wrong in it is listed and the report goes on without it."""
    try:
        return make()
    except UserError as error:
        problems.append(f"{name}: {error.message.render('en')}")
    except Exception as error:  # a report is asked for when things are broken: keep the other parts
        logger.warning("diagnostics report: %s failed", name, exc_info=True)
        problems.append(f"{name}: {type(error).__name__}: {error}")
    return None


def collect(options: ReportOptions) -> tuple[dict[str, str], list[str]]:
    """The report's files (name -> redacted text) and the parts that failed."""
    from app.core.settings import load_settings

    settings = load_settings()
    model = options.model or settings.last_model
    redactor = Redactor.for_this_machine(_secrets_of(settings), keep_host=options.keep_host_names)
    problems: list[str] = []
    files: dict[str, str] = {}
    for name, make in (("scan.json", _scan), ("engine.json", _engine), ("diagnoses.json", _diagnoses)):
        text = _attempt(name, make, problems)
        if text is not None:
            files[name] = text
    files["settings.json"] = _json(redactor.value(settings.data))
    files.update(_attempt("model", lambda: _model_parts(settings, model), problems) or {})
    for path in _attempt("logs", _log_files, problems) or []:
        text = _attempt(f"logs/{path.name}", lambda p=path: _tail(p, options.log_lines), problems)
        if text is not None:
            files[f"logs/{path.name}"] = text
    files = {redactor.text(name): redactor.text(text) for name, text in files.items()}
    problems = [redactor.text(problem) for problem in problems]
    return files, problems


def write_report(options: ReportOptions | None = None) -> ReportResult:
    """Write the zip; raises ``UserError`` only when the zip itself cannot be written (with where and why)."""
    options = options or ReportOptions()
    files, problems = collect(options)
    if problems:
        files["problems.txt"] = "\n".join(problems) + "\n"
    names = ["README.txt", *sorted(files)]
    files["README.txt"] = _readme(names, problems, options.keep_host_names)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in names:
            archive.writestr(name, files[name])
    path = Path(options.out) if options.out is not None else _default_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, buffer.getvalue())
    except OSError as error:
        raise UserError(cannot_write(path),
                        T("Choose another folder with free space.", "请选择另一个有空闲空间的文件夹。"),
                        (str(error),)) from error
    return ReportResult(path, names, problems)


def cannot_write(path: Path) -> Text:
    return T("The diagnostics report could not be written to {path}.", "无法把诊断报告写入 {path}。", path=str(path))
