"""The tensors a few common architectures load, with the shapes llama.cpp checks them against.

For these architectures the doctor knows exactly which tensors llama.cpp's loader asks for, which it
may do without, and the shape each must have given the hyper-parameters; a file passes only when
every required tensor is there with that shape and every tensor in it is one the loader uses
(llama.cpp counts them and refuses a file with a tensor it never asked for). The rules come from
llama.cpp's per-architecture load functions (src/models/<arch>.cpp) and the generic pass in
llama_model_base::load_tensors; other architectures get the generic checks only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from app.core.gguf.loader_facts import ARRAY, MAX_LAYERS
from app.core.gguf.loader_hparams import HParams
from app.core.gguf.loader_meta import LoadStop, Meta
from app.core.text import T

NVFP4 = 40  # GGML_TYPE_NVFP4


@dataclass
class Present:
    shape: tuple[int, ...]
    type_id: int


@dataclass
class Plan:
    """What the loader would do with the file's tensors: which it takes, and where it would stop."""

    present: dict[str, Present]
    missing: list[tuple[str, int | None]] = field(default_factory=list)  # (name, layer)
    wrong_shape: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = field(default_factory=list)
    used: set[str] = field(default_factory=set)
    layer_parts: dict[int, set[str]] = field(default_factory=dict)  # required parts asked for, per layer

    def want(self, name: str, shape: tuple[int, ...], required: bool = True, layer: int | None = None) -> bool:
        """create_tensor: True when the tensor exists (its shape is then checked), records a missing required one."""
        if layer is not None and required:
            self.layer_parts.setdefault(layer, set()).add(name)
        found = self.present.get(name)
        if found is None:
            if required:
                self.missing.append((name, layer))
            return False
        if _padded(found.shape) != _padded(shape):
            self.wrong_shape.append((name, tuple(shape), found.shape))
        self.used.add(name)
        return True

    def has(self, name: str) -> bool:
        return name in self.present

    @property
    def unused(self) -> list[str]:
        return [name for name in self.present if name not in self.used]


def _padded(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(shape) + (1,) * (4 - len(shape))


_SCALED_PARTS = ("attn_q", "attn_k", "attn_v", "attn_output", "attn_qkv", "attn_gate", "ffn_gate", "ffn_down", "ffn_up",
                 "ffn_gate_shexp", "ffn_down_shexp", "ffn_up_shexp")
_SCALED_EXPERT_PARTS = ("ffn_gate_exps", "ffn_down_exps", "ffn_up_exps")


def _scales(plan: Plan, hp: HParams) -> None:
    """The generic pass: optional per-tensor (and per-expert) scales next to the weights a layer loaded."""
    for i in range(hp.n_layer_all):
        for part in _SCALED_PARTS + _SCALED_EXPERT_PARTS:
            if f"blk.{i}.{part}.weight" in plan.used:
                shape = (hp.n_expert,) if part in _SCALED_EXPERT_PARTS else (1,)
                plan.want(f"blk.{i}.{part}.scale", shape, required=False)
                plan.want(f"blk.{i}.{part}.input_scale", shape, required=False)


def _output(plan: Plan, hp: HParams, bias: bool = False) -> None:
    plan.want("token_embd.weight", (hp.n_embd, hp.n_vocab))
    plan.want("output_norm.weight", (hp.n_embd,))
    plan.want("output.weight", (hp.n_embd, hp.n_vocab), required=False)
    if bias:
        plan.want("output.bias", (hp.n_vocab,), required=False)


def _output_scales(plan: Plan) -> None:
    output = plan.present.get("output.weight") or plan.present.get("token_embd.weight")
    if output is None or output.type_id != NVFP4:
        return
    got = [plan.want(f"output.{s}", (1,), required=False) for s in ("scale", "input_scale")]
    if "output.weight" not in plan.present and any(got):
        raise LoadStop(T("This file is damaged: its output projection has scale factors but no weights of its own; "
                         "llama.cpp stops with an assertion.",
                         "文件已损坏：输出投影有缩放因子却没有自己的权重；llama.cpp 会因断言失败而中止。"),
                       ("output.scale without output.weight (NVFP4 tied embeddings)",), check_id="tensor_shapes")


def _qkv(plan: Plan, i: int, n_embd: int, n_q: int, n_k: int, n_v: int, required: bool = True) -> None:
    """create_tensor_qkv: a fused attn_qkv (with its bias, or separate q/k/v biases) or separate q, k and v
    (which some architectures, phi3, do not insist on)."""
    p = f"blk.{i}."
    if plan.want(p + "attn_qkv.weight", (n_embd, n_q + n_k + n_v), required=False):
        if not plan.want(p + "attn_qkv.bias", (n_q + n_k + n_v,), required=False):
            for part, n in (("attn_q", n_q), ("attn_k", n_k), ("attn_v", n_v)):
                plan.want(p + part + ".bias", (n,), required=False)
        return
    for part, n in (("attn_q", n_q), ("attn_k", n_k), ("attn_v", n_v)):
        plan.want(p + part + ".weight", (n_embd, n), required=required, layer=i)
    for part, n in (("attn_q", n_q), ("attn_k", n_k), ("attn_v", n_v)):
        plan.want(p + part + ".bias", (n,), required=False)


def _rope_factors(plan: Plan, hp: HParams) -> None:
    names = ("rope_factors_long", "rope_factors_short") if hp.rope_scaling == "longrope" else ("rope_freqs",)
    for name in names:  # asked for once per layer; one tensor outside the blocks serves them all
        plan.want(name + ".weight", (hp.rot // 2,), required=False)


def _llama_tensors(plan: Plan, hp: HParams) -> None:
    n_embd, n_head = hp.n_embd, hp.first(hp.n_head)
    n_q = hp.head_k * n_head
    n_ff = hp.first(hp.n_ff)
    _output(plan, hp)
    for i in range(hp.n_layer):
        p = f"blk.{i}."
        plan.want(p + "attn_norm.weight", (n_embd,), layer=i)
        _qkv(plan, i, n_embd, n_q, hp.n_embd_k_gqa, hp.n_embd_v_gqa)
        plan.want(p + "attn_output.weight", (n_q, n_embd), layer=i)
        plan.want(p + "attn_output.bias", (n_embd,), required=False)
        plan.want(p + "ffn_norm.weight", (n_embd,), layer=i)
        _rope_factors(plan, hp)
        if hp.n_expert == 0:
            for part, shape in (("ffn_gate", (n_embd, n_ff)), ("ffn_down", (n_ff, n_embd)), ("ffn_up", (n_embd, n_ff))):
                plan.want(p + part + ".weight", shape, layer=i)
            for part, n in (("ffn_gate", n_ff), ("ffn_down", n_embd), ("ffn_up", n_ff)):
                plan.want(p + part + ".bias", (n,), required=False)
        else:
            plan.want(p + "ffn_gate_inp.weight", (n_embd, hp.n_expert), layer=i)
            plan.want(p + "ffn_gate_exps.weight", (n_embd, n_ff, hp.n_expert), required=False)
            plan.want(p + "ffn_down_exps.weight", (n_ff, n_embd, hp.n_expert), layer=i)
            plan.want(p + "ffn_up_exps.weight", (n_embd, n_ff, hp.n_expert), layer=i)


def _qwen2_tensors(plan: Plan, hp: HParams) -> None:
    n_embd, n_ff = hp.n_embd, hp.first(hp.n_ff)
    _output(plan, hp, bias=True)
    for i in range(hp.n_layer):
        p = f"blk.{i}."
        plan.want(p + "attn_norm.weight", (n_embd,), layer=i)
        _qkv(plan, i, n_embd, n_embd, hp.n_embd_v_gqa, hp.n_embd_v_gqa)
        plan.want(p + "attn_output.weight", (n_embd, n_embd), layer=i)
        plan.want(p + "ffn_norm.weight", (n_embd,), layer=i)
        for part, shape in (("ffn_gate", (n_embd, n_ff)), ("ffn_down", (n_ff, n_embd)), ("ffn_up", (n_embd, n_ff))):
            plan.want(p + part + ".weight", shape, layer=i)


def _qwen3_layer_attention(plan: Plan, hp: HParams, i: int) -> None:
    p = f"blk.{i}."
    n_q = hp.head_k * hp.first(hp.n_head)
    plan.want(p + "attn_norm.weight", (hp.n_embd,), layer=i)
    _qkv(plan, i, hp.n_embd, n_q, hp.n_embd_v_gqa, hp.n_embd_v_gqa)
    plan.want(p + "attn_output.weight", (n_q, hp.n_embd), layer=i)
    plan.want(p + "attn_k_norm.weight", (hp.head_k,), layer=i)
    plan.want(p + "attn_q_norm.weight", (hp.head_k,), layer=i)
    plan.want(p + "ffn_norm.weight", (hp.n_embd,), layer=i)


def _qwen3_tensors(plan: Plan, hp: HParams) -> None:
    n_embd, n_ff = hp.n_embd, hp.first(hp.n_ff)
    _output(plan, hp)
    plan.want("cls.output.weight", (n_embd, hp.n_cls_out), required=False)
    for i in range(hp.n_layer):
        _qwen3_layer_attention(plan, hp, i)
        p = f"blk.{i}."
        for part, shape in (("ffn_gate", (n_embd, n_ff)), ("ffn_down", (n_ff, n_embd)), ("ffn_up", (n_embd, n_ff))):
            plan.want(p + part + ".weight", shape, layer=i)


def _qwen3moe_tensors(plan: Plan, hp: HParams) -> None:
    n_embd, n_expert = hp.n_embd, hp.n_expert
    _output(plan, hp)
    if hp.n_layer > 0 and (n_expert == 0 or hp.first(hp.n_expert_used) == 0):
        raise LoadStop(T("This file is damaged: it is a mixture-of-experts model without experts in its settings.",
                         "文件已损坏：这是混合专家模型，但其设置中没有专家。"),
                       (f"qwen3moe expert_count={n_expert} expert_used_count={hp.first(hp.n_expert_used)}",))
    n_ff_exp = hp.first(hp.numbers("n_ff_exp")) or (hp.first(hp.n_ff) // max(1, hp.first(hp.n_expert_used)))
    for i in range(hp.n_layer):
        _qwen3_layer_attention(plan, hp, i)
        p = f"blk.{i}."
        plan.want(p + "ffn_gate_inp.weight", (n_embd, n_expert), layer=i)
        plan.want(p + "ffn_gate_exps.weight", (n_embd, n_ff_exp, n_expert), layer=i)
        plan.want(p + "ffn_down_exps.weight", (n_ff_exp, n_embd, n_expert), layer=i)
        plan.want(p + "ffn_up_exps.weight", (n_embd, n_ff_exp, n_expert), layer=i)


def _gemma3_tensors(plan: Plan, hp: HParams) -> None:
    n_embd, n_ff = hp.n_embd, hp.first(hp.n_ff)
    n_q = hp.head_k * hp.first(hp.n_head)
    _output(plan, hp)
    plan.want("dense_2.weight", (n_embd, 0), required=False)  # sentence-embedding heads: sizes 0 unless declared
    plan.want("dense_3.weight", (0, n_embd), required=False)
    for i in range(hp.n_layer):
        p = f"blk.{i}."
        plan.want(p + "attn_norm.weight", (n_embd,), layer=i)
        _qkv(plan, i, n_embd, n_q, hp.n_embd_k_gqa, hp.n_embd_v_gqa)
        plan.want(p + "attn_output.weight", (n_q, n_embd), layer=i)
        for part, shape in (("post_attention_norm", (n_embd,)), ("attn_k_norm", (hp.head_k,)),
                            ("attn_q_norm", (hp.head_k,)), ("ffn_norm", (n_embd,)), ("ffn_gate", (n_embd, n_ff)),
                            ("ffn_up", (n_embd, n_ff)), ("ffn_down", (n_ff, n_embd)), ("post_ffw_norm", (n_embd,))):
            plan.want(p + part + ".weight", shape, layer=i)


def _phi3_tensors(plan: Plan, hp: HParams) -> None:
    n_embd, n_ff = hp.n_embd, hp.first(hp.n_ff)
    _output(plan, hp)
    for i in range(hp.n_layer):
        p = f"blk.{i}."
        plan.want(p + "attn_norm.weight", (n_embd,), layer=i)
        _qkv(plan, i, n_embd, n_embd, hp.n_embd_v_gqa, hp.n_embd_v_gqa, required=False)
        plan.want(p + "attn_output.weight", (n_embd, n_embd), layer=i)
        plan.want(p + "ffn_norm.weight", (n_embd,), layer=i)
        plan.want(p + "ffn_down.weight", (n_ff, n_embd), layer=i)
        plan.want(p + "ffn_up.weight", (n_embd, 2 * n_ff), layer=i)
        for name in ("rope_factors_long", "rope_factors_short"):
            plan.want(name + ".weight", (hp.rot // 2,), required=False)


def _gate_up_exps(plan: Plan, p: str, n_embd: int, n_ff: int, n_expert: int, i: int, required: bool) -> None:
    """create_tensor_gate_up_exps: one fused ffn_gate_up_exps, else separate gate and up experts."""
    if not plan.want(p + "ffn_gate_up_exps.weight", (n_embd, 2 * n_ff, n_expert), required=False):
        for part in ("ffn_gate_exps", "ffn_up_exps"):
            plan.want(p + part + ".weight", (n_embd, n_ff, n_expert), required=required, layer=i)


def _deepseek2_tensors(plan: Plan, hp: HParams) -> None:
    """llama_model_deepseek2::load_arch_tensors: MLA attention (q through a low-rank q_a/q_b or a plain attn_q;
    the compressed kv_a_mqa; attn_k_b/attn_v_b when the *_mla lengths are set, the legacy fused attn_kv_b
    otherwise), dense FFNs for the leading layers, then routed and shared experts; MTP layers are optional."""
    n_embd, n_head, n_expert = hp.n_embd, hp.first(hp.n_head), hp.n_expert
    k_mla, v_mla = hp.number("k_mla"), hp.number("v_mla")
    is_mla = bool(k_mla and v_mla)
    k_head, v_head = (k_mla, v_mla) if is_mla else (hp.n_embd_head_k, hp.n_embd_head_v)
    rope, q_lora, kv_lora = hp.n_rot, hp.number("q_lora"), hp.number("kv_lora")
    nope = k_head - rope
    if nope < 1:
        raise LoadStop(T("This file is damaged: its attention heads are no wider than their rotary part; llama.cpp "
                         "stops with an assertion.",
                         "文件已损坏：注意力头的宽度不大于其旋转部分；llama.cpp 会因断言失败而中止。"),
                       (f"deepseek2 key length {k_head} <= rope dimensions {rope}",), check_id="tensor_shapes")
    n_ff, n_ff_exp = hp.first(hp.n_ff), hp.first(hp.numbers("n_ff_exp"))
    shared = n_ff_exp * hp.number("n_shared")
    dense_lead = hp.number("dense_lead")
    _output(plan, hp)
    for i in range(hp.n_layer_all):
        p, req = f"blk.{i}.", i < hp.n_layer
        plan.want(p + "attn_norm.weight", (n_embd,), required=req, layer=i)
        if q_lora > 0:
            plan.want(p + "attn_q_a_norm.weight", (q_lora,), required=req, layer=i)
            plan.want(p + "attn_q_a.weight", (n_embd, q_lora), required=req, layer=i)
            plan.want(p + "attn_q_b.weight", (q_lora, n_head * k_head), required=req, layer=i)
        else:
            plan.want(p + "attn_q.weight", (n_embd, n_head * k_head), required=req, layer=i)
        plan.want(p + "attn_kv_a_norm.weight", (kv_lora,), required=req, layer=i)
        plan.want(p + "attn_kv_a_mqa.weight", (n_embd, kv_lora + rope), required=req, layer=i)
        if is_mla:
            plan.want(p + "attn_k_b.weight", (nope, kv_lora, n_head), required=req, layer=i)
            plan.want(p + "attn_v_b.weight", (kv_lora, v_head, n_head), required=req, layer=i)
        else:
            plan.want(p + "attn_kv_b.weight", (kv_lora, n_head * (nope + v_head)), required=req, layer=i)
        plan.want(p + "attn_output.weight", (n_head * v_head, n_embd), required=req, layer=i)
        plan.want(p + "ffn_norm.weight", (n_embd,), required=req, layer=i)
        if i < dense_lead:
            for part, shape in (("ffn_gate", (n_embd, n_ff)), ("ffn_down", (n_ff, n_embd)), ("ffn_up", (n_embd, n_ff))):
                plan.want(p + part + ".weight", shape, required=req, layer=i)
        else:
            if n_expert == 0 or hp.first(hp.n_expert_used) == 0:
                raise LoadStop(T("This file is damaged: it is a mixture-of-experts model without experts in its "
                                 "settings.", "文件已损坏：这是混合专家模型，但其设置中没有专家。"),
                               (f"deepseek2 expert_count={n_expert} expert_used_count={hp.first(hp.n_expert_used)}",))
            plan.want(p + "ffn_gate_inp.weight", (n_embd, n_expert), required=req, layer=i)
            plan.want(p + "exp_probs_b.bias", (n_expert,), required=False)
            plan.want(p + "ffn_down_exps.weight", (n_ff_exp, n_embd, n_expert), required=req, layer=i)
            _gate_up_exps(plan, p, n_embd, n_ff_exp, n_expert, i, req)
            for part, shape in (("ffn_gate_shexp", (n_embd, shared)), ("ffn_down_shexp", (shared, n_embd)),
                                ("ffn_up_shexp", (n_embd, shared))):
                plan.want(p + part + ".weight", shape, required=req, layer=i)
        if i >= hp.n_layer:
            for part, shape in (("nextn.eh_proj", (2 * n_embd, n_embd)), ("nextn.enorm", (n_embd,)),
                                ("nextn.hnorm", (n_embd,)), ("nextn.embed_tokens", (n_embd, hp.n_vocab)),
                                ("nextn.shared_head_head", (n_embd, hp.n_vocab)),
                                ("nextn.shared_head_norm", (n_embd,))):
                plan.want(p + part + ".weight", shape, required=False)


def _mamba2_mixer(plan: Plan, hp: HParams, i: int, *, conv_bias_required: bool = True) -> None:
    """A Mamba-2 mixer's tensors: ssm_in to z, x, B, C and dt; the conv over x, B and C; A, D and the dt bias per
    SSM head; a grouped norm; ssm_out."""
    d_conv, d_inner, d_state, n_group, dt_rank = (hp.number(k) for k in
                                                  ("d_conv", "d_inner", "d_state", "n_group", "dt_rank"))
    conv_dim = d_inner + 2 * n_group * d_state
    p = f"blk.{i}."
    for name, shape in (("ssm_in.weight", (hp.n_embd, d_inner + conv_dim + dt_rank)),
                        ("ssm_conv1d.weight", (d_conv, conv_dim)), ("ssm_dt.bias", (dt_rank,)),
                        ("ssm_a", (1, dt_rank)), ("ssm_d", (1, dt_rank)),
                        ("ssm_norm.weight", (d_inner // max(1, n_group), n_group)),
                        ("ssm_out.weight", (d_inner, hp.n_embd))):
        plan.want(p + name, shape, layer=i)
    plan.want(p + "ssm_conv1d.bias", (conv_dim,), required=conv_bias_required, layer=i if conv_bias_required else None)


def _mamba2_tensors(plan: Plan, hp: HParams) -> None:
    """llama_model_mamba2::load_arch_tensors: a norm and a Mamba-2 mixer per layer."""
    _output(plan, hp)
    for i in range(hp.n_layer):
        plan.want(f"blk.{i}.attn_norm.weight", (hp.n_embd,), layer=i)
        _mamba2_mixer(plan, hp, i)


def _granitehybrid_tensors(plan: Plan, hp: HParams) -> None:
    """llama_model_granite_hybrid::load_arch_tensors: a Mamba-2 mixer where head_count_kv is 0, attention
    elsewhere; then experts (with optional shared experts) or a dense FFN with optional biases."""
    n_embd, n_ff, n_expert = hp.n_embd, hp.first(hp.n_ff), hp.n_expert
    if hp.number("d_inner") != 2 * n_embd:
        raise LoadStop(T("This file is damaged: its state size does not match its width; llama.cpp stops with an "
                         "assertion.", "文件已损坏：其状态大小与模型宽度不符；llama.cpp 会因断言失败而中止。"),
                       (f"granitehybrid ssm.inner_size={hp.extra.get('d_inner')} != 2 * embedding_length {n_embd}",),
                       check_id="tensor_shapes")
    shexp = hp.number("n_ff_shexp")
    _output(plan, hp)
    for i in range(hp.n_layer):
        p = f"blk.{i}."
        plan.want(p + "attn_norm.weight", (n_embd,), layer=i)
        n_kv = hp.n_head_kv[i] if i < len(hp.n_head_kv) else hp.first(hp.n_head_kv)
        if n_kv == 0:
            _mamba2_mixer(plan, hp, i, conv_bias_required=False)
        else:
            n_head = hp.n_head[i] if i < len(hp.n_head) else hp.first(hp.n_head)
            _qkv(plan, i, n_embd, hp.n_embd_head_k * n_head, hp.n_embd_head_k * n_kv, hp.n_embd_head_v * n_kv)
            plan.want(p + "attn_output.weight", (hp.n_embd_head_k * n_head, n_embd), layer=i)
            plan.want(p + "attn_output.bias", (n_embd,), required=False)
        plan.want(p + "ffn_norm.weight", (n_embd,), layer=i)
        _rope_factors(plan, hp)
        if n_expert > 0:
            plan.want(p + "ffn_gate_inp.weight", (n_embd, n_expert), layer=i)
            plan.want(p + "ffn_gate_exps.weight", (n_embd, n_ff, n_expert), required=False)
            plan.want(p + "ffn_down_exps.weight", (n_ff, n_embd, n_expert), layer=i)
            plan.want(p + "ffn_up_exps.weight", (n_embd, n_ff, n_expert), layer=i)
            if shexp > 0:
                for part, shape in (("ffn_gate_shexp", (n_embd, shexp)), ("ffn_up_shexp", (n_embd, shexp)),
                                    ("ffn_down_shexp", (shexp, n_embd))):
                    plan.want(p + part + ".weight", shape, layer=i)
        else:
            for part, shape in (("ffn_gate", (n_embd, n_ff)), ("ffn_down", (n_ff, n_embd)), ("ffn_up", (n_embd, n_ff))):
                plan.want(p + part + ".weight", shape, layer=i)
            for part, n in (("ffn_gate", n_ff), ("ffn_down", n_embd), ("ffn_up", n_ff)):
                plan.want(p + part + ".bias", (n,), required=False)


# --- per-architecture hyper-parameters (load_arch_hparams) ----------------------------------------------


def _rms_eps(meta: Meta, hp: HParams) -> None:
    meta.get(meta.akey("attention.layer_norm_rms_epsilon"), "f32", required=True)


def _llama_hparams(meta: Meta, hp: HParams) -> None:
    meta.get(meta.akey("vocab_size"), "u32")
    _rms_eps(meta, hp)


def _mistral3_hparams(meta: Meta, hp: HParams) -> None:
    _rms_eps(meta, hp)
    temp_scale = meta.get(meta.akey("attention.temperature_scale"), "f32")
    for suffix in ("rope.scaling.yarn_beta_fast", "rope.scaling.yarn_beta_slow", "rope.scaling.yarn_log_multiplier"):
        meta.get(meta.akey(suffix), "f32")
    orig_ctx = meta.get(meta.akey("rope.scaling.original_context_length"), "u32")
    if temp_scale and (hp.n_ctx_train if orig_ctx is None else orig_ctx) == 0:
        raise LoadStop(T("This file is damaged: it scales attention by context length but states no context length.",
                         "文件已损坏：它按上下文长度缩放注意力，却没有给出上下文长度。"),
                       ("attention.temperature_scale set with original_context_length 0",))


def _gemma3_hparams(meta: Meta, hp: HParams) -> None:
    window = meta.get(meta.akey("attention.sliding_window"), "u32")
    if window:
        hp.swa_first = _swa_pattern(meta, hp, n_pattern=6)[0]
        meta.get(meta.akey("rope.freq_base_swa"), "f32")
    meta.get(meta.akey("final_logit_softcapping"), "f32")
    _rms_eps(meta, hp)


def _swa_pattern(meta: Meta, hp: HParams, n_pattern: int) -> list[bool]:
    """load_swa_pattern: a per-layer array (bool or integer, at most 512 items), else a period (default ``n_pattern``)
    where the last layer of each period has full attention."""
    key = meta.akey("attention.sliding_window_pattern")
    if meta.type_of(key) == ARRAY:
        if (meta.length(key) or 0) > MAX_LAYERS:
            raise LoadStop(T("This file is damaged: its sliding-window pattern lists more layers than llama.cpp "
                             "supports.", "文件已损坏：滑动窗口模式列出的层数超出 llama.cpp 的支持范围。"),
                           (f"{key} has {meta.length(key)} items",))
        values = meta.get_array(key, "u32_or_bool") or []
        return [bool(v) for v in values] + [False] * max(0, hp.n_layer_all - len(values))
    period = meta.get(key, "u32")
    period = n_pattern if period is None else period
    return [period == 0 or i % period < period - 1 for i in range(max(1, hp.n_layer_all))]


def _phi3_hparams(meta: Meta, hp: HParams) -> None:
    _rms_eps(meta, hp)
    meta.get(meta.akey("attention.sliding_window"), "u32")  # read, then switched off: no layer uses a window


def _moe_hparams(meta: Meta, hp: HParams) -> None:
    hp.extra["n_ff_exp"] = meta.get_per_layer(meta.akey("expert_feed_forward_length"), "u32", hp.n_layer_all)
    _rms_eps(meta, hp)


def _deepseek2_hparams(meta: Meta, hp: HParams) -> None:
    """llama_model_deepseek2::load_arch_hparams: q_lora_rank is required except for the "lite" layer counts."""
    n_vocab = meta.get(meta.akey("vocab_size"), "u32")
    n_vocab = (meta.length("tokenizer.ggml.tokens") or 0) if n_vocab is None else n_vocab
    is_lite = hp.n_layer in (26, 27) or (hp.n_layer == 48 and n_vocab == 128256)
    _rms_eps(meta, hp)
    hp.extra["dense_lead"] = meta.get(meta.akey("leading_dense_block_count"), "u32") or 0
    if not is_lite:
        hp.extra["q_lora"] = meta.get(meta.akey("attention.q_lora_rank"), "u32", required=True)
    hp.extra["kv_lora"] = meta.get(meta.akey("attention.kv_lora_rank"), "u32", required=True)
    hp.extra["k_mla"] = meta.get(meta.akey("attention.key_length_mla"), "u32") or 0
    hp.extra["v_mla"] = meta.get(meta.akey("attention.value_length_mla"), "u32") or 0
    hp.extra["n_ff_exp"] = meta.get_per_layer(meta.akey("expert_feed_forward_length"), "u32", hp.n_layer_all)
    hp.extra["n_shared"] = meta.get(meta.akey("expert_shared_count"), "u32", required=True)
    meta.get(meta.akey("expert_weights_scale"), "f32")
    meta.get(meta.akey("expert_weights_norm"), "bool")
    meta.get(meta.akey("expert_gating_func"), "u32")


def _ssm_hparams(meta: Meta, hp: HParams) -> None:
    for name, key in (("d_conv", "ssm.conv_kernel"), ("d_inner", "ssm.inner_size"), ("d_state", "ssm.state_size"),
                      ("dt_rank", "ssm.time_step_rank"), ("n_group", "ssm.group_count")):
        hp.extra[name] = meta.get(meta.akey(key), "u32", required=True)


def _mamba2_hparams(meta: Meta, hp: HParams) -> None:
    _ssm_hparams(meta, hp)
    _rms_eps(meta, hp)


def _granitehybrid_hparams(meta: Meta, hp: HParams) -> None:
    _rms_eps(meta, hp)
    for suffix in ("logit_scale", "residual_scale", "embedding_scale", "attention.scale"):
        meta.get(meta.akey(suffix), "f32")
    _ssm_hparams(meta, hp)
    meta.get(meta.akey("rope.scaling.finetuned"), "bool")
    hp.extra["n_ff_shexp"] = meta.get(meta.akey("expert_shared_feed_forward_length"), "u32") or 0


@dataclass(frozen=True)
class ArchSpec:
    hparams: Callable[[Meta, HParams], None]
    tensors: Callable[[Plan, HParams], None]


SPECS: dict[str, ArchSpec] = {
    "llama": ArchSpec(_llama_hparams, _llama_tensors),
    "mistral3": ArchSpec(_mistral3_hparams, _llama_tensors),
    "qwen2": ArchSpec(_rms_eps, _qwen2_tensors),
    "qwen3": ArchSpec(_rms_eps, _qwen3_tensors),
    "qwen3moe": ArchSpec(_moe_hparams, _qwen3moe_tensors),
    "gemma3": ArchSpec(_gemma3_hparams, _gemma3_tensors),
    "phi3": ArchSpec(_phi3_hparams, _phi3_tensors),
    "deepseek2": ArchSpec(_deepseek2_hparams, _deepseek2_tensors),
    "mamba2": ArchSpec(_mamba2_hparams, _mamba2_tensors),
    "granitehybrid": ArchSpec(_granitehybrid_hparams, _granitehybrid_tensors),
}


def plan_tensors(spec: ArchSpec, hp: HParams, present: dict[str, Present]) -> Plan:
    plan = Plan(present)
    spec.tensors(plan, hp)
    _scales(plan, hp)
    _output_scales(plan)
    return plan
