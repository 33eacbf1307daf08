"""benchmarks/run_all.py: every benchmark runs to its report, and one that does not is one line with its reason.

The slow test runs the whole set in its short mode (one run each, the smallest inputs), so a benchmark that drifted
from the code it measures fails ./test instead of waiting for someone to run it by hand."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import run_all
from tests.paths import ROOT

BENCHMARKS = sorted(p.name for p in (ROOT / "benchmarks").glob("bench_*.py"))
SHORT_SET_LIMIT_S = 1500  # the set takes ~2.5 min on a busy 2-core machine; a hung benchmark is cut at 600 s


def _script(folder: Path, body: str) -> Path:
    path = folder / "bench_probe_of_run_all.py"
    path.write_text("import sys\nsys.path.insert(0, {!r})\nimport harness\n\n".format(str(ROOT / "benchmarks")) + body,
                    encoding="utf-8")
    return path


def _run(script: Path, tmp_path: Path, limit_s: float = 60) -> run_all.Outcome:
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    return run_all.run_one(script, dict(os.environ), limit_s, logs)


def test_an_exception_is_one_line_with_its_reason(tmp_path):
    script = _script(tmp_path, "def main():\n    raise TypeError('f() missing 1 required positional argument: x')\n"
                               "sys.exit(harness.guarded(main))\n")
    outcome = _run(script, tmp_path)
    assert outcome.failure == "TypeError: f() missing 1 required positional argument: x"
    assert "Traceback" in (tmp_path / "logs" / f"{script.stem}.stderr.log").read_text()  # kept in the log, not shown


def test_a_missing_input_is_a_failure_that_says_why(tmp_path):
    script = _script(tmp_path, "def main():\n"
                               "    raise harness.BenchFailure('SmolLM2 could not be fetched: no network')\n"
                               "sys.exit(harness.guarded(main))\n")
    assert _run(script, tmp_path).failure == "SmolLM2 could not be fetched: no network"


def test_a_crash_without_the_guard_names_how_it_ended(tmp_path):
    script = _script(tmp_path, "import os, signal\nprint('oops', file=sys.stderr, flush=True)\n"
                               "os.kill(os.getpid(), signal.SIGKILL)\n")
    assert _run(script, tmp_path).failure == "killed by SIGKILL: oops"


@pytest.mark.slow  # waits out the real 1 s time limit
def test_a_benchmark_past_its_limit_is_stopped_and_reported(tmp_path):
    script = _script(tmp_path, "import time\ntime.sleep(60)\n")
    outcome = _run(script, tmp_path, limit_s=1)
    assert outcome.failure == "did not finish within 1 s" and outcome.seconds < 30


def test_a_benchmark_that_reaches_its_report_passes(tmp_path):
    script = _script(tmp_path, "def main():\n    print('report')\n    return 0\nsys.exit(harness.guarded(main))\n")
    assert _run(script, tmp_path).failure == ""


@pytest.mark.slow
def test_every_benchmark_runs_to_its_report_in_short_mode(smollm2_model, tmp_path):
    env = dict(os.environ, GGUF_BENCH_SMOLLM2=str(smollm2_model), TMPDIR=str(tmp_path))
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run_all.py"), "--short"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=SHORT_SET_LIMIT_S, check=False)
    out = done.stdout
    report = out[out.rfind("=== report"):]
    assert done.returncode == 0, f"run_all.py --short exited {done.returncode}:\n{report}\n{done.stderr[-3000:]}"
    for name in BENCHMARKS:
        assert re.search(rf"^{re.escape(name)}\s+ok\s", report, re.MULTILINE), f"no 'ok' line for {name}:\n{report}"
        section = out[out.index(f"=== {name} ==="):]
        assert section.split("\n", 2)[1].startswith("SHORT RUN"), f"{name} does not say it is a short run"
    assert f"{len(BENCHMARKS)} benchmarks: {len(BENCHMARKS)} ran to their report, 0 failed" in report
    assert "Traceback" not in out
