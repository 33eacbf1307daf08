"""Prove that an engine's CPU kernels run on this computer: load small quantized models and generate.

F16/F32 models never reach the quantized matrix-multiply kernels, so an engine can pass every other test and
still die with SIGILL on the first real model (AMX kernels in a VM that advertises AMX but cannot run it).
The self-test quantizes a tiny generated model with llama.cpp's own quantizer (Q4_0, Q4_1, Q8_0, Q4_K_M), then
each engine loads every file and generates a few tokens. The result is cached per engine build and processor,
so scan, doctor and the Machine step can say whether the chosen engine runs here without running it again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from app.core import paths
from app.core.atomic import write_json_atomic
from app.core.bounded_json import read_json
from app.core.engine.isa_cache import cpu_fingerprint
from app.core.process.frozen import child_argv

log = logging.getLogger(__name__)

SELFTEST_QUANTS = ("Q4_0", "Q4_1", "Q8_0", "Q4_K_M")
GENERATE_TOKENS = 4
CHILD_TIMEOUT_S = 120.0


class Outcome(StrEnum):
    RUNS = "runs"
    CRASHED = "crashed"  # the engine died: SIGILL and the like
    FAILED = "failed"  # it did not load or generate, without dying


@dataclass(frozen=True)
class QuantResult:
    quant: str
    outcome: Outcome
    detail: str = ""  # "4 tokens in 0.05 s" or the cause ("killed by SIGILL", the engine's last line)

    @property
    def illegal_instruction(self) -> bool:
        return self.outcome is Outcome.CRASHED and "SIGILL" in self.detail


@dataclass(frozen=True)
class EngineCheck:
    engine: str  # "embedded" | "llama-server"
    build: str  # fingerprint of the engine build
    cpu: str  # fingerprint of the processor
    results: tuple[QuantResult, ...]
    seconds: float
    checked_at: float

    @property
    def ok(self) -> bool:
        return bool(self.results) and all(r.outcome is Outcome.RUNS for r in self.results)

    @property
    def illegal_instruction(self) -> bool:
        return any(r.illegal_instruction for r in self.results)

    def failed(self) -> list[QuantResult]:
        return [r for r in self.results if r.outcome is not Outcome.RUNS]

    def to_dict(self) -> dict:
        return {"engine": self.engine, "build": self.build, "cpu": self.cpu, "ok": self.ok,
                "illegal_instruction": self.illegal_instruction, "seconds": round(self.seconds, 2),
                "checked_at": self.checked_at,
                "results": [{"quant": r.quant, "outcome": r.outcome.value, "detail": r.detail} for r in self.results]}

    @classmethod
    def from_dict(cls, data: dict) -> EngineCheck:
        results = tuple(QuantResult(r["quant"], Outcome(r["outcome"]), r.get("detail", "")) for r in data["results"])
        return cls(data["engine"], data["build"], data["cpu"], results, float(data.get("seconds", 0.0)),
                   float(data.get("checked_at", 0.0)))


# --- fingerprints and cache -------------------------------------------------------------------------------------


def _stat_key(path: Path) -> str:
    try:
        info = path.stat()
    except OSError:
        return f"{path}:missing"
    return f"{path}:{info.st_size}:{int(info.st_mtime)}"


def engine_files(engine: str, server_bin: str | None) -> list[Path]:
    """The files whose change means another build: the library or binary and its ggml libraries.

    ``server_bin`` counts only for the llama-server engine: the built-in engine is the same build whatever
    llama-server the settings also name (else switching back to it would re-run a self-test it already passed)."""
    if engine == "embedded":
        import importlib.util

        spec = importlib.util.find_spec("llama_cpp")
        if spec is None or not spec.origin:
            return []
        folder = Path(spec.origin).parent / "lib"
    else:
        folder = Path(server_bin or "").resolve().parent
    files = sorted(p for p in folder.glob("*") if "ggml" in p.name or "llama" in p.name) if folder.is_dir() else []
    if server_bin and engine != "embedded":
        files.insert(0, Path(server_bin).resolve())
    return files


def build_fingerprint(engine: str, server_bin: str | None = None) -> str:
    keys = [engine] + [_stat_key(p) for p in engine_files(engine, server_bin)]
    return hashlib.sha256("\n".join(keys).encode()).hexdigest()[:16]


def _cache_file() -> Path:
    return paths.cache_dir() / "engine-check.json"


def cached(engine: str, server_bin: str | None = None) -> EngineCheck | None:
    """The last self-test of exactly this engine build on this processor, if there is one."""
    try:
        entries = read_json(_cache_file())
        data = entries.get(f"{engine}:{build_fingerprint(engine, server_bin)}:{cpu_fingerprint()}")
        return EngineCheck.from_dict(data) if data else None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.debug("no usable engine check cache: %s", exc)
        return None


def store(check: EngineCheck) -> None:
    """Keep a self-test result as the one for its engine build and processor."""
    try:
        entries = read_json(_cache_file())
    except (OSError, ValueError):
        entries = {}
    entries[f"{check.engine}:{check.build}:{check.cpu}"] = check.to_dict()
    write_json_atomic(_cache_file(), entries)


# --- the models --------------------------------------------------------------------------------------------------


def selftest_models(quants: tuple[str, ...] = SELFTEST_QUANTS) -> dict[str, Path]:
    """A tiny generated llama quantized by llama.cpp's quantizer; made once and kept in the cache folder.

    Rows of 256 values, because K-quants need them (llama.cpp falls back to another type otherwise)."""
    from app.core.gguf.quantize import quantize
    from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama

    folder = paths.cache_dir() / "engine-check-models"
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "selftest-f32.gguf"
    if not source.is_file():
        write_tiny_llama(source, TinyModelSpec(n_layers=1, n_embd=256, n_head=4, n_head_kv=4, n_ff=512,
                                               name="engine-selftest"))
    models = {}
    for quant in quants:
        target = folder / f"selftest-{quant}.gguf"
        if not target.is_file():
            quantize(source, quant, target)
        models[quant] = target
    return models


# --- running them -------------------------------------------------------------------------------------------------


def checked(engine: str, server_bin: str | None, run_models: Callable[[dict[str, Path]], tuple[QuantResult, ...]],
            *, use_cache: bool = True) -> EngineCheck:
    """The kept self-test of this engine build on this processor, or a new one, kept: ``run_models`` loads the
    self-test models in the engine (the built-in one here, llama-server in app.core.server.engine_check)."""
    if use_cache and (previous := cached(engine, server_bin)) is not None:
        return previous
    started = time.monotonic()
    results = run_models(selftest_models())
    check = EngineCheck(engine, build_fingerprint(engine, server_bin), cpu_fingerprint(), results,
                        time.monotonic() - started, time.time())
    store(check)
    return check


def run_embedded_check(server_bin: str | None = None, *, use_cache: bool = True) -> EngineCheck:
    """The built-in engine's self-test: each model loaded in a child process (no server)."""
    return checked("embedded", server_bin, _check_embedded, use_cache=use_cache)


def _check_embedded(models: dict[str, Path]) -> tuple[QuantResult, ...]:
    """One child loads the files in turn; when one kills it, that file is marked and a new child goes on."""
    pending = list(models.items())
    results: list[QuantResult] = []
    while pending:
        done = _embedded_child_run(pending)
        results += done
        pending = pending[len(done):]
    return tuple(results)


def _embedded_child_run(pending: list[tuple[str, Path]]) -> list[QuantResult]:
    argv = child_argv("engine-selftest", [f"{quant}={path}" for quant, path in pending])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[3]),
                                                      os.environ.get("PYTHONPATH", "")]))
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, env=env, check=False)
        stdout, stderr, returncode = done.stdout, done.stderr, done.returncode
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        stderr, returncode = "", None
    results = [QuantResult(e["quant"], Outcome(e["outcome"]), e["detail"])
               for e in map(json.loads, filter(None, stdout.splitlines())) if e.get("outcome")]
    if len(results) < len(pending):  # the child died (or hung) on the next file
        quant = pending[len(results)][0]
        if returncode is None:
            results.append(QuantResult(quant, Outcome.FAILED, f"no answer within {CHILD_TIMEOUT_S:.0f} s"))
        else:
            from app.core.engine.cpu_isa import _verdict_from_exit

            _, reason = _verdict_from_exit(returncode, stderr)
            outcome = Outcome.CRASHED if returncode < 0 else Outcome.FAILED
            results.append(QuantResult(quant, outcome, reason))
    return results


def _embedded_child(specs: list[str]) -> None:
    """Child side: load each model with llama-cpp-python and generate a few tokens, one JSON line per model."""
    import llama_cpp

    for spec in specs:
        quant, _, path = spec.partition("=")
        started = time.monotonic()
        try:
            llm = llama_cpp.Llama(model_path=path, n_ctx=64, n_batch=32, n_threads=1, seed=0, verbose=False)
            out = llm.create_completion("Hello", max_tokens=GENERATE_TOKENS, temperature=0.0,
                                        logit_bias={llm.token_eos(): -1000.0})
            assert isinstance(out, dict)  # one response, not chunks: stream was not asked for
            usage = out.get("usage")
            if usage is None:
                raise ValueError("the completion reported no token usage")
            tokens = int(usage["completion_tokens"])
            line = {"quant": quant, "outcome": Outcome.RUNS.value if tokens > 0 else Outcome.FAILED.value,
                    "detail": f"{tokens} tokens in {time.monotonic() - started:.2f} s"}
            del llm
        except Exception as exc:  # noqa: BLE001 - reported to the parent as this file's failure
            line = {"quant": quant, "outcome": Outcome.FAILED.value, "detail": str(exc)[:300]}
        print(json.dumps(line), flush=True)
