"""Chat pane against a real embedded server (llama-cpp-python) on a generated GGUF.

One supervised server per module. Replies are asked with a logit bias that bans end-of-sequence and the
256 byte tokens, so the random-weight model writes plain "tokN" words until max_tokens: "Stop mid-reply" and
"kill mid-reply" stay deterministic. (Without it, a random byte sequence that is not valid UTF-8 makes
llama-cpp-python hold back every later piece of the stream: measured here, a 1,500-token reply went silent
after ~240 pieces.)
"""

from __future__ import annotations

import os
import signal

import pytest
import shiboken6

from app.core.chat import ChatClient, ChatParams, list_conversations
from app.core.launch.config import LaunchConfig
from app.core.launch.ports import find_free_port
from app.core.server.supervisor import State, Supervisor
from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama
from app.core.text import set_language
from app.ui import workers
from app.ui.chat.chat_pane import ChatPane

READY_S = 90.0  # python -m llama_cpp.server imports slowly on a busy 2-core machine
REPLY_MS = 60_000
PLAIN_WORDS_ONLY = {"logit_bias": {str(token): -100 for token in range(2, 259)}}  # no EOS, no byte tokens


@pytest.fixture(scope="module")
def chat_server(tmp_path_factory):
    home = tmp_path_factory.mktemp("chat-server-home")
    previous = os.environ.get("GGUF_LAUNCHER_HOME")
    os.environ["GGUF_LAUNCHER_HOME"] = str(home)  # the supervisor's log file must not land in the real log dir
    model = write_tiny_llama(home / "wide-vocab.gguf", TinyModelSpec(n_extra_tokens=2_000, seed=7))
    config = LaunchConfig(model=str(model), ctx=2048, threads=1, port=find_free_port())
    supervisor = Supervisor(config, backoff_s=(0.2,))
    try:
        supervisor.start()
        state = supervisor.wait_for({State.READY, State.FAILED}, READY_S)
        assert state is State.READY, f"embedded server not ready: {state}; {supervisor.last_diagnosis}"
        yield supervisor
    finally:
        supervisor.close()
        if previous is None:
            os.environ.pop("GGUF_LAUNCHER_HOME", None)
        else:
            os.environ["GGUF_LAUNCHER_HOME"] = previous


@pytest.fixture
def pane(qtbot):
    # Not qtbot.addWidget: pytest-qt closes and deletes registered widgets *before* fixture teardown, so the
    # waits below would run the deferred delete while the last reply's worker is still finishing (replyFinished
    # fires before the worker's own result comes back; under load that can be a while). The workers then rightly
    # skip the callbacks of the deleted pane and is_streaming() stays True for good. The pane lives until every
    # task has reported back, and is deleted here.
    widget = ChatPane()
    yield widget
    widget.stop()
    qtbot.waitUntil(lambda: not widget.is_streaming(), timeout=REPLY_MS)
    try:  # no callback may reach the widget after it is deleted
        qtbot.waitUntil(lambda: workers.active_count() == 0, timeout=REPLY_MS)
    except qtbot.TimeoutError:
        raise AssertionError(f"pool tasks still running: {[task._fn for task in workers._live]}") from None
    widget.shutdown()
    widget.close()
    widget.deleteLater()
    qtbot.waitUntil(lambda: not shiboken6.isValid(widget), timeout=5_000)


def connect(pane: ChatPane, supervisor: Supervisor, max_tokens: int) -> list[str]:
    """Point the pane at the server; returns a list that records every streamed delta."""
    pane.set_supervisor(supervisor)
    pane.set_server_state(State.READY, {})
    pane.params_box.set_params(ChatParams(max_tokens=max_tokens, extra=PLAIN_WORDS_ONLY))
    deltas: list[str] = []
    original = pane.transcript.append_delta

    def recording(entry, text):
        deltas.append(text)
        original(entry, text)

    pane.transcript.append_delta = recording
    return deltas


def wait_idle(qtbot, pane: ChatPane) -> None:
    qtbot.waitUntil(lambda: not pane.is_streaming(), timeout=REPLY_MS)


def test_reply_streams_into_the_pane_with_its_numbers(qtbot, pane, chat_server):
    deltas = connect(pane, chat_server, max_tokens=48)
    with qtbot.waitSignal(pane.streamingChanged, timeout=1_000):
        assert pane.send("Hello, who are you?")
    assert not pane.send_button.isEnabled() and pane.stop_button.isEnabled()
    with qtbot.waitSignal(pane.replyFinished, timeout=REPLY_MS) as finished:
        pass
    wait_idle(qtbot, pane)
    stats = finished.args[0]
    assert len(deltas) > 1, "the reply should arrive in pieces, not in one block"
    text = pane.transcript.plain_text()
    assert "Hello, who are you?" in text and "Assistant" in text and "".join(deltas) in text
    assert stats.finish_reason == "length" and "tokens/s" in text and "first token after" in text
    assert "cut at max tokens (48)" in text  # finish reason said plainly
    assert pane.meter.use is not None and pane.meter.use.ctx == 2048 and 48 < pane.meter.use.used < 2048
    assert "of 2048 tokens used" in pane.meter.summary.text()
    assert not pane.resend_button.isVisibleTo(pane)
    saved = list_conversations()
    assert saved and saved[0]["messages"] == 2
    qtbot.waitUntil(lambda: pane.saved_combo.count() == 2, timeout=5_000)

    set_language("zh")
    pane.retranslate()
    assert stats.finish_text().render("zh") in pane.transcript.plain_text()


def test_stop_mid_reply_then_the_next_message_is_answered(qtbot, pane, chat_server):
    deltas = connect(pane, chat_server, max_tokens=1_500)
    pane.send("Tell me a very long story.")
    qtbot.waitUntil(lambda: len(deltas) > 0, timeout=REPLY_MS)
    pane.stop_button.click()
    wait_idle(qtbot, pane)
    entry = next(e for e in reversed(pane.transcript.entries) if e.kind == "message" and e.role == "assistant")
    assert entry.status == "stopped" and entry.content
    assert "You stopped the answer." in pane.transcript.plain_text()
    assert pane.session.conversation.messages[-1].stats["completion_tokens"] < 1_500

    pane.params_box.max_tokens.setValue(8)
    with qtbot.waitSignal(pane.replyFinished, timeout=REPLY_MS) as finished:
        pane.send("And a short one?")
    assert finished.args[0].finish_reason == "length"


def _closed(client: ChatClient) -> bool:
    """Whether the client was closed: a closed one refuses to send (an open one would ask the running server)."""
    try:
        client.server_info(refresh=True)
    except RuntimeError as error:  # httpx: "Cannot send a request, as the client has been closed."
        return "closed" in str(error)
    return False


def test_a_client_replaced_mid_reply_is_closed_once_the_reply_ends(qtbot, pane, chat_server):
    deltas = connect(pane, chat_server, max_tokens=1_500)
    old = pane.session.client
    pane.send("Tell me a very long story.")
    qtbot.waitUntil(lambda: len(deltas) > 0, timeout=REPLY_MS)
    pane.set_supervisor(chat_server)  # a restart's new client: the reply is stopped, the old client replaced
    assert pane.session.client is not old
    wait_idle(qtbot, pane)
    assert _closed(old)  # its connection is not left open to the server
    assert not _closed(pane.session.client)

    current = pane.session.client
    pane.send("And another long one.")
    qtbot.waitUntil(lambda: pane._reply_entry is not None and bool(pane._reply_entry.content), timeout=REPLY_MS)
    pane.shutdown()  # the window closing mid-reply
    wait_idle(qtbot, pane)
    assert _closed(current)


def test_too_long_message_is_an_error_message_in_the_conversation(qtbot, pane, chat_server):
    connect(pane, chat_server, max_tokens=64)
    with qtbot.waitSignal(pane.errorShown, timeout=REPLY_MS) as shown:
        pane.send("word " * 3_000)
    wait_idle(qtbot, pane)
    error = shown.args[0]
    assert error.kind == "context_too_long"
    text = pane.transcript.plain_text()
    assert error.message.render("en") in text and error.next_step.render("en") in text
    assert "tokens long" in text and "HTTP" not in text and "400" not in text
    assert pane.resend_button.isVisibleTo(pane)  # the message is kept, not lost


def test_unreachable_server_is_said_plainly(qtbot, pane):
    pane.set_client(ChatClient(f"http://127.0.0.1:{find_free_port()}", connect_timeout=2.0))
    with qtbot.waitSignal(pane.errorShown, timeout=REPLY_MS) as shown:
        pane.send("anyone there?")
    wait_idle(qtbot, pane)
    assert shown.args[0].kind == "unreachable"
    assert "Nothing answers at" in pane.transcript.plain_text()
    assert "ConnectError" not in pane.transcript.plain_text()


def test_crash_mid_reply_keeps_the_message_and_resends_after_restart(qtbot, pane, chat_server):
    deltas = connect(pane, chat_server, max_tokens=1_500)
    pane.send("Keep talking until the server dies.")
    qtbot.waitUntil(lambda: len(deltas) > 0, timeout=REPLY_MS)
    first_pid = chat_server.pid
    with qtbot.waitSignal(pane.errorShown, timeout=REPLY_MS) as shown:
        os.kill(first_pid, signal.SIGKILL)
    wait_idle(qtbot, pane)
    assert shown.args[0].kind == "server_crashed"
    assert "cut off" in pane.transcript.plain_text()  # the partial answer stays visible, marked
    assert pane.resend_label.isVisibleTo(pane)

    pane.set_server_state(State.RESTARTING, {})
    assert not pane.resend_button.isEnabled()
    assert chat_server.wait_for(State.READY, READY_S) is State.READY and chat_server.pid != first_pid
    pane.set_server_state(State.READY, {})
    pane.params_box.max_tokens.setValue(8)
    with qtbot.waitSignal(pane.replyFinished, timeout=REPLY_MS):
        pane.resend_button.click()
    wait_idle(qtbot, pane)
    assert pane.session.conversation.pending_message() is None
    assert not pane.resend_button.isVisibleTo(pane)


def test_a_saved_conversation_opens_with_its_pending_message(qtbot, pane):
    from app.core.chat.conversation import Conversation, save_conversation

    conversation = Conversation(params=ChatParams(system_prompt="Be brief.", max_tokens=32))
    conversation.add("user", "First question", "answered")
    answer = conversation.add("assistant", "First answer", "complete")
    answer.stats = {"request_id": "r1", "ttft_s": 0.05, "tokens_per_s": 99.0, "finish_reason": "stop"}
    conversation.add("user", "Asked when the server died", "pending")
    save_conversation(conversation)
    pane.set_client(ChatClient(f"http://127.0.0.1:{find_free_port()}"))
    pane.refresh_saved()
    qtbot.waitUntil(lambda: pane.saved_combo.count() == 2, timeout=5_000)
    pane.saved_combo.activated.emit(1)
    qtbot.waitUntil(lambda: "First answer" in pane.transcript.plain_text(), timeout=5_000)
    text = pane.transcript.plain_text()
    assert "99.0 tokens/s" in text and "The answer is complete." in text
    assert "Asked when the server died" in text and "not answered yet" in text
    assert pane.params_box.system_prompt.toPlainText() == "Be brief." and pane.params_box.max_tokens.value() == 32
    assert pane.resend_button.isVisibleTo(pane) and pane.resend_button.isEnabled()
    assert pane.session.conversation.id == conversation.id


def test_a_memory_warning_halves_the_history_budget_for_this_and_the_next_server(qtbot, pane):
    pane.set_client(ChatClient(f"http://127.0.0.1:{find_free_port()}"))
    assert pane.session.history_share == 1.0
    pane.set_memory_short(True)
    assert pane.session.history_share == 0.5
    pane.set_client(ChatClient(f"http://127.0.0.1:{find_free_port()}"))  # a restart: the warning still holds
    assert pane.session.history_share == 0.5
    pane.set_memory_short(False)
    assert pane.session.history_share == 1.0
