"""llama.cpp's own memory numbers, read from llama-server's log text.

What llama-server prints (checked on b11434, CPU):

- ``common_memory_breakdown_print`` tables (MiB, integer, rounded down per buffer): a header row, one row per GPU
  device ``|   - CUDA0 (RTX 4090) | total = free + (self = model + context + compute) + unaccounted |``, a
  ``|   - Host | self = model + context + compute |`` row and one row per other buffer type (``CPU_REPACK``).
  They are trace-level lines: printed only at ``-lv 4`` (or ``-v``), never at the default verbosity 3. With
  ``--fit`` on (the default) one table comes from the fit dry run during loading (the projection for the
  initial parameters), and one more when the server shuts down cleanly (SIGINT or SIGTERM: after
  ``cleaning up before exit``) for the context it really ran; a killed server (SIGKILL, OOM) prints only the first.
- the real context's lines (info level, also only at ``-lv 4``): ``llama_context: n_seq_max = 4``,
  ``n_ctx``, ``n_ctx_seq``, ``n_ubatch``, ``kv_unified``; ``llama_kv_cache: size = X MiB (N cells, L layers,
  S/U seqs), K (f16): … MiB, V (f16): … MiB`` once per cache (sliding-window models: a non-SWA and a SWA cache,
  announced by ``llama_kv_cache_iswa: creating [non-]SWA KV cache``); ``llama_memory_recurrent: size = …
  (N cells, L layers, S seqs …), R (f32): …, S (f32): …`` for recurrent state; ``<dev> compute buffer size =
  X MiB``; ``<buft> model buffer size = X MiB``; and at the default verbosity too ``srv load_model:
  initializing, n_slots = 4, n_ctx_slot = 4096, kv_unified = 'true'``.

``parse_llama_log(lines)`` takes any iterable of text lines (timestamps and prefixes are fine) and never raises on
text it does not know. A new ``llama_context: constructing llama_context`` starts a new context: the KV caches,
compute buffers and context settings of the last one are kept; every breakdown table is kept in order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

_TABLE = "common_memory_breakdown_print:"
_HEADER = re.compile(r"\|\s*memory breakdown \[MiB\]\s*\|")
_DEVICE_ROW = re.compile(r"\|\s+-\s+(?P<name>\S+)(?:\s+\((?P<desc>[^|]*)\))?\s*\|\s*(?P<total>-?\d+)\s*=\s*"
                         r"(?P<free>-?\d+)\s*\+\s*\(\s*(?P<self>-?\d+)\s*=\s*(?P<model>-?\d+)\s*\+\s*(?P<context>-?\d+)\s*\+\s*"
                         r"(?P<compute>-?\d+)\s*\)\s*\+\s*(?P<unaccounted>-?\d+)\s*\|")
_OTHER_ROW = re.compile(r"\|\s+-\s+(?P<name>[^|]*?)\s*\|\s*(?P<self>-?\d+)\s*=\s*(?P<model>-?\d+)\s*\+\s*"
                        r"(?P<context>-?\d+)\s*\+\s*(?P<compute>-?\d+)\s*\|")
_KV = re.compile(r"llama_kv_cache: size =\s*(?P<mib>[\d.]+) MiB \(\s*(?P<cells>\d+) cells,\s*(?P<layers>\d+) layers,"
                 r"\s*(?P<seqs>\d+)(?:/(?P<streams>\d+))? seqs\)(?:, K \((?P<k_type>\w+)\):\s*(?P<k>[\d.]+) MiB)?"
                 r"(?:, V \((?P<v_type>\w+)\):\s*(?P<v>[\d.]+) MiB)?")
_RECURRENT = re.compile(r"llama_memory_recurrent: size =\s*(?P<mib>[\d.]+) MiB \(\s*(?P<cells>\d+) cells,"
                        r"\s*(?P<layers>\d+) layers,\s*(?P<seqs>\d+) seqs[^)]*\)(?:, R \((?P<r_type>\w+)\):\s*"
                        r"(?P<r>[\d.]+) MiB)?(?:, S \((?P<s_type>\w+)\):\s*(?P<s>[\d.]+) MiB)?")
_ISWA = re.compile(r"llama_kv_cache_iswa: creating\s+(?P<which>non-SWA|SWA) KV cache")
_COMPUTE = re.compile(r"(?P<name>\S+) compute buffer size =\s*(?P<mib>[\d.]+) MiB")
_MODEL_BUF = re.compile(r"(?P<name>\S+) model buffer size =\s*(?P<mib>[\d.]+) MiB")
_CTX_PARAM = re.compile(r"llama_context: (?P<key>n_seq_max|n_ctx|n_ctx_seq|n_batch|n_ubatch|kv_unified|flash_attn)"
                        r"\s+=\s+(?P<value>\S+)")
_SLOTS = re.compile(r"n_slots = (?P<slots>\d+), n_ctx_slot = (?P<ctx>\d+)(?:, kv_unified = '(?P<unified>\w+)')?")
_NEW_CONTEXT = "llama_context: constructing llama_context"
_LOADING = "load_model: loading model"
_EXIT = "cleaning up before exit"


@dataclass(frozen=True)
class BreakdownRow:
    """One row of a breakdown table, MiB. ``kind``: "device" (a GPU: total/free/unaccounted known), "host" or
    "buffer_type" (e.g. CPU_REPACK)."""

    kind: str
    name: str
    self_mib: int
    model_mib: int
    context_mib: int
    compute_mib: int
    description: str | None = None
    total_mib: int | None = None
    free_mib: int | None = None
    unaccounted_mib: int | None = None


@dataclass(frozen=True)
class Breakdown:
    """One ``common_memory_breakdown_print`` table. ``phase``: "load" (printed while loading: the fit dry run's
    projection) or "exit" (printed at a clean shutdown, for the context the server ran)."""

    phase: str
    rows: tuple[BreakdownRow, ...]

    def row(self, name: str) -> BreakdownRow | None:
        return next((r for r in self.rows if r.name == name), None)

    @property
    def host(self) -> BreakdownRow | None:
        return self.row("Host")

    @property
    def devices(self) -> tuple[BreakdownRow, ...]:
        return tuple(r for r in self.rows if r.kind == "device")

    @property
    def repack_mib(self) -> int:
        return sum(r.self_mib for r in self.rows if r.kind == "buffer_type" and "REPACK" in r.name)

    @property
    def model_mib(self) -> int:
        return sum(r.model_mib for r in self.rows)

    @property
    def context_mib(self) -> int:
        return sum(r.context_mib for r in self.rows)

    @property
    def compute_mib(self) -> int:
        return sum(r.compute_mib for r in self.rows)

    @property
    def total_mib(self) -> int:
        """Everything llama.cpp allocated, over every row (host, repack, devices)."""
        return sum(r.self_mib for r in self.rows)


@dataclass(frozen=True)
class KvCacheLine:
    """One ``llama_kv_cache`` or ``llama_memory_recurrent`` size line. ``kind``: "kv", "kv_swa" (the sliding-window
    cache of an iswa model), "kv_full" (its non-SWA cache) or "recurrent" (k/v hold R/S for recurrent state)."""

    kind: str
    size_mib: float
    cells: int
    layers: int
    seqs: int
    streams: int | None = None  # the "/1" of "4/1 seqs": 1 when the cache is unified, else one per sequence
    k_type: str | None = None
    k_mib: float | None = None
    v_type: str | None = None
    v_mib: float | None = None


@dataclass(frozen=True)
class Buffer:
    name: str  # the backend buffer, e.g. "CPU", "CUDA0", "CPU_Mapped", "CPU_REPACK"
    mib: float


@dataclass(frozen=True)
class LlamaReport:
    breakdowns: tuple[Breakdown, ...] = ()
    kv_caches: tuple[KvCacheLine, ...] = ()
    compute_buffers: tuple[Buffer, ...] = ()
    model_buffers: tuple[Buffer, ...] = ()
    context: dict[str, str] = field(default_factory=dict)  # llama_context: n_seq_max, n_ctx, n_ctx_seq, n_ubatch, …
    n_slots: int | None = None
    n_ctx_slot: int | None = None
    kv_unified: bool | None = None

    @property
    def found(self) -> bool:
        return bool(self.breakdowns or self.kv_caches or self.compute_buffers)

    @property
    def latest(self) -> Breakdown | None:
        """The exit table when there is one (the context really run), else the last load projection."""
        exits = [b for b in self.breakdowns if b.phase == "exit"]
        return (exits or list(self.breakdowns) or [None])[-1]

    def _latest(self, name: str) -> int | None:
        return None if self.latest is None else getattr(self.latest, name)

    model_mib = property(lambda self: self._latest("model_mib"), doc="MiB of weights, from the latest table")
    context_mib = property(lambda self: self._latest("context_mib"), doc="MiB of KV / recurrent state")
    compute_mib = property(lambda self: self._latest("compute_mib"), doc="MiB of compute buffers")
    repack_mib = property(lambda self: self._latest("repack_mib"), doc="MiB of CPU_REPACK weight copies")
    total_mib = property(lambda self: self._latest("total_mib"), doc="MiB over every row of the latest table")

    @property
    def devices(self) -> tuple[BreakdownRow, ...]:
        return () if self.latest is None else self.latest.devices

    @property
    def kv_mib(self) -> float:
        """All KV and recurrent caches of the last context, as its size lines say (MiB, two decimals)."""
        return sum(c.size_mib for c in self.kv_caches)

    @property
    def n_seq_max(self) -> int | None:
        value = self.context.get("n_seq_max")
        return int(value) if value and value.isdigit() else None


def _row(text: str) -> BreakdownRow | None:
    match = _DEVICE_ROW.search(text)
    if match:
        g = {k: int(v) for k, v in match.groupdict().items() if k not in ("name", "desc")}
        return BreakdownRow("device", match["name"], g["self"], g["model"], g["context"], g["compute"],
                            description=(match["desc"] or "").strip() or None, total_mib=g["total"],
                            free_mib=g["free"], unaccounted_mib=g["unaccounted"])
    match = _OTHER_ROW.search(text)
    if match:
        name = match["name"].strip()
        kind = "host" if name == "Host" else "buffer_type"
        return BreakdownRow(kind, name, int(match["self"]), int(match["model"]), int(match["context"]),
                            int(match["compute"]))
    return None


def _kv_line(match: re.Match[str], kind: str) -> KvCacheLine:
    return KvCacheLine(kind, float(match["mib"]), int(match["cells"]), int(match["layers"]), int(match["seqs"]),
                       streams=int(match["streams"]) if match["streams"] else None, k_type=match["k_type"],
                       k_mib=float(match["k"]) if match["k"] else None, v_type=match["v_type"],
                       v_mib=float(match["v"]) if match["v"] else None)


def _recurrent_line(match: re.Match[str]) -> KvCacheLine:
    return KvCacheLine("recurrent", float(match["mib"]), int(match["cells"]), int(match["layers"]),
                       int(match["seqs"]), k_type=match["r_type"], k_mib=float(match["r"]) if match["r"] else None,
                       v_type=match["s_type"], v_mib=float(match["s"]) if match["s"] else None)


def parse_llama_log(lines: Iterable[str]) -> LlamaReport:
    """Every breakdown table, and the last context's caches, buffers and settings, from llama-server log lines."""
    breakdowns: list[Breakdown] = []
    table: list[BreakdownRow] | None = None
    phase = "load"
    kv: list[KvCacheLine] = []
    compute: list[Buffer] = []
    model: list[Buffer] = []
    context: dict[str, str] = {}
    iswa: str | None = None
    slots: tuple[int, int, bool | None] | None = None

    def close_table() -> None:
        nonlocal table
        if table is not None:
            breakdowns.append(Breakdown(phase, tuple(table)))
            table = None

    for raw in lines:
        text = raw.rstrip("\n")
        if _TABLE in text:
            if _HEADER.search(text):
                close_table()
                table = []
            elif table is not None and (row := _row(text)) is not None:
                table.append(row)
            continue
        close_table()
        if _EXIT in text:
            phase = "exit"
        elif _LOADING in text:  # a (re)start: its tables are load projections again
            phase, model = "load", []
        elif _NEW_CONTEXT in text:
            kv, compute, context, iswa = [], [], {}, None
        elif match := _ISWA.search(text):
            iswa = "kv_full" if match["which"] == "non-SWA" else "kv_swa"
        elif match := _KV.search(text):
            kv.append(_kv_line(match, iswa or "kv"))
            iswa = None
        elif match := _RECURRENT.search(text):
            kv.append(_recurrent_line(match))
        elif match := _COMPUTE.search(text):
            compute.append(Buffer(match["name"], float(match["mib"])))
        elif match := _MODEL_BUF.search(text):
            model.append(Buffer(match["name"], float(match["mib"])))
        elif match := _CTX_PARAM.search(text):
            context[match["key"]] = match["value"]
        elif "load_model: initializing" in text and (match := _SLOTS.search(text)):
            unified = None if match["unified"] is None else match["unified"] == "true"
            slots = (int(match["slots"]), int(match["ctx"]), unified)
    close_table()
    return LlamaReport(tuple(breakdowns), tuple(kv), tuple(compute), tuple(model), context,
                       n_slots=slots[0] if slots else None, n_ctx_slot=slots[1] if slots else None,
                       kv_unified=slots[2] if slots else None)


def report_from_supervisor(supervisor: object, n_lines: int = 2000) -> LlamaReport:
    """The report from a Supervisor's log tail (``supervisor.tail(n)`` of LogLine): only llama-server prints these
    lines, and only at ``-lv 4``; the built-in engine's or a quieter server's tail gives an empty report
    (``found`` False)."""
    tail = getattr(supervisor, "tail", None)
    if tail is None:
        return LlamaReport()
    return parse_llama_log(line.text for line in tail(n_lines))
