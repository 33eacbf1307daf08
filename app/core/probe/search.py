"""Pure search for the highest passing value of a knob (GPU layers, or context in steps of 256).

Values are indexed 0..n-1 and "passes" is expected to hold up to a boundary and fail above it.
``try_index(i)`` performs one real load (expensive), so the search minimises calls:

* seeded by the plan: try the seed and its neighbour first, so a good plan costs 2 loads + 1 re-check
  (3 + 1 when the plan is off by one);
* blind: bisection whose midpoint leans upward, so every passing answer is found within
  ceil(log2(n)) loads; the extra depth falls on "nothing passes", which needs no re-check;
* the final answer is re-checked once (a lucky pass near the boundary is not trusted); if the
  re-check fails the search continues below it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SearchStep:
    index: int
    ok: bool
    recheck: bool = False


@dataclass
class SearchResult:
    best: int | None  # highest index that passed (and passed its re-check); None if nothing passed
    steps: list[SearchStep] = field(default_factory=list)

    @property
    def loads(self) -> int:
        return len(self.steps)


def max_loads(n_values: int, seeded: bool) -> int:
    """Upper bound on loads without noise: blind ceil(log2 n) + 1 (one more when n is a power of two and
    the answer is 0), seeded up to 3 more when the seed is far off."""
    if n_values <= 0:
        return 0
    blind = math.ceil(math.log2(n_values)) + 1 if n_values > 1 else 2
    return blind + 3 if seeded else blind + 1


class _Search:
    def __init__(self, n_values: int, try_index: Callable[[int], bool]) -> None:
        self.n = n_values
        self.try_index = try_index
        self.steps: list[SearchStep] = []
        self.lo, self.hi = -1, n_values  # lo: highest known pass (-1: none); hi: lowest known failure

    def probe(self, index: int, recheck: bool = False) -> bool:
        ok = bool(self.try_index(index))
        self.steps.append(SearchStep(index, ok, recheck))
        if ok and not recheck:
            self.lo = max(self.lo, index)
        elif not ok:
            self.hi = min(self.hi, index)
            self.lo = min(self.lo, index - 1)
        return ok

    def start_from_seed(self, seed: int) -> None:
        """Seed, then its neighbour; if the neighbour agrees, one more step the same way (plans are
        usually off by a layer or two), then bisection takes over."""
        seed = min(max(int(seed), 0), self.n - 1)
        step = 1 if self.probe(seed) else -1
        for distance in (1, 2):
            index = seed + step * distance
            if not 0 <= index < self.n or self.probe(index) != (step == 1):
                return

    def bisect(self) -> None:
        while self.hi - self.lo > 1:
            self.probe(self.lo + (self.hi - self.lo + 1) // 2)

    def passes_below(self, index: int) -> int:
        """Highest index below ``index`` that passed at some point (-1 if none)."""
        return max((s.index for s in self.steps if s.ok and s.index < index), default=-1)

    def settle(self) -> int | None:
        """Bisect, then re-check the answer; on a failed re-check keep searching below it."""
        while True:
            self.bisect()
            if self.lo < 0:
                return None
            answer = self.lo
            if self.probe(answer, recheck=True):
                return answer
            self.hi = answer
            self.lo = self.passes_below(answer)


def search_highest(n_values: int, try_index: Callable[[int], bool], seed: int | None = None) -> SearchResult:
    """Highest index in [0, n_values) for which ``try_index`` passes, with few calls."""
    if n_values <= 0:
        return SearchResult(None, [])
    search = _Search(n_values, try_index)
    if seed is not None:
        search.start_from_seed(seed)
    best = search.settle()
    return SearchResult(best, search.steps)
