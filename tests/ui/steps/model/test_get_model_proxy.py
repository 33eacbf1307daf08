""""Get a model" with a proxy of the user's own: the dialog's search, header reads and the download it hands on all
pass through a loopback forward proxy that counts them (tests/hub/fake_proxy.py); an address core cannot use is
core's sentence in the problem shape and nothing is sent; a saved address's password is never shown (dots, the
real one used); the window saves the choice and restores it at the next start."""

from __future__ import annotations

import base64

import pytest
from PySide6.QtCore import Qt

from app.ui.steps.model import get_model_work as work
from app.ui.steps.model.get_model_dialog import GetModelDialog
from app.ui.steps.model.get_model_row import GetModelRow
from app.ui.widgets.job_row import JobState
from tests.hub import fixtures
from tests.hub.fake_proxy import FakeProxy
from tests.hub.fixtures import TINY
from tests.model_cache import sha256_of
from tests.ui.conftest import LONG

fake_hub, hub_files = fixtures.fake_hub, fixtures.hub_files  # the shared fixtures, by these names

GIB = 1 << 30
F16 = "tiny-llama-F16.gguf"
BAD = "ftp://user:secret@proxy.example:21"


@pytest.fixture
def proxy():
    with FakeProxy() as running:
        yield running


def _dialog(qtbot, hub, proxy: str | None = None) -> GetModelDialog:
    dialog = GetModelDialog(None, choice=work.HubChoice(endpoint=hub.url, proxy=proxy),
                            options={"endpoint": hub.url, "vram_budget": 8 * GIB})
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: dialog.machine is not None, timeout=LONG)
    return dialog


def _type_proxy(dialog: GetModelDialog, text: str) -> None:
    dialog.proxy.setText(text)
    dialog.proxy.editingFinished.emit()  # what leaving the field does


def _search(qtbot, dialog: GetModelDialog, text: str) -> None:
    dialog.search_box.setText(text)
    qtbot.mouseClick(dialog.search_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(dialog.hits) or dialog.error is not None, timeout=LONG)


def _through(hub, proxy) -> None:
    """Every request the fake Hub saw came through the proxy (and there were some)."""
    seen = [r.path for r in hub.requests]
    assert seen and len(proxy.urls) == len(seen)
    assert sorted(u.split("/", 3)[-1] for u in proxy.urls) == sorted(p.lstrip("/") for p in seen)


def test_search_header_reads_and_the_download_go_through_the_proxy(qtbot, fake_hub, hub_files, proxy, tmp_path):
    dialog = _dialog(qtbot, fake_hub)
    assert dialog.proxy.text() == "" and dialog.proxy.placeholderText().startswith("http://host:port")
    _type_proxy(dialog, proxy.url)
    _search(qtbot, dialog, "llama")
    assert TINY in {h.repo for h in dialog.hits or []}
    dialog.open_repo(TINY)
    qtbot.waitUntil(lambda: dialog.fits is not None, timeout=LONG)
    assert "Fits on the graphics card" in {c.verdict.text() for c in dialog.files.cells.values()}
    assert any("/resolve/" in u for u in proxy.urls)  # the header reads, not only the search and the listing
    dialog.files.select(F16)
    with qtbot.waitSignal(dialog.downloadRequested, timeout=LONG) as asked:
        qtbot.mouseClick(dialog.download_button, Qt.MouseButton.LeftButton)
    model, choice = asked.args
    assert choice.proxy == proxy.url and proxy.url not in repr(choice)
    row = GetModelRow()  # what the Model step does with the request
    qtbot.addWidget(row)
    row.start(model, choice, tmp_path / "models")
    qtbot.waitUntil(lambda: row.job.state in (JobState.DONE, JobState.FAILED), timeout=LONG)
    assert row.job.state is JobState.DONE
    assert sha256_of(tmp_path / "models" / "test" / "tiny-llama-GGUF" / F16) == sha256_of(hub_files[F16])
    _through(fake_hub, proxy)


def test_without_a_proxy_the_system_setting_is_used_and_nothing_passes_through_it(qtbot, fake_hub, proxy):
    dialog = _dialog(qtbot, fake_hub)
    _search(qtbot, dialog, "llama")
    assert dialog.choice().proxy is None and fake_hub.requests and proxy.urls == []


def test_a_bad_address_is_core_sentence_and_nothing_is_sent(qtbot, fake_hub):
    from app.core.hub.http import bad_proxy

    dialog = _dialog(qtbot, fake_hub)
    changes: list[work.HubChoice] = []
    dialog.choiceChanged.connect(changes.append)
    _type_proxy(dialog, BAD)
    expected = bad_proxy(BAD)
    assert dialog.problem.isVisibleTo(dialog)
    assert dialog.problem.message.text() == expected.message.render("en") == (
        "The proxy address ftp://proxy.example:21 cannot be used: it must look like http://host:port.")
    assert expected.next_step is not None and dialog.problem.next_step.text() == expected.next_step.render("en")
    assert not dialog.mirror_button.isVisibleTo(dialog)  # the mirror would not help
    assert changes == []  # not saved
    dialog.search_box.setText("llama")
    qtbot.mouseClick(dialog.search_button, Qt.MouseButton.LeftButton)
    dialog.open_repo(TINY)
    qtbot.wait(300)
    assert dialog.hits is None and dialog.repo is None and not dialog.status.isVisibleTo(dialog)
    assert dialog.problem.message.text() == expected.message.render("en")
    assert "secret" not in dialog.problem.message.text() + dialog.problem.next_step.text()
    assert fake_hub.requests == []
    _type_proxy(dialog, "")  # cleared: the system's setting again; the sentence goes
    assert not dialog.problem.isVisibleTo(dialog) and changes == []  # the saved value (none) is unchanged
    _search(qtbot, dialog, "llama")
    assert dialog.error is None and fake_hub.requests


def test_a_saved_password_is_shown_as_dots_and_used(qtbot, fake_hub, proxy):
    host = proxy.url.removeprefix("http://")
    saved = f"http://alice:s3cret@{host}"
    dialog = _dialog(qtbot, fake_hub, proxy=saved)
    assert dialog.proxy.text() == f"http://alice:{work.PROXY_MASK}@{host}"
    assert "s3cret" not in dialog.proxy.text() + dialog.proxy.toolTip() + repr(dialog.choice())
    assert dialog.choice().proxy == saved
    _search(qtbot, dialog, "llama")
    assert dialog.error is None
    _through(fake_hub, proxy)
    sent = "Basic " + base64.b64encode(b"alice:s3cret").decode()
    assert proxy.authorizations and set(proxy.authorizations) == {sent}  # the real password, not the dots
    dialog.proxy.editingFinished.emit()  # left unchanged: still masked, still the saved value
    assert dialog.proxy.text() == f"http://alice:{work.PROXY_MASK}@{host}" and dialog.proxy_saved == saved
    _type_proxy(dialog, f"http://bob:typed@{host}")  # a new one with a password is masked once accepted
    assert dialog.proxy.text() == f"http://bob:{work.PROXY_MASK}@{host}"
    assert dialog.proxy_saved == f"http://bob:typed@{host}"


@pytest.mark.slow  # the real window
def test_the_proxy_is_saved(qtbot, window, fake_hub, proxy):
    from app.core.settings import load_settings

    panel = window.model
    panel.hub_options = {"endpoint": fake_hub.url}
    panel.get_model()
    dialog = panel.get_dialog
    assert dialog is not None and dialog.proxy.text() == ""
    saved = proxy.url.replace("http://", "http://alice:s3cret@")
    _type_proxy(dialog, saved)
    assert panel.hub_proxy == saved
    qtbot.waitUntil(lambda: load_settings().get("hub_proxy") == saved, timeout=5000)
    _type_proxy(dialog, BAD)  # not usable: not saved
    qtbot.wait(300)
    assert panel.hub_proxy == saved and load_settings().get("hub_proxy") == saved
    _type_proxy(dialog, "")  # cleared: the system's proxy again, saved as none
    qtbot.waitUntil(lambda: load_settings().get("hub_proxy") is None, timeout=5000)
    assert panel.hub_proxy is None


@pytest.fixture
def saved_proxy(app_home, proxy):
    """A proxy with a password saved in an earlier session (request it before ``window``)."""
    from app.core.settings import load_settings

    settings = load_settings()
    settings.set("hub_proxy", proxy.url.replace("http://", "http://alice:s3cret@"))
    settings.save()
    return settings.get("hub_proxy")


@pytest.mark.slow  # the real window
def test_the_saved_proxy_is_restored_masked_and_used(qtbot, saved_proxy, window, fake_hub, proxy):
    panel = window.model
    assert panel.hub_proxy == saved_proxy
    panel.hub_options = {"endpoint": fake_hub.url}
    panel.get_model()
    dialog = panel.get_dialog
    assert dialog is not None and dialog.choice().proxy == saved_proxy
    assert dialog.proxy.text() == saved_proxy.replace("s3cret", work.PROXY_MASK)
    _search(qtbot, dialog, "llama")
    assert dialog.error is None
    _through(fake_hub, proxy)
