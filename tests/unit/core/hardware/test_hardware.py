"""Hardware scan: the real scan of this machine, and every parser fed recorded system files."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from types import SimpleNamespace

import pytest

from app.cli import main
from app.core.hardware import gpu as hardware_gpu
from app.core.hardware.cgroup import CgroupMemory, parse_limit, read_cgroup_memory_at
from app.core.hardware.cpu import parse_cpuinfo
from app.core.hardware.notes import build_notes
from app.core.hardware.other_gpus import parse_lspci_mm, read_drm_cards
from app.core.hardware.scan import HardwareReport, process_vram_bytes, read_gpus, read_memory, scan_hardware
from app.core.hardware.system import detect_container, parse_os_release, parse_wsl_version

GiB = 1024**3
HAS_NVIDIA_DEVICE = Path("/dev/nvidiactl").exists()


@pytest.fixture(autouse=True)
def fresh_nvml():
    """Each test starts with NVML not yet initialised, and leaves it that way."""
    hardware_gpu._nvml.forget()
    yield
    hardware_gpu._nvml.forget()


# --- the real machine ------------------------------------------------------------------------------


def test_real_scan_reports_this_machine():
    report = scan_hardware()
    assert report.ram_total_bytes > 256 * 1024**2
    assert 0 < report.ram_available_bytes <= report.ram_total_bytes
    assert 0 < report.usable_ram_bytes() <= report.ram_available_bytes
    assert report.cpu_cores_logical and report.cpu_cores_logical >= 1
    assert report.cpu_model
    assert report.os_name == platform.system()
    if platform.system() == "Linux":
        assert report.cpu_flags == list(parse_cpuinfo(Path("/proc/cpuinfo").read_text())[1])
    payload = json.loads(json.dumps(report.to_dict()))
    assert payload["ram_total_bytes"] == report.ram_total_bytes
    assert isinstance(payload["gpus"], list)


def test_real_scan_without_nvidia_is_a_clean_result():
    report = scan_hardware()
    if HAS_NVIDIA_DEVICE:  # a machine with an NVIDIA driver must list its GPU instead
        assert report.gpus and report.gpus[0].vram_total_bytes > 0
        return
    assert report.gpus == []
    assert report.nvidia_note is not None
    assert report.nvidia_note.render("en").startswith("No NVIDIA GPU")
    assert report.nvidia_note in report.notes
    assert read_gpus() == []
    assert process_vram_bytes(os.getpid()) is None


def test_live_memory_reading_agrees_with_the_scan():
    report = scan_hardware()
    live = read_memory()
    assert live.total_bytes == report.effective_ram_total_bytes
    assert 0 < live.usable_bytes <= live.available_bytes <= report.ram_total_bytes


def test_every_note_is_bilingual():
    report = scan_hardware()
    for note in report.notes:
        assert note.render("en") and note.render("zh")
        assert note.render("en") != note.render("zh")


# --- CPU -------------------------------------------------------------------------------------------

X86_CPUINFO = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Core(TM) i7-4770 CPU @ 3.40GHz
flags\t\t: fpu vme pni ssse3 fma cx16 sse4_1 sse4_2 avx f16c avx2 bmi2
processor\t: 1
model name\t: Intel(R) Core(TM) i7-4770 CPU @ 3.40GHz
flags\t\t: fpu vme pni ssse3 fma cx16 sse4_1 sse4_2 avx f16c avx2 bmi2
"""
ARM_CPUINFO = """processor\t: 0
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes pmull sha1 asimddp sve i8mm bf16
CPU implementer\t: 0x41
"""
OLD_X86_CPUINFO = "model name\t: Intel(R) Core(TM)2 Duo CPU E8400\nflags\t\t: fpu sse sse2 pni ssse3 sse4_1\n"


def test_cpuinfo_x86_maps_pni_to_sse3_and_keeps_relevant_flags_in_order():
    model, flags = parse_cpuinfo(X86_CPUINFO)
    assert model == "Intel(R) Core(TM) i7-4770 CPU @ 3.40GHz"
    assert flags == ("sse3", "ssse3", "sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c")


def test_cpuinfo_arm_features():
    model, flags = parse_cpuinfo(ARM_CPUINFO)
    assert model is None
    assert flags == ("asimd", "asimddp", "i8mm", "sve", "bf16")


def test_cpu_without_avx2_gets_a_note():
    report = _report(cpu_flags=list(parse_cpuinfo(OLD_X86_CPUINFO)[1]))
    texts = [note.render("en") for note in build_notes(report)]
    is_x86 = platform.machine().lower() in ("x86_64", "amd64")
    assert any("no AVX2" in text for text in texts) == is_x86


# --- OS, WSL, containers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("proc_version", "expected"),
    [
        ("Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1) (gcc (GCC) 11.2.0) #1 SMP", 2),
        ("Linux version 4.19.128-microsoft-standard (oe-user@oe-host) (gcc version 8.2.0 (GCC)) #1 SMP", 2),
        ("Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) (gcc version 5.4.0 (GCC) ) "
         "#1237-Microsoft", 1),
        ("Linux version 6.5.0-35-generic (buildd@lcy02-amd64-079) (x86_64-linux-gnu-gcc-12 12.3.0) "
         "#35~22.04.1-Ubuntu", None),
        ("", None),
        (None, None),
    ],
)
def test_wsl_version_from_proc_version(proc_version, expected):
    assert parse_wsl_version(proc_version) == expected


def test_os_release_pretty_name():
    text = 'NAME="Ubuntu"\nVERSION_ID="22.04"\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\n'
    assert parse_os_release(text) == "Ubuntu 22.04.4 LTS"
    assert parse_os_release("NAME=Arch") is None


def test_container_detection():
    none = {"dockerenv": False, "containerenv": False, "pid1_cgroup": "0::/init.scope\n", "environ": {}}
    assert detect_container(**none) is None
    assert detect_container(**(none | {"dockerenv": True})) == "docker"
    assert detect_container(**(none | {"containerenv": True})) == "podman"
    assert detect_container(**(none | {"environ": {"KUBERNETES_SERVICE_HOST": "10.0.0.1"}})) == "kubernetes"
    v1_docker = "12:memory:/docker/3f1e2a\n11:cpu:/docker/3f1e2a\n"
    assert detect_container(**(none | {"pid1_cgroup": v1_docker})) == "docker"
    assert detect_container(**(none | {"pid1_cgroup": "0::/kubepods/burstable/pod1/abc\n"})) == "kubepods"


def test_wsl2_without_passthrough_explains_the_fix():
    report = _report(is_wsl=True, wsl_version=2, wsl_gpu_passthrough=False)
    texts = [note.render("en") for note in build_notes(report)]
    assert any("/dev/dxg" in text and "wsl --update" in text for text in texts)
    passed = _report(is_wsl=True, wsl_version=2, wsl_gpu_passthrough=True)
    assert any("passed through" in note.render("en") for note in build_notes(passed))


# --- cgroup memory ---------------------------------------------------------------------------------


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_cgroup_v2_limit_usage_and_reclaimable_cache(tmp_path):
    _write(tmp_path / "cgroup.controllers", "cpu memory io\n")
    leaf = tmp_path / "system.slice" / "docker-abc.scope"
    _write(leaf / "memory.max", f"{8 * GiB}\n")
    _write(leaf / "memory.current", f"{3 * GiB}\n")
    _write(leaf / "memory.stat", f"anon 1000\nfile {2 * GiB}\ninactive_file {GiB}\nactive_file 5\n")
    _write(tmp_path / "system.slice" / "memory.max", "max\n")
    memory = read_cgroup_memory_at("0::/system.slice/docker-abc.scope\n", tmp_path)
    assert memory == CgroupMemory(version=2, limit_bytes=8 * GiB, usage_bytes=3 * GiB, reclaimable_bytes=GiB)
    assert memory.headroom_bytes() == 6 * GiB


def test_cgroup_v2_parent_limit_tighter_than_child_wins(tmp_path):
    _write(tmp_path / "cgroup.controllers", "memory\n")
    _write(tmp_path / "user.slice" / "memory.max", f"{2 * GiB}\n")
    _write(tmp_path / "user.slice" / "memory.current", f"{GiB}\n")
    _write(tmp_path / "user.slice" / "app" / "memory.max", "max\n")
    memory = read_cgroup_memory_at("0::/user.slice/app\n", tmp_path)
    assert memory.limit_bytes == 2 * GiB
    assert memory.usage_bytes == GiB


def test_cgroup_v2_namespaced_root_and_no_limit(tmp_path):
    _write(tmp_path / "cgroup.controllers", "memory\n")
    _write(tmp_path / "memory.max", "max\n")
    _write(tmp_path / "memory.current", "12345\n")
    memory = read_cgroup_memory_at("0::/\n", tmp_path)
    assert memory.limit_bytes is None
    assert memory.usage_bytes == 12345
    assert memory.headroom_bytes() is None


def test_cgroup_v1_unlimited_number_and_child_limit(tmp_path):
    mount = tmp_path / "memory"
    _write(mount / "memory.limit_in_bytes", "9223372036854771712\n")
    child = mount / "docker" / "abc"
    _write(child / "memory.limit_in_bytes", f"{4 * GiB}\n")
    _write(child / "memory.usage_in_bytes", f"{2 * GiB}\n")
    _write(child / "memory.stat", f"cache 5\ninactive_file 7\ntotal_inactive_file {GiB // 2}\n")
    proc = "12:pids:/docker/abc\n4:memory:/docker/abc\n1:name=systemd:/docker/abc\n0::/docker/abc\n"
    memory = read_cgroup_memory_at(proc, tmp_path)
    assert (memory.version, memory.limit_bytes, memory.usage_bytes) == (1, 4 * GiB, 2 * GiB)
    assert memory.headroom_bytes() == 4 * GiB - (2 * GiB - GiB // 2)


def test_cgroup_v1_inside_namespace_uses_the_mount_root(tmp_path):
    # The host path in /proc/self/cgroup does not exist in the container's view of the hierarchy.
    mount = tmp_path / "memory"
    _write(mount / "memory.limit_in_bytes", f"{GiB}\n")
    _write(mount / "memory.usage_in_bytes", "1000\n")
    memory = read_cgroup_memory_at("4:cpuacct,memory:/kubepods/pod1/abc\n", tmp_path)
    assert memory.limit_bytes == GiB


def test_no_cgroup_files_means_no_limit(tmp_path):
    assert read_cgroup_memory_at("0::/\n", tmp_path) is None
    assert read_cgroup_memory_at(None, tmp_path) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [("max\n", None), ("9223372036854771712", None), ("0", None), ("junk", None), ("", None), (None, None),
     ("8589934592\n", 8 * GiB)],
)
def test_parse_limit(text, expected):
    assert parse_limit(text) == expected


def test_container_limit_caps_usable_ram_and_is_explained():
    report = _report(ram_total_bytes=64 * GiB, ram_available_bytes=60 * GiB,
                     cgroup_memory_limit_bytes=8 * GiB, cgroup_memory_headroom_bytes=5 * GiB)
    assert report.usable_ram_bytes() == 5 * GiB
    assert report.effective_ram_total_bytes == 8 * GiB
    texts = [note.render("en") for note in build_notes(report)]
    assert ("A container memory limit of 8.0 GiB applies; the out-of-memory killer uses it, not the 64.0 GiB of RAM."
            in texts)
    zh = [note.render("zh") for note in build_notes(report)]
    assert any("8.0 GiB" in text and "容器内存上限" in text for text in zh)


def test_limit_above_physical_ram_is_not_noted():
    report = _report(ram_total_bytes=16 * GiB, cgroup_memory_limit_bytes=32 * GiB,
                     cgroup_memory_headroom_bytes=30 * GiB)
    assert not any("container memory limit" in note.render("en") for note in build_notes(report))
    assert report.usable_ram_bytes() == report.ram_available_bytes


# --- other display adapters ------------------------------------------------------------------------

LSPCI_MM = """00:00.0 "Host bridge" "Intel Corporation" "12th Gen Core Processor Host Bridge" -r02 "Lenovo" "Device 3b1a"
00:02.0 "VGA compatible controller" "Intel Corporation" "Alder Lake-P GT2 [Iris Xe Graphics]" -r0c "Lenovo" "Device 3b1a"
01:00.0 "3D controller" "NVIDIA Corporation" "GA107M [GeForce RTX 3050 Mobile]" -ra1 "Lenovo" "Device 3b1a"
03:00.0 "Display controller" "Advanced Micro Devices, Inc. [AMD/ATI]" "Navi 21 [Radeon RX 6800/6800 XT / 6900 XT]" -rc1 "" ""
"""  # noqa: E501 -- recorded `lspci -mm` output, kept byte for byte


def test_lspci_mm_names_display_adapters_only():
    adapters = parse_lspci_mm(LSPCI_MM)
    assert [a.name for a in adapters] == [
        "Intel Corporation Alder Lake-P GT2 [Iris Xe Graphics]",
        "NVIDIA Corporation GA107M [GeForce RTX 3050 Mobile]",
        "Advanced Micro Devices, Inc. [AMD/ATI] Navi 21 [Radeon RX 6800/6800 XT / 6900 XT]",
    ]
    assert [a.is_nvidia for a in adapters] == [False, True, False]
    assert parse_lspci_mm('broken "line') == []


def test_drm_cards_from_sysfs(tmp_path):
    _write(tmp_path / "card0" / "device" / "vendor", "0x1002\n")
    _write(tmp_path / "card0" / "device" / "device", "0x73bf\n")
    _write(tmp_path / "card0" / "device" / "uevent", "DRIVER=amdgpu\nPCI_ID=1002:73BF\n")
    _write(tmp_path / "card0" / "device" / "product_name", "AMD Radeon RX 6800\n")
    _write(tmp_path / "card1" / "device" / "vendor", "0x8086\n")
    _write(tmp_path / "card1" / "device" / "device", "0x46a6\n")
    (tmp_path / "card0-HDMI-A-1").mkdir()
    adapters = read_drm_cards(tmp_path)
    assert [a.name for a in adapters] == ["AMD AMD Radeon RX 6800 (driver amdgpu)", "Intel GPU 46a6"]
    assert read_drm_cards(tmp_path / "missing") == []


# --- NVML absent or failing ------------------------------------------------------------------------


def test_missing_pynvml_module_is_a_clean_result(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pynvml", None)  # makes `import pynvml` raise ImportError
    report = scan_hardware()
    assert report.gpus == []
    assert "nvidia-ml-py" in report.nvidia_note.render("en")
    assert process_vram_bytes(1) is None


@pytest.mark.parametrize(
    ("code_name", "phrase"),
    [("NVML_ERROR_LIBRARY_NOT_FOUND", "no NVIDIA driver is installed"),
     ("NVML_ERROR_DRIVER_NOT_LOADED", "installed but not loaded"),
     ("NVML_ERROR_LIB_RM_VERSION_MISMATCH", "Restart the computer"),
     ("NVML_ERROR_NO_PERMISSION", "may not access"),
     ("NVML_ERROR_UNKNOWN", "answered")],
)
def test_nvml_init_failure_is_a_clean_result(monkeypatch, code_name, phrase):
    import pynvml

    def failing_init():
        raise pynvml.NVMLError(getattr(pynvml, code_name))

    monkeypatch.setattr(pynvml, "nvmlInit", failing_init)
    report = scan_hardware()
    assert report.gpus == []
    assert phrase in report.nvidia_note.render("en")
    assert report.nvidia_note.render("zh") != report.nvidia_note.render("en")
    assert read_gpus() == []


def test_nvml_library_crash_during_init_is_a_clean_result(monkeypatch):
    import pynvml

    def broken_init():
        raise OSError("libnvidia-ml.so.1: cannot open shared object file")

    monkeypatch.setattr(pynvml, "nvmlInit", broken_init)
    gpus, note = hardware_gpu.nvidia_gpus()
    assert gpus == [] and note.render("en").startswith("No NVIDIA GPU")


# --- NVML present: recorded answers of a driver with one GPU ---------------------------------------


def _install_recorded_nvml(monkeypatch, processes, *, capability_fails=False):
    import pynvml

    def not_supported(*_):
        raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)

    def capability(_handle):
        if capability_fails:
            not_supported()
        return (8, 6)

    answers = {
        "nvmlInit": lambda: None,
        "nvmlDeviceGetCount": lambda: 1,
        "nvmlDeviceGetHandleByIndex": lambda i: f"handle{i}",
        "nvmlDeviceGetName": lambda h: b"NVIDIA GeForce RTX 3060",
        "nvmlDeviceGetUUID": lambda h: "GPU-5f2c8a1e-0000-1111-2222-333344445555",
        "nvmlDeviceGetMemoryInfo": lambda h: SimpleNamespace(total=12 * GiB, free=9 * GiB, used=3 * GiB),
        "nvmlDeviceGetCudaComputeCapability": capability,
        "nvmlSystemGetDriverVersion": lambda: "550.54.14",
        "nvmlSystemGetCudaDriverVersion": lambda: 12040,
        "nvmlDeviceGetComputeRunningProcesses": lambda h: processes,
        "nvmlDeviceGetGraphicsRunningProcesses": not_supported,
        "nvmlDeviceGetGraphicsRunningProcesses_v2": not_supported,
        "nvmlSystemGetProcessName": lambda pid: b"/usr/bin/Xorg" if pid == 4242 else not_supported(),
    }
    for name, answer in answers.items():
        monkeypatch.setattr(pynvml, name, answer, raising=False)


def test_recorded_nvml_gpu_fields_and_other_processes(monkeypatch):
    own = os.getpid()
    processes = [SimpleNamespace(pid=own, usedGpuMemory=GiB), SimpleNamespace(pid=4242, usedGpuMemory=GiB // 2)]
    _install_recorded_nvml(monkeypatch, processes)
    report = scan_hardware()
    assert report.nvidia_note is None and len(report.gpus) == 1
    gpu = report.gpus[0]
    assert (gpu.name, gpu.compute_capability, gpu.cuda_driver_version) == ("NVIDIA GeForce RTX 3060", "8.6", "12.4")
    assert (gpu.vram_total_bytes, gpu.vram_free_bytes, gpu.vram_used_bytes) == (12 * GiB, 9 * GiB, 3 * GiB)
    assert [(p.pid, p.name, p.used_bytes) for p in gpu.other_processes] == [(4242, "Xorg", GiB // 2)]
    assert any("Xorg 512.0 MiB" in note.render("en") for note in report.notes)
    assert process_vram_bytes(own) == GiB
    assert read_gpus(exclude_pids=[4242])[0].other_processes == []
    payload = json.loads(json.dumps(report.to_dict()))
    assert payload["gpus"][0]["other_processes"][0]["used_bytes"] == GiB // 2


def test_recorded_nvml_unsupported_queries_leave_fields_empty(monkeypatch):
    _install_recorded_nvml(monkeypatch, [SimpleNamespace(pid=4242, usedGpuMemory=None)], capability_fails=True)
    gpu = read_gpus()[0]
    assert gpu.compute_capability is None
    assert gpu.other_processes[0].used_bytes is None
    assert process_vram_bytes(4242) is None
    notes = build_notes(_report(gpus=[gpu]))
    assert any("does not say how much VRAM" in note.render("en") for note in notes)


# --- CLI -------------------------------------------------------------------------------------------


def test_cli_scan_json(capsys):
    assert main(["scan", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    for key in ("ram_total_bytes", "ram_available_bytes", "usable_ram_bytes", "cpu_model", "cpu_flags",
                "gpus", "other_gpus", "is_wsl", "in_container", "cgroup_memory_limit_bytes", "notes"):
        assert key in payload
    assert payload["ram_total_bytes"] > 0


def test_cli_scan_text_in_chinese(capsys):
    assert main(["--lang", "zh", "scan"]) == 0
    out = capsys.readouterr().out
    assert "内存" in out and "CPU" in out


def _report(**changes) -> HardwareReport:
    values = dict(
        os_name="Linux", os_release="6.5.0", is_wsl=False, wsl_gpu_passthrough=False, in_container=False,
        cgroup_memory_limit_bytes=None, ram_total_bytes=32 * GiB, ram_available_bytes=20 * GiB,
        cpu_model="test CPU", cpu_cores_physical=4, cpu_cores_logical=8, cpu_flags=["avx", "avx2"],
        gpus=[], other_gpus=[],
    )
    return HardwareReport(**(values | changes))
