from pathlib import Path

from app.core.platform.loader import _conf_dirs, missing_libraries, resolve_tree


def test_a_folder_missing_one_library_is_named_and_the_full_one_loads(xcb_plugin, complete_libs):
    assert missing_libraries(xcb_plugin, search=[complete_libs]) == []
    (complete_libs / "libxcb-keysyms.so.1").unlink()
    assert missing_libraries(xcb_plugin, search=[complete_libs]) == ["libxcb-keysyms.so.1"]


def test_qt_libraries_come_from_the_plugin_run_path_and_a_wrong_kind_does_not_count(xcb_plugin, tmp_path):
    tree = resolve_tree(xcb_plugin, search=[tmp_path])
    assert tree["libQt6XcbQpa.so.6"].parent.resolve() == (xcb_plugin.parents[2] / "lib").resolve()
    (tmp_path / "libxcb-cursor.so.0").write_text("not a library")
    assert tree["libxcb-cursor.so.0"] is None
    assert resolve_tree(xcb_plugin, search=[tmp_path])["libxcb-cursor.so.0"] is None


def test_ld_so_conf_includes_are_followed(tmp_path):
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "x.conf").write_text("# multiarch\n/opt/x/lib\n")
    conf = tmp_path / "ld.so.conf"
    conf.write_text(f"include {tmp_path}/conf.d/*.conf\n/usr/local/lib\ninclude conf.d/*.conf\n")
    assert _conf_dirs(conf, set()) == [Path("/opt/x/lib"), Path("/usr/local/lib")]  # each file once
