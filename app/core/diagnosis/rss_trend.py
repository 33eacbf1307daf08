"""The child's resident memory just before it died: peak, direction, and closeness to the memory limit."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RssTrend:
    peak_bytes: int
    last_bytes: int
    rising: bool
    near_limit: bool
    limit_bytes: int | None

    @property
    def suggests_oom(self) -> bool:
        """Peak within 15 % of the limit, or still climbing past 70 % of it when the samples end."""
        climbing = self.rising and bool(self.limit_bytes) and self.last_bytes >= 0.7 * self.limit_bytes
        return self.near_limit or climbing


def _sample_bytes(sample: Any) -> int | None:
    if isinstance(sample, (int, float)):
        return int(sample)
    if isinstance(sample, (tuple, list)) and sample:
        return int(sample[-1])
    value = getattr(sample, "rss", None) or getattr(sample, "rss_bytes", None)
    return int(value) if value is not None else None


def rss_trend(samples: Iterable[Any], limit_bytes: int | None) -> RssTrend | None:
    """Peak and direction of the child's RSS; 'near the limit' = peak within 15 % of the memory limit."""
    values = [v for v in (_sample_bytes(s) for s in samples) if v is not None and v >= 0]
    if not values:
        return None
    peak, last = max(values), values[-1]
    window = values[-5:]
    rising = len(window) >= 2 and window[-1] > window[0] * 1.05
    near = bool(limit_bytes) and peak >= 0.85 * limit_bytes
    return RssTrend(peak, last, rising, near, limit_bytes)
