"""What the engine really offloaded: "offloaded N/M layers to GPU" and the device buffers, and fewer layers than
asked as a diagnosis (app/core/diagnosis/offload.py)."""

from __future__ import annotations

from app.core.diagnosis import CAUSES
from app.core.diagnosis.offload import CAUSE, is_offload_line, offload_diagnosis, read_offload
from app.core.problem import Fix
from tests.paths import ROOT

DATA = ROOT / "tests" / "data"
PARTIAL = (DATA / "offload_logs" / "cuda_partial_offload.txt").read_text(encoding="utf-8").splitlines()
FULL = (DATA / "crash_logs" / "cuda_oom_on_load.txt").read_text(encoding="utf-8").splitlines()  # recorded CUDA


def test_reads_layers_and_device_buffers_of_a_cuda_load():
    offload = read_offload(PARTIAL)
    assert (offload.offloaded, offload.total) == (20, 29)
    assert offload.gpu_buffers_mib == {"CUDA0": 3012.45 + 160.0 + 304.0}  # host buffers (CPU, CUDA_Host) left out
    assert "load_tensors: offloaded 20/29 layers to GPU" in offload.evidence and offload.on_gpu == 20
    assert any("CUDA0 model buffer size" in line for line in offload.evidence)


def test_fewer_layers_than_asked_is_a_diagnosis_with_the_honest_setting_as_fix():
    diagnosis = offload_diagnosis(PARTIAL, asked=99)
    assert diagnosis is not None and diagnosis.cause == CAUSE and CAUSE in CAUSES
    assert diagnosis.message.render("en") == ("The engine put only 20 of 29 model layers on the graphics card; the "
                                              "other 9 run on the processor, which is much slower.")
    assert "20" in diagnosis.message.render("zh") and "29" in diagnosis.message.render("zh")
    assert diagnosis.action.kind is Fix.CHANGE_SETTINGS and diagnosis.action.changes == {"gpu_layers": 20}
    assert "offloaded 20/29" in " ".join(diagnosis.evidence)
    assert not diagnosis.restartable


def test_as_many_as_asked_is_no_diagnosis():
    assert offload_diagnosis(FULL, asked=-1) is None  # all: 29/29
    assert offload_diagnosis(FULL, asked=99) is None
    assert offload_diagnosis(PARTIAL, asked=20) is None  # 20 asked, 20 given
    assert offload_diagnosis(PARTIAL, asked=0) is None  # none asked


def test_offloaded_none_of_them_says_the_engine_cannot_use_the_card():
    lines = ["load_tensors: loading model tensors, this can take a while... (mmap = true)",
             "load_tensors: offloaded 0/29 layers to GPU",
             "load_tensors:   CPU_Mapped model buffer size =  4460.45 MiB"]
    diagnosis = offload_diagnosis(lines, asked=99)
    assert diagnosis is not None and diagnosis.action is None
    assert diagnosis.message.render("en").startswith("The engine put none of the 29 model layers on the graphics card")
    assert "graphics card" in diagnosis.next_step.render("en") and "显卡" in diagnosis.next_step.render("zh")
    assert diagnosis.evidence == ("load_tensors: offloaded 0/29 layers to GPU",
                                  "load_tensors:   CPU_Mapped model buffer size =  4460.45 MiB")


def test_a_cpu_only_build_that_claims_every_layer_is_read_by_its_buffers():
    """Recorded here: llama.cpp b11434 built without a GPU backend, -ngl 99 -lv 4, on the 2-layer tiny model."""
    lines = ["0.00.029.907 I load_tensors: offloading 1 repeating layers to GPU",
             "0.00.029.908 I load_tensors: offloaded 3/3 layers to GPU",
             "0.00.029.911 I load_tensors:   CPU_Mapped model buffer size =     0.44 MiB",
             "0.00.038.453 I llama_kv_cache:        CPU KV buffer size =     0.12 MiB"]
    assert read_offload(lines).on_gpu == 0
    diagnosis = offload_diagnosis(lines, asked=99)
    assert diagnosis.message.render("en").startswith("The engine put none of the 3 model layers")


def test_an_engine_without_a_gpu_backend_is_diagnosed_even_when_its_log_says_nothing():
    """Recent llama-server builds print no load_tensors line at the default verbosity."""
    diagnosis = offload_diagnosis(["srv  llama_server: model loaded"], asked=-1, backends=("CPU",), total_hint=29)
    assert diagnosis.message.render("en").startswith("The engine put none of the 29 model layers")
    assert "engine backends: CPU" in diagnosis.evidence
    assert offload_diagnosis(["srv  llama_server: model loaded"], asked=-1, backends=("CPU", "CUDA")) is None


def test_a_build_that_says_it_has_no_gpu_is_diagnosed_without_an_offload_line():
    lines = ["warning: no usable GPU found, --gpu-layers option will be ignored",
             "warning: one possible reason is that llama.cpp was compiled without GPU support"]
    diagnosis = offload_diagnosis(lines, asked=99)
    assert diagnosis is not None and diagnosis.message.render("en").startswith("The engine put no model layer")
    assert offload_diagnosis(lines, asked=0) is None


def test_the_last_load_counts_and_only_offload_lines_trigger_a_look():
    assert read_offload(FULL + PARTIAL).offloaded == 20
    assert read_offload([]).offloaded is None and offload_diagnosis([], asked=99) is None
    assert is_offload_line("load_tensors: offloaded 0/3 layers to GPU")
    assert not is_offload_line("load_tensors: CPU_Mapped model buffer size = 1 MiB")
