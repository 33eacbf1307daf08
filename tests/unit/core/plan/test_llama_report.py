"""llama.cpp's own memory numbers read from llama-server logs (app/core/plan/llama_report.py).

The logs under tests/data/llama_report/ are excerpts of real llama-server b11434 runs on the CPU at ``-lv 4``
(the lines the parser reads, unchanged; model paths shortened), recorded from the generated test models and the
real SmolLM2 file: gemma3 Q4_K_M -c 16384 stopped with SIGINT; deepseek2, mamba2 and granitehybrid Q4_K_M
-c 16384, qwen3moe Q4_0 -c 2048 and SmolLM2 Q4_1 -c 8192 -np 2 stopped with SIGTERM; SmolLM2 -c 2048 killed (SIGKILL).
"""

from __future__ import annotations

from pathlib import Path

from app.core.plan.llama_report import parse_llama_log, report_from_supervisor
from app.core.process.child_log import ServerLog

DATA = Path(__file__).parents[3] / "data" / "llama_report"


def _report(name: str):
    return parse_llama_log((DATA / f"{name}.log").read_text(encoding="utf-8").splitlines())


def test_sliding_window_model_two_caches_and_both_tables():
    r = _report("gemma3-q4km")
    assert [b.phase for b in r.breakdowns] == ["load", "exit"]  # fit dry run while loading, then at SIGINT
    load, done = r.breakdowns
    assert (load.host.self_mib, load.host.model_mib, load.host.context_mib, load.host.compute_mib) == (26, 0, 4, 21)
    assert (done.host.self_mib, done.host.model_mib) == (27, 1)
    assert done.row("CPU_REPACK").kind == "buffer_type" and r.latest is done
    assert [(c.kind, c.cells, c.layers, c.size_mib) for c in r.kv_caches] == [("kv_full", 16384, 1, 4.0),
                                                                             ("kv_swa", 1024, 2, 0.5)]
    assert r.kv_caches[0].seqs == 4 and r.kv_caches[0].streams == 1 and r.kv_caches[0].k_type == "f16"
    assert r.kv_mib == 4.5 and [(b.name, b.mib) for b in r.compute_buffers] == [("CPU", 21.53)]
    assert [(b.name, b.mib) for b in r.model_buffers] == [("CPU_Mapped", 1.04), ("CPU_REPACK", 0.82)]
    assert r.n_seq_max == 4 and r.context["n_ctx"] == "16384" and r.context["n_ubatch"] == "512"
    assert (r.n_slots, r.n_ctx_slot, r.kv_unified) == (4, 4096, True)
    assert (r.model_mib, r.context_mib, r.compute_mib, r.repack_mib, r.total_mib) == (1, 4, 21, 0, 27)


def test_mla_cache_holds_keys_only():
    r = _report("deepseek2-q4km")
    (kv,) = r.kv_caches  # 16384 cells x 2 layers x (kv_lora_rank 512 + rope 32) x f16 = 34 MiB; V is a view of K
    assert (kv.kind, kv.size_mib, kv.k_mib, kv.v_mib, kv.cells, kv.layers) == ("kv", 34.0, 34.0, 0.0, 16384, 2)
    assert r.latest.context_mib == 34 and r.latest.repack_mib == 1 and r.total_mib == 66  # 65 host + 1 repack


def test_recurrent_state_is_per_sequence_not_per_token():
    r = _report("mamba2-q4km")
    (state,) = r.kv_caches  # 4 cells = 4 sequences, whatever the context (16384 here)
    assert (state.kind, state.cells, state.seqs, state.layers, state.size_mib) == ("recurrent", 4, 4, 2, 1.06)
    assert (state.k_type, state.k_mib, state.v_type, state.v_mib) == ("f32", 0.06, "f32", 1.0)  # R (conv), S (ssm)
    assert r.context["n_ctx"] == "16384" and r.compute_buffers[0].mib == 8.8


def test_hybrid_model_has_a_kv_cache_and_a_recurrent_state():
    r = _report("granitehybrid-q4km")  # one attention layer of three; the state is allocated for 3 layers
    assert [(c.kind, c.cells, c.layers, c.size_mib) for c in r.kv_caches] == [("kv", 16384, 1, 8.0),
                                                                             ("recurrent", 4, 3, 1.06)]
    assert r.kv_mib == 9.06 and r.context_mib == 9 and r.total_mib == 36


def test_parallel_slots_without_a_unified_cache():
    r = _report("smollm2-q41")  # -c 8192 -np 2: two streams of 4096 cells
    (kv,) = r.kv_caches
    assert (kv.cells, kv.seqs, kv.streams, kv.size_mib) == (4096, 2, 2, 180.0)
    assert (r.n_slots, r.n_ctx_slot, r.kv_unified, r.n_seq_max) == (2, 4096, False, 2)
    assert r.latest.phase == "exit" and (r.model_mib, r.context_mib, r.compute_mib) == (92, 180, 18)
    assert r.latest.row("CPU_REPACK") is None and r.repack_mib == 0


def test_a_killed_server_leaves_only_the_load_projection():
    r = _report("smollm2-kill")
    assert [b.phase for b in r.breakdowns] == ["load"] and r.latest.host.self_mib == 153
    assert r.kv_caches[0].size_mib == 45.0 and r.kv_caches[0].streams == 1


def test_device_rows_with_free_and_total():
    # the GPU row as common/fit.cpp's template_gpu prints it ("%s: | %s | %s = %s + (%s = %s + %s + %s) + %s |");
    # not recorded here (no CUDA build on this machine), the Host row below is from the SmolLM2 run
    lines = ["common_memory_breakdown_print: | memory breakdown [MiB] | total   free    self   model   context   "
             "compute    unaccounted |",
             "common_memory_breakdown_print: |   - CUDA0 (RTX 4090)   | 24080 = 23000 + ( 810 =   92 +  700 +  18) +"
             "    270 |",
             "common_memory_breakdown_print: |   - Host               |                  290 =    92 +     180 +   "
             "   18                |"]
    r = parse_llama_log(lines)
    (gpu,) = r.devices
    assert (gpu.name, gpu.description, gpu.total_mib, gpu.free_mib, gpu.self_mib, gpu.unaccounted_mib) == \
        ("CUDA0", "RTX 4090", 24080, 23000, 810, 270)
    assert r.total_mib == 810 + 290 and r.model_mib == 184


def test_a_restart_starts_a_new_context_and_unknown_text_is_ignored():
    text = (DATA / "qwen3moe-q40.log").read_text(encoding="utf-8").splitlines()
    r = parse_llama_log(text + ["garbage | - Host | x = y |", "llama_kv_cache: size = ?"] + text)
    assert [b.phase for b in r.breakdowns] == ["load", "exit", "load", "exit"]
    assert len(r.kv_caches) == 1 and len(r.compute_buffers) == 1 and len(r.model_buffers) == 2
    assert not parse_llama_log(["srv  llama_server: model loaded"]).found and parse_llama_log([]).latest is None


def test_report_from_a_supervisor_log_tail(tmp_path):
    # a ServerLog is what Supervisor.tail() reads from; the report takes anything with that tail(n) of LogLines
    log = ServerLog("llama-server", directory=tmp_path)
    for text in (DATA / "deepseek2-q4km.log").read_text(encoding="utf-8").splitlines():
        log.append("stderr", text)
    r = report_from_supervisor(log)
    assert r.found and r.kv_caches[0].size_mib == 34.0 and r.latest.phase == "exit"
    assert not report_from_supervisor(object()).found
    log.close()
