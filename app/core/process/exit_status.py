"""Turn an exit status, in any spelling a launcher or OS prints it, into plain words.

Forms handled: Python's negative signal numbers (-9), a shell's 128+N (137), plain exit codes (1, 2),
and Windows NTSTATUS values as unsigned (3221226505), signed (-1073740791), hex ("0xC0000409") or
sign-extended to 64 bits and float-rounded the way LM Studio prints them (18446744072635812000).
"""

from __future__ import annotations

import re
import signal as _signal
from typing import NamedTuple

from app.core.process.exit_meanings import (
    EXIT_MEANINGS,
    LINUX_SIGNALS,
    NTSTATUS_AS_SIGNAL,
    NTSTATUS_MEANINGS,
    SIGNAL_MEANINGS,
)
from app.core.text import T, Text

_U32 = 1 << 32
_U64 = 1 << 64
# A double has 53 bits of mantissa: around 2**64 neighbouring values are 2048 apart, and printing with
# 17 significant digits loses a little more. Anything this close to a known status is that status.
_FLOAT_TOLERANCE = 4096


class ExitStatus(NamedTuple):
    exit_code: int | None  # normalised: NTSTATUS as unsigned 32-bit, POSIX as given (-9, 137, 1)
    signal: str | None  # "SIGKILL", or None when no signal was involved
    meaning: Text


def _signal_name(number: int) -> str:
    try:
        return _signal.Signals(number).name
    except (ValueError, AttributeError):
        return LINUX_SIGNALS.get(number, f"signal {number}")


def _signal_meaning(name: str) -> Text:
    return SIGNAL_MEANINGS.get(
        name, T("The server was stopped by {signal}.", "服务器被信号 {signal} 结束。", signal=name)
    )


def _nearest_ntstatus(value: int) -> int | None:
    """A sign-extended 64-bit NTSTATUS, possibly float-rounded, back to its 32-bit value."""
    for status in NTSTATUS_MEANINGS:
        if abs(value - (_U64 - _U32 + status)) <= _FLOAT_TOLERANCE:
            return status
    if _U64 - _U32 <= value < _U64:
        return value - (_U64 - _U32)
    return None


def parse_exit_code(code: int | float | str | None) -> int | None:
    """Any spelling to an int: "0xc0000409", "exit status 0xc0000409", "-1073740791", 1.8446744072635812e19."""
    if code is None or isinstance(code, bool):
        return None
    if isinstance(code, int):
        return code
    if isinstance(code, float):
        return int(code) if code == code and abs(code) != float("inf") else None
    text = str(code).strip()
    match = re.search(r"0x[0-9a-fA-F]+", text)
    if match:
        return int(match.group(0), 16)
    match = re.search(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", text)
    if not match:
        return None
    number = match.group(0)
    return int(number) if re.fullmatch(r"[-+]?\d+", number) else int(float(number))


def normalize_windows_status(code: int) -> int | None:
    """The unsigned 32-bit NTSTATUS when ``code`` is one in any spelling, else None."""
    if code >= _U32:
        return _nearest_ntstatus(code)
    if code < -(1 << 31) or code >= _U32:
        return None
    if -255 <= code <= 255:
        return None
    unsigned = code % _U32
    if unsigned in NTSTATUS_MEANINGS or 0xC0000000 <= unsigned < 0xFFFFFF00:
        return unsigned
    return None


def decode_exit_status(code: int | float | str | None) -> ExitStatus:
    """(normalised exit code, signal name or None, plain meaning) for any exit status spelling."""
    number = parse_exit_code(code)
    if number is None:
        return ExitStatus(None, None, T("The server stopped; its exit status is unknown.",
                                        "服务器已停止，退出状态未知。"))
    ntstatus = normalize_windows_status(number)
    if ntstatus is not None:
        return _decode_ntstatus(ntstatus)
    if 0xFFFFFF00 <= number < _U32:  # exit(-1) etc. as Windows reports it: unsigned, not a signal
        signed = number - _U32
        return ExitStatus(signed, None, T("The server exited with error code {code}.", "服务器以错误码 {code} 退出。",
                                          code=signed))
    if -65 < number < 0:
        name = _signal_name(-number)
        return ExitStatus(number, name, _signal_meaning(name))
    if 128 < number < 128 + 65:
        name = _signal_name(number - 128)
        return ExitStatus(number, name, _signal_meaning(name))
    meaning = EXIT_MEANINGS.get(number) or T(  # includes negative exit codes that are no signal
        "The server exited with error code {code}.", "服务器以错误码 {code} 退出。", code=number
    )
    return ExitStatus(number, None, meaning)


def _decode_ntstatus(status: int) -> ExitStatus:
    meaning = NTSTATUS_MEANINGS.get(status) or T(
        "The server stopped with Windows error 0x{hex}.", "服务器以 Windows 错误 0x{hex} 停止。", hex=f"{status:08X}"
    )
    return ExitStatus(status, None, meaning)


def crash_signal(status: ExitStatus) -> str | None:
    """The POSIX signal a status amounts to; Windows crashes map onto the same names so one rule set serves both."""
    if status.signal:
        return status.signal
    return NTSTATUS_AS_SIGNAL.get(status.exit_code) if status.exit_code is not None else None
