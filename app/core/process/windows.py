"""Windows: put a child in its own Job Object that kills it when the app's last handle closes.

The app holds the job handle; if the app dies in any way, Windows closes the handle and
JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE terminates everything in the job. Written with ctypes so no
extra dependency is needed. An RLIMIT_AS entry in ``rlimits`` becomes the job's per-process memory limit.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
from ctypes import wintypes

JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS = 9
JOB_OBJECT_LIMIT_PROCESS_MEMORY = 0x00000100
JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x00002000
RLIMIT_AS_KEY = 9  # resource.RLIMIT_AS on Linux; the probe passes it unchanged on every OS


# DWORD spelled c_uint32: wintypes.DWORD is c_ulong, 8 bytes on 64-bit Linux, which would break the layout
# check the Linux test suite runs (144 bytes on 64-bit Windows, as documented).
class _BasicLimits(ctypes.Structure):
    _fields_ = [
        ("PerProcessUserTimeLimit", ctypes.c_int64),
        ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", ctypes.c_uint32),
        ("MinimumWorkingSetSize", ctypes.c_size_t),
        ("MaximumWorkingSetSize", ctypes.c_size_t),
        ("ActiveProcessLimit", ctypes.c_uint32),
        ("Affinity", ctypes.c_size_t),
        ("PriorityClass", ctypes.c_uint32),
        ("SchedulingClass", ctypes.c_uint32),
    ]


class _IoCounters(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
        "ReadTransferCount", "WriteTransferCount", "OtherTransferCount")]


class _ExtendedLimits(ctypes.Structure):
    _fields_ = [
        ("BasicLimitInformation", _BasicLimits),
        ("IoInfo", _IoCounters),
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    ]


def _kernel32():
    if sys.platform != "win32":  # the structures above are also built (and checked) elsewhere; the calls are not
        raise NotImplementedError("Job Objects exist on Windows only")
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    kernel32.CreateJobObjectW.restype = wintypes.HANDLE
    kernel32.CreateJobObjectW.argtypes = (ctypes.c_void_p, wintypes.LPCWSTR)
    kernel32.SetInformationJobObject.restype = wintypes.BOOL
    kernel32.SetInformationJobObject.argtypes = (wintypes.HANDLE, ctypes.c_int, ctypes.c_void_p, wintypes.DWORD)
    kernel32.AssignProcessToJobObject.restype = wintypes.BOOL
    kernel32.AssignProcessToJobObject.argtypes = (wintypes.HANDLE, wintypes.HANDLE)
    kernel32.CloseHandle.argtypes = (wintypes.HANDLE,)
    return kernel32


class KillOnCloseJob:
    """Owns the job handle; keep a reference for as long as the child should live."""

    def __init__(self, handle: int, kernel32) -> None:
        self.handle = handle
        self._kernel32 = kernel32

    def close(self) -> None:
        if self.handle:
            self._kernel32.CloseHandle(self.handle)
            self.handle = 0


def put_in_kill_on_close_job(popen: subprocess.Popen, rlimits: dict | None = None) -> KillOnCloseJob:
    if sys.platform != "win32":
        raise NotImplementedError("Job Objects exist on Windows only")
    kernel32 = _kernel32()
    handle = kernel32.CreateJobObjectW(None, None)
    if not handle:
        raise ctypes.WinError(ctypes.get_last_error())
    limits = _ExtendedLimits()
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
    memory_limit = (rlimits or {}).get(RLIMIT_AS_KEY)
    if memory_limit:
        soft = memory_limit[0] if isinstance(memory_limit, tuple) else memory_limit
        limits.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_PROCESS_MEMORY
        limits.ProcessMemoryLimit = int(soft)
    ok = kernel32.SetInformationJobObject(handle, JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS,
                                          ctypes.byref(limits), ctypes.sizeof(limits))
    # Popen keeps the process handle private on Windows, and typeshed does not declare it: the checker is wrong here
    process = int(popen._handle)  # pyright: ignore[reportAttributeAccessIssue]
    if not ok or not kernel32.AssignProcessToJobObject(handle, process):
        error = ctypes.WinError(ctypes.get_last_error())
        kernel32.CloseHandle(handle)
        popen.kill()
        raise error
    return KillOnCloseJob(handle, kernel32)
