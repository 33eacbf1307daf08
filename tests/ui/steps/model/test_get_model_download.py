""""Get a model" end to end in the real window against the loopback fake Hub (real HTTP, the real huggingface_hub
client, core's real download): search, pills, Download, then the model opens in the Model step with its checks;
Pause keeps the partial file and Resume continues it; Cancel leaves nothing in the model folder; a gated file's
download ends in core's sentence in the problem shape."""

from __future__ import annotations

import hashlib

import pytest
from PySide6.QtCore import Qt

from app.core.hub.download import models_folder
from app.ui.steps.model import get_model_work as work
from app.ui.steps.model.get_model_row import GetModelRow
from app.ui.widgets.job_row import JobState
from tests.hub import fixtures
from tests.hub.fixtures import GATED, TINY
from tests.ui.conftest import LONG

fake_hub, hub_files = fixtures.fake_hub, fixtures.hub_files  # the shared fixtures, by these names

GIB = 1 << 30
F16, F32 = "tiny-llama-F16.gguf", "tiny-llama-F32.gguf"


def _sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _open_dialog(qtbot, window, hub):
    panel = window.model
    panel.hub_options = {"endpoint": hub.url, "vram_budget": 8 * GIB}
    qtbot.mouseClick(panel.get_button, Qt.MouseButton.LeftButton)
    dialog = panel.get_dialog
    assert dialog is not None and dialog.isVisible()
    return panel, dialog


def _files_of(qtbot, dialog, text: str, repo: str) -> None:
    dialog.search_box.setText(text)
    qtbot.mouseClick(dialog.search_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(dialog.hits), timeout=LONG)
    dialog.open_repo(repo)
    qtbot.waitUntil(lambda: dialog.fits is not None, timeout=LONG)


def _download(qtbot, dialog, name: str) -> None:
    dialog.files.select(name)
    assert dialog.download_button.isEnabled()
    qtbot.mouseClick(dialog.download_button, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible()  # the row in the Model step takes over


def _target(repo: str, name: str):
    owner, _, repo_name = repo.partition("/")
    return models_folder() / owner / repo_name / name


@pytest.mark.slow  # the real window, a search, header reads and a download
def test_search_pills_download_then_the_model_opens_with_its_checks(qtbot, window, fake_hub, hub_files):
    panel, dialog = _open_dialog(qtbot, window, fake_hub)
    _files_of(qtbot, dialog, "tiny", TINY)
    assert dialog.files.cells[F16].verdict.text() == "Fits on the graphics card"
    assert any(cell.best.isVisibleTo(dialog) for cell in dialog.files.cells.values())
    _download(qtbot, dialog, F16)
    row = panel.get_row
    assert row is not None and row.isVisible()
    target = _target(TINY, F16)
    qtbot.waitUntil(lambda: panel.report is not None and panel.report.path == str(target), timeout=LONG)
    assert target.is_file() and _sha256(target) == _sha256(hub_files[F16])
    assert row.job.state is JobState.DONE
    assert row.job.status.text() == f"Downloaded; its SHA-256 matches the Hub's: {target}"
    assert panel.hash_row.expected.text() == _sha256(hub_files[F16])  # the published hash, for "Check file hash"
    assert panel.report.info is not None and panel.report.usable, [c.message.render() for c in panel.report.checks]
    assert not list(target.parent.glob("*.part"))
    # the same file again: recognised by its hash, not fetched
    sent = fake_hub.body_bytes.get(f"{TINY}/{F16}", 0)
    qtbot.mouseClick(panel.get_button, Qt.MouseButton.LeftButton)
    _download(qtbot, dialog, F16)
    qtbot.waitUntil(lambda: row.job.state is JobState.DONE, timeout=LONG)
    assert row.job.status.text() == f"Already on this computer, checked against the Hub's SHA-256: {target}"
    assert fake_hub.body_bytes.get(f"{TINY}/{F16}", 0) == sent


@pytest.mark.slow
def test_a_copy_in_on_this_computer_is_recognised_by_its_hash_and_opened_where_it_is(qtbot, window, fake_hub,
                                                                                      hub_files, tmp_path):
    import shutil

    folder = tmp_path / "my-models"
    folder.mkdir()
    copy = folder / "renamed-copy.gguf"
    shutil.copyfile(hub_files[F16], copy)
    panel = window.model
    panel.local_models.set_folders([str(folder)])
    panel.local_models.refresh()
    qtbot.waitUntil(lambda: any(m.path == str(copy) for m in panel.local_models.models), timeout=LONG)
    panel, dialog = _open_dialog(qtbot, window, fake_hub)
    _files_of(qtbot, dialog, "tiny", TINY)
    sent = fake_hub.body_bytes.get(f"{TINY}/{F16}", 0)
    _download(qtbot, dialog, F16)
    qtbot.waitUntil(lambda: panel.report is not None and panel.report.path == str(copy), timeout=LONG)
    assert panel.get_row.job.status.text() == f"Already on this computer, checked against the Hub's SHA-256: {copy}"
    assert fake_hub.body_bytes.get(f"{TINY}/{F16}", 0) == sent and not _target(TINY, F16).exists()


@pytest.mark.slow
def test_pause_keeps_the_partial_and_resume_continues_it(qtbot, window, fake_hub, hub_files):
    panel, dialog = _open_dialog(qtbot, window, fake_hub)
    _files_of(qtbot, dialog, "tiny", TINY)
    size = hub_files[F32].stat().st_size
    slow = fake_hub.fault(f"/cdn/.*{F32}", bytes_per_s=size / 12)  # about 12 s for the whole file
    _download(qtbot, dialog, F32)
    row = panel.get_row
    qtbot.waitUntil(lambda: row.progress is not None and row.progress.done_bytes > 0, timeout=LONG)
    qtbot.mouseClick(row.job.action_button, Qt.MouseButton.LeftButton)  # Pause
    assert row.job.state is JobState.PAUSED
    qtbot.waitUntil(lambda: row.task is None, timeout=LONG)  # the worker saw the pause and stopped
    partial = _target(TINY, F32).with_name(F32 + ".part")
    kept = partial.stat().st_size
    assert 0 < kept < size and row.job.action_button.text() == "Resume"
    assert row.job.status.text().startswith(f"Paused: {F32}, ")
    fake_hub.faults.remove(slow)
    asked = len(fake_hub.requests)
    qtbot.mouseClick(row.job.action_button, Qt.MouseButton.LeftButton)  # Resume
    qtbot.waitUntil(lambda: row.job.state is JobState.DONE, timeout=LONG)
    target = _target(TINY, F32)
    assert _sha256(target) == _sha256(hub_files[F32]) and not partial.exists()
    ranges = [r.range for r in fake_hub.requests[asked:] if r.method == "GET" and r.path.endswith(F32)]
    assert f"bytes={kept}-" in ranges and None not in ranges, "the resumed download fetched the kept bytes again"
    qtbot.waitUntil(lambda: panel.report is not None and panel.report.path == str(target), timeout=LONG)


@pytest.mark.slow
def test_cancel_leaves_nothing_in_the_model_folder(qtbot, window, fake_hub, hub_files):
    panel, dialog = _open_dialog(qtbot, window, fake_hub)
    _files_of(qtbot, dialog, "tiny", TINY)
    size = hub_files[F32].stat().st_size
    fake_hub.fault(f"/cdn/.*{F32}", bytes_per_s=size / 20)
    _download(qtbot, dialog, F32)
    row = panel.get_row
    qtbot.waitUntil(lambda: row.progress is not None and row.progress.done_bytes > 0, timeout=LONG)
    assert _target(TINY, F32).with_name(F32 + ".part").exists()
    qtbot.mouseClick(row.job.cancel_button, Qt.MouseButton.LeftButton)
    assert row.job.status.text() == "Cancelling…"
    qtbot.waitUntil(lambda: row.job.state is JobState.CANCELLED, timeout=LONG)
    assert row.job.status.text() == f"Download of {F32} cancelled; its partial file was removed."
    assert not _target(TINY, F32).parent.exists() or not any(_target(TINY, F32).parent.iterdir())
    assert panel.path is None  # nothing was opened


def test_a_gated_download_ends_in_the_sentence_and_keeps_nothing_half_written(qtbot, fake_hub, tmp_path):
    from app.core.hub.client import list_files

    listing = list_files(GATED, work.HubChoice(endpoint=fake_hub.url).access())
    model = next(m for m in listing.models if m.name == F16)
    row = GetModelRow()
    qtbot.addWidget(row)
    row.show()
    row.start(model, work.HubChoice(endpoint=fake_hub.url), tmp_path / "models")
    qtbot.waitUntil(lambda: row.job.state is JobState.FAILED, timeout=LONG)
    assert row.job.status.text() == f"The download of {F16} stopped."
    assert row.problem.isVisible() and "is gated or private" in row.problem.message.text()
    assert row.problem.next_step.text() == "Accept the license on the model's page, then paste a token."
    assert not [p for p in (tmp_path / "models").rglob("*") if p.is_file() and p.stat().st_size > 0]


def test_a_download_the_closing_window_stops_is_continued_by_the_next_run(qtbot, fake_hub, hub_files, tmp_path):
    """The window's close cancels every worker (workers.cancel_all): the download pauses, its partial file kept;
    the next run of the app (a new row) continues it instead of starting again."""
    from app.core.hub.client import list_files

    choice = work.HubChoice(endpoint=fake_hub.url)
    model = next(m for m in list_files(TINY, choice.access()).models if m.name == F32)
    size = hub_files[F32].stat().st_size
    slow = fake_hub.fault(f"/cdn/.*{F32}", bytes_per_s=size / 15)
    folder = tmp_path / "models"
    row = GetModelRow()
    qtbot.addWidget(row)
    row.start(model, choice, folder)
    qtbot.waitUntil(lambda: row.progress is not None and row.progress.done_bytes > 0, timeout=LONG)
    row.task.cancel()  # what the closing window's workers.cancel_all() does
    qtbot.waitUntil(lambda: row.task is None, timeout=LONG)
    assert row.job.state is JobState.PAUSED  # not started again behind the closing window
    partial = folder / "test" / "tiny-llama-GGUF" / (F32 + ".part")
    kept = partial.stat().st_size
    assert 0 < kept < size
    fake_hub.faults.remove(slow)
    asked = len(fake_hub.requests)
    again = GetModelRow()  # the next run of the app
    qtbot.addWidget(again)
    again.start(model, choice, folder)
    qtbot.waitUntil(lambda: again.job.state is JobState.DONE, timeout=LONG)
    assert _sha256(folder / "test" / "tiny-llama-GGUF" / F32) == _sha256(hub_files[F32])
    ranges = [r.range for r in fake_hub.requests[asked:] if r.method == "GET" and r.path.endswith(F32)]
    assert f"bytes={kept}-" in ranges and None not in ranges  # only the rest was asked for
