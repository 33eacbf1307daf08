"""Run every benchmark in this folder, one after another, and print their reports.

    .venv/bin/python benchmarks/run_all.py            # all of them (about 10 minutes on 2 cores)
    .venv/bin/python benchmarks/run_all.py gguf chat  # only bench_gguf.py and bench_chat_stream.py
    .venv/bin/python benchmarks/run_all.py plan       # bench_plan.py: plan vs peak RSS, both engines side by side
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(selected: list[str]) -> int:
    scripts = sorted(HERE.glob("bench_*.py"))
    if selected:
        scripts = [s for s in scripts if any(word in s.stem for word in selected)]
    failures = 0
    for script in scripts:
        print(f"\n=== {script.name} ===", flush=True)
        failures += subprocess.run([sys.executable, str(script)]).returncode != 0
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
