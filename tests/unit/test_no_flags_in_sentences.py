"""No sentence the window can show speaks command-line flags, exception names or Python class names.

The window and the CLI show the same core sentences (``T(en, zh)`` in app/core), so a flag in one of them reaches
window users, who have no command line. What to do is the problem's ``action``; the CLI names the flag for it
(``app.cli._hints``). Scanned, in both languages: every ``T(...)`` literal in app/core and every ``tr()`` /
``translate()`` literal in app/ui with its Chinese from the glossary. Sentences only the CLI prints live in app/cli,
which this scan skips on purpose. Besides the literals, the sentences built at run time from exceptions (a
llama-server that is missing, every crash diagnosis from its log line) are rendered and scanned too; the probe's
sentences for a broken test prompt are checked in tests/unit/core/probe/test_judgement.py.
"""

from __future__ import annotations

import ast
import builtins
import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.paths import ROOT

APP = ROOT / "app"
GLOSSARY = ROOT / "resources" / "translations" / "zh_CN.json"

FLAG = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*")
EXCEPTION = re.compile(r"\b\w+(?:Error|Exception):|\b[A-Z]\w*(?:Error|Exception)\b|\bException\b|Traceback")
CAMEL_CASE = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+")

# Commands for other programs that the user has to type there: the sentence cannot say it without their flags.
OTHER_PROGRAMS = {
    "wsl": "WSL's own command, typed in Windows PowerShell (app/core/hardware/notes.py)",
    "docker": "how a container is started with GPU access, typed where the container is started",
}
_QUOTED_COMMAND = re.compile(r"`(?P<program>[\w.-]+) [^`]*`")


@dataclass(frozen=True)
class Sentence:
    where: str
    text: str


def _literal(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left), _literal(node.right)
        return left + right if left is not None and right is not None else None
    return None


@functools.cache
def _tree(path: Path) -> ast.Module:
    """The parsed source, once per run: several scans below read the same files (nothing changes a tree)."""
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _calls(path: Path):
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            yield name, node


def core_sentences() -> list[Sentence]:
    """Every T("en", "zh") and Text("en", "zh") literal in app/core, both languages."""
    found = []
    for path in sorted((APP / "core").rglob("*.py")):
        for name, call in _calls(path):
            if name in ("T", "Text") and len(call.args) >= 2:
                where = f"{path.relative_to(ROOT)}:{call.lineno}"
                found += [Sentence(where, text) for text in map(_literal, call.args[:2]) if text]
    return found


def ui_sentences() -> list[Sentence]:
    """Every tr("...") and translate(context, "...") literal in app/ui, and its Chinese from the glossary."""
    glossary = json.loads(GLOSSARY.read_text(encoding="utf-8"))
    found = []
    for path in sorted((APP / "ui").rglob("*.py")):
        for name, call in _calls(path):
            index = {"tr": 0, "translate": 1}.get(name or "")
            if index is None or len(call.args) <= index:
                continue
            text = _literal(call.args[index])
            if text:
                where = f"{path.relative_to(ROOT)}:{call.lineno}"
                found += [Sentence(where, text)] + ([Sentence(where, glossary[text])] if glossary.get(text) else [])
    return found


@functools.cache
def python_class_names() -> frozenset[str]:
    """Names a sentence must not show: the app's own classes (CamelCase ones: a one-word class such as ``Check`` is
    an English word too), Python's exceptions and httpx's."""
    names = set()
    for path in APP.rglob("*.py"):
        names |= {node.name for node in ast.walk(_tree(path))
                  if isinstance(node, ast.ClassDef) and CAMEL_CASE.fullmatch(node.name.lstrip("_"))}
    names |= {name for name, value in vars(builtins).items()
              if isinstance(value, type) and issubclass(value, BaseException) and CAMEL_CASE.fullmatch(name)}
    import httpx

    names |= {name for name, value in vars(httpx).items() if isinstance(value, type) and issubclass(value, Exception)}
    return frozenset(name.lstrip("_") for name in names)


def _without_other_programs(text: str) -> str:
    return _QUOTED_COMMAND.sub(lambda m: "" if m["program"] in OTHER_PROGRAMS else m[0], text)


def problems(sentences: list[Sentence]) -> list[str]:
    classes = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, python_class_names()))) + r")\b")
    found = []
    for sentence in sentences:
        text = _without_other_programs(sentence.text)
        for kind, pattern in (("a flag", FLAG), ("an exception name", EXCEPTION), ("a class name", classes)):
            match = pattern.search(text)
            if match:
                found.append(f"{sentence.where}: {kind} ({match[0]!r}) in {sentence.text!r}")
    return found


def test_the_scan_sees_the_sentences_of_both_faces_in_both_languages():
    core, ui = core_sentences(), ui_sentences()
    assert len(core) > 700 and len(ui) > 400, (len(core), len(ui))
    cjk = re.compile(r"[\u4e00-\u9fff]")
    assert sum(bool(cjk.search(s.text)) for s in core) > 400 and sum(bool(cjk.search(s.text)) for s in ui) > 150
    assert problems([Sentence("x", "Use --backend embedded.")]) and problems([Sentence("x", "OSError: gone")])
    assert problems([Sentence("x", "RemoteProtocolError")]) and problems([Sentence("x", "see LaunchConfig")])
    assert not problems([Sentence("x", "Run `wsl --update` in PowerShell; a 1--2 GB file.")])


def test_no_core_sentence_speaks_flags_or_exception_names():
    assert problems(core_sentences()) == []


def test_no_window_sentence_speaks_flags_or_exception_names():
    assert problems(ui_sentences()) == []


def _rendered(problem) -> list[Sentence]:
    texts = [problem.message, problem.next_step] if hasattr(problem, "next_step") else [problem]
    return [Sentence(repr(problem), text.render(lang)) for text in texts if text is not None for lang in ("en", "zh")]


def test_a_missing_llama_server_is_told_without_flags(monkeypatch, tmp_path):
    from app.core.launch import discovery
    from app.core.problem import Fix, UserError

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("GGUF_LAUNCHER_LLAMA_SERVER", raising=False)
    monkeypatch.setattr(discovery, "common_locations", lambda: [])
    monkeypatch.setattr(discovery, "shipped_llama_server", lambda: None)  # as if the set-up could not build it
    for user_path in (None, str(tmp_path / "nowhere" / "llama-server")):
        with pytest.raises(UserError) as raised:
            discovery.find_llama_server(user_path)
        assert problems(_rendered(raised.value)) == []
        assert raised.value.action is not None and raised.value.action.kind is Fix.CHOOSE_SERVER_BIN
        assert "Settings" in raised.value.next_step.render("en")


def test_the_cli_still_names_the_flags_for_that_fix():
    from app.cli._output import problem_lines
    from app.core.launch.discovery import CHOOSE_SERVER_BIN
    from app.core.problem import UserError
    from app.core.text import T

    error = UserError(T("No llama-server.", "没有 llama-server。"), T("Choose one.", "请选择。"),
                      action=CHOOSE_SERVER_BIN)
    lines = problem_lines(error, lead="error: ", step="next step: ")
    assert lines[1].startswith("next step: Choose one.") and "--server-bin PATH" in lines[1]
    assert "--backend embedded" in lines[1]


# The one diagnosis whose sentence names a flag: the option the user typed into the extra arguments themselves.
NAMES_THE_USERS_OWN_OPTION = {"bad_argument"}


def test_every_crash_diagnosis_is_told_without_flags_or_exception_names():
    from tests.unit.core.diagnosis.test_diagnose import ONE_LINE_CASES, _one_line_diagnosis

    for cause in sorted(set(ONE_LINE_CASES) - NAMES_THE_USERS_OWN_OPTION):
        diagnosis = _one_line_diagnosis(cause)
        assert problems(_rendered(diagnosis)) == [], cause
