"""A server stopped by force is said as that, in both languages: the signal's name ("SIGKILL") stays in the
diagnosis' evidence, out of the sentence a newcomer reads."""

from __future__ import annotations

from app.core.process.exit_status import decode_exit_status


def test_a_forced_stop_is_said_without_the_signal_name():
    for code in (-9, 137):  # Python's negative signal number, a shell's 128 + 9
        status = decode_exit_status(code)
        assert status.signal == "SIGKILL"
        assert status.meaning.render("en") == ("The server was stopped by force: something outside it ended it at "
                                               "once, without letting it say why.")
        assert status.meaning.render("zh") == "服务器被强制结束：外部的某个程序或系统立即结束了它，它来不及说明原因。"
