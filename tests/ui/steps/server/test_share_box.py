"""The Server step's sharing box: off and loopback by default; on, it shows the address and the key once, and the
share stops with the supervisor or when turned off."""

from __future__ import annotations

import httpx

from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.server.lan_share import LOOPBACK
from app.core.server.supervisor import Supervisor
from app.ui.steps.server.share_box import ShareBox


def test_sharing_shows_the_address_and_key_and_stops_with_the_supervisor(qtbot, tiny_model):
    box = ShareBox()
    qtbot.addWidget(box)
    assert not box.enabled.isChecked() and box.where.currentData() == LOOPBACK
    supervisor = Supervisor(LaunchConfig(model=str(tiny_model), port=find_free_port()))
    box.set_supervisor(supervisor)
    box.port.setValue(find_free_port())
    box.enabled.setChecked(True)
    assert box.share is not None and box.share.running
    box.copy_button.click()
    from PySide6.QtGui import QGuiApplication

    key = QGuiApplication.clipboard().text()  # shown masked (a projector), copied whole
    assert len(key) >= 32 and not set(key) & set("Il1O0") and box.copy_button.isVisibleTo(box)
    assert key not in box.key.text() and box.key.text().startswith(key[:4])
    url = box.share.urls[0]
    assert url in box.addresses.text()
    assert httpx.get(url + "/props").status_code == 401  # the key is wanted
    stopped = httpx.get(url + "/props", headers={"Authorization": f"Bearer {key}"})
    assert stopped.status_code == 502 and "not running" in stopped.json()["error"]["message"]  # never started
    assert httpx.get(url + "/health").status_code == 502
    supervisor.close()
    assert not box.share.running
    box.enabled.setChecked(False)
    assert box.share is None and box.key.text() == ""


def test_a_port_in_use_is_a_sentence(qtbot, tiny_model):
    import socket

    box = ShareBox()
    qtbot.addWidget(box)
    supervisor = Supervisor(LaunchConfig(model=str(tiny_model), port=find_free_port()))
    box.set_supervisor(supervisor)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        box.port.setValue(taken.getsockname()[1])
        box.enabled.setChecked(True)
    assert box.share is None and not box.enabled.isChecked()
    assert "Sharing cannot listen on 127.0.0.1 port" in box.addresses.text()
    supervisor.close()


def test_the_warning_says_who_can_reach_the_share(qtbot):
    box = ShareBox()
    qtbot.addWidget(box)
    box.enabled.setChecked(True)  # no supervisor yet: the choice is made, the warning shows
    assert box.where.currentData() == LOOPBACK
    assert "this computer" in box.warning.text() and "nyone" not in box.warning.text()
    box.enabled.setChecked(False)
    box.where.setCurrentIndex(box.where.findData("0.0.0.0"))
    assert box.warning.isVisibleTo(box) and box.warning.text().startswith("Anyone on the network")


def test_network_addresses_join_the_list_when_it_is_first_used(qtbot):
    """Reading the addresses (psutil, every interface) waits for the list: the window's first paint shows only the
    current choice."""
    from app.core.server.lan_share import ALL_NETWORKS, lan_addresses

    box = ShareBox()
    qtbot.addWidget(box)
    assert [box.where.itemData(i) for i in range(box.where.count())] == [LOOPBACK, ALL_NETWORKS]
    box.where.setCurrentIndex(1)
    box.where.showPopup()
    box.where.hidePopup()
    assert [box.where.itemData(i) for i in range(box.where.count())] == [LOOPBACK, ALL_NETWORKS, *lan_addresses()]
    assert box.where.currentData() == ALL_NETWORKS  # the choice is kept
