"""The Machine step's "Get the GPU engine for this card" (app/ui/steps/machine/gpu_fetch_box.py), offscreen.

The card is simulated (this machine has none): a GpuInfo in the scan's report, as the GPU notice's tests do. The
GPU notice's warning is core's own (``cpu_only_engine_warning`` for the CPU-only built-in engine). The builds
come from the loopback stand-in of llama.cpp's release server (tests/hub/fake_release.py, a real HTTP server) with
pins of the served bytes, as the core's tests set them; a failing get is a wrong pin. What the stand-in's
llama-server proves and cannot prove is said in tests/hub/fake_release.py: never that a card works.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.core.hardware.gpu import GpuInfo
from app.core.launch import fetched_engines
from app.core.launch.gpu_engine import cpu_only_engine_warning
from app.core.launch.release_builds import LINUX_X64, ReleaseSource
from app.core.launch.release_pins import Pin
from app.core.text import human_bytes
from app.ui.steps.machine import gpu_fetch_work
from app.ui.steps.machine.gpu_fetch_box import GpuFetchBox
from app.ui.steps.machine.machine_panel import MachinePanel
from app.ui.widgets.job_row import JobState
from tests.hub.fake_release import FakeRelease, linux_cuda_archives, stand_in_server_script
from tests.ui.conftest import LONG

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the stand-in llama-server is a POSIX shell script")

DATA = Path(__file__).resolve().parents[3] / "data" / "list_devices"
CUDA_LISTING = (DATA / "ollama_16508_cuda.txt").read_text(encoding="utf-8")
CARD = GpuInfo(0, "NVIDIA GeForce RTX 3080 Ti", None, 12 << 30, 11 << 30, 1 << 30, driver_version="580.82.07",
               cuda_driver_version="13.0", compute_capability="8.6")
ENGINE = "llama-b11434-bin-ubuntu-cuda-13.4-x64.tar.gz"


@pytest.fixture
def release(qtbot):
    from app.ui import workers

    served = GatedRelease().start()
    yield served
    served.gate.set()
    qtbot.waitUntil(lambda: workers.active_count() == 0, timeout=LONG)  # no worker outlives its server
    served.stop()


@dataclasses.dataclass
class GatedRelease(FakeRelease):
    """The stand-in, able to hold an archive's second half until the test lets it go (``hold``): the download is
    under way, and stays so, while the test clicks."""

    hold: set[str] = dataclasses.field(default_factory=set)
    gate: threading.Event = dataclasses.field(default_factory=threading.Event)
    half_sent: threading.Event = dataclasses.field(default_factory=threading.Event)
    drop_rest: bool = False  # once the gate opens, the connection ends without the second half

    def serve(self, handler, name: str) -> None:
        if name not in self.hold:
            super().serve(handler, name)
            return
        data = self.assets[name]
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        half = len(data) // 2
        handler.wfile.write(data[:half])
        handler.wfile.flush()
        self.half_sent.set()
        self.gate.wait(LONG / 1000)
        if not self.drop_rest:
            handler.wfile.write(data[half:])


def pins_of(assets: dict[str, bytes]) -> dict[str, Pin]:
    return {name: Pin(hashlib.sha256(data).hexdigest(), len(data)) for name, data in assets.items()}


def use_release(monkeypatch, release: FakeRelease, pins: dict[str, Pin] | None = None, model: Path | None = None):
    source = ReleaseSource(release.base_url, release.tag, pins_of(release.assets) if pins is None else pins)
    monkeypatch.setattr(gpu_fetch_work, "SETUP", gpu_fetch_work.FetchSetup(source, LINUX_X64, model))


def report_with_card():
    from app.core.hardware.scan import scan_hardware

    return dataclasses.replace(scan_hardware(), gpus=[CARD], nvidia_note=None)


def panel_with_card(qtbot, proxy: str | None = None) -> tuple[MachinePanel, GpuFetchBox]:
    """The Machine step after a scan that found the card, with core's warning for the CPU-only built-in engine;
    ``proxy``: the user's own for downloads, as the window passes "Get a model"'s."""
    panel = MachinePanel(live=False)
    qtbot.addWidget(panel)
    panel.set_hub_proxy(proxy)
    panel.resize(1024, 700)
    panel.show()
    report = report_with_card()
    panel._on_scanned(report)
    panel.gpu_notice.set_warning(cpu_only_engine_warning(report, "embedded", (), servers=[], builds=[]))
    box = panel.gpu_fetch
    assert box is not None
    return panel, box


def click(qtbot, button) -> None:
    assert button.isVisibleTo(button.window()) and button.isEnabled(), button.text()
    qtbot.waitUntil(lambda: button.height() >= button.minimumSizeHint().height(), timeout=LONG)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def archives_left() -> list[str]:
    downloads = fetched_engines.engines_folder() / "downloads"
    return sorted(path.name for path in downloads.rglob("*") if path.is_file()) if downloads.exists() else []


def recorded(signal) -> list:
    seen: list = []
    signal.connect(lambda *args: seen.append(args))
    return seen


def test_a_build_without_a_pin_is_refused_with_its_sentence_and_no_button(qtbot, monkeypatch, release):
    release.assets = linux_cuda_archives(stand_in_server_script("/bin/false", CUDA_LISTING))
    use_release(monkeypatch, release, pins={})
    _panel, box = panel_with_card(qtbot)
    qtbot.waitUntil(lambda: box.refusal.isVisible(), timeout=LONG)
    assert not box.get_button.isVisible(), "no button for a build the app cannot check"
    message = box.refusal.message.text()
    assert message.startswith("The app holds no SHA-256 for "), message
    assert "CUDA 13.4 build" in message
    assert box.refusal.next_step.text().startswith("Download the CUDA 13.4 build of llama.cpp b11434 yourself")
    assert release.requests == [], "nothing was downloaded"
    use_release(monkeypatch, release)  # the app holds the pins now: looking again offers the build
    click(qtbot, box.plan_button)
    qtbot.waitUntil(lambda: box.get_button.isVisible(), timeout=LONG)
    assert not box.refusal.isVisible() and not box.plan_button.isVisible()
    assert release.requests == []


def test_a_wrong_digest_says_so_and_leaves_the_engine_unchanged(qtbot, monkeypatch, release):
    release.assets = linux_cuda_archives(stand_in_server_script("/bin/false", CUDA_LISTING))
    pins = pins_of(release.assets) | {ENGINE: Pin("0" * 64, len(release.assets[ENGINE]))}
    use_release(monkeypatch, release, pins=pins)
    panel, box = panel_with_card(qtbot)
    used, built_in = recorded(panel.useServerRequested), recorded(panel.switchEngineRequested)
    qtbot.waitUntil(lambda: box.get_button.isVisible(), timeout=LONG)
    text = box.reason.text()
    assert "The CUDA 13.4 build fits the NVIDIA GeForce RTX 3080 Ti" in text, text
    size = human_bytes(sum(len(data) for data in release.assets.values()))  # the two archives' pinned sizes
    assert f"It downloads {size} from 127.0.0.1." in text, text
    assert "Each archive is checked against the SHA-256 the app holds for it before it is unpacked." in text, text
    assert box.get_button.text().startswith("Get the GPU engine for this card (CUDA 13.4, ")

    click(qtbot, box.get_button)
    qtbot.waitUntil(lambda: box.job.state is JobState.FAILED, timeout=LONG)
    assert box.failure.isVisible()
    assert box.failure.message.text() == (f"{ENGINE} does not match the SHA-256 the app holds for it, so it was not "
                                          "kept; the downloaded part was removed.")
    assert box.failure.next_step.text().startswith("Try again later")
    assert box.job.status.text() == "Getting the CUDA 13.4 build stopped."
    assert fetched_engines.registered_engines() == [] and archives_left() == []
    assert used == [] and built_in == [], "the engine stays as it was"
    assert box.get_button.isVisible(), "it can be tried again"
    panel.gpu_notice.set_warning(None)  # another engine that can use the card was chosen meanwhile
    assert not box.isVisible(), "the failure of an offer no longer made stays on screen"


def test_cancel_while_downloading_keeps_nothing(qtbot, monkeypatch, release):
    release.assets = linux_cuda_archives(stand_in_server_script("/bin/false", CUDA_LISTING))
    release.hold = {ENGINE}
    use_release(monkeypatch, release)
    panel, box = panel_with_card(qtbot)
    used = recorded(panel.useServerRequested)
    qtbot.waitUntil(lambda: box.get_button.isVisible(), timeout=LONG)
    click(qtbot, box.get_button)
    qtbot.waitUntil(lambda: release.half_sent.is_set() and box.progress is not None
                    and box.progress.download is not None, timeout=LONG)
    assert box.job.status.text().startswith(f"Downloading {ENGINE} (1 of 2): "), box.job.status.text()
    assert not box.get_button.isVisible(), "one get at a time"
    assert box.title.isVisible() and box.job.action_button.text() == "Pause"
    click(qtbot, box.job.cancel_button)
    assert box.job.state is JobState.CANCELLING
    release.gate.set()  # the rest arrives; the download's next look at Cancel stops it
    qtbot.waitUntil(lambda: box.job.state is JobState.CANCELLED, timeout=LONG)
    assert box.job.status.text() == "Cancelled; nothing of the CUDA 13.4 build was kept."
    assert archives_left() == [] and fetched_engines.registered_engines() == [] and used == []
    assert box.get_button.isVisible()


def test_pause_keeps_the_download_and_cancel_then_removes_it(qtbot, monkeypatch, release):
    release.assets = linux_cuda_archives(stand_in_server_script("/bin/false", CUDA_LISTING))
    release.hold = {ENGINE}
    use_release(monkeypatch, release)
    _panel, box = panel_with_card(qtbot)
    qtbot.waitUntil(lambda: box.get_button.isVisible(), timeout=LONG)
    click(qtbot, box.get_button)
    qtbot.waitUntil(lambda: release.half_sent.is_set() and box.progress is not None
                    and box.progress.download is not None, timeout=LONG)
    click(qtbot, box.job.action_button)  # Pause
    release.gate.set()
    qtbot.waitUntil(lambda: box.task is None, timeout=LONG)
    assert box.job.state is JobState.PAUSED
    assert box.job.status.text() == "Paused; what was downloaded is kept. Resume continues from there."
    assert archives_left() != [], "the partial download is kept for Resume"
    click(qtbot, box.job.cancel_button)
    qtbot.waitUntil(lambda: box.job.state is JobState.CANCELLED, timeout=LONG)
    assert archives_left() == [] and fetched_engines.registered_engines() == []


def test_remove_asks_first_and_goes_back_to_the_built_in_engine(qtbot, monkeypatch, release):
    use_release(monkeypatch, release, pins={})  # the offer that follows the removal plans against the stand-in
    folder = fetched_engines.engines_folder() / "llama-b11434-ubuntu-cuda-13.4-x64"
    folder.mkdir()
    launcher = folder / "llama-server"
    launcher.write_text("#!/bin/sh\n")
    engine = fetched_engines.register("cuda-13", "CUDA 13.4", "b11434", folder, launcher,
                                      "CUDA0: NVIDIA GeForce RTX 3080 Ti (11909 MiB, 11650 MiB free)")
    panel, box = panel_with_card(qtbot)
    box.set_engine("llama-server", engine.launcher)  # the Settings step's engine: this build
    switched = recorded(panel.switchEngineRequested)
    qtbot.waitUntil(lambda: bool(box.rows) and box.rows[0].isVisible(), timeout=LONG)
    row = box.rows[0]
    assert row.label.text() == ("The CUDA 13.4 build of llama.cpp b11434, fetched by this app and checked on CUDA0: "
                                "NVIDIA GeForce RTX 3080 Ti (11909 MiB, 11650 MiB free). The app uses it now.")
    assert not row.use_button.isVisible() and not box.get_button.isVisible(), "a GPU engine is here: no Get"

    click(qtbot, row.remove_button)
    assert box.confirm.text() == (f"Remove the CUDA 13.4 build? Its folder is deleted: {folder}\nThe app uses it "
                                  "now; after the removal it uses the built-in engine.")
    click(qtbot, box.confirm_keep)
    assert not box.confirm.isVisible() and launcher.is_file(), "Keep it keeps it"

    click(qtbot, row.remove_button)
    click(qtbot, box.confirm_remove)
    qtbot.waitUntil(lambda: box.job.state is JobState.DONE, timeout=LONG)
    assert box.job.status.text() == "The CUDA 13.4 build was removed and its folder deleted."
    assert switched == [("embedded",)]
    assert not folder.exists() and fetched_engines.registered_engines() == []
    assert not row.isVisible()


@pytest.fixture
def empty_home(tmp_path, monkeypatch):
    """No llama-server of another app in this HOME: no GPU engine to use instead, so the offer shows."""
    from app.core.launch import discovery

    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))
    monkeypatch.setattr("app.core.engine.gpu_build.available_gpu_builds", lambda: [])
    discovery.clear_cache()
    yield
    discovery.clear_cache()


@pytest.mark.slow  # the whole window, and the stand-in build generates with the real llama.cpp b11434
def test_a_checked_build_is_used_at_once_and_the_steps_follow(qtbot, empty_home, release, monkeypatch, window,
                                                               llama_server_bin, tiny_model):
    release.assets = linux_cuda_archives(stand_in_server_script(llama_server_bin, CUDA_LISTING))
    use_release(monkeypatch, release, model=tiny_model)
    machine, settings = window.machine, window.settings_panel
    qtbot.waitUntil(lambda: machine.report is not None, timeout=LONG)
    machine._on_scanned(dataclasses.replace(machine.report, gpus=[CARD], nvidia_note=None))
    box = machine.gpu_fetch
    assert box is not None
    qtbot.waitUntil(lambda: box.get_button.isVisibleTo(window), timeout=LONG)
    assert machine.gpu_notice.isVisibleTo(window)
    assert cut_in(qtbot, window, box) == []
    phases = []
    box.job.stateChanged.connect(lambda state: phases.append(state))

    click(qtbot, box.get_button)
    qtbot.waitUntil(lambda: box.job.state.finished, timeout=3 * LONG)
    assert box.job.state is JobState.DONE, box.failure.message.text()
    assert box.job.status.text().startswith("The CUDA 13.4 build of llama.cpp is ready and can use the NVIDIA "
                                            "GeForce RTX 3080 Ti"), box.job.status.text()  # core's sentence
    [engine] = fetched_engines.registered_engines()
    assert settings.engine() == ("llama-server", engine.launcher), "the app switched to it, as Use does"
    qtbot.waitUntil(lambda: not machine.gpu_notice.isVisibleTo(window), timeout=LONG)  # the engine uses the card
    qtbot.waitUntil(lambda: bool(box.rows) and box.rows[0].label.text().endswith("The app uses it now."),
                    timeout=LONG)
    assert not box.get_button.isVisibleTo(window) and not box.reason.isVisibleTo(window)
    assert box.rows[0].remove_button.isVisibleTo(window)
    click(qtbot, box.rows[0].remove_button)
    assert cut_in(qtbot, window, box) == [], "the fetched build's row and the question before removing it"


def cut_in(qtbot, window, box: GpuFetchBox) -> list[str]:
    """The box's labels and buttons whose text is cut at 1024x700, in English and Chinese (tests/ui/clipping.py)."""
    from PySide6.QtWidgets import QApplication, QWidget

    from tests.ui.clipping import _name, clipped

    window.resize(1024, 700)
    found: list[str] = []
    for lang in ("en", "zh"):
        window.set_language(lang)
        for _ in range(3):
            QApplication.processEvents()
            qtbot.wait(30)
        ours = {_name(widget) for widget in box.findChildren(QWidget)}
        found += [f"{lang}: {line}" for line in clipped(window) if any(line.startswith(name) for name in ours)]
    window.set_language("en")
    return found


def test_a_fetched_build_not_in_use_offers_use_instead_of_get(qtbot, monkeypatch, release):
    use_release(monkeypatch, release, pins={})
    folder = fetched_engines.engines_folder() / "llama-b11434-ubuntu-vulkan-x64"
    folder.mkdir()
    launcher = folder / "llama-server"
    launcher.write_text("#!/bin/sh\n")
    engine = fetched_engines.register("vulkan", "Vulkan", "b11434", folder, launcher, "Vulkan0: NVIDIA GeForce RTX "
                                      "3080 Ti (NVIDIA) | uma: 0 | fp16: 1")
    panel, box = panel_with_card(qtbot)  # the engine in use is the CPU-only built-in one
    used = recorded(panel.useServerRequested)
    qtbot.waitUntil(lambda: bool(box.rows) and box.rows[0].use_button.isVisible(), timeout=LONG)
    assert not box.get_button.isVisible() and not box.refusal.isVisible(), "a GPU engine is here already"
    assert not box.rows[0].label.text().endswith("The app uses it now.")
    click(qtbot, box.rows[0].use_button)
    assert used == [(engine.launcher,)]


def test_resume_continues_the_kept_download_and_a_failed_check_keeps_nothing(qtbot, monkeypatch, release, tmp_path):
    """Pause while half of the archive is here (the connection then ends: the downloader's retry sees the pause);
    Resume asks for the rest with Range, then core's phases follow with their sentences until its check fails (the
    stand-in cannot generate): core's problem, nothing kept, nothing chosen."""
    release.assets = linux_cuda_archives(stand_in_server_script("/bin/false", CUDA_LISTING))
    release.hold, release.drop_rest = {ENGINE}, True
    use_release(monkeypatch, release, model=tmp_path / "never-read.gguf")  # the launcher fails before reading it
    panel, box = panel_with_card(qtbot)
    used = recorded(panel.useServerRequested)
    qtbot.waitUntil(lambda: box.get_button.isVisible(), timeout=LONG)
    click(qtbot, box.get_button)
    qtbot.waitUntil(lambda: release.half_sent.is_set() and box.progress is not None, timeout=LONG)
    click(qtbot, box.job.action_button)  # Pause
    release.gate.set()
    qtbot.waitUntil(lambda: box.task is None, timeout=LONG)
    assert box.job.state is JobState.PAUSED and box.job.action_button.text() == "Resume"
    release.hold = set()
    sentences: list[str] = []
    on_progress = box._on_progress
    monkeypatch.setattr(box, "_on_progress", lambda value: (on_progress(value), sentences.append(
        box.job.status.text())))
    click(qtbot, box.job.action_button)  # Resume
    qtbot.waitUntil(lambda: box.job.state.finished, timeout=LONG)
    assert box.job.state is JobState.FAILED, box.job.status.text()
    assert (f"/download/b11434/{ENGINE}", f"bytes={len(release.assets[ENGINE]) // 2}-") in release.requests
    assert "Unpacking the CUDA 13.4 build ..." in sentences, sentences
    assert "Asking the CUDA 13.4 build which graphics cards it sees ..." in sentences, sentences
    message = box.failure.message.text()
    assert message.startswith("The downloaded CUDA 13.4 build could not generate with a small test model on the "
                              "NVIDIA GeForce RTX 3080 Ti"), message
    assert box.failure.next_step.text() == "Update the NVIDIA driver and try again, or try the Vulkan build."
    assert fetched_engines.registered_engines() == [] and archives_left() == [] and used == []


def test_the_published_digests_are_read_through_the_users_proxy_and_read_again_after_a_rate_limit(qtbot,
                                                                                                 monkeypatch,
                                                                                                 release):
    """The path users get (the app holds no pin: GitHub's listing gives each archive's SHA-256): GitHub first asks
    to wait, which is said with no Get button but Look again; once it answers, the plan says whose SHA-256 each
    archive is checked against. The listing is read through the user's proxy, and no archive is asked for."""
    import time

    from tests.hub.fake_proxy import FakeProxy

    release.assets = linux_cuda_archives(stand_in_server_script("/bin/false", CUDA_LISTING))
    release.api_status = 403
    release.api_headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()) + 1500)}
    monkeypatch.setattr(gpu_fetch_work, "SETUP", gpu_fetch_work.FetchSetup(release.source(), LINUX_X64))
    with FakeProxy() as proxy:
        _panel, box = panel_with_card(qtbot, proxy.url)
        qtbot.waitUntil(lambda: box.refusal.isVisible(), timeout=LONG)
        assert "GitHub has answered as many requests from this address as it allows" in box.refusal.message.text()
        assert not box.get_button.isVisible() and box.plan_button.isVisible()
        release.api_status, release.api_headers = None, {}
        click(qtbot, box.plan_button)
        qtbot.waitUntil(lambda: box.get_button.isVisible(), timeout=LONG)
        assert ("Each archive is checked against the SHA-256 GitHub publishes for it in llama.cpp's release b11434 "
                "before it is unpacked.") in box.reason.text(), box.reason.text()
        assert len(proxy.urls) == 2 and all(url.endswith(release.api_path) for url in proxy.urls), proxy.urls
    assert release.downloads_asked() == []
