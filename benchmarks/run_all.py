"""Run every benchmark in this folder, one after another, print their reports, then one line per benchmark.

    .venv/bin/python benchmarks/run_all.py            # all of them (tens of minutes on a busy 2-core machine)
    .venv/bin/python benchmarks/run_all.py --short    # each at its least work (one run, tiny models): a few minutes
    .venv/bin/python benchmarks/run_all.py gguf chat  # only bench_gguf.py and bench_chat_stream.py
    .venv/bin/python benchmarks/run_all.py plan       # bench_plan.py: plan vs peak RSS, both engines side by side

Each benchmark runs in its own process; its report goes to stdout as it comes, its stderr to a log file. A benchmark
that does not reach its report (an exception, a crash, past its time limit) is one line in the final report with the
reason, and the exit status is 1. Targets met or missed are in each benchmark's own report, not in the exit status:
on a busy machine a missed target is a figure, a broken benchmark is a failure.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import FAILED_PREFIX, SHORT_ENV  # noqa: E402

FULL_LIMIT_S = 3600
SHORT_LIMIT_S = 600


@dataclass
class Outcome:
    name: str
    seconds: float
    failure: str = ""  # one sentence; empty: it ran to its report


def scripts(selected: list[str]) -> list[Path]:
    found = sorted(HERE.glob("bench_*.py"))
    return [s for s in found if any(word in s.stem for word in selected)] if selected else found


def failure_reason(returncode: int, log: Path) -> str:
    """The benchmark's own ``BENCH FAILED:`` line, else its last stderr line, with how it ended."""
    lines = [line.strip() for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    told = [line[len(FAILED_PREFIX):] for line in lines if line.startswith(FAILED_PREFIX)]
    if told:
        return told[-1]
    if returncode < 0:
        how = f"killed by {signal.Signals(-returncode).name}"
    else:
        how = f"exit {returncode}"
    return f"{how}: {lines[-1][:200]}" if lines else how


def run_one(script: Path, env: dict[str, str], limit_s: float, logs: Path) -> Outcome:
    log = logs / f"{script.stem}.stderr.log"
    started = time.monotonic()
    with open(log, "wb") as err:
        proc = subprocess.Popen([sys.executable, str(script)], env=env, stderr=err, start_new_session=True)
        try:
            returncode = proc.wait(limit_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # its servers too: they are in its session
            proc.wait()
            return Outcome(script.name, time.monotonic() - started, f"did not finish within {limit_s:.0f} s")
        finally:
            _kill_leftovers(proc.pid)
    seconds = time.monotonic() - started
    return Outcome(script.name, seconds, "" if returncode == 0 else failure_reason(returncode, log))


def _kill_leftovers(pgid: int) -> None:
    """Servers a failed benchmark left behind in its process group: stopped, so the next one runs on a quiet box."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def report(outcomes: list[Outcome], is_short: bool, logs: Path, seconds: float) -> None:
    title = "short run: one run each, the smallest inputs; figures show each benchmark works" if is_short else \
        "full run"
    print(f"\n=== report ({title}) ===")
    width = max(len(o.name) for o in outcomes)
    for o in outcomes:
        verdict = "ok" if not o.failure else "FAILED"
        print(f"{o.name:<{width}}  {verdict:<6} {o.seconds:6.1f} s" + (f"  {o.failure}" if o.failure else ""))
    failed = sum(bool(o.failure) for o in outcomes)
    kept = _drop_empty(logs)
    print(f"{len(outcomes)} benchmarks: {len(outcomes) - failed} ran to their report, {failed} failed; "
          f"{seconds:.0f} s in all. " + (f"Their stderr: {logs}" if kept else "None wrote to stderr."), flush=True)


def _drop_empty(logs: Path) -> bool:
    """Empty stderr logs removed (the folder too when nothing is left); True when some log is kept."""
    for log in logs.glob("*.log"):
        if log.stat().st_size == 0:
            log.unlink()
    if any(logs.iterdir()):
        return True
    logs.rmdir()
    return False


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--short", action="store_true", help=f"least work per benchmark (or {SHORT_ENV}=1)")
    parser.add_argument("--limit-s", type=float, help="time limit per benchmark (default 600 short, 3600 full)")
    parser.add_argument("words", nargs="*", help="only the benchmarks whose name contains one of these")
    args = parser.parse_args(argv)
    env = dict(os.environ)
    if args.short:
        env[SHORT_ENV] = "1"
    is_short = env.get(SHORT_ENV, "") not in ("", "0")
    limit_s = args.limit_s or (SHORT_LIMIT_S if is_short else FULL_LIMIT_S)
    chosen = scripts(args.words)
    if not chosen:
        print(f"no benchmark matches {' '.join(args.words)}", file=sys.stderr)
        return 2
    logs = Path(tempfile.mkdtemp(prefix="bench-logs-"))
    started = time.monotonic()
    outcomes = []
    for script in chosen:
        print(f"\n=== {script.name} ===", flush=True)
        outcomes.append(run_one(script, env, limit_s, logs))
        if outcomes[-1].failure:
            print(f"{script.name} FAILED: {outcomes[-1].failure}", flush=True)
    report(outcomes, is_short, logs, time.monotonic() - started)
    return 1 if any(o.failure for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
