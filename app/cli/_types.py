"""Argument types shared by the commands: nonsense numbers are usage errors (exit 2) with one plain sentence."""

from __future__ import annotations

import argparse
import re
from urllib.parse import urlsplit

_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
_BYTES = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)


def parse_bytes(text: str) -> int:
    """'8G', '8GiB', '8GB', '512M', '1.5g', '1048576' -> bytes (all suffixes are powers of 1024)."""
    match = _BYTES.match(str(text))
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (examples: 8G, 8GiB, 512M, 1048576)")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def _whole_in(text: str, low: int | None, high: int | None, rule: str) -> int:
    """A whole number within [low, high] (either end open when None); else ``rule``, said with the value."""
    value = _whole_number(text)
    if (low is not None and value < low) or (high is not None and value > high):
        raise argparse.ArgumentTypeError(f"{rule}, not {text}")
    return value


def positive_int(text: str) -> int:
    return _whole_in(text, 1, None, "must be a positive number")


def non_negative_int(text: str) -> int:
    return _whole_in(text, 0, None, "must be 0 or more")


def percent(text: str) -> int:
    return _whole_in(text, 1, 99, "must be a percentage from 1 to 99")


MAX_CTX = 16 * 1024 * 1024  # far above any model's training length, well inside llama.cpp's 32-bit n_ctx


def context_size(text: str) -> int:
    value = positive_int(text)
    if value > MAX_CTX:
        raise argparse.ArgumentTypeError(f"{text} tokens is more than any model supports (at most {MAX_CTX})")
    return value


def gpu_layers(text: str) -> int:
    """-1 (all layers) or a count; more than the model has means all of them, as in llama.cpp."""
    return _whole_in(text, -1, None, "must be -1 (all layers) or 0 or more")


MAX_DEVICES = 16  # llama.cpp's llama_max_devices()
_SPLIT_SEPARATOR = re.compile(r"[,/]+")  # llama.cpp's -ts takes "3,1" and "3/1"


def tensor_split(text: str) -> tuple[float, ...]:
    """'3,1' or '3/1' -> (3.0, 1.0): each GPU's share of the layers, in CUDA order; at least one above 0."""
    try:
        shares = tuple(float(part) for part in _SPLIT_SEPARATOR.split(text.strip()) if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of shares: {text!r} (example: 3,1)") from None
    if not shares or any(not 0 <= v < float("inf") for v in shares) or not any(shares):
        raise argparse.ArgumentTypeError(f"shares must be 0 or more, one of them above 0, not {text}")
    if len(shares) >= MAX_DEVICES:
        raise argparse.ArgumentTypeError(f"{len(shares)} shares, but llama.cpp handles fewer than {MAX_DEVICES} GPUs")
    return shares


def rpc_workers(text: str) -> tuple[str, ...]:
    """'192.168.1.20:50052,192.168.1.21' -> ('192.168.1.20:50052', '192.168.1.21:50052'): llama.cpp RPC workers."""
    from app.core.problem import UserError
    from app.core.rpc.worker import parse_workers

    try:
        return tuple(worker.address for worker in parse_workers(text))
    except UserError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def port_number(text: str) -> int:
    return _whole_in(text, 1, 65535, "port numbers go from 1 to 65535")


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, not {text}")
    return value


def http_url(text: str) -> str:
    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"not a web address: {text!r} (example: http://127.0.0.1:8080)")
    try:
        parts.port  # noqa: B018 -- raises on a port that is not a number or out of range
    except ValueError:
        raise argparse.ArgumentTypeError(f"the port in {text!r} is not between 1 and 65535") from None
    return text.strip().rstrip("/")
