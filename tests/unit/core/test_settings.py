import json
import os

import pytest

from app.core import settings as settings_mod
from app.core.launch.config import LaunchConfig
from app.core.paths import config_dir
from app.core.settings import SCHEMA_VERSION, load_settings, settings_path


def test_missing_file_gives_defaults_under_config_dir(app_home):
    s = load_settings()
    assert s.path == config_dir() / "settings.json"
    assert str(s.path).startswith(str(app_home))
    assert s.language is None and s.recent_models == [] and s.last_model is None
    assert s.notice is None
    assert s.data["version"] == SCHEMA_VERSION


def test_round_trip_profile_recent_geometry_language(tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    s = load_settings()
    s.language = "zh"
    s.set("window_geometry", "AdnQywADAAA=")
    cfg = LaunchConfig(model=str(model), ctx=2048, gpu_layers=3)
    s.update_profile(model, launch_config=cfg.to_dict(), expected_sha256="ab" * 32, probe={"ctx": 2048})
    s.remember_model(model)
    s.save()

    again = load_settings()
    assert again.language == "zh"
    assert again.get("window_geometry") == "AdnQywADAAA="
    assert again.last_model == os.path.abspath(model)
    assert again.recent_models == [os.path.abspath(model)]
    profile = again.profile(model)
    assert LaunchConfig.from_dict(profile["launch_config"]) == cfg
    assert profile["expected_sha256"] == "ab" * 32
    assert profile["probe"] == {"ctx": 2048}
    assert isinstance(profile["updated"], float)


def test_recent_models_are_unique_newest_first_and_bounded(tmp_path):
    s = load_settings()
    for i in range(15):
        s.remember_model(tmp_path / f"m{i}.gguf")
    s.remember_model(tmp_path / "m3.gguf")
    recent = s.recent_models
    assert len(recent) == settings_mod.MAX_RECENT_MODELS
    assert recent[0].endswith("m3.gguf") and len(set(recent)) == len(recent)
    s.forget_model(tmp_path / "m3.gguf")
    assert not any(p.endswith("m3.gguf") for p in s.recent_models) and s.last_model is None


def test_write_is_atomic_no_temp_files_left():
    s = load_settings()
    s.language = "en"
    s.save()
    s.save()
    leftovers = [p.name for p in settings_path().parent.iterdir() if p.name != "settings.json"]
    assert leftovers == []
    assert json.loads(settings_path().read_text())["language"] == "en"


@pytest.mark.parametrize("content", [b"{not json", b"[1, 2]", b"\xff\xfe\x00garbage"])
def test_corrupt_file_is_backed_up_and_replaced_with_notice(content):
    path = settings_path()
    path.write_bytes(content)
    s = load_settings()
    backups = list(path.parent.glob("settings.json.corrupt-*"))
    assert len(backups) == 1 and backups[0].read_bytes() == content
    assert s.notice is not None
    assert backups[0].name in s.notice.render("en") and backups[0].name in s.notice.render("zh")
    assert "设置" in s.notice.render("zh")
    assert "Error" not in s.notice.render("en") and "damaged" in s.notice.render("en")  # words, not a class name
    assert s.language is None
    # the replacement is a valid file and the notice is not repeated
    assert load_settings().notice is None


def test_wrong_types_fall_back_to_field_defaults():
    settings_path().write_text(json.dumps({
        "version": 1, "language": "fr", "recent_models": "oops", "window_geometry": 5,
        "profiles": {"/x.gguf": {"expected_sha256": 12, "launch_config": {"model": "/x.gguf"}}, "bad": 3},
        "future_key": {"kept": True},
    }))
    s = load_settings()
    assert s.notice is None
    assert s.language is None and s.recent_models == [] and s.get("window_geometry") is None
    assert s.data["profiles"].keys() == {"/x.gguf"}
    assert s.profile("/x.gguf")["expected_sha256"] is None
    assert s.profile("/x.gguf")["launch_config"] == {"model": "/x.gguf"}
    assert s.data["future_key"] == {"kept": True}


def test_migration_from_unversioned_prototype_file():
    settings_path().write_text(json.dumps({"recent": ["/a.gguf", "/b.gguf"], "language": "zh"}))
    s = load_settings()
    assert s.data["version"] == SCHEMA_VERSION
    assert s.recent_models == ["/a.gguf", "/b.gguf"] and s.language == "zh"
    assert "recent" not in s.data


def test_every_version_below_current_has_a_migration():
    assert sorted(settings_mod.MIGRATIONS) == list(range(SCHEMA_VERSION))


def test_rejects_unknown_language_and_profile_fields():
    s = load_settings()
    with pytest.raises(ValueError):
        s.language = "fr"
    with pytest.raises(KeyError):
        s.update_profile("/x.gguf", colour="red")
    with pytest.raises(KeyError):
        s.set("window_geometry", 12)


def test_version_1_engine_of_the_last_used_model_becomes_the_app_wide_choice():
    old = {"backend": "llama-server", "server_bin": "/opt/llama/llama-server"}
    settings_path().write_text(json.dumps({"version": 1, "profiles": {
        "/a.gguf": {"launch_config": {"model": "/a.gguf", "backend": "embedded"}, "updated": 10.0},
        "/b.gguf": {"launch_config": {"model": "/b.gguf", **old}, "updated": 20.0},
    }}))
    s = load_settings()
    assert s.data["version"] == SCHEMA_VERSION
    assert s.engine == ("llama-server", "/opt/llama/llama-server")
    assert s.engine_override("/a.gguf") is None and s.engine_override("/b.gguf") is None  # no model has its own
    assert s.engine_for("/a.gguf") == s.engine_for("/never-opened.gguf") == s.engine


def test_version_1_without_profiles_gets_the_automatic_engine():
    settings_path().write_text(json.dumps({"version": 1, "profiles": {}}))
    s = load_settings()
    assert s.engine == ("llama-server", None) and s.engine_is_automatic()  # the test set-up's llama-server runs


def test_version_2_built_in_engine_becomes_automatic_and_a_chosen_llama_server_or_a_models_own_is_kept():
    """Issue 23: a saved built-in engine was almost always the old default that merely reached Ready (version 2
    remembered the engine of every server that did), so it follows the new default; choices are kept."""
    settings_path().write_text(json.dumps({"version": 2, "backend": "embedded", "server_bin": None, "profiles": {
        "/own.gguf": {"launch_config": {"model": "/own.gguf", "backend": "embedded"}, "updated": 5.0,
                      "engine": {"backend": "embedded", "server_bin": None}},
        "/plain.gguf": {"launch_config": {"model": "/plain.gguf", "backend": "embedded"}, "updated": 9.0}}}))
    s = load_settings()
    assert s.data["version"] == SCHEMA_VERSION == 3 and s.data["backend"] is None
    assert s.engine_for("/plain.gguf") == ("llama-server", None) and s.engine_is_automatic("/plain.gguf")
    assert s.engine_for("/own.gguf") == ("embedded", None) and not s.engine_is_automatic("/own.gguf")
    s.save()
    assert json.loads(settings_path().read_text())["backend"] is None  # saved as automatic, not as llama-server
    settings_path().write_text(json.dumps({"version": 2, "backend": "llama-server",
                                           "server_bin": "/opt/llama/llama-server"}))
    assert load_settings().engine == ("llama-server", "/opt/llama/llama-server")


def test_an_automatic_engine_that_reached_ready_stays_automatic(tmp_path):
    a = tmp_path / "a.gguf"
    s = load_settings()
    assert s.engine_fallback_reason(a) is None  # llama-server runs here: nothing to explain
    assert s.engine_worked(a, *s.engine_for(a)) is False and s.engine_is_automatic(a)
    assert s.engine_worked(a, "embedded", None) and s.engine == ("embedded", None)  # another one worked: kept


def test_the_fallback_reason_is_given_only_for_an_automatic_engine(tmp_path, monkeypatch):
    from tests.no_llama_server import hide_llama_server

    hide_llama_server(monkeypatch, tmp_path / "empty")
    s = load_settings()
    assert s.engine == ("embedded", None)
    assert "The built-in engine runs your models because" in s.engine_fallback_reason().render("en")
    s.set_engine("embedded", None)
    assert s.engine_fallback_reason() is None  # chosen by the user: nothing to explain


def test_engine_is_app_wide_unless_set_for_one_model(tmp_path):
    a, b = tmp_path / "a.gguf", tmp_path / "b.gguf"
    s = load_settings()
    assert s.engine == ("llama-server", None)  # automatic: the test set-up's llama-server runs here
    s.set_engine("llama-server", "/bin/llama-server", a)
    assert s.engine_for(b) == ("llama-server", "/bin/llama-server")  # the next model keeps it
    s.set_engine("embedded", None, b, only_this_model=True)
    assert s.engine_for(b) == ("embedded", None) and s.engine_for(a) == ("llama-server", "/bin/llama-server")
    s.save()
    again = load_settings()
    assert again.engine_override(b) == ("embedded", None) and again.engine == ("llama-server", "/bin/llama-server")
    again.set_engine("llama-server", "", b)  # chosen for all models again: b's own is dropped
    assert again.engine_override(b) is None and again.engine == ("llama-server", None)
    with pytest.raises(ValueError):
        again.set_engine("embedded", None, only_this_model=True)


def test_an_engine_that_reached_ready_is_remembered(tmp_path):
    a, b = tmp_path / "a.gguf", tmp_path / "b.gguf"
    s = load_settings()
    assert s.engine_worked(a, "llama-server", "/bin/llama-server")
    assert s.engine == ("llama-server", "/bin/llama-server") and not s.engine_worked(a, "llama-server",
                                                                                      "/bin/llama-server")
    s.set_engine("embedded", None, b, only_this_model=True)
    assert s.engine_worked(b, "embedded", None) is False  # b's own engine: the app-wide choice is not touched
    assert s.engine == ("llama-server", "/bin/llama-server")


def test_a_hand_edited_engine_falls_back_to_the_automatic_one():
    settings_path().write_text(json.dumps({"version": 2, "backend": "vulkan", "server_bin": 3,
                                           "profiles": {"/x.gguf": {"engine": {"backend": 7}}}}))
    s = load_settings()
    assert s.engine == ("llama-server", None) and s.engine_override("/x.gguf") == ("llama-server", None)


@pytest.mark.parametrize(("stored", "expected"), [(125, 125), (9999, 300), (1, 50), ("big", 100), (True, 100)])
def test_zoom_is_kept_inside_its_range(stored, expected):
    """``zoom_percent`` (Ctrl +/-): a new field with a default, so an older file needs no migration."""
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": SCHEMA_VERSION, "zoom_percent": stored}), encoding="utf-8")
    assert load_settings().zoom_percent == expected
    s = load_settings()
    s.zoom_percent = 175
    s.save()
    assert load_settings().zoom_percent == 175
