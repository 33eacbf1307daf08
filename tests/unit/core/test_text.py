from app.core.text import T, human_bytes, set_language


def test_text_renders_both_languages_with_params():
    t = T("Port {port} is busy", "端口 {port} 被占用", port=8080)
    assert t.render("en") == "Port 8080 is busy"
    assert t.render("zh") == "端口 8080 被占用"
    set_language("zh")
    assert str(t) == "端口 8080 被占用"


def test_human_bytes():
    assert human_bytes(1536) == "1.5 KiB"
    assert human_bytes(None) == "unknown"
    assert human_bytes(3 * 1024**3) == "3.0 GiB"
