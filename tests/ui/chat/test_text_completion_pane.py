"""The chat pane with a base model (no chat template): one line says it continues text, in both languages, and a
real embedded server's reply streams into the transcript through the completion endpoint."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import shiboken6

from app.core.chat import ChatParams
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.server.supervisor import State, Supervisor
from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama
from app.core.text import set_language
from app.ui import workers
from app.ui.chat.chat_pane import ChatPane

NOTICE = "Text completion: this model continues what you write."
REPLY_MS = 60_000
PLAIN_WORDS_ONLY = {"logit_bias": {str(token): -100 for token in range(2, 259)}}  # no EOS, no byte tokens


@pytest.fixture
def pane(qtbot):
    widget = ChatPane()
    yield widget
    widget.stop()
    qtbot.waitUntil(lambda: not widget.is_streaming(), timeout=REPLY_MS)
    qtbot.waitUntil(lambda: workers.active_count() == 0, timeout=REPLY_MS)
    widget.shutdown()
    widget.close()
    widget.deleteLater()
    qtbot.waitUntil(lambda: not shiboken6.isValid(widget), timeout=5_000)


def _stand_in(model) -> SimpleNamespace:
    return SimpleNamespace(url="http://127.0.0.1:9", config=LaunchConfig(model=str(model)), tail=lambda n: [],
                           state=State.READY, child=None, history=[], last_diagnosis=None)


def test_base_model_shows_the_text_completion_line(qtbot, pane, make_model):
    pane.show()
    pane.set_supervisor(_stand_in(make_model("base.gguf", chat_template=False)))
    assert pane.session.client.text_completion
    assert pane.mode_note.isVisible() and pane.mode_note.text() == NOTICE
    set_language("zh")
    pane.retranslate()
    assert pane.mode_note.text() == "文本续写：该模型会接着您写的内容继续写下去。"
    set_language("en")
    pane.set_supervisor(_stand_in(make_model("chat.gguf")))  # a chat model: no line
    assert not pane.session.client.text_completion and not pane.mode_note.isVisible()
    pane.set_supervisor(None)
    assert not pane.mode_note.isVisible()


def test_the_text_completion_line_goes_with_its_stopped_server(qtbot, pane, make_model):
    """A base model's server stopped, then an instruct model opened in the Model step: the chat no longer says it
    continues text (the old server answers nothing; the next server's own kind of chat comes with it)."""
    pane.show()
    pane.set_supervisor(_stand_in(make_model("base.gguf", chat_template=False)))
    pane.set_server_state(State.READY, {})
    assert pane.mode_note.isVisible()
    pane.set_server_state(State.STOPPED, {})
    assert not pane.mode_note.isVisible()
    pane.set_server_state(State.STARTING, {})  # started again with the same base model: said again
    assert pane.mode_note.isVisible()
    pane.set_server_state(State.FAILED, {})
    assert not pane.mode_note.isVisible()


@pytest.mark.slow
def test_base_model_reply_streams_into_the_pane(qtbot, pane, tmp_path):
    model = write_tiny_llama(tmp_path / "base.gguf", TinyModelSpec(n_extra_tokens=2_000, seed=7, chat_template=False))
    supervisor = Supervisor(LaunchConfig(model=str(model), ctx=1024, threads=1, port=find_free_port()),
                            backoff_s=(0.2,))
    try:
        supervisor.start()
        assert supervisor.wait_for({State.READY, State.FAILED}, 90.0) is State.READY, supervisor.last_diagnosis
        pane.show()
        pane.set_supervisor(supervisor)
        pane.set_server_state(State.READY, {})
        pane.params_box.set_params(ChatParams(max_tokens=12, extra=PLAIN_WORDS_ONLY))
        assert pane.mode_note.isVisible()
        with qtbot.waitSignal(pane.replyFinished, timeout=REPLY_MS) as finished:
            assert pane.send("Once upon a time")
        qtbot.waitUntil(lambda: not pane.is_streaming(), timeout=REPLY_MS)
        assert finished.args[0].finish_reason == "length"
        answer = pane.session.conversation.messages[-1]
        assert answer.role == "assistant" and answer.content and answer.content in pane.transcript.plain_text()
    finally:
        pane.stop()
        qtbot.waitUntil(lambda: not pane.is_streaming(), timeout=REPLY_MS)
        supervisor.close()
