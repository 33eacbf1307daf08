"""Other apps' JSON files that `models` reads (Jan's settings, Ollama's manifests), the llama-server facts cache and
saved conversations are read only from a regular file of bounded size: a FIFO in their place is skipped at once (it
blocked the scan for ever), a link to /dev/zero is not read."""

from __future__ import annotations

import os
import threading

import pytest

DEADLINE_S = 30  # milliseconds of work; only a hang reaches it

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")


def _within_deadline(read):
    box = {}

    def target():
        try:
            box["value"] = read()
        except Exception as error:  # noqa: BLE001 - raised again in the test's thread
            box["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(DEADLINE_S)
    assert not thread.is_alive(), f"reading did not return within {DEADLINE_S} s"
    if "error" in box:
        raise box["error"]
    return box["value"]


def test_jan_settings_and_ollama_manifest(tmp_path):
    from app.core.library.scan import _ollama_blob
    from app.core.library.sources import _jan_data_folder

    os.mkfifo(tmp_path / "settings.json")
    os.mkfifo(tmp_path / "manifest")
    assert _within_deadline(lambda: _jan_data_folder(tmp_path / "settings.json")) is None
    assert _within_deadline(lambda: _ollama_blob(tmp_path / "manifest", tmp_path)) is None


def test_llama_server_facts_cache():
    from app.core.launch import discovery

    path = discovery._disk_cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to("/dev/zero")
    assert _within_deadline(discovery._read_disk_cache) == {}


def test_saved_conversations(tmp_path):
    from app.core.chat.conversation import list_conversations, load_conversation

    os.mkfifo(tmp_path / "c1.json")
    assert _within_deadline(lambda: list_conversations(tmp_path)) == []
    with pytest.raises(ValueError):
        _within_deadline(lambda: load_conversation("c1", tmp_path))
