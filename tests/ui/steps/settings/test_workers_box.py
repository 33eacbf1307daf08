"""The Settings step's workers list and the Machine step's worker rows: addresses in, checks out in words."""

from __future__ import annotations

from app.core.launch.ports import find_free_port
from app.ui.steps.machine.worker_devices import WorkerDevices, worker_checks
from app.ui.steps.settings.workers_box import WorkersBox


def test_an_added_worker_is_checked_and_shown_as_a_device_in_the_machine_step(qtbot):
    box, devices = WorkersBox(), WorkerDevices()
    qtbot.addWidget(box)
    qtbot.addWidget(devices)
    address = f"127.0.0.1:{find_free_port()}"  # nothing listens there
    with qtbot.waitSignal(box.changed):
        box.address.setText(address)
        box._add()
    assert box.addresses() == (address,)
    qtbot.waitUntil(lambda: bool(devices.checks), timeout=5000)
    assert devices.checks == worker_checks().latest and not devices.checks[0].usable
    assert f"Nothing is listening at {address}" in devices.rows.text() and not devices.isHidden()
    assert f"Nothing is listening at {address}" in box.status.text()


def test_a_bad_address_is_one_sentence_and_changes_nothing(qtbot):
    box = WorkersBox()
    qtbot.addWidget(box)
    box.address.setText("not an address:x")
    box._add()
    assert box.addresses() == () and "is not a worker address" in box.status.text()


def test_the_share_warning_follows_the_address(qtbot):
    box = WorkersBox()
    qtbot.addWidget(box)
    assert "Only programs on this computer" in box.share_warning.text()
    box.share_address.setText("192.168.1.20:50052")
    assert "anyone who can reach this computer" in box.share_warning.text()


def test_the_settings_step_lists_workers_only_for_the_engine_that_can_use_them(qtbot):
    from app.ui.steps.settings.settings_panel import SettingsPanel

    panel = SettingsPanel()
    qtbot.addWidget(panel)
    panel.show_engine("embedded", None)
    assert panel.workers_box.isHidden()
    panel.show_engine("llama-server", None)
    assert not panel.workers_box.isHidden()
