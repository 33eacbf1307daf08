"""How an attempt is judged without a server: safety margins, memory evidence in logs, prompt sizing, cache keys."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from app.core.launch.config import LaunchConfig
from app.core.plan.budget import Margins
from app.core.probe import cache
from app.core.probe.attempt import Attempt, _blame_memory_when_evident
from app.core.probe.evidence import reported_cpu_compute_bytes
from app.core.probe.margins import FreeNow, margin_problem
from app.core.probe.request import RequestFailed, prompt_target

MiB, GiB = 1024**2, 1024**3


def judge(peak_rss=None, peak_vram=None, **kw):
    defaults = dict(ram_budget=None, vram_budget=None, free_now=None, uses_gpu=False)
    return margin_problem(peak_rss, peak_vram, Margins(), **(defaults | kw))


def test_budget_margins_use_the_measured_peaks():
    assert judge(peak_rss=3 * GiB, ram_budget=4 * GiB) is None
    # the whole RAM budget may be used: no margin out of it (probe --ram-budget 400M must not refuse a small model)
    assert judge(peak_rss=int(3.9 * GiB), ram_budget=4 * GiB) is None
    over = judge(peak_rss=int(4.2 * GiB), ram_budget=4 * GiB)
    assert "RAM" in str(over) and "4.0 GiB" in str(over)
    roomy = FreeNow(ram_free_bytes=16 * GiB, ram_total_bytes=32 * GiB, gpus=())
    low = FreeNow(ram_free_bytes=1 * GiB, ram_total_bytes=32 * GiB, gpus=())
    assert judge(peak_rss=3 * GiB, ram_budget=4 * GiB, free_now=roomy) is None
    assert "RAM" in str(judge(peak_rss=3 * GiB, ram_budget=4 * GiB, free_now=low))  # the real machine's margin
    assert judge(peak_vram=7 * GiB, vram_budget=8 * GiB) is None
    problem = judge(peak_vram=int(7.7 * GiB), vram_budget=8 * GiB)
    assert "VRAM" in str(problem) and "512.0 MiB" in str(problem)
    assert judge(peak_vram=None, vram_budget=8 * GiB) is None  # nobody can tell without NVML


def test_free_memory_now_is_checked_per_gpu_only_when_the_gpu_is_used():
    tight = FreeNow(ram_free_bytes=16 * GiB, ram_total_bytes=32 * GiB, gpus=(("GPU 0", 300 * MiB, 8 * GiB),))
    assert "GPU 0" in str(judge(free_now=tight, uses_gpu=True))
    assert judge(free_now=tight, uses_gpu=False) is None
    low_ram = FreeNow(ram_free_bytes=1 * GiB, ram_total_bytes=32 * GiB, gpus=())
    assert "RAM" in str(judge(free_now=low_ram))  # 5 % of 32 GiB = 1.6 GiB must stay free


class FakeLog:
    def __init__(self, lines):
        self.lines = [SimpleNamespace(text=line) for line in lines]

    def tail(self, n):
        return self.lines[-n:]


def test_reported_cpu_compute_buffer_is_read_from_the_log():
    lines = ["llama_kv_cache:        CPU KV buffer size =    64.00 MiB",
             "sched_reserve:        CPU compute buffer size =   555.01 MiB"]
    assert reported_cpu_compute_bytes(lines) == int(555.01 * MiB)
    assert reported_cpu_compute_bytes(["srv  load_model: loading model"]) is None


def test_generic_crash_with_memory_evidence_counts_as_too_big():
    attempt = Attempt(0, 4096, cause="exited_early")
    _blame_memory_when_evident(FakeLog(["libgomp: Thread creation failed: Resource temporarily unavailable"]), attempt)
    assert attempt.cause == "ram_out_of_memory" and attempt.memory_related
    answer = Attempt(0, 4096, cause="request")
    _blame_memory_when_evident(FakeLog([]), answer, 'HTTP 500: {"message":"decode() failed: std::bad_alloc"}')
    assert answer.memory_related
    unrelated = Attempt(0, 4096, cause="port_in_use")
    _blame_memory_when_evident(FakeLog(["couldn't bind HTTP server socket"]), unrelated)
    assert unrelated.cause == "port_in_use" and not unrelated.memory_related


def test_prompt_covers_a_micro_batch_but_fits_the_context():
    assert prompt_target(512, 8192) >= 512
    assert prompt_target(512, 256) <= 256 - 4
    assert prompt_target(128, 4096) >= 128


def test_cache_key_changes_with_everything_that_changes_the_answer(tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + b"\0" * 10)
    info = SimpleNamespace(path=str(model))
    backend = SimpleNamespace(kind="llama-server", version_text="b1", build_number=1, path="/x",
                              compiled_backends=("CPU",))
    hw = SimpleNamespace(gpus=[])
    config = LaunchConfig(model=str(model), ctx=4096)
    base = cache.key_digest(cache.probe_key(info, config, backend, hw))
    assert base == cache.key_digest(cache.probe_key(info, config, backend, hw))
    variants = [
        cache.probe_key(info, config.with_changes(ctx=8192), backend, hw),
        cache.probe_key(info, config.with_changes(cache_type_k="q8_0"), backend, hw),
        cache.probe_key(info, config.with_changes(parallel=2), backend, hw),
        cache.probe_key(info, config.with_changes(flash_attn=True), backend, hw),
        cache.probe_key(info, config, SimpleNamespace(**{**vars(backend), "build_number": 2}), hw),
        cache.probe_key(info, config, backend, SimpleNamespace(gpus=[SimpleNamespace(
            uuid="GPU-1", name="x", driver_version="555", vram_total_bytes=8 * GiB)])),
        cache.probe_key(info, config, backend, hw, ram_budget=4 * GiB),
    ]
    assert len({cache.key_digest(k) for k in variants} | {base}) == len(variants) + 1
    model.write_bytes(b"GGUF" + b"\0" * 11)  # the file changed
    assert cache.key_digest(cache.probe_key(info, config, backend, hw)) != base


def test_cache_round_trip_and_foreign_key_rejected():
    key = {"a": 1}
    cache.store(key, {"recommendation": {"gpu_layers": 3, "ctx": 4096}})
    assert cache.load_cached(key) == {"recommendation": {"gpu_layers": 3, "ctx": 4096}}
    assert cache.load_cached({"a": 2}) is None


class FakeSupervisor(FakeLog):
    """What _exercise reads of a supervisor whose server broke the connection but reported no crash (yet)."""

    url, backend, last_diagnosis = "http://127.0.0.1:1", SimpleNamespace(tokenize_path="/tokenize"), None
    api_key = "key-of-this-server"
    child = SimpleNamespace(running=True)

    def wait_for(self, states, timeout):
        return None


def _failed_prompt(monkeypatch, log_lines, error):
    from app.core.probe import attempt as attempt_module

    def evaluate_once(*_args, **_kwargs):
        raise error

    monkeypatch.setattr(attempt_module, "evaluate_once", evaluate_once)
    attempt = Attempt(0, 4096)
    attempt_module._exercise(FakeSupervisor(log_lines), LaunchConfig(model="m.gguf"),
                             attempt_module.AttemptLimits(request_timeout_s=30), attempt, None)
    return attempt


GONE = RequestFailed("RemoteProtocolError: Server disconnected without sending a response.", kind="gone")


def test_a_broken_prompt_is_told_in_the_diagnosis_words_of_the_probe_log(monkeypatch):
    log = ["srv  update_slots: prompt processing progress", "Exception in ASGI application",
           "Traceback (most recent call last):", '  File "llama_cpp/llama.py", line 1, in eval',
           "RuntimeError: llama_decode returned -3"]
    attempt = _failed_prompt(monkeypatch, log, GONE)
    for lang in ("en", "zh"):
        reason = attempt.reason.render(lang)
        assert "llama_decode returned -3" in reason, reason
        assert "RemoteProtocolError" not in reason and "RuntimeError" not in reason and "Error:" not in reason
    assert attempt.reason.render("en").startswith("The model loaded, but the test prompt failed: the built-in")
    assert attempt.cause == "request" and not attempt.ok  # tried once more, as before


def test_memory_in_the_probe_log_makes_a_broken_prompt_too_big(monkeypatch):
    attempt = _failed_prompt(monkeypatch, ["ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer"], GONE)
    assert attempt.memory_related and "RemoteProtocolError" not in attempt.reason.render("en")


@pytest.mark.parametrize("error, words", [
    (GONE, "broke off the test prompt"),
    (RequestFailed("ReadTimeout: timed out", kind="timeout"), "no answer within 30 s"),
    (RequestFailed('HTTP 500: {"error": {"message": "decode failed"}}', kind="http", status=500,
                   server_message="decode failed"), "(HTTP 500): decode failed"),
    (RequestFailed("unexpected answer: <html>", kind="answer"), "could not be read"),
])
def test_a_failed_prompt_with_a_silent_log_says_how_in_words(monkeypatch, error, words):
    attempt = _failed_prompt(monkeypatch, ["srv  update_slots: all slots are idle"], error)
    assert words in attempt.reason.render("en") and attempt.cause == "request"
    assert re.search(r"[\u4e00-\u9fff]", attempt.reason.render("zh"))
    assert not re.search(r"\w+(Error|Timeout):|Exception", attempt.reason.render("en") + attempt.reason.render("zh"))
