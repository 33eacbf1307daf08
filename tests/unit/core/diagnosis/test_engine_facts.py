"""An illegal instruction is explained from the facts its caller passes (EngineFacts): the crash decoder imports no
engine module and runs no instruction-set probe of its own."""

from __future__ import annotations

import ast

from app.core.diagnosis import EngineFacts, diagnose, is_illegal_instruction
from app.core.launch.config import LaunchConfig
from app.core.problem import Fix, FixAction, change_settings
from app.core.server.crash import engine_facts
from tests.paths import ROOT

SYSTEM_INFO = ("system_info: n_threads = 1 (n_threads_batch = 1) / 2 | CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | "
               "AVX512 = 1 | OPENMP = 1 |")


def test_the_extension_the_caller_says_is_missing_is_named():
    facts = EngineFacts(missing={"AVX512": "AVX-512"})
    result = diagnose(-4, [SYSTEM_INFO, "Illegal instruction"], LaunchConfig(model="m.gguf", backend="embedded"),
                      engine=facts)
    assert result.cause == "illegal_instruction"
    assert "AVX-512" in result.message.render("en") and "AVX-512" in result.message.render("zh")
    assert result.action == FixAction(Fix.REBUILD_ENGINE, {"engine": "embedded"})


def test_without_facts_the_general_sentence_stands():
    result = diagnose(-4, [SYSTEM_INFO, "Illegal instruction"], LaunchConfig(model="m.gguf", backend="llama-server"))
    assert "processor feature" in result.message.render("en")
    assert result.action == change_settings({"backend": "embedded"})


def test_a_built_here_engine_gets_the_rebuild_only_when_the_caller_says_so():
    config = LaunchConfig(model="m.gguf", backend="embedded")
    built = diagnose(-4, ["Illegal instruction"], config, engine=EngineFacts(builtin_built_here=True))
    unknown = diagnose(-4, ["Illegal instruction"], config, engine=EngineFacts(builtin_built_here=False))
    assert built.action == FixAction(Fix.REBUILD_ENGINE, {"engine": "embedded"})
    assert "built on this computer" in built.message.render("en")
    assert "built on this computer" not in unknown.message.render("en")


def test_the_caller_gathers_facts_for_an_illegal_instruction_only():
    assert [code for code in (-4, 132, 0xC000001D, -11, 1, 0, None) if is_illegal_instruction(code)] == [
        -4, 132, 0xC000001D]
    assert engine_facts(-11) is None and engine_facts(0) is None
    facts = engine_facts(-4)
    assert isinstance(facts, EngineFacts)
    assert not set(facts.faulting) & set(facts.missing)  # a flag is either faulting or not advertised


def test_the_crash_decoder_imports_no_engine_module():
    """Not even inside a function: the ISA probe must not start while a crash is being diagnosed."""
    found = []
    for path in sorted((ROOT / "app" / "core" / "diagnosis").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("app.core.engine"):
                found.append(f"{path.name}:{node.lineno}")
            elif isinstance(node, ast.Import):
                found += [f"{path.name}:{node.lineno}" for a in node.names if a.name.startswith("app.core.engine")]
    assert found == []
