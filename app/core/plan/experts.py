"""Mixture-of-experts weights, per layer: the expert tensors that llama.cpp's ``--cpu-moe`` / ``--n-cpu-moe N`` keep
in RAM, and everything else (attention, router, shared experts, norms), which stays where the layer goes.

llama.cpp picks the expert tensors by name with ``\\.ffn_(up|down|gate|gate_up)_(ch|)exps`` (common/common.h,
LLM_FFN_EXPS_REGEX): the stacked experts, fused gate+up experts and chunked experts, with their biases (gpt-oss).
The router (``ffn_gate_inp``) and shared experts (``ffn_*_shexp``) do not match, so they follow the layer.
``--n-cpu-moe N`` moves the experts of layers 0 … N-1 (``blk\\.i\\.`` + that pattern, one override per layer).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

EXPERT_TENSOR = re.compile(r"\.ffn_(up|down|gate|gate_up)_(ch|)exps")


def is_expert_tensor(name: str) -> bool:
    return EXPERT_TENSOR.search(name) is not None


@dataclass(frozen=True)
class LayerWeights:
    """One layer's weight bytes: the experts' and the rest."""

    expert_bytes: int
    other_bytes: int

    @property
    def total(self) -> int:
        return self.expert_bytes + self.other_bytes


@dataclass(frozen=True)
class ExpertSplit:
    """Per-layer expert / non-expert bytes of a model (``layers[i]`` is block i), with its expert counts."""

    layers: tuple[LayerWeights, ...]
    expert_count: int = 0
    expert_used_count: int = 0
    shared_expert_count: int = 0

    @property
    def is_moe(self) -> bool:
        return any(layer.expert_bytes for layer in self.layers)

    @property
    def expert_bytes(self) -> int:
        return sum(layer.expert_bytes for layer in self.layers)

    @property
    def other_bytes(self) -> int:
        return sum(layer.other_bytes for layer in self.layers)

    @property
    def expert_layers(self) -> tuple[int, ...]:
        """The blocks that have experts (a leading dense block has none)."""
        return tuple(i for i, layer in enumerate(self.layers) if layer.expert_bytes)

    def moved_to_cpu(self, n_cpu_moe: int) -> int:
        """Expert bytes that ``--n-cpu-moe n_cpu_moe`` keeps in RAM: those of the first ``n_cpu_moe`` blocks."""
        return sum(layer.expert_bytes for layer in self.layers[: max(int(n_cpu_moe), 0)])

    def to_dict(self) -> dict[str, Any]:
        return {"expert_count": self.expert_count, "expert_used_count": self.expert_used_count,
                "shared_expert_count": self.shared_expert_count, "expert_bytes": self.expert_bytes,
                "other_layer_bytes": self.other_bytes, "expert_layers": len(self.expert_layers),
                "per_layer": [[layer.expert_bytes, layer.other_bytes] for layer in self.layers]}


def _count(info: Any, key: str) -> int:
    value = (getattr(info, "metadata", None) or {}).get(f"{info.architecture}.{key}")
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def expert_split(info: Any) -> ExpertSplit:
    """Split every block's tensor bytes from the file's tensor table (tensors of unknown size count 0)."""
    n_layer = int(info.block_count)
    experts, others = [0] * n_layer, [0] * n_layer
    for tensor in getattr(info, "shard_tensors", None) or getattr(info, "tensors", None) or ():  # every shard
        layer = tensor.layer
        if layer is None or not 0 <= layer < n_layer:
            continue
        size = int(tensor.n_bytes or 0)
        if is_expert_tensor(tensor.name):
            experts[layer] += size
        else:
            others[layer] += size
    return ExpertSplit(tuple(LayerWeights(e, o) for e, o in zip(experts, others, strict=True)),
                       _count(info, "expert_count"), _count(info, "expert_used_count"),
                       _count(info, "expert_shared_count"))
