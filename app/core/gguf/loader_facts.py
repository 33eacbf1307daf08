"""Facts about llama.cpp's model loader that the doctor checks against (no code of theirs, only the facts).

Read from llama.cpp's sources (src/llama-arch.cpp, llama-model.cpp, llama-model-loader.cpp,
llama-vocab.cpp, ggml/src/gguf.cpp) of the two builds this app ships or tests with: the one
llama-cpp-python 0.3.36 vendors (b11312) and llama-server b11434. Where they differ, the union is
kept, so a name one of them knows is never called unknown.
"""

from __future__ import annotations

import re

# GGUF value types (gguf.h)
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
TYPE_NAMES = {U8: "u8", I8: "i8", U16: "u16", I16: "i16", U32: "u32", I32: "i32", F32: "f32", BOOL: "bool",
              STRING: "string", ARRAY: "array", U64: "u64", I64: "i64", F64: "f64"}


def type_name(type_id: int | None, unknown: str = "?") -> str:
    """A GGUF value type's name for an evidence line; ``unknown`` when absent (None) or not a known type."""
    return unknown if type_id is None else TYPE_NAMES.get(type_id, unknown)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


MAX_LAYERS = 512  # LLAMA_MAX_LAYERS
MAX_EXPERTS = 1024  # LLAMA_MAX_EXPERTS (b11312 and b11434)
MAX_TOKENS_SCANNED = 4_000_000  # the token list is compared for duplicates up to this size (real vocabularies: < 300k)

# llm_arch names (LLM_ARCH_NAMES); "clip" is a vision projector, never a main model.
ARCHITECTURES = _words("""
afmoe apertus arcee arctic arwkv7 baichuan bailingmoe bailingmoe2 bailingmoe3 bert bitnet bloom chameleon
chatglm clef clip codeshell cogvlm cohere2 cohere2moe command-r dbrx deci deepseek deepseek2 deepseek2-ocr
deepseek32 deepseek4 dflash dots1 dots3note dream eagle3 ernie4_5 ernie4_5-moe eurobert exaone exaone-moe
exaone4 falcon falcon-h1 gemma gemma-embedding gemma2 gemma3 gemma3n gemma4 gemma4-assistant glm-dsa glm4
glm4moe glm5-next gpt-oss gpt2 gptj gptneox granite granite_swa granitehybrid granitemoe graniteswitch grok
grovemoe hrm_text hunyuan-dense hunyuan-moe hunyuan_vl hy_v3 hy_v4 internlm2 jais jais2 jamba jina-bert-v2
jina-bert-v3 kimi-k3 kimi-linear laguna lfm2 lfm2moe llada llada-moe llama llama-embed llama4 maincoder mamba
mamba2 maple mellum mimo2 minicpm minicpm3 minimax-01 minimax-m2 minimax-m3 mistral3 mistral4 modern-bert mpt
muse-glimmer nanbeige nemotron nemotron_h nemotron_h_moe neo-bert nomic-bert nomic-bert-moe olmo olmo2 olmoe
openelm orion paddleocr pangu-embedded phi2 phi3 phimoe plamo plamo2 plamo3 plm pockettts qwen qwen2 qwen2moe
qwen2vl qwen3 qwen35 qwen35moe qwen3moe qwen3next qwen3tts qwen3vl qwen3vlmoe qwen4exp refact rnd1 rwkv6
rwkv6qwen2 rwkv7 seed_oss smallthinker smollm3 spark2_5 stablelm starcoder starcoder2 step35 t5 t5encoder
talkie wavtokenizer-dec xverse
""")

# Architectures whose layers legitimately differ in which parts they have, decided by the file itself
# (a layer is dense or MoE by the tensors present, recurrent or attention by a pattern or a per-layer
# array, the first layer special, shared-KV or full-attention layers without some parts). Their layers
# are not compared with each other; the other checks still apply.
VARIABLE_LAYER_ARCHS = _words("""
arwkv7 bailingmoe3 deci dflash dots3note falcon-h1 gemma3n gemma4 gemma4-assistant glm5-next granitehybrid
grok hy_v4 jamba kimi-k3 kimi-linear lfm2 lfm2moe llama4 minimax-01 modern-bert nemotron_h nemotron_h_moe
nomic-bert-moe openelm plamo2 qwen35 qwen35moe qwen3next qwen4exp rwkv7 deepseek4
""")

# tokenizer.ggml.model values the vocabulary loader accepts
TOKENIZER_MODELS = _words("no_vocab none llama bert gpt2 hybriddna whitespace t5 rwkv test plamo2 gemma4")
BPE_MODELS = frozenset({"gpt2", "hybriddna", "whitespace", "gemma4"})  # need tokenizer.ggml.merges

# tokenizer.ggml.pre values a BPE vocabulary accepts (an empty or missing one means "default")
PRE_TOKENIZERS = _words("""
a.x-4.0 afmoe bailingmoe bailingmoe2 bloom chameleon chatglm-bpe codeshell cohere2moe command-r dbrx
deepseek-coder deepseek-llm deepseek-r1-qwen deepseek-v3 default exaone exaone-moe exaone4 f2llmv2 falcon
falcon-h1 falcon3 gemma4 gigachat glm4 glm5 gpt-2 gpt-4o gpt3-finnish granite-docling granite-embed-multi-311m
granite-embed-multi-97m grok-2 hunyuan hunyuan-dense hy_v4 jais jais-2 jina-de jina-es jina-v1-en jina-v2-code
jina-v2-de jina-v2-es jina-v5-nano joyai-llm kanana2 kimi-k2 kormo laguna lfm2 llada-moe llama-bpe llama-v3
llama3 llama4 megrez mellum mellum2 midm-2.0 minerva-7b minicpm5 minimax-m2 mmbert modern-bert mpt olmo phi-2
pixtral poro-chat qwen2 qwen35 refact roberta-bpe sarvam-moe seed-coder smaug-bpe smollm solar-open spark2_5
stablelm2 starcoder superbpe talkie tekken tiny_aya trillion ufakzeka viking whitespace youtu
""")

ROPE_SCALING_TYPES = frozenset({"none", "linear", "yarn", "longrope"})

# Token type ids (llama_token_type); BYTE tokens are read as "<0xNN>", so their text needs >= 3 bytes.
TOKEN_TYPE_BYTE = 6

# Tokenizer keys read as unsigned 32-bit token ids (a key of another type stops the load).
TOKEN_ID_KEYS = tuple(f"tokenizer.ggml.{name}" for name in (
    "bos_token_id", "eos_token_id", "eot_token_id", "eom_token_id", "unknown_token_id", "seperator_token_id",
    "padding_token_id", "mask_token_id", "fim_pre_token_id", "fim_suf_token_id", "fim_mid_token_id",
    "fim_pad_token_id", "fim_rep_token_id", "fim_sep_token_id", "prefix_token_id", "suffix_token_id",
    "middle_token_id"))
TOKENIZER_BOOL_KEYS = tuple(f"tokenizer.ggml.{name}" for name in (
    "add_space_prefix", "remove_extra_whitespaces", "add_bos_token", "add_eos_token", "add_sep_token",
    "normalizer.lowercase", "normalizer.strip_accents"))

# Tensor names (LLM_TENSOR_NAMES): whole names outside the blocks, then the part after "blk.N." inside them.
GLOBAL_TENSORS = _words("""
altup_proj altup_unembd_proj cls cls.norm cls.output conf_proj conv1d d2t dec.output_norm decision.field_norm
decision.hidden_norm decision.option_norm decision.option_summary_norm decision.proj_global decision.proj_memory
decision.proj_option_context decision.proj_option_lexical decision.proj_option_question decision.proj_question
decision.scales decision.scorer decision.scorer_out dense_2 dense_3 enc.output_norm fc hrm.z_l_init markov_w1
markov_w2 masked_embd_centroids masked_embd_ordering nextn.post_projection nextn.pre_projection output
output_hc_base output_hc_down output_hc_fn output_hc_norm output_hc_scale output_hc_up output_norm
output_res_score per_layer_model_proj per_layer_proj_norm per_layer_token_embd position_embd rope_factors_long
rope_factors_short rope_freqs selector_hidden selector_predecessor selector_successor token_embd token_embd_norm
token_types
""")
BLOCK_TENSORS = _words("""
altup_correct_coef altup_correct_scale altup_predict_coef altup_router altup_router_norm attn_compressor_ape
attn_compressor_gate attn_compressor_kv attn_compressor_norm attn_conv_base attn_conv_proj attn_gate attn_k
attn_k_b attn_k_norm attn_kv attn_kv_a_mqa attn_kv_a_norm attn_kv_b attn_norm attn_norm_2 attn_output
attn_output_a attn_output_b attn_output_norm attn_q attn_q_a attn_q_a_norm attn_q_b attn_q_norm attn_qkv
attn_res_score attn_rot_embd attn_sinks attn_sub_norm attn_v attn_v_b channel_mix_key channel_mix_lerp_k
channel_mix_lerp_r channel_mix_receptance channel_mix_value exp_probs_b exp_probs_b_vl ffn.act ffn_conv_base
ffn_conv_proj ffn_down ffn_down_chexps ffn_down_exps ffn_down_shexp ffn_gate ffn_gate_chexps ffn_gate_exps
ffn_gate_inp ffn_gate_inp_shexp ffn_gate_shexp ffn_gate_tid2eid ffn_gate_up_exps ffn_latent_down ffn_latent_up
ffn_norm ffn_norm_exps ffn_res_score ffn_routed_down ffn_routed_norm ffn_routed_up ffn_sub_norm ffn_up
ffn_up_chexps ffn_up_exps ffn_up_shexp hc_attn_base hc_attn_down hc_attn_fn hc_attn_inject hc_attn_norm
hc_attn_scale hc_attn_up hc_ffn_base hc_ffn_down hc_ffn_fn hc_ffn_inject hc_ffn_norm hc_ffn_scale hc_ffn_up
indexer.attn_k indexer.attn_q_b indexer.k_norm indexer.k_proj indexer.proj indexer.q_norm indexer.q_proj
indexer_compressor_ape indexer_compressor_gate indexer_compressor_kv indexer_compressor_norm inp_gate laurel_l
laurel_post_norm laurel_r layer_output_norm layer_output_scale nextn.eh_proj nextn.embed_tokens nextn.enorm
nextn.hc_head_down nextn.hc_head_norm nextn.hc_head_up nextn.hnorm nextn.shared_head_head nextn.shared_head_norm
ple_conv1d ple_key ple_norm_conv ple_norm_key ple_norm_query ple_value post_attention_norm post_ffw_norm
post_ffw_norm_1 post_ffw_norm_2 post_norm pre_ffw_norm_2 proj shortconv.conv shortconv.in_proj shortconv.out_proj
ssm_a ssm_alpha ssm_b_norm ssm_ba ssm_beta ssm_c_norm ssm_conv1d ssm_conv1d_k ssm_conv1d_q ssm_conv1d_v ssm_d
ssm_dt ssm_dt_norm ssm_f_a ssm_f_b ssm_g ssm_g_a ssm_g_b ssm_in ssm_norm ssm_out ssm_x time_mix_a0 time_mix_a1
time_mix_a2 time_mix_decay time_mix_decay_w1 time_mix_decay_w2 time_mix_first time_mix_g1 time_mix_g2
time_mix_gate time_mix_k_a time_mix_k_k time_mix_key time_mix_lerp_fused time_mix_lerp_g time_mix_lerp_k
time_mix_lerp_r time_mix_lerp_v time_mix_lerp_w time_mix_lerp_x time_mix_ln time_mix_output time_mix_r_k
time_mix_receptance time_mix_v0 time_mix_v1 time_mix_v2 time_mix_value time_mix_w0 time_mix_w1 time_mix_w2
vis_attn_output vis_attn_qkv vis_down vis_gate vis_up
""")
# numbered names of other shapes: experts stored one by one, encoder/decoder blocks, vocoder blocks
_OTHER_NUMBERED = re.compile(
    r"^(?:blk\.\d+\.ffn_(?:gate|down|up)\.\d+"
    r"|(?:enc|dec)\.blk\.\d+\.(?:attn_(?:norm|q|k|v|o|rel_b)|ffn_(?:norm|gate|down|up)"
    r"|cross_attn_(?:norm|norm_kv|q|k|v|o|rel_b))"
    r"|convnext\.\d+\.(?:dw|norm|pw1|pw2|gamma)"
    r"|posnet\.\d+\.(?:conv1|conv2|norm|norm1|norm2|attn_norm|attn_q|attn_k|attn_v|attn_output))$")
TENSOR_SUFFIXES = ("weight", "bias", "scale", "input_scale", "lora_a", "lora_b", "scales")
_BLOCK_NAME = re.compile(r"^blk\.(\d+)\.(.+)$")


def split_suffix(name: str) -> tuple[str, str]:
    """('blk.3.attn_q', 'weight') for 'blk.3.attn_q.weight'; ('blk.3.ssm_a', '') for a name without suffix."""
    base, dot, suffix = name.rpartition(".")
    if dot and suffix in TENSOR_SUFFIXES:
        return base, suffix
    return name, ""


def block_of(name: str) -> tuple[int, str] | None:
    """(layer index, part) for 'blk.N.part[.suffix]', where part keeps its suffix; None outside the blocks."""
    match = _BLOCK_NAME.match(name)
    if not match:
        return None
    return int(match.group(1)), match.group(2)


def is_known_tensor_name(name: str) -> bool:
    """Whether some llama.cpp architecture could load a tensor of this name."""
    base, _ = split_suffix(name)
    if base in GLOBAL_TENSORS:
        return True
    block = block_of(base)
    if block is not None and block[1] in BLOCK_TENSORS:
        return True
    return bool(_OTHER_NUMBERED.match(base))


# Plain words for the parts of a layer and the model, for sentences a newcomer reads (the raw name
# stays in the evidence).
PART_WORDS: dict[str, tuple[str, str]] = {
    "token_embd": ("token embeddings", "词元嵌入"),
    "output_norm": ("final normalisation", "最终归一化"),
    "output": ("output projection", "输出投影"),
    "rope_freqs": ("rotary frequency factors", "旋转位置频率因子"),
    "attn_norm": ("attention normalisation", "注意力归一化"),
    "attn_q": ("attention query", "注意力查询（Q）"),
    "attn_k": ("attention key", "注意力键（K）"),
    "attn_v": ("attention value", "注意力值（V）"),
    "attn_qkv": ("fused attention query/key/value", "合并的注意力 Q/K/V"),
    "attn_output": ("attention output", "注意力输出"),
    "attn_q_norm": ("attention query normalisation", "注意力查询归一化"),
    "attn_k_norm": ("attention key normalisation", "注意力键归一化"),
    "ffn_norm": ("feed-forward normalisation", "前馈归一化"),
    "ffn_gate": ("feed-forward gate", "前馈门控"),
    "ffn_up": ("feed-forward up-projection", "前馈上投影"),
    "ffn_down": ("feed-forward down-projection", "前馈下投影"),
    "ffn_gate_inp": ("expert router", "专家路由"),
    "ffn_gate_exps": ("experts' gate", "专家门控"),
    "ffn_up_exps": ("experts' up-projection", "专家上投影"),
    "ffn_down_exps": ("experts' down-projection", "专家下投影"),
    "ffn_gate_up_exps": ("experts' fused gate/up-projection", "专家合并门控/上投影"),
    "ffn_gate_shexp": ("shared expert's gate", "共享专家门控"),
    "ffn_up_shexp": ("shared expert's up-projection", "共享专家上投影"),
    "ffn_down_shexp": ("shared expert's down-projection", "共享专家下投影"),
    "ffn_gate_inp_shexp": ("shared expert's router", "共享专家路由"),
    "post_attention_norm": ("post-attention normalisation", "注意力后归一化"),
    "post_ffw_norm": ("post-feed-forward normalisation", "前馈后归一化"),
    "attn_sinks": ("attention sinks", "注意力汇聚项"),
    "exp_probs_b": ("expert selection bias", "专家选择偏置"),
    "rope_factors_long": ("long-context rotary factors", "长上下文旋转位置因子"),
    "rope_factors_short": ("short-context rotary factors", "短上下文旋转位置因子"),
    "position_embd": ("position embeddings", "位置嵌入"),
    "token_embd_norm": ("token embedding normalisation", "词元嵌入归一化"),
    "cls.output": ("classifier head", "分类头"),
}
_SUFFIX_WORDS = {"bias": (" bias", "偏置"), "scale": (" scale", "缩放"), "input_scale": (" input scale", "输入缩放")}


def part_words(name: str) -> tuple[str, str]:
    """('attention output', '注意力输出') for 'blk.5.attn_output.weight'; the name itself when no phrase exists."""
    base, suffix = split_suffix(name)
    block = block_of(base)
    part = block[1] if block else base
    words = PART_WORDS.get(part)
    if words is None:
        return name, name
    extra = _SUFFIX_WORDS.get(suffix, ("", ""))
    return words[0] + extra[0], words[1] + extra[1]


# Plain words for the settings (metadata keys) a newcomer may read about; the key stays in the evidence.
KEY_WORDS: dict[str, tuple[str, str]] = {
    "general.architecture": ("which architecture it is", "模型架构"),
    "context_length": ("trained context length", "训练上下文长度"),
    "embedding_length": ("embedding size", "嵌入维度"),
    "block_count": ("number of layers", "层数"),
    "feed_forward_length": ("feed-forward size", "前馈层大小"),
    "attention.head_count": ("number of attention heads", "注意力头数"),
    "attention.head_count_kv": ("number of key/value heads", "键/值头数"),
    "attention.layer_norm_rms_epsilon": ("normalisation epsilon", "归一化 epsilon"),
    "attention.key_length": ("attention key size", "注意力键维度"),
    "attention.value_length": ("attention value size", "注意力值维度"),
    "rope.dimension_count": ("rotary embedding size", "旋转位置编码维度"),
    "rope.scaling.type": ("rotary scaling type", "旋转位置编码缩放类型"),
    "expert_count": ("number of experts", "专家数量"),
    "expert_used_count": ("number of experts used per token", "每个词元使用的专家数"),
    "tokenizer.ggml.model": ("tokenizer type", "分词器类型"),
    "tokenizer.ggml.pre": ("pre-tokenizer type", "预分词器类型"),
    "tokenizer.ggml.tokens": ("vocabulary (token list)", "词表（词元列表）"),
    "tokenizer.ggml.scores": ("token scores", "词元分数"),
    "tokenizer.ggml.token_type": ("token types", "词元类型"),
    "tokenizer.ggml.merges": ("tokenizer merges", "分词合并规则"),
    "tokenizer.ggml.bos_token_id": ("beginning-of-text token", "文本开始词元"),
    "tokenizer.ggml.eos_token_id": ("end-of-text token", "文本结束词元"),
    "tokenizer.ggml.eot_token_id": ("end-of-turn token", "轮次结束词元"),
    "tokenizer.ggml.unknown_token_id": ("unknown-word token", "未知词元"),
    "tokenizer.ggml.padding_token_id": ("padding token", "填充词元"),
    "tokenizer.ggml.seperator_token_id": ("separator token", "分隔词元"),
    "tokenizer.ggml.mask_token_id": ("mask token", "掩码词元"),
    "tokenizer.ggml.add_bos_token": ("whether to start text with a beginning-of-text token",
                                     "是否在文本开头加开始词元"),
    "tokenizer.ggml.add_eos_token": ("whether to end text with an end-of-text token", "是否在文本末尾加结束词元"),
    "general.name": ("model name", "模型名称"),
    "general.file_type": ("file type", "文件类型"),
}


def key_words(key: str, arch: str | None) -> tuple[str, str]:
    """Plain words for a metadata key (the arch prefix removed); the key itself when no phrase exists."""
    words = KEY_WORDS.get(key)
    if words is None and arch and key.startswith(arch + "."):
        words = KEY_WORDS.get(key[len(arch) + 1:])
    return words or (key, key)
