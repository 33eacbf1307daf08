"""The two ways to run a model, and the argv each one gets from one LaunchConfig.

Embedded: llama-cpp-python's OpenAI-compatible server, always installed, started through the app's own entry point
(app/core/launch/embedded_server.py: sliding-window layers and flash attention as llama-server sizes them);
it loads the model before it binds, so readiness is ``/v1/models`` answering 200.
External: a llama.cpp ``llama-server``; it binds first and answers ``/health`` 503 while loading, then 200.
Its argv only ever contains flags the detected build lists in its own ``--help``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from app.core.launch import discovery as backend_discovery
from app.core.launch.config import (
    BACKEND_EMBEDDED,
    BACKEND_LLAMA_SERVER,
    EMBEDDED_SERVER_SWITCH,
    SPLIT_MODES,
    LaunchConfig,
)
from app.core.launch.gpu_servers import has_gpu_backend
from app.core.problem import UserError
from app.core.text import T, Text

# ggml_type ids (FACTS.md): llama-cpp-python takes the KV cache type as an integer.
KV_TYPE_IDS = {"f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q5_0": 6, "q5_1": 7, "q8_0": 8, "iq4_nl": 20, "bf16": 30}
LOAD_MODES = ("mmap", "none", "mlock")
EMBEDDED_SERVER_MODULE = "app.core.launch.embedded_server"
# Flags of llama-cpp-python 0.3.36's server, checked against `python -m llama_cpp.server --help`, and the entry
# point's own --swa_full (--flash_attn there also takes auto).
EMBEDDED_FLAGS = frozenset({"--swa_full",
    "--model", "--n_ctx", "--n_gpu_layers", "--n_batch", "--n_ubatch", "--n_threads", "--n_threads_batch",
    "--flash_attn", "--use_mmap", "--use_mlock", "--type_k", "--type_v", "--host", "--port", "--api_key",
    "--chat_format", "--verbose", "--seed", "--config_file", "--logits_all", "--tensor_split", "--split_mode",
    "--main_gpu", "--model_alias",
})
# Where each engine reads its API key from the environment, so the key is never on the command line (which every
# user of the computer can read with ps): llama-cpp-python's server settings are pydantic settings (the field
# api_key <- API_KEY); llama-server names its variable in its --help ("(env: LLAMA_API_KEY)").
EMBEDDED_KEY_ENV = "API_KEY"
KEY_ENV_NAMES = ("API_KEY", "LLAMA_API_KEY", "LLAMA_ARG_API_KEY", "LLAMA_ARG_API_KEY_FILE")
KEY_FLAGS = ("--api-key", "--api_key")
# llama.h's llama_split_mode: llama-cpp-python's --split_mode takes the number
SPLIT_MODE_IDS = {"none": 0, "layer": 1, "row": 2}


@dataclass(frozen=True)
class BackendInfo:
    kind: str  # "embedded" | "llama-server"
    argv_prefix: tuple[str, ...]
    version_text: str
    build_number: int | None
    compiled_backends: tuple[str, ...]
    accepted_flags: frozenset[str]
    readiness_path: str
    tokenize_path: str
    supports_health: bool
    path: str | None = None  # the llama-server file; None for embedded
    flag_help: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def accepts(self, flag: str) -> bool:
        return flag in self.accepted_flags

    def pick(self, *names: str) -> str | None:
        """The first of several spellings of one option that this build accepts."""
        return next((name for name in names if name in self.accepted_flags), None)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "path": self.path, "version": self.version_text, "build": self.build_number,
                "compiled_backends": list(self.compiled_backends), "readiness_path": self.readiness_path}


def embedded_server_prefix() -> tuple[str, ...]:
    """How to start the built-in engine's server: `python -m app.core.launch.embedded_server`, or the frozen app
    re-launched (both run llama-cpp-python's server with the context settings of embedded_server.py)."""
    if getattr(sys, "frozen", False):  # PyInstaller: sys.executable is the app itself (see app/__main__.py)
        return (sys.executable, EMBEDDED_SERVER_SWITCH)
    return (sys.executable, "-m", EMBEDDED_SERVER_MODULE)


def embedded_backend() -> BackendInfo:
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None:
        raise UserError(T("The built-in engine (llama-cpp-python) is not installed.",
                          "内置引擎（llama-cpp-python）没有安装。"),
                        T("Reinstall GGUF Launcher, or choose an external llama-server.",
                          "请重新安装 GGUF Launcher，或选择外部的 llama-server。"))
    try:
        version = metadata.version("llama_cpp_python")
    except metadata.PackageNotFoundError:
        version = "unknown"
    from app.core.gguf.quant_types import embedded_build

    return BackendInfo(BACKEND_EMBEDDED, embedded_server_prefix(), f"llama-cpp-python {version}",
                       embedded_build(), _embedded_compiled_backends(spec), EMBEDDED_FLAGS,
                       "/v1/models", "/extras/tokenize", False)


def _embedded_compiled_backends(spec) -> tuple[str, ...]:
    """Which ggml backend libraries ship next to llama-cpp-python (read from file names, nothing loaded)."""
    found = ["CPU"]
    for folder in spec.submodule_search_locations or []:
        names = " ".join(p.name.lower() for p in Path(folder, "lib").glob("*")) if Path(folder, "lib").is_dir() else ""
        for label, key in (("CUDA", "cuda"), ("Vulkan", "vulkan"), ("Metal", "metal"), ("ROCm", "hip"),
                           ("SYCL", "sycl")):
            if key in names and label not in found:
                found.append(label)
    return tuple(found)


def llama_server_backend(user_path: str | None = None) -> BackendInfo:
    path = backend_discovery.find_llama_server(user_path)
    facts = backend_discovery.inspect_llama_server(path)
    flags = frozenset(facts.flag_help)
    return BackendInfo(BACKEND_LLAMA_SERVER, backend_discovery.server_argv_prefix(path), facts.version_text,
                       facts.build_number, facts.compiled_backends, flags, "/health", "/tokenize",
                       True, str(path), dict(facts.flag_help))


def resolve_backend(config: LaunchConfig) -> BackendInfo:
    """The backend the config asks for, inspected. Raises UserError (missing or broken binary)."""
    if config.backend == BACKEND_EMBEDDED:
        return embedded_backend()
    if config.backend == BACKEND_LLAMA_SERVER:
        return llama_server_backend(config.server_bin)
    raise UserError(T("Unknown engine \"{name}\".", "未知的引擎“{name}”。", name=config.backend),
                    T("Choose embedded or llama-server.", "请选择 embedded 或 llama-server。"))


def build_argv(config: LaunchConfig, backend: BackendInfo) -> list[str]:
    return build_argv_with_notes(config, backend)[0]


def build_argv_with_notes(config: LaunchConfig, backend: BackendInfo) -> tuple[list[str], list[Text]]:
    """The argument list (never a shell string) and sentences about settings this backend cannot take."""
    if config.load_mode not in LOAD_MODES:
        raise UserError(T("Unknown load mode \"{mode}\".", "未知的加载方式“{mode}”。", mode=config.load_mode),
                        T("Choose mmap, none or mlock.", "请选择 mmap、none 或 mlock。"))
    if config.split_mode not in SPLIT_MODES:
        raise UserError(T("Unknown way to split the model across graphics cards \"{mode}\".",
                          "未知的多显卡拆分方式“{mode}”。", mode=config.split_mode),
                        T("Choose layer, row or none.", "请选择 layer、row 或 none。"))
    builder = _embedded_args if backend.kind == BACKEND_EMBEDDED else _llama_server_args
    args, notes = builder(config, backend)
    return list(backend.argv_prefix) + args + list(config.extra_args), notes


def _embedded_args(config: LaunchConfig, backend: BackendInfo) -> tuple[list[str], list[Text]]:
    args = ["--model", str(config.model), "--n_ctx", str(config.ctx), "--n_gpu_layers", str(config.gpu_layers),
            "--n_batch", str(config.batch), "--n_ubatch", str(config.ubatch)]
    notes: list[Text] = []
    for flag, name in (("--type_k", config.cache_type_k), ("--type_v", config.cache_type_v)):
        if name not in KV_TYPE_IDS:
            raise _unknown_cache_type(name)
        args += [flag, str(KV_TYPE_IDS[name])]
    args += ["--use_mmap", "false" if config.load_mode == "none" else "true"]
    args += ["--use_mlock", "true" if config.load_mode == "mlock" else "false"]
    # The server defaults to keeping every token's logits (ctx x vocab float32: ~4 GiB at 8k ctx and a 128k
    # vocabulary); chat never needs them. extra_args come later, so a user can still turn it back on.
    args += ["--logits_all", "false"]
    args += _embedded_split_args(config)
    if config.threads:
        args += ["--n_threads", str(config.threads)]
    if config.flash_attn is not None:
        args += ["--flash_attn", "true" if config.flash_attn else "false"]
    args += ["--host", config.host, "--port", str(config.port), "--model_alias", served_name(config)]
    if config.parallel > 1:
        notes.append(T("The built-in engine answers one request at a time; parallel {n} is ignored.",
                       "内置引擎一次只处理一个请求；并行数 {n} 将被忽略。", n=config.parallel))
    if config.mmproj:
        # llama-cpp-python's server takes a projector only together with a chat handler of one model family
        # (--chat_format llava-1-5, qwen2.5-vl, ...), which the app cannot pick for an arbitrary model.
        notes.append(EMBEDDED_NO_PROJECTOR)
    if config.n_cpu_moe > 0:  # llama-cpp-python's tensor_buft_overrides field is marked unused: nothing to pass
        notes.append(EMBEDDED_NO_CPU_MOE)
    if config.rpc_workers:  # llama-cpp-python's server has no --rpc
        notes.append(EMBEDDED_NO_WORKERS)
    return args, notes


VERBOSITY_FLAGS = frozenset({"-lv", "--log-verbosity", "-v", "--verbose", "--log-verbose"})
def _wants_offload_lines(config: LaunchConfig, backend: BackendInfo) -> bool:
    """Debug verbosity for a GPU build asked to offload: new builds print "offloaded N/M layers to GPU" and the
    device buffers only at -lv 4, and those lines are how a short offload is caught (diagnosis/offload.py). About
    30 more log lines per request; CPU-only launches and a verbosity the user chose are left alone."""
    return (has_gpu_backend(backend.compiled_backends) and config.gpu_layers != 0
            and bool(backend.pick("-lv", "--log-verbosity")) and not VERBOSITY_FLAGS & set(config.extra_args))


def _embedded_split_args(config: LaunchConfig) -> list[str]:
    """Several GPUs, only where they differ from the defaults (``--tensor_split`` takes its numbers as words)."""
    args = ["--tensor_split", *map(split_number, config.tensor_split)] if config.tensor_split else []
    if config.split_mode != "layer":
        args += ["--split_mode", str(SPLIT_MODE_IDS[config.split_mode])]
    if config.main_gpu:
        args += ["--main_gpu", str(config.main_gpu)]
    return args


def split_number(share: float) -> str:
    """A share of a tensor split as short as it reads: 3.0 -> "3", 0.25 -> "0.25"."""
    return format(float(share), "g")


EMBEDDED_NO_PROJECTOR = T(
    "The built-in engine runs this model without its image part (the vision projector file next to it); "
    "the llama-server engine can use it to read pictures.",
    "内置引擎运行此模型时不使用其图像部分（旁边的视觉投影文件）；llama-server 引擎可以用它来识别图片。")


EMBEDDED_NO_CPU_MOE = T(
    "The built-in engine cannot keep a model's experts in RAM while the rest runs on the graphics card; the "
    "llama-server engine can, and is often several times faster for such models on a small card.",
    "内置引擎无法把模型的专家权重留在内存中、其余部分放到显卡上运行；llama-server 引擎可以，"
    "在小显存显卡上运行这类模型时往往快好几倍。")


EMBEDDED_NO_WORKERS = T(
    "The built-in engine cannot use other computers (workers); the model runs on this computer only. "
    "Choose the llama-server engine to use them.",
    "内置引擎无法使用其他计算机（工作机）；模型只在本机运行。要使用工作机，请选择 llama-server 引擎。")


def _unknown_cache_type(name: str) -> UserError:
    return UserError(T("Unknown KV cache type \"{name}\".", "未知的 KV 缓存类型“{name}”。", name=name),
                     T("Choose one of: {names}.", "请从以下选择：{names}。", names=", ".join(KV_TYPE_IDS)))


def _llama_server_args(config: LaunchConfig, backend: BackendInfo) -> tuple[list[str], list[Text]]:
    args: list[str] = []
    notes: list[Text] = []

    def add(names: tuple[str, ...], *values: str, required: bool = False) -> None:
        flag = backend.pick(*names)
        if flag:
            args.extend([flag, *values])
        elif required or values:
            notes.append(T("This llama-server does not accept {flag}; that setting is left at its default.",
                           "这个 llama-server 不接受 {flag}；该设置保持默认。", flag=names[-1]))

    add(("-m", "--model"), str(config.model), required=True)
    if config.mmproj:
        add(("--mmproj", "-mm"), str(config.mmproj), required=True)
        if config.gpu_layers == 0 and backend.accepts("--no-mmproj-offload"):
            add(("--no-mmproj-offload",))  # the projector goes to the GPU by default even with -ngl 0
    add(("-c", "--ctx-size"), str(config.ctx))
    add(("-ngl", "--n-gpu-layers", "--gpu-layers"), _gpu_layers_value(config.gpu_layers, backend))
    if config.n_cpu_moe > 0:
        add(("-ncmoe", "--n-cpu-moe"), str(config.n_cpu_moe), required=True)
    if backend.pick("-cram", "--cache-ram"):  # a build before the prompt cache has none to cap
        add(("-cram", "--cache-ram"), str(config.cache_ram_mib))
    if backend.pick("-fit", "--fit"):  # --fit would silently override the values we chose
        add(("-fit", "--fit"), "off")
    if _wants_offload_lines(config, backend):
        add(("-lv", "--log-verbosity"), "4")
    _split_args(config, add)
    add(("-np", "--parallel"), str(config.parallel))
    add(("-b", "--batch-size"), str(config.batch))
    add(("-ub", "--ubatch-size"), str(config.ubatch))
    for names, value in ((("-ctk", "--cache-type-k"), config.cache_type_k),
                         (("-ctv", "--cache-type-v"), config.cache_type_v)):
        if value not in KV_TYPE_IDS:
            raise _unknown_cache_type(value)
        add(names, value)
    if config.threads:
        add(("-t", "--threads"), str(config.threads))
    _flash_attn_args(config, backend, add, args)
    _load_mode_args(config, backend, add, args)
    add(("--host",), config.host)
    add(("--port",), str(config.port))
    if backend.pick("-a", "--alias"):  # /v1/models and chat answers name the file, not its path
        add(("-a", "--alias"), served_name(config))
    if config.api_key and _llama_server_key_env(backend) is None:  # an old build: only its command line takes it
        add(("--api-key",), config.api_key, required=True)
    return args, notes


def served_name(config: LaunchConfig) -> str:
    """The model's name in the server's answers: its file name, never the path (home folder, user name).
    llama-server splits its aliases at commas."""
    return Path(config.model).name.replace(",", " ")


def _llama_server_key_env(backend: BackendInfo) -> str | None:
    match = re.search(r"\(env: ([A-Z_]+)\)", backend.flag_help.get("--api-key", ""))
    return match.group(1) if match else None


def key_environment(config: LaunchConfig, backend: BackendInfo) -> dict[str, str | None]:
    """The environment changes that hand the server its API key: {name: value}, and None for variables to remove
    (a key left in the user's own environment would lock the server with a key the app does not know)."""
    env: dict[str, str | None] = dict.fromkeys(KEY_ENV_NAMES)
    name = EMBEDDED_KEY_ENV if backend.kind == BACKEND_EMBEDDED else _llama_server_key_env(backend)
    if config.api_key and name is not None:
        env[name] = config.api_key
    return env


def _split_args(config: LaunchConfig, add) -> None:
    """Several GPUs, only where they differ from llama-server's defaults (split by free memory, layer, GPU 0)."""
    if config.tensor_split:
        add(("-ts", "--tensor-split"), ",".join(map(split_number, config.tensor_split)), required=True)
    if config.split_mode != "layer":
        add(("-sm", "--split-mode"), config.split_mode, required=True)
    if config.main_gpu:
        add(("-mg", "--main-gpu"), str(config.main_gpu), required=True)
    if config.rpc_workers:  # only a build with RPC (-DGGML_RPC=ON) lists --rpc; the note says so otherwise
        add(("--rpc",), ",".join(config.rpc_workers), required=True)


def _gpu_layers_value(layers: int, backend: BackendInfo) -> str:
    if layers >= 0:
        return str(layers)
    help_line = backend.flag_help.get("-ngl", "") or backend.flag_help.get("--n-gpu-layers", "")
    return "all" if "'all'" in help_line or "|all" in help_line else "999"


def _flash_attn_args(config: LaunchConfig, backend: BackendInfo, add, args: list[str]) -> None:
    if config.flash_attn is None:
        return
    help_line = backend.flag_help.get("-fa", "") or backend.flag_help.get("--flash-attn", "")
    if "on|off" in help_line:  # recent builds: -fa on|off|auto
        add(("-fa", "--flash-attn"), "on" if config.flash_attn else "off")
    elif config.flash_attn:  # older builds: a bare switch, off unless given
        add(("-fa", "--flash-attn"))


def _load_mode_args(config: LaunchConfig, backend: BackendInfo, add, args: list[str]) -> None:
    if backend.pick("-lm", "--load-mode"):  # recent builds replaced --no-mmap/--mlock with --load-mode
        add(("-lm", "--load-mode"), {"mmap": "mmap", "none": "none", "mlock": "mmap+mlock"}[config.load_mode])
    elif config.load_mode == "none":
        add(("--no-mmap",), required=True)
    elif config.load_mode == "mlock":
        add(("--mlock",), required=True)


def command_line(argv: list[str]) -> str:
    """A copyable command line for the user's own scripts or a bug report, quoted for this OS's shell; an API key
    on it (an old llama-server, or one the user added) is masked."""
    argv = masked_argv(argv)
    if os.name == "nt":
        return subprocess.list2cmdline(argv)
    return shlex.join(argv)


def masked_argv(argv: list[str]) -> list[str]:
    from app.core.launch.ports import masked_key

    shown: list[str] = []
    for i, word in enumerate(argv):
        flag, equals, value = word.partition("=")
        if equals and flag in KEY_FLAGS:
            word = f"{flag}={masked_key(value)}"
        elif i > 0 and argv[i - 1] in KEY_FLAGS:
            word = masked_key(word)
        shown.append(word)
    return shown
