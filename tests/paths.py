"""Where the checkout, the fake servers and the recorded crash logs are, for tests at any depth of the tree."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAKES = ROOT / "tests" / "fakes"
CRASH_LOGS = ROOT / "tests" / "data" / "crash_logs"
