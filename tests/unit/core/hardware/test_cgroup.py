"""One cgroup reader: the plan (hardware scan), the probe's free-memory check and the diagnosis name the same limit."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest

from app.core.diagnosis.oom_evidence import snapshot_oom_counters
from app.core.hardware import cgroup
from app.core.hardware.cgroup import find_memory_cgroup, memory_limit_bytes, own_cgroup_events_path
from app.core.hardware.scan import read_memory, scan_hardware
from app.core.probe.margins import read_free_now

MiB = 1024**2


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def nested_v2_tree(tmp_path, monkeypatch):
    """A container (512 MiB) holding a systemd slice (no limit) holding our scope (2 GiB, looser than the container's).

    The live readers are pointed at it, so every caller reads this tree instead of the real machine's."""
    root = tmp_path / "cgroup"
    _write(root / "cgroup.controllers", "cpu memory io\n")
    container = root / "docker-abc.scope"
    _write(container / "memory.max", f"{512 * MiB}\n")
    _write(container / "memory.current", f"{300 * MiB}\n")
    _write(container / "memory.stat", f"anon 1\ninactive_file {100 * MiB}\n")
    _write(container / "memory.events", "oom 0\noom_kill 7\n")
    slice_ = container / "app.slice"
    _write(slice_ / "memory.max", "max\n")
    leaf = slice_ / "launcher.scope"
    _write(leaf / "memory.max", f"{2048 * MiB}\n")
    _write(leaf / "memory.current", f"{50 * MiB}\n")
    _write(leaf / "memory.events", "oom 0\noom_kill 2\n")
    self_cgroup = tmp_path / "self_cgroup"
    self_cgroup.write_text("0::/docker-abc.scope/app.slice/launcher.scope\n")
    monkeypatch.setattr(cgroup, "SELF_CGROUP_PATH", str(self_cgroup))
    monkeypatch.setattr(cgroup, "CGROUP_ROOT", str(root))
    return root, leaf


def test_plan_probe_and_diagnosis_read_the_same_tightest_limit(nested_v2_tree):
    assert psutil.virtual_memory().total > 512 * MiB  # the container limit is the tighter one on any test machine
    report = scan_hardware()  # plan side: the RAM budget comes from this report
    assert report.cgroup_memory_limit_bytes == 512 * MiB
    # headroom is counted where the limit is: 512 - (300 - 100 reclaimable cache) MiB
    assert report.cgroup_memory_headroom_bytes == 312 * MiB
    assert report.usable_ram_bytes() <= 312 * MiB
    assert report.effective_ram_total_bytes == 512 * MiB
    assert read_memory().total_bytes == 512 * MiB  # live bars
    assert read_free_now().ram_total_bytes == 512 * MiB  # probe margins
    assert memory_limit_bytes() == 512 * MiB  # diagnosis: the crash sentence's limit


def test_oom_counter_is_our_own_cgroups(nested_v2_tree):
    _, leaf = nested_v2_tree
    assert own_cgroup_events_path() == str(leaf / "memory.events")
    assert snapshot_oom_counters().cgroup_oom_kill == 2


def test_v1_nested_chain_and_namespace_root(tmp_path):
    mount = tmp_path / "memory"
    _write(mount / "memory.limit_in_bytes", "9223372036854771712\n")
    _write(mount / "docker" / "memory.limit_in_bytes", f"{256 * MiB}\n")
    _write(mount / "docker" / "abc" / "memory.limit_in_bytes", f"{1024 * MiB}\n")
    _write(mount / "docker" / "abc" / "memory.oom_control", "oom_kill_disable 0\noom_kill 1\n")
    self_cgroup = tmp_path / "self_cgroup"
    self_cgroup.write_text("4:memory:/docker/abc\n0::/docker/abc\n")
    found = find_memory_cgroup(self_cgroup.read_text(), tmp_path)
    assert found.version == 1 and found.dirs == (mount / "docker" / "abc", mount / "docker", mount)
    assert memory_limit_bytes(str(self_cgroup), str(tmp_path)) == min(256 * MiB, psutil.virtual_memory().total)
    events = own_cgroup_events_path(str(self_cgroup), str(tmp_path))
    assert events == str(mount / "docker" / "abc" / "memory.oom_control")
    # Inside a cgroup namespace the host path does not exist: the mount root is our cgroup and holds the counter.
    namespaced = tmp_path / "ns"
    _write(namespaced / "memory" / "memory.limit_in_bytes", f"{128 * MiB}\n")
    _write(namespaced / "memory" / "memory.oom_control", "oom_kill 0\n")
    assert memory_limit_bytes(str(self_cgroup), str(namespaced)) == 128 * MiB
    events = own_cgroup_events_path(str(self_cgroup), str(namespaced))
    assert events == str(namespaced / "memory" / "memory.oom_control")


def test_no_memory_cgroup_means_ram_alone(tmp_path):
    self_cgroup = tmp_path / "self_cgroup"
    self_cgroup.write_text("0::/\n")
    assert memory_limit_bytes(str(self_cgroup), str(tmp_path / "none")) == psutil.virtual_memory().total
    assert own_cgroup_events_path(str(self_cgroup), str(tmp_path / "none")) is None
    assert own_cgroup_events_path(str(tmp_path / "missing"), str(tmp_path)) is None
