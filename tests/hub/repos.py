"""Real GGUF files for the fake Hub: generated tiny llamas (the app's own generator), one with a vocabulary large
enough that its header needs more than the first range request, and a model split into shards."""

from __future__ import annotations

from pathlib import Path

from app.core.synthetic import tiny_llama
from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama


class _Recorder:
    def __init__(self) -> None:
        self.tensors: list[tuple[str, object]] = []

    def add_tensor(self, name: str, array) -> None:
        self.tensors.append((name, array))


def write_split_llama(folder: Path, prefix: str, n_shards: int, spec: TinyModelSpec | None = None) -> list[Path]:
    """A tiny llama as ``prefix-0000k-of-0000n.gguf`` shards (metadata in the first, tensors spread over all), the
    layout llama-gguf-split writes (split.no, split.count, split.tensors.count)."""
    import gguf

    spec = spec or TinyModelSpec(f16=True)
    tokens, scores, types = tiny_llama._vocab(spec)
    recorder = _Recorder()
    tiny_llama._add_tensors(recorder, spec, n_vocab=len(tokens))
    per = -(-len(recorder.tensors) // n_shards)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n_shards):
        path = folder / f"{prefix}-{i + 1:05d}-of-{n_shards:05d}.gguf"
        writer = gguf.GGUFWriter(str(path), "llama")
        if i == 0:
            tiny_llama._add_metadata(writer, spec)
            tiny_llama._add_vocab(writer, tokens, scores, types, chat_template=True)
        writer.add_uint16("split.no", i)
        writer.add_uint16("split.count", n_shards)
        writer.add_int32("split.tensors.count", len(recorder.tensors))
        for name, array in recorder.tensors[i * per:(i + 1) * per]:
            writer.add_tensor(name, array)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        paths.append(path)
    return paths


def tiny_repo_files(folder: Path) -> dict[str, Path]:
    """A repository's files: two precisions of one tiny llama, a 3-shard split of it, a README."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "tiny-llama-F32.gguf": write_tiny_llama(folder / "tiny-llama-F32.gguf", TinyModelSpec(f16=False)),
        "tiny-llama-F16.gguf": write_tiny_llama(folder / "tiny-llama-F16.gguf", TinyModelSpec(f16=True)),
    }
    for path in write_split_llama(folder / "split", "tiny-llama-F16-split", 3):
        files[f"split/{path.name}"] = path
    readme = folder / "README.md"
    readme.write_text("# tiny llama\n", encoding="utf-8")
    files["README.md"] = readme
    return files


def big_vocab_llama(folder: Path, n_extra_tokens: int = 200_000) -> Path:
    """A tiny llama with a 200k-token vocabulary: a header of about 4 MB, more than the first range request."""
    spec = TinyModelSpec(f16=True, n_embd=32, n_head=2, n_head_kv=2, n_ff=64, n_extra_tokens=n_extra_tokens)
    return write_tiny_llama(folder / "big-vocab-F16.gguf", spec)


def llama31_8b_q4_k_m_like(path: Path) -> Path:
    """A 4.9 GB file shaped like Llama-3.1-8B-Instruct Q4_K_M: its metadata (a 128,256-token vocabulary and 280,147
    merges, as long as the real ones on average), and the tensor infos of the 8B layers in Q4_K / Q6_K, then a sparse
    hole where the weights would be (nothing reads them: the file costs no disk). What a header read of a real 5 GB
    download costs."""
    import gguf
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("Meta Llama 3.1 8B Instruct")
    writer.add_block_count(32)
    writer.add_context_length(131072)
    writer.add_embedding_length(4096)
    writer.add_feed_forward_length(14336)
    writer.add_head_count(32)
    writer.add_head_count_kv(8)
    writer.add_rope_freq_base(500000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(15)  # MOSTLY_Q4_K_M
    writer.add_vocab_size(128256)
    writer.add_rope_dimension_count(128)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("llama-bpe")
    rng = np.random.default_rng(0)
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", dtype=np.uint8)
    lengths = rng.integers(2, 12, size=128256)  # about 6.5 bytes, like the real vocabulary
    tokens = [bytes(letters[rng.integers(0, len(letters), size=n)]) for n in lengths]
    writer.add_token_list(tokens)
    writer.add_token_types([1] * 128256)
    writer.add_token_merges([f"{tokens[i % 128256][:5].decode()} {tokens[(i * 7) % 128256][:4].decode()}"
                             for i in range(280147)])
    writer.add_bos_token_id(128000)
    writer.add_eos_token_id(128009)
    writer.add_chat_template("{% for m in messages %}{{ m['content'] }}{% endfor %}" * 30)
    q4k, q6k = gguf.GGMLQuantizationType.Q4_K, gguf.GGMLQuantizationType.Q6_K

    def info(name: str, shape: tuple[int, ...], qtype) -> None:
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        n = int(np.prod(shape))
        byte_shape = (shape[0], shape[1] // block * size)  # gguf-py's order: rows, then a row's bytes
        writer.add_tensor_info(name, byte_shape, np.dtype(np.uint8), n // block * size, raw_dtype=qtype)

    def norm(name: str) -> None:
        writer.add_tensor_info(name, (4096,), np.dtype(np.float32), 4096 * 4)

    info("token_embd.weight", (128256, 4096), q4k)
    for i in range(32):
        p = f"blk.{i}."
        norm(p + "attn_norm.weight")
        info(p + "attn_q.weight", (4096, 4096), q4k)
        info(p + "attn_k.weight", (1024, 4096), q4k)
        info(p + "attn_v.weight", (1024, 4096), q6k if i % 2 == 0 else q4k)
        info(p + "attn_output.weight", (4096, 4096), q4k)
        norm(p + "ffn_norm.weight")
        info(p + "ffn_gate.weight", (14336, 4096), q4k)
        info(p + "ffn_up.weight", (14336, 4096), q4k)
        info(p + "ffn_down.weight", (4096, 14336), q6k if i % 2 == 0 else q4k)
    norm("output_norm.weight")
    info("output.weight", (128256, 4096), q6k)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    writer.close()
    from app.core.gguf.reader import read_raw

    raw = read_raw(path)
    with open(path, "r+b") as handle:
        handle.truncate(raw.data_offset + raw.data_size)  # a hole: the size of the real file, no disk used
    return path
