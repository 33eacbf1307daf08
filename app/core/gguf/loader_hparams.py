"""The hyper-parameters llama.cpp's loader reads for every architecture, in its order, with its rules.

``read_hparams(meta)`` returns what the tensor checks need, or raises LoadStop where the loader
would stop: a required key missing, a key of the wrong type, a per-layer array of the wrong length,
or a value the loader asserts on (block_count 0 or over 512, more experts used than exist, an
unknown rope scaling type, rope.dimension_count that llama-family models do not accept).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.gguf.loader_facts import (
    ARCHITECTURES,
    MAX_EXPERTS,
    MAX_LAYERS,
    ROPE_SCALING_TYPES,
    key_words,
)
from app.core.gguf.loader_meta import LoadStop, Meta, as_u32
from app.core.text import T

_N_ROT_MUST_MATCH = frozenset({"llama", "deci", "falcon", "llama-embed"})


@dataclass
class HParams:
    arch: str
    n_ctx_train: int = 0
    n_embd: int = 0
    n_layer_all: int = 0
    n_layer_nextn: int = 0
    n_expert: int = 0
    n_expert_used: list[int] = field(default_factory=list)
    n_ff: list[int] = field(default_factory=list)
    n_head: list[int] = field(default_factory=list)
    n_head_kv: list[int] = field(default_factory=list)
    n_embd_head_k: int = 0  # full-attention layers
    n_embd_head_v: int = 0
    n_rot: int = 0
    n_embd_head_k_swa: int = 0  # sliding-window layers
    n_embd_head_v_swa: int = 0
    n_rot_swa: int = 0
    swa_first: bool = False  # layer 0 uses the sliding window: llama.cpp then sizes every layer's tensors by it
    rope_scaling: str = "linear"
    n_cls_out: int = 1
    n_vocab: int = 0  # set by the vocabulary check
    extra: dict[str, int | list[int] | None] = field(default_factory=dict)  # per-architecture values

    @property
    def n_layer(self) -> int:
        """Layers the architecture loops over: all of them minus the next-token-prediction ones."""
        return self.n_layer_all - self.n_layer_nextn

    def first(self, values: list[int]) -> int:
        return values[0] if values else 0

    def number(self, name: str) -> int:
        """A per-architecture scalar from ``extra``; 0 when absent."""
        value = self.extra.get(name)
        return value if isinstance(value, int) else 0

    def numbers(self, name: str) -> list[int]:
        """A per-architecture per-layer array from ``extra``; empty when absent."""
        value = self.extra.get(name)
        return value if isinstance(value, list) else []

    # The sizes of layer 0, which the per-architecture load functions use for every layer.
    @property
    def head_k(self) -> int:
        return self.n_embd_head_k_swa if self.swa_first else self.n_embd_head_k

    @property
    def head_v(self) -> int:
        return self.n_embd_head_v_swa if self.swa_first else self.n_embd_head_v

    @property
    def rot(self) -> int:
        return self.n_rot_swa if self.swa_first else self.n_rot

    @property
    def n_embd_k_gqa(self) -> int:  # uint32 arithmetic, as in llama_hparams
        return as_u32(self.head_k * self.first(self.n_head_kv))

    @property
    def n_embd_v_gqa(self) -> int:
        return as_u32(self.head_v * self.first(self.n_head_kv))


def _invalid(en: str, zh: str, evidence: str, **params) -> LoadStop:
    return LoadStop(T(en, zh, **params), (evidence,))


def read_architecture(meta: Meta) -> str:
    """general.architecture as the loader reads it; LoadStop when missing, mistyped or unknown."""
    arch = meta.get("general.architecture", "str", required=True)
    if arch is None or arch.split("\0", 1)[0] not in ARCHITECTURES:
        shown = (arch or "?")[:64]
        raise LoadStop(T("This file says it is a '{arch}' model, an architecture no llama.cpp version this app knows "
                         "can load (the name may be damaged, or the model needs a newer llama.cpp).",
                         "该文件声称是“{arch}”模型，本应用已知的任何 llama.cpp 版本都无法加载此架构（名称可能已损坏，"
                         "或需要更新的 llama.cpp）。", arch=shown), (f"general.architecture={shown!r}",),
                       next_step=T("Download the file again, or try a newer llama.cpp / llama-server.",
                                   "请重新下载该文件，或尝试更新的 llama.cpp / llama-server。"))
    arch = arch.split("\0", 1)[0]
    if arch == "clip":
        raise LoadStop(T("This is a vision projector (mmproj) file, not a language model; llama.cpp loads it only "
                         "next to a model.",
                         "这是视觉投影（mmproj）文件，不是语言模型；llama.cpp 只会把它与模型一起加载。"),
                       ("general.architecture='clip'",),
                       next_step=T("Open the language model's .gguf instead (the mmproj file belongs next to it).",
                                   "请改为打开语言模型的 .gguf 文件（mmproj 文件应放在它旁边）。"))
    return arch


def _loader_keys(meta: Meta) -> None:
    """Keys llama_model_loader's constructor reads before any architecture code."""
    n_split = meta.get("split.count", "u16")
    if n_split and n_split > 1:
        meta.get("split.no", "u16", required=True)
        meta.get("split.tensors.count", "i32", required=True)
    meta.get("general.file_type", "u32")


def _experts(meta: Meta, hp: HParams) -> None:
    hp.n_expert = meta.get(meta.akey("expert_count"), "u32") or 0
    hp.n_expert_used = meta.get_per_layer(meta.akey("expert_used_count"), "u32", hp.n_layer_all) or [0] * hp.n_layer_all
    groups = meta.get(meta.akey("expert_group_count"), "u32") or 0
    group_used = meta.get(meta.akey("expert_group_used_count"), "u32") or 0
    if hp.arch in ("hunyuan_vl", "hunyuan-dense") and hp.n_expert <= 1:
        hp.n_expert, hp.n_expert_used = 0, [0] * hp.n_layer_all
    used = max(hp.n_expert_used, default=0)
    evidence = f"expert_count={hp.n_expert} expert_used_count={used} expert_group_count={groups}"
    bad = (hp.n_expert > MAX_EXPERTS or used > hp.n_expert
           or (hp.n_expert > 0 and (used == 0 or groups >= hp.n_expert
                                    or (groups > 1 and (hp.n_expert % groups or not 0 < group_used < groups))))
           or (hp.n_expert == 0 and (used or groups)))
    if bad:
        raise _invalid("This file is damaged: its expert settings contradict each other ({n} experts, {used} used per "
                       "token); llama.cpp stops with an assertion on such files.",
                       "文件已损坏：专家设置相互矛盾（{n} 个专家，每个词元使用 {used} 个）；"
                       "llama.cpp 会因断言失败而中止。",
                       evidence, n=hp.n_expert, used=used)


def _rope(meta: Meta, hp: HParams) -> None:
    meta.get(meta.akey("rope.scaling.finetuned"), "bool")
    meta.get(meta.akey("rope.scaling.original_context_length"), "u32")
    meta.get(meta.akey("rope.freq_base"), "f32")
    scaling = meta.get(meta.akey("rope.scaling.type"), "str")
    if scaling is not None:
        if scaling.split("\0", 1)[0] not in ROPE_SCALING_TYPES:
            en, zh = key_words(meta.akey("rope.scaling.type"), hp.arch)
            raise _invalid("This file is damaged: its {what} is '{value}', which llama.cpp does not know (it stops "
                           "with an assertion).",
                           "文件已损坏：其{what_zh}为“{value}”，llama.cpp 不认识该值（会因断言失败而中止）。",
                           f"{meta.akey('rope.scaling.type')}={scaling[:40]!r}",
                           what=en, what_zh=zh, value=scaling[:40])
        hp.rope_scaling = scaling.split("\0", 1)[0]
    if meta.get(meta.akey("rope.scaling.factor"), "f32") is None:
        meta.get(meta.akey("rope.scale_linear"), "f32")
    meta.get(meta.akey("rope.scaling.attn_factor"), "f32")
    meta.get(meta.akey("rope.scaling.alpha"), "f32")


def _heads(meta: Meta, hp: HParams) -> None:
    n_head = hp.first(hp.n_head)
    if n_head > 0:
        default = hp.n_embd // n_head
        hp.n_embd_head_k = meta.get(meta.akey("attention.key_length"), "u32")
        hp.n_embd_head_k = default if hp.n_embd_head_k is None else hp.n_embd_head_k
        hp.n_embd_head_v = meta.get(meta.akey("attention.value_length"), "u32")
        hp.n_embd_head_v = default if hp.n_embd_head_v is None else hp.n_embd_head_v
        n_rot = meta.get(meta.akey("rope.dimension_count"), "u32")
        hp.n_rot = hp.n_embd_head_k if n_rot is None else n_rot
        if hp.arch in _N_ROT_MUST_MATCH and hp.n_rot != hp.n_embd_head_k:
            raise _invalid("This file is damaged: its rotary embedding size ({rot}) does not match its attention head "
                           "size ({head}), which llama.cpp requires for this architecture.",
                           "文件已损坏：旋转位置编码维度（{rot}）与注意力头维度（{head}）不一致，而此架构要求二者相同。",
                           f"{meta.akey('rope.dimension_count')}={hp.n_rot} head size={hp.n_embd_head_k}",
                           rot=hp.n_rot, head=hp.n_embd_head_k)
    swa = [meta.get(meta.akey(suffix), "u32")
           for suffix in ("attention.key_length_swa", "attention.value_length_swa", "rope.dimension_count_swa")]
    hp.n_embd_head_k_swa = hp.n_embd_head_k if swa[0] is None else swa[0]
    hp.n_embd_head_v_swa = hp.n_embd_head_v if swa[1] is None else swa[1]
    hp.n_rot_swa = hp.n_rot if swa[2] is None else swa[2]


def _wavtokenizer(meta: Meta, hp: HParams) -> None:
    hp.n_embd = meta.get(meta.akey("features_length"), "u32", required=True)
    meta.get(meta.akey("embedding_length"), "u32", required=True)
    meta.get(meta.akey("posnet.embedding_length"), "u32", required=True)
    posnet = meta.get(meta.akey("posnet.block_count"), "u32", required=True)
    meta.get(meta.akey("convnext.embedding_length"), "u32", required=True)
    convnext = meta.get(meta.akey("convnext.block_count"), "u32", required=True)
    if posnet > hp.n_layer_all or convnext > hp.n_layer_all:
        raise _invalid("This file is damaged: its vocoder block counts exceed its layer count.",
                       "文件已损坏：声码器的块数超过了层数。",
                       f"posnet={posnet} convnext={convnext} layers={hp.n_layer_all}")


def read_hparams(meta: Meta, arch: str) -> HParams:
    """Base hyper-parameters (llama_model_base::load_hparams), checked the way the loader checks them."""
    _loader_keys(meta)
    hp = HParams(arch=arch)
    meta.get("general.name", "str")
    hp.n_ctx_train = meta.get(meta.akey("context_length"), "u32", required=True)
    hp.n_embd = meta.get(meta.akey("embedding_length"), "u32", required=True)
    meta.get(meta.akey("embedding_length_out"), "u32")
    meta.get(meta.akey("attention.causal"), "bool")
    meta.get(meta.akey("pooling_type"), "u32")
    meta.get(meta.akey("classifier.pooling_type"), "u32")
    hp.n_layer_all = meta.get(meta.akey("block_count"), "u32", required=True)
    if not 0 < hp.n_layer_all <= MAX_LAYERS:
        raise _invalid("This file is damaged: it says the model has {n} layers; llama.cpp accepts 1 to {max} (it stops "
                       "with an assertion).",
                       "文件已损坏：声称模型有 {n} 层；llama.cpp 只接受 1 到 {max} 层（会因断言失败而中止）。",
                       f"{meta.akey('block_count')}={hp.n_layer_all}", n=hp.n_layer_all, max=MAX_LAYERS)
    hp.n_layer_nextn = meta.get(meta.akey("nextn_predict_layers"), "u32") or 0
    if hp.n_layer_nextn > hp.n_layer_all:
        raise _invalid("This file is damaged: it has more prediction layers ({nextn}) than layers ({n}).",
                       "文件已损坏：预测层数（{nextn}）多于总层数（{n}）。",
                       f"{meta.akey('nextn_predict_layers')}={hp.n_layer_nextn}",
                       nextn=hp.n_layer_nextn, n=hp.n_layer_all)
    _experts(meta, hp)
    if arch == "wavtokenizer-dec":
        _wavtokenizer(meta, hp)
    zeros = [0] * hp.n_layer_all
    hp.n_ff = meta.get_per_layer(meta.akey("feed_forward_length"), "u32", hp.n_layer_all) or zeros
    hp.n_head = meta.get_per_layer(meta.akey("attention.head_count"), "u32", hp.n_layer_all) or zeros
    hp.n_head_kv = meta.get_per_layer(meta.akey("attention.head_count_kv"), "u32", hp.n_layer_all) or list(hp.n_head)
    _rope(meta, hp)
    _heads(meta, hp)
    if meta.get_array(meta.akey("classifier.output_labels"), "str") is not None:
        hp.n_cls_out = meta.length(meta.akey("classifier.output_labels")) or hp.n_cls_out
    return hp
