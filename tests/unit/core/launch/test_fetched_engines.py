"""The list of downloaded GPU engines: what counts as found, and what removing one deletes."""

from __future__ import annotations

from app.core.launch import fetched_engines


def kept(name: str = "llama-b11434-win-vulkan-x64", kind: str = "vulkan"):
    folder = fetched_engines.engines_folder() / name
    folder.mkdir()
    (folder / "llama-server.exe").write_bytes(b"MZ")
    return fetched_engines.register(kind, "Vulkan", "b11434", folder, folder / "llama-server.exe", "Vulkan0: x")


def test_a_build_whose_program_is_gone_is_not_found():
    engine = kept()
    launcher = fetched_engines.engines_folder() / "llama-b11434-win-vulkan-x64" / "llama-server.exe"
    assert fetched_engines.fetched_launchers() == [launcher] and engine.launcher == str(launcher)
    launcher.unlink()  # an antivirus program took it
    assert fetched_engines.registered_engines() == []


def test_registering_a_kind_again_replaces_it_and_remove_deletes_only_its_folder():
    first = kept("a", "vulkan")
    second = kept("b", "vulkan")
    other = kept("c", "cuda-12")
    assert fetched_engines.registered_engines() == [second, other]
    assert fetched_engines.remove_engine("vulkan") == [second]
    root = fetched_engines.engines_folder()
    assert not (root / "b").exists() and (root / "a").exists() and (root / "c").exists()
    assert first not in fetched_engines.registered_engines()


def test_an_entry_pointing_outside_the_engines_folder_deletes_nothing(tmp_path):
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "llama-server").write_text("x")
    fetched_engines.register("vulkan", "Vulkan", "b11434", outside, outside / "llama-server", "Vulkan0: x")
    assert len(fetched_engines.remove_engine()) == 1
    assert (outside / "llama-server").is_file() and fetched_engines.registered_engines() == []


def test_a_damaged_list_is_empty():
    (fetched_engines.engines_folder() / fetched_engines.REGISTRY_NAME).write_text("[1, 2")
    assert fetched_engines.registered_engines() == []
    (fetched_engines.engines_folder() / fetched_engines.REGISTRY_NAME).write_text('{"engines": [{"kind": 1}]}')
    assert fetched_engines.registered_engines() == []
