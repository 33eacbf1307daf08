"""Whether a zero run is damage or a part of the model that is zero on purpose.

A real model can hold long zero stretches: whole rows of an embedding for tokens that were never trained
(Llama 3's reserved tokens, a vocabulary padded to a round size), an expert that is all zero, zero biases,
the padding between tensors. Those stretches follow the model's layout: they start and end on row
boundaries (a row is ``shape[0]`` values; a 1-D tensor is one row) or in the padding between tensors. A
download that stopped, or a segment that never arrived, cuts the file at a byte the layout knows nothing of.

So a run of at least ``MIN_RUN`` bytes (``MIN_TAIL`` when it reaches the end of the data) is damage when
- one of its ends lies inside a row, more than ``SLACK`` bytes from the row's edge (a neighbouring row may
  end or begin with a few zero values, never with ``SLACK`` zero bytes in a model that also has a zero row
  next to it), or
- it covers two or more whole tensors, one of them a matrix: a trained model has no matrix that is zero
  throughout, and the run then spans several of the model's parts, as a missing tail does; or
- it runs from one matrix, over a whole tensor, into another matrix (more than ``SLACK`` bytes of each):
  untrained tokens make zero rows at one end of an embedding, not a stretch across several of the model's
  parts. (Two matrices side by side whose facing ends are zero rows are left alone.)
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from app.core.gguf.model_info import ModelInfo, TensorInfo
from app.core.gguf.zero_runs import MIN_RUN, MIN_TAIL, ZeroRun

SLACK = 64


@dataclass(frozen=True)
class Span:
    """A tensor's bytes in the file."""

    name: str
    start: int
    end: int
    row_bytes: int
    is_matrix: bool


@dataclass(frozen=True)
class ZeroFinding:
    run: ZeroRun
    at_end: bool  # the run reaches the end of the tensor data (the file's tail)
    damaged: bool
    first_tensor: str | None  # the tensor where the run starts (None: between tensors)
    whole_tensors: int

    def evidence(self) -> str:
        where = f"from inside {self.first_tensor}" if self.first_tensor else "from between tensors"
        kind = "damage" if self.damaged else "whole rows or tensors (can be legitimate)"
        return (f"zero bytes {self.run.start:,}-{self.run.end:,} ({self.run.length:,} bytes) {where}, "
                f"covering {self.whole_tensors} whole tensor(s){', to the end of the data' if self.at_end else ''}:"
                f" {kind}")


def spans(info: ModelInfo) -> list[Span]:
    out: list[Span] = []
    for t in sorted(info.tensors, key=lambda t: t.offset):
        if t.n_bytes:
                out.append(Span(t.name, info.data_offset + t.offset, info.data_offset + t.offset + t.n_bytes,
                            _row_bytes(t), _is_matrix(t)))
    return out


def _rows(t: TensorInfo) -> int:
    rows = 1
    for dim in t.shape[1:]:
        rows *= dim
    return max(rows, 1)


def _row_bytes(t: TensorInfo) -> int:
    return max(1, (t.n_bytes or 0) // _rows(t))


def _is_matrix(t: TensorInfo) -> bool:
    return len(t.shape) >= 2 and _rows(t) > 1


def _holding(layout: list[Span], starts: list[int], offset: int) -> Span | None:
    """The tensor whose bytes include ``offset``."""
    i = bisect.bisect_right(starts, offset) - 1
    return layout[i] if i >= 0 and offset < layout[i].end else None


def _start_on_boundary(layout: list[Span], starts: list[int], start: int, data_offset: int, slack: int) -> bool:
    span = _holding(layout, starts, start)
    if span is None:
        return start >= data_offset - slack  # in the padding between tensors (or just before the first)
    boundary = span.start + -(-(start - span.start) // span.row_bytes) * span.row_bytes
    return boundary - start <= slack


def _end_on_boundary(layout: list[Span], starts: list[int], end: int, slack: int) -> bool:
    span = _holding(layout, starts, end - 1)
    if span is None or end >= span.end:
        return True  # in the padding, or the tensor ends inside the run
    boundary = span.start + (end - span.start) // span.row_bytes * span.row_bytes
    return end - boundary <= slack


def _overlap(span: Span, run: ZeroRun) -> int:
    return max(0, min(span.end, run.end) - max(span.start, run.start))


def classify(run: ZeroRun, info: ModelInfo, layout: list[Span] | None = None, *, slack: int = SLACK) -> ZeroFinding:
    layout = spans(info) if layout is None else layout
    starts = [s.start for s in layout]
    inside = [s for s in layout if run.start <= s.start and s.end <= run.end]
    matrices_touched = sum(1 for s in layout if s.is_matrix and _overlap(s, run) > slack)
    at_end = run.end >= (layout[-1].end if layout else info.data_offset)
    first = _holding(layout, starts, run.start)
    edges_fit = (_start_on_boundary(layout, starts, run.start, info.data_offset, slack)
                 and _end_on_boundary(layout, starts, run.end, slack))
    spans_parts = ((len(inside) >= 2 and any(s.is_matrix for s in inside))
                   or (matrices_touched >= 2 and len(inside) >= 1))
    damaged = run.length >= (MIN_TAIL if at_end else MIN_RUN) and (not edges_fit or spans_parts)
    return ZeroFinding(run, at_end, damaged, first.name if first else None, len(inside))


def findings(runs: list[ZeroRun], info: ModelInfo) -> list[ZeroFinding]:
    """Every run judged; runs past the tensor data (bytes the loader never reads) are left out."""
    layout = spans(info)
    data_end = layout[-1].end if layout else info.data_offset
    return [classify(run, info, layout) for run in runs if run.start < data_end]
