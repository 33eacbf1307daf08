"""One value that describes how to start a server: model, memory knobs, network. Backends turn it into argv."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

logger = logging.getLogger(__name__)

BACKEND_EMBEDDED = "embedded"  # llama-cpp-python's OpenAI-compatible server, always installed
BACKEND_LLAMA_SERVER = "llama-server"  # an external llama.cpp `llama-server` binary
BACKENDS = (BACKEND_EMBEDDED, BACKEND_LLAMA_SERVER)
EMBEDDED_SERVER_SWITCH = "--embedded-server"  # re-launches a packaged app as llama-cpp-python's server
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
ANY_FREE_PORT = 0  # a fix's {"port": 0}: "any free port", not a port number
SPLIT_MODES = ("layer", "row", "none")  # several GPUs: whole layers per card, rows of each matrix, one card only


@dataclass(frozen=True)
class LaunchConfig:
    model: str
    # a value's default only; what runs when nobody chose an engine is llama-server, or the built-in engine when
    # llama-server cannot run here (launch/engine_choice.py): the window and every command ask there
    backend: str = BACKEND_EMBEDDED
    server_bin: str | None = None  # llama-server path; None = discover
    ctx: int = 4096
    gpu_layers: int = 0  # -1 = all layers
    parallel: int = 1
    batch: int = 512
    ubatch: int = 512
    threads: int | None = None  # None = backend default
    flash_attn: bool | None = None  # None = backend default (auto)
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    load_mode: str = "mmap"  # mmap | none (read fully, no mmap) | mlock
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    pick_free_port: bool = True  # port taken -> use a free one (and say so) instead of failing
    api_key: str | None = None  # a key the user chose; None = the supervisor's key for this server (local_key)
    # a random key per server even on this computer only, so a web page (or a rebinding host name) cannot use the
    # model: the app's own clients are given it. False: programs on this computer connect without a key (the
    # setting "let other programs on this computer use the server without a key"); beyond it a key is always made
    local_key: bool = True
    extra_args: tuple[str, ...] = field(default_factory=tuple)
    mmproj: str | None = None  # vision projector GGUF loaded next to the model (llama-server only); None = none
    # mixture-of-experts: keep the experts of the first N layers in RAM while their attention runs on the GPU
    # (llama-server --n-cpu-moe N; the built-in engine cannot: llama-cpp-python ignores tensor overrides)
    n_cpu_moe: int = 0
    # llama-server's prompt cache in RAM (--cache-ram) keeps the KV of earlier prompts and grows over a long run up
    # to 8 GiB by default: seed 001's slow creep to the OOM killer on an 8 GB board. The app turns it off (0): one
    # person's conversation is kept in its slot anyway, so only switching between conversations re-reads a prompt,
    # and the plan stays what the server really uses. A value above 0 caps it at that many MiB.
    cache_ram_mib: int = 0
    # several GPUs (llama.cpp -ts / -sm / -mg): the share of the offloaded layers each GPU takes, in CUDA order
    # (the app pins it to PCI order, which is NVML's); () = in proportion to each GPU's free memory, llama.cpp's
    # default. main_gpu: the one GPU with split_mode "none" (and the one for intermediate results with "row").
    tensor_split: tuple[float, ...] = ()
    split_mode: str = "layer"
    main_gpu: int = 0
    # llama.cpp RPC workers ("host:port", llama-server --rpc): other computers' rpc-server, each one more device
    # that takes a share of the offloaded layers (listed first in tensor_split, before the local GPUs)
    rpc_workers: tuple[str, ...] = ()

    def with_changes(self, **changes: Any) -> LaunchConfig:
        """A copy with some fields changed (the code's own edits; a fix or a recommendation goes through
        :meth:`apply`)."""
        for name in _SEQUENCE_FIELDS:
            if name in changes:
                changes[name] = tuple(changes[name])
        return replace(self, **changes)

    def apply(self, changes: ConfigChanges) -> LaunchConfig:
        """``self`` with a fix's or a recommendation's changes: the one rule the Settings step, the supervisor and
        the command line follow, so a fix leaves them all with the same config."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["extra_args"] = list(self.extra_args)
        data["tensor_split"] = list(self.tensor_split)
        data["rpc_workers"] = list(self.rpc_workers)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LaunchConfig:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        if "extra_args" in known:
            known["extra_args"] = tuple(known["extra_args"] or ())
        if "mmproj" in known and not (isinstance(known["mmproj"], str) and known["mmproj"]):
            known["mmproj"] = None  # a missing, empty or hand-edited value means no projector
        for name, default in (("n_cpu_moe", 0), ("cache_ram_mib", cls.cache_ram_mib)):
            value = known.get(name, default)
            if name in known and not _is_count(value):
                known[name] = default
        known.update(_split_fields(known))
        if not isinstance(known.get("local_key", True), bool):
            known["local_key"] = True
        return cls(**known)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _split_fields(known: dict[str, Any]) -> dict[str, Any]:
    """The several-GPU fields of a stored profile, each back to its default when missing or hand-edited wrong."""
    split = known.get("tensor_split") or ()
    numbers = isinstance(split, (list, tuple)) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in split)
    return {"tensor_split": tuple(float(v) for v in split) if numbers else (),
            "split_mode": known.get("split_mode") if known.get("split_mode") in SPLIT_MODES else "layer",
            "main_gpu": known["main_gpu"] if _is_count(known.get("main_gpu")) else 0,
            "rpc_workers": _workers_field(known.get("rpc_workers"))}


def _workers_field(value: Any) -> tuple[str, ...]:
    """A stored profile's workers: addresses as text; missing or hand-edited wrong means none."""
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and ":" in v for v in value):
        return ()
    return tuple(v.strip() for v in value if v.strip())


_SEQUENCE_FIELDS = ("extra_args", "tensor_split", "rpc_workers")
# what a fix or a recommendation may change: every setting, never the model file itself
CHANGEABLE_SETTINGS = frozenset(f.name for f in fields(LaunchConfig)) - {"model"}


class ConfigChanges(Mapping[str, Any]):
    """Settings of a :class:`LaunchConfig` to change, as a diagnosis fix (``FixAction.changes``), a probe's or a
    plan's recommendation, or an engine choice gives them; read-only, applied with :meth:`LaunchConfig.apply`.

    Made from any mapping by the one rule: keys that are no setting (a rebuild fix's ``rebuild_engine``) or the model
    itself are left out; ``{"port": 0}`` ("any free port") keeps the port number and turns on ``pick_free_port``
    (the next start takes a free port if that one is busy, and the Settings step never shows port 0); lists become
    tuples. A ``ConfigChanges`` passed in again comes out the same.
    """

    __slots__ = ("_values",)

    def __init__(self, changes: Mapping[str, Any] | None = None, /, **more: Any) -> None:
        given = {**(changes or {}), **more}
        left_out = sorted(set(given) - CHANGEABLE_SETTINGS)
        if left_out:
            logger.debug("not launch settings, left out of the changes: %s", left_out)
        values = {k: v for k, v in given.items() if k in CHANGEABLE_SETTINGS}
        if values.get("port") == ANY_FREE_PORT:
            del values["port"]
            values["pick_free_port"] = True
        for name in _SEQUENCE_FIELDS:
            if name in values:
                values[name] = tuple(values[name])
        self._values: dict[str, Any] = values

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"ConfigChanges({self._values!r})"


def fix_changes(changes: Mapping[str, Any]) -> ConfigChanges:
    """A diagnosis fix's setting changes (``FixAction.changes``) as LaunchConfig changes (:class:`ConfigChanges`)."""
    return ConfigChanges(changes)


def apply_fix(config: LaunchConfig, changes: Mapping[str, Any]) -> LaunchConfig:
    """``config`` with a fix applied (:meth:`LaunchConfig.apply` of its :class:`ConfigChanges`)."""
    return config.apply(ConfigChanges(changes))
