""""Get a model" dialog against the loopback fake Hub (real HTTP, the real huggingface_hub client): a search lists
repositories, a repository's files get fit pills that agree with core's verdicts on the same files and the best one
is marked Recommended, a gated repository shows core's sentence in the problem shape, an unreachable Hub says so
within seconds, and the dialog fits a 1024 x 700 window in both languages."""

from __future__ import annotations

import socket

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.ui.steps.model import get_model_work as work
from app.ui.steps.model.get_model_dialog import GetModelDialog
from tests.hub import fixtures
from tests.hub.fixtures import GATED, TINY, TOKEN
from tests.ui.clipping import clipped
from tests.ui.conftest import LONG

fake_hub, hub_files = fixtures.fake_hub, fixtures.hub_files  # the shared fixtures, by these names

GIB = 1 << 30


def _dialog(qtbot, hub, **options) -> GetModelDialog:
    options = {"endpoint": hub.url, **options}
    dialog = GetModelDialog(None, choice=work.HubChoice(endpoint=hub.url), options=options)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: dialog.machine is not None, timeout=LONG)
    return dialog


def _search(qtbot, dialog: GetModelDialog, text: str) -> None:
    dialog.search_box.setText(text)
    qtbot.mouseClick(dialog.search_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(dialog.hits) or dialog.error is not None or dialog.status.text().startswith("No "),
                    timeout=LONG)


def _repo_rows(dialog: GetModelDialog) -> list[str]:
    return [dialog.repos.topLevelItem(i).data(0, 256) for i in range(dialog.repos.topLevelItemCount())]


def _choose(qtbot, dialog: GetModelDialog, repo: str) -> None:
    row = _repo_rows(dialog).index(repo)
    dialog.repos.setCurrentItem(dialog.repos.topLevelItem(row))
    qtbot.waitUntil(lambda: dialog.fits is not None or dialog.error is not None, timeout=LONG)


def test_search_then_pills_agree_with_core_and_the_best_is_recommended(qtbot, fake_hub):
    from app.core.hub.client import list_files
    from app.core.hub.remote import fit_listing
    from app.core.hub.source import HubAccess

    dialog = _dialog(qtbot, fake_hub, vram_budget=8 * GIB)
    assert dialog.list_title.text() == "Suggested small models" and len(_repo_rows(dialog)) >= 6
    _search(qtbot, dialog, "llama")
    assert TINY in _repo_rows(dialog) and dialog.list_title.text() == "Results for “llama”"
    _choose(qtbot, dialog, TINY)
    hw, backend = dialog.machine
    access = HubAccess(endpoint=fake_hub.url)
    expected = {f.name: f for f in fit_listing(list_files(TINY, access), access, hw, backend, vram_budget=8 * GIB)}
    assert set(dialog.files.cells) == set(expected)
    for name, cell in dialog.files.cells.items():
        assert cell.verdict.text() == work.pill_text(expected[name]), name
        assert cell.best.isVisibleTo(dialog) == expected[name].best, name
    assert "Fits on the graphics card" in {c.verdict.text() for c in dialog.files.cells.values()}
    best = next(f for f in expected.values() if f.best)
    assert dialog.files.selected_model().name == best.name  # the Recommended file is chosen
    assert dialog.files.verdict.text().startswith("Fits on the graphics card: all")  # the numbers behind it
    assert dialog.download_button.isEnabled()
    split = next(m for m in dialog.listing.models if m.is_split)
    item = next(dialog.files.tree.topLevelItem(i) for i in range(dialog.files.tree.topLevelItemCount())
                if dialog.files.tree.topLevelItem(i).data(0, Qt.ItemDataRole.UserRole) == split.name)
    assert item.text(0) == f"{split.name} (3 parts)" and item.text(1) == "F16"
    assert item.text(2) == work.size_text(split.size)
    assert "vision projector (mmproj-tiny-F16.gguf)" in dialog.files.projectors.text()


def test_a_gated_repository_says_accept_the_license_then_paste_a_token(qtbot, fake_hub):
    dialog = _dialog(qtbot, fake_hub)
    _search(qtbot, dialog, GATED)  # "owner/name" lists that repository at once
    qtbot.waitUntil(lambda: dialog.fits is not None, timeout=LONG)
    assert {c.verdict.text() for c in dialog.files.cells.values()} == {"Fit unknown"}
    assert dialog.problem.isVisibleTo(dialog)
    assert dialog.problem.message.text().startswith(f"{GATED} is gated or private") or \
        "is gated or private" in dialog.problem.message.text()
    assert dialog.problem.next_step.text() == "Accept the license on the model's page, then paste a token."
    dialog.files.select("tiny-llama-F16.gguf")
    assert not dialog.files.problem.isVisibleTo(dialog)  # said once, for every file, not again under the list
    assert not dialog.status.isVisibleTo(dialog)  # no claim that nothing fits: nothing could be judged
    assert dialog.token.echoMode() is dialog.token.EchoMode.Password
    dialog.token.setText(TOKEN)  # the token the fake Hub's owner accepted the license with
    dialog.open_repo(GATED)
    qtbot.waitUntil(lambda: dialog.fits is not None, timeout=LONG)
    assert "Fit unknown" not in {c.verdict.text() for c in dialog.files.cells.values()}
    assert not dialog.problem.isVisibleTo(dialog)
    assert TOKEN not in repr(dialog.choice())  # never logged whole


def test_nothing_found_says_what_to_try(qtbot, fake_hub):
    dialog = _dialog(qtbot, fake_hub)
    _search(qtbot, dialog, "no-such-model-anywhere")
    assert dialog.status.text().startswith("No GGUF repository matches “no-such-model-anywhere”.")
    dialog.search_box.clear()
    qtbot.mouseClick(dialog.search_button, Qt.MouseButton.LeftButton)  # an empty search: the suggestions again
    assert dialog.list_title.text() == "Suggested small models"


def test_an_unreachable_hub_says_so_and_offers_the_mirror(qtbot, fake_hub):
    with socket.socket() as probe:  # a port nothing listens on: the connection is refused at once
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    dialog = _dialog(qtbot, fake_hub, endpoint=closed)
    _search(qtbot, dialog, "llama")
    assert dialog.error is not None
    assert "could not be reached within 5 s" in dialog.problem.message.text()
    assert dialog.mirror_button.isVisibleTo(dialog) and dialog.mirror_button.text() == "Use the mirror hf-mirror.com"
    dialog.error = None
    qtbot.mouseClick(dialog.mirror_button, Qt.MouseButton.LeftButton)  # the mirror, and the same search again
    assert dialog.choice().source == "hf-mirror" and dialog.status.text() == "Searching for “llama”…"
    qtbot.waitUntil(lambda: dialog.error is not None, timeout=LONG)  # (this test's address stands for both)
    assert not dialog.mirror_button.isVisibleTo(dialog)  # already on the mirror


def test_too_many_requests_says_how_long_to_wait(qtbot, fake_hub):
    dialog = _dialog(qtbot, fake_hub)
    fake_hub.fault("^/api/models$", status=429, retry_after=30)
    _search(qtbot, dialog, "llama")
    assert dialog.problem.message.text() == ("The Hub has had too many requests from this computer (429) and asks "
                                             "to wait 30 s.")
    assert dialog.problem.next_step.text().startswith("Try again after that time, or paste a token")
    assert not dialog.mirror_button.isVisibleTo(dialog)


def test_modelscope_is_one_sentence(qtbot, fake_hub):
    dialog = _dialog(qtbot, fake_hub, endpoint=None)
    dialog.source.setCurrentIndex(work.SOURCES.index("modelscope"))
    _search(qtbot, dialog, "qwen")
    from app.core.hub.errors import not_supported
    from app.core.hub.source import HubSource

    expected = not_supported(HubSource.MODELSCOPE)  # core's one sentence and next step
    assert dialog.problem.message.text() == expected.message.render("en")
    assert expected.next_step is not None and dialog.problem.next_step.text() == expected.next_step.render("en")
    assert dialog.problem.message.text().startswith("ModelScope")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_dialog_fits_a_1024_by_700_window(qtbot, fake_hub, lang):
    from app.ui import i18n

    dialog = _dialog(qtbot, fake_hub, vram_budget=8 * GIB)
    _search(qtbot, dialog, "tiny")
    _choose(qtbot, dialog, TINY)
    i18n.apply_language(lang)  # Qt sends every widget LanguageChange: the dialog retranslates
    try:
        dialog.fit_to(1024, 700)
        for _ in range(3):
            QApplication.processEvents()
            qtbot.wait(20)
        assert dialog.width() <= 1024 and dialog.height() <= 700
        hint = dialog.minimumSizeHint()
        assert hint.width() <= dialog.width() and hint.height() <= dialog.height()
        assert clipped(dialog) == []
        if lang == "zh":
            assert dialog.download_button.text() != "Download" and dialog.windowTitle() != "Get a model"
    finally:
        i18n.apply_language("en")


def test_the_suggested_list_marks_the_pick_for_this_computer(qtbot, fake_hub):
    from app.core.hub.curated import CURATED, suggested_for_hardware

    dialog = _dialog(qtbot, fake_hub)
    pick = suggested_for_hardware(dialog.machine[0])
    assert _repo_rows(dialog) == [m.repo for m in CURATED]
    marked = [dialog.repos.topLevelItem(i).text(0) for i in range(len(CURATED))
              if dialog.repos.topLevelItem(i).text(0).startswith("★ ")]
    if pick is None:
        assert marked == [] and dialog.list_note.text() == "Pick a model to see each file's fit on this computer."
    else:
        assert marked == [f"★ {pick.title}"]
        assert dialog.list_note.text().startswith(f"★ {pick.title}: the suggested size for this computer's memory.")


@pytest.mark.slow  # a search the fake hub answers after 1 s
def test_a_failure_of_a_search_the_user_left_is_not_shown(qtbot, fake_hub):
    from app.ui import workers

    dialog = _dialog(qtbot, fake_hub)
    fake_hub.fault("^/api/models$", status=500, delay_s=1.0)  # a slow search that fails in the end
    dialog.search_box.setText("llama")
    qtbot.mouseClick(dialog.search_button, Qt.MouseButton.LeftButton)
    dialog.search_box.clear()
    qtbot.mouseClick(dialog.search_button, Qt.MouseButton.LeftButton)  # back to the suggestions at once
    dialog.open_repo(TINY)
    qtbot.waitUntil(lambda: dialog.fits is not None and workers.active_count() == 0, timeout=LONG)
    assert any(r.path.startswith("/api/models?") for r in fake_hub.requests)  # the search was sent and answered
    assert dialog.error is None and not dialog.problem.isVisibleTo(dialog)
    assert dialog.list_title.text() == "Suggested small models"


def test_no_verdicts_when_the_machine_cannot_be_read(qtbot, fake_hub, monkeypatch):
    def unreadable(backend):
        raise OSError("memory information unreadable")

    monkeypatch.setattr(work, "scan_machine", unreadable)
    dialog = GetModelDialog(None, choice=work.HubChoice(endpoint=fake_hub.url), options={"endpoint": fake_hub.url})
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: dialog.error is not None, timeout=LONG)
    assert dialog.problem.message.text() == ("This computer's memory could not be read, so no file gets a fit verdict "
                                             "(memory information unreadable).")
    dialog.open_repo(TINY)
    qtbot.waitUntil(lambda: dialog.listing is not None, timeout=LONG)
    assert {c.verdict.text() for c in dialog.files.cells.values()} == {"Fit unknown"}
    dialog.files.select(F16 := "tiny-llama-F16.gguf")
    assert dialog.files.selected_model().name == F16 and dialog.download_button.isEnabled()


@pytest.mark.slow  # the real window
def test_the_chosen_source_is_saved(qtbot, window, fake_hub):
    from app.core.settings import load_settings

    panel = window.model
    panel.hub_options = {"endpoint": fake_hub.url}
    panel.get_model()
    panel.get_dialog.source.setCurrentIndex(work.SOURCES.index("hf-mirror"))
    assert panel.hub_source == "hf-mirror"
    qtbot.waitUntil(lambda: load_settings().get("hub_source") == "hf-mirror", timeout=5000)
