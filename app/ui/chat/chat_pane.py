"""Chat with the running model: streaming reply, Stop, New chat, parameters, context meter, saved chats.

All chat logic lives in ``app.core.chat.ChatSession``; this pane renders its events. The session's
iterator runs on a pool thread (``app.ui.chat.stream_job``); deltas arrive here as queued signals.

Wiring: ``ChatPane(bridge)`` follows the bridge (``supervisorChanged`` -> ``set_supervisor``,
``stateChanged`` -> ``set_server_state``); without a bridge call those two yourself, or ``set_client``.
``is_streaming()`` / ``streamingChanged(bool)`` tell the window whether closing needs a question;
``shutdown()`` stops a reply without blocking. A client replaced (or shut down) while its reply streams is closed
once that stream has ended, so no connection to an old server is left open.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, Signal, Slot
from PySide6.QtGui import QKeyEvent, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.chat import (
    ChatClient,
    ChatError,
    ChatEvent,
    ChatSession,
    Conversation,
    ReplyStats,
    ServerInfo,
    load_conversation,
)
from app.core.chat.completion import TEXT_COMPLETION_NOTICE
from app.core.chat.conversation import (
    INTERRUPTED,
    PENDING,
    STOPPED,
    UNANSWERED,
    model_name,
    new_model_notice,
    other_model_notice,
)
from app.core.chat.hooks import ChatServer, client_for_supervisor
from app.core.chat.params import FINISH_STOPPED
from app.core.problem import Fix
from app.core.remote import RemoteServer, client_for_remote
from app.core.server.events import IDLE_STATES, State
from app.ui.chat.connect_dialog import ask_for_remote
from app.ui.chat.context_meter import ContextMeter
from app.ui.chat.params_box import ParamsBox
from app.ui.chat.saved_picker import SavedPicker
from app.ui.chat.status_bar import ChatStatus
from app.ui.chat.stream_job import Start, StreamOutcome, start_stream
from app.ui.chat.transcript import Transcript
from app.ui.i18n import Retranslating
from app.ui.widgets.problem_view import render
from app.ui.workers import Task, run_task

if TYPE_CHECKING:
    from app.ui.chat.transcript import Entry
    from app.ui.steps.server.supervisor_bridge import SupervisorBridge

MEMORY_SHORT_HISTORY_SHARE = 0.5  # of the history budget, while the memory watchdog warns
logger = logging.getLogger(__name__)


def _context_unread(error: BaseException) -> None:
    """The server did not say its context just now (gone again, still loading): the next message asks again."""
    logger.info("the server's context could not be read after Ready: %s", error)


class ChatPane(Retranslating, QWidget):
    streamingChanged = Signal(bool)
    replyFinished = Signal(object)  # ReplyStats of a completed or stopped reply
    errorShown = Signal(object)  # ChatError added to the conversation

    def __init__(self, bridge: SupervisorBridge | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session: ChatSession | None = None
        self.conversation = Conversation()
        self.server_state: State | None = None  # None: no supervisor told us (a client given directly)
        self.server_model: str | None = None  # the model the server runs (None: not known, e.g. a bare client)
        self.remote: RemoteServer | None = None  # chatting with a server this app did not start (use_remote)
        self._task: Task | None = None
        self._retired: list[ChatClient] = []  # replaced while their stream ran: closed when it ends
        self._reply_entry: Entry | None = None
        self._pending_entry: Entry | None = None
        self._last_error: ChatError | None = None
        self._saved_listed = False  # the saved conversations are listed when the pane is first shown
        self._history_share = 1.0  # set_memory_short
        self._build()
        self.retranslate()
        if bridge is not None:
            self.follow_bridge(bridge)
        self._update_controls()

    # --- layout --------------------------------------------------------------------------------

    def _build(self) -> None:
        self.new_button = QPushButton(self)
        self.new_button.clicked.connect(self.new_chat)
        self.saved_combo = SavedPicker(self)
        self.saved_combo.conversationChosen.connect(self.load_saved)
        self.params_toggle = QToolButton(self)
        self.params_toggle.setCheckable(True)
        self.params_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.params_toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.params_toggle.toggled.connect(self._show_params)
        self.remote_button = QPushButton(self)
        self.remote_button.clicked.connect(lambda: ask_for_remote(self, self.use_remote))
        self.params_box = ParamsBox(self)
        self.params_box.hide()
        # a base model: text completion
        self.mode_note = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.mode_note.setObjectName("chat-mode-note")
        self.mode_note.hide()
        self.transcript = Transcript(self)
        self.meter = ContextMeter(self)
        self.status = ChatStatus(self)
        self.status.resendRequested.connect(self.resend)
        self.resend_label, self.resend_button = self.status.resend_label, self.status.resend_button
        self.input = QPlainTextEdit(self)
        self.input.setMaximumHeight(90)
        self.input.setTabChangesFocus(True)  # Tab moves on to Send, as everywhere else in the window
        self.input.installEventFilter(self)
        self.input.textChanged.connect(self._update_controls)
        self.send_button = QPushButton(self)
        self.send_button.clicked.connect(lambda: self.send())
        self.stop_button = QPushButton(self)
        self.stop_button.clicked.connect(self.stop)

        top = QHBoxLayout()
        for widget in (self.new_button, self.saved_combo, self.params_toggle):
            top.addWidget(widget)
        top.setStretch(1, 1)
        remote_row = QHBoxLayout()  # its own row: beside the others it cut the saved-conversations list at 1024 px
        remote_row.addStretch(1)
        remote_row.addWidget(self.remote_button)
        compose = QHBoxLayout()
        compose.addWidget(self.input, 1)
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        compose.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(remote_row)
        layout.addWidget(self.params_box)
        layout.addWidget(self.mode_note)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.meter)
        layout.addWidget(self.status)
        layout.addLayout(compose)

    def retranslate(self) -> None:
        self.new_button.setText(self.tr("New chat"))
        self.params_toggle.setText(self.tr("Parameters"))
        self.remote_button.setText(self.tr("Connect to a server…"))
        self.input.setPlaceholderText(self.tr("Type a message. Enter sends, Shift+Enter starts a new line."))
        self.send_button.setText(self.tr("Send"))
        self.stop_button.setText(self.tr("Stop"))
        self.params_box.retranslate()
        self.meter.retranslate()
        self.transcript.retranslate()
        self.saved_combo.retranslate()
        self.status.retranslate()
        self.mode_note.setText(render(TEXT_COMPLETION_NOTICE))
        self._update_controls()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.input and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            if (event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
                    and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier):
                self.send()
                return True
        return super().eventFilter(watched, event)


    def showEvent(self, event: QShowEvent) -> None:
        if not self._saved_listed:
            self._saved_listed = True
            self.refresh_saved()
        super().showEvent(event)

    @Slot(bool)
    def _show_params(self, shown: bool) -> None:
        self.params_box.setVisible(shown)
        self.params_toggle.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)

    # --- wiring --------------------------------------------------------------------------------

    def follow_bridge(self, bridge: SupervisorBridge) -> None:
        bridge.supervisorChanged.connect(self.set_supervisor)
        bridge.stateChanged.connect(self.set_server_state)
        if bridge.supervisor is not None:
            self.set_supervisor(bridge.supervisor)
            self.set_server_state(bridge.supervisor.state)

    def set_supervisor(self, supervisor: ChatServer | None) -> None:
        """Chat with this supervisor's server (its URL follows restarts; crashes are recognised)."""
        self.remote = None
        self.set_client(client_for_supervisor(supervisor) if supervisor is not None else None)
        config = getattr(supervisor, "config", None)
        self.follow_model(getattr(config, "model", None))

    def follow_model(self, model_path: str | None) -> None:
        """The server runs this model now: a conversation with another model is not carried on, a new one starts
        (each conversation belongs to one model; the old one stays saved)."""
        if model_path is None:
            return
        self.server_model = model_path
        if not self.conversation.belongs_to(model_path) and not self.is_streaming():
            old = self.conversation.model
            self._show_conversation(Conversation(params=self.params_box.params()))
            self.transcript.add_notice(new_model_notice(old, model_name(model_path)))
        self.conversation.set_model(model_path)

    def use_remote(self, remote: RemoteServer) -> None:
        """Chat with a server this app did not start (until the next model's server replaces it)."""
        self.set_client(client_for_remote(remote))
        self.follow_model(remote.model)
        self.set_server_state(State.READY)  # it answered just now; its failures are classified like any other
        self.remote = remote  # from now on the local server's states are not this server's

    def set_memory_short(self, short: bool) -> None:
        """The memory watchdog's warning: while memory is short, older turns are sent only within half the budget
        (fewer tokens, fewer KV cells touched); the whole conversation stays in the transcript and the file."""
        self._history_share = MEMORY_SHORT_HISTORY_SHARE if short else 1.0
        if self.session is not None:
            self.session.history_share = self._history_share

    def set_client(self, client: ChatClient | None) -> None:
        self.stop()
        old = self.session.client if self.session is not None else None
        self.session = ChatSession(client, self.conversation) if client is not None else None
        if self.session is not None:
            self.session.history_share = self._history_share
        if old is not None and old is not client:
            self._close_client(old)
        self._update_controls()

    def _close_client(self, client: ChatClient) -> None:
        """Close it now, or once the reply it streams has ended (the stream still reads from it)."""
        if self.is_streaming():
            self._retired.append(client)
        else:
            client.close()

    def _close_retired(self) -> None:
        retired, self._retired = self._retired, []
        for client in retired:
            client.close()

    @Slot(object, object)
    def set_server_state(self, state: State, change: object = None) -> None:  # change: the StateChanged (unused)
        if self.remote is not None:
            return
        self.server_state = State(state)
        if self.server_state is State.READY:  # after a crash: its sentences in the transcript are history now
            self.transcript.resolve_server_errors()
            self._ask_server_context()
        elif self.server_state is State.STOPPED:
            self.transcript.stopped_after_solved()  # "running again" would no longer be true
        self._update_controls()

    def _ask_server_context(self) -> None:
        """Every Ready (a start, a restart, a fix applied) may bring another context: forget what the last server
        said and ask this one, on a worker; the meter, the guard and the finish reasons then use its figure."""
        if self.session is None:
            return
        client = self.session.client
        client.forget_server()

        def told(info: ServerInfo) -> None:
            if self.session is not None and self.session.client is client:
                self.meter.set_ctx(info.ctx_per_slot)

        run_task(client.server_info, on_done=told, on_error=_context_unread, owner=self)

    # --- actions -------------------------------------------------------------------------------

    def is_streaming(self) -> bool:
        return self._task is not None

    def send(self, text: str | None = None) -> bool:
        text = (self.input.toPlainText() if text is None else text).strip()
        if not text or self.session is None or self.is_streaming():
            return False
        self.input.clear()
        self.session.conversation.params = self.params_box.params()
        if self._pending_entry is not None:
            self.transcript.set_status(self._pending_entry, UNANSWERED)
        self._pending_entry = self.transcript.add_message("user", text)
        self._run(lambda session: session.send(text))
        return True

    def resend(self) -> bool:
        """Send again the message left unanswered (server crash, error, or a reply stopped before it began)."""
        if self.session is None or self.is_streaming() or self.session.conversation.pending_message() is None:
            return False
        action = self._last_error.action if self._last_error is not None else None
        timeout = action.get("read_timeout_s") if action is not None and action.kind is Fix.WAIT_LONGER else None
        self.session.conversation.params = self.params_box.params()
        if self._pending_entry is not None:
            self.transcript.set_status(self._pending_entry, "")
        self._run(lambda session: session.resend_pending(read_timeout=timeout))
        return True

    def stop(self) -> None:
        """Stop the reply being streamed (non-blocking; the pane hears "done: stopped" shortly)."""
        if self.session is not None and self.is_streaming():
            self.session.stop()

    def new_chat(self) -> None:
        if self.is_streaming():
            return
        self._show_conversation(Conversation(params=self.params_box.params()))

    def refresh_saved(self) -> None:
        self.saved_combo.refresh()

    def load_saved(self, conversation_id: str) -> None:
        if not self.is_streaming():
            run_task(load_conversation, conversation_id, on_done=self._show_conversation,
                     on_error=self._on_load_failed)

    def shutdown(self) -> None:
        """Window closing: stop streaming and drop the HTTP client (non-blocking)."""
        self.stop()
        if self.session is not None:
            self._close_client(self.session.client)

    # --- streaming -----------------------------------------------------------------------------

    def _run(self, start: Start) -> None:
        session = self.session
        if session is None:
            return  # send and resend ask for a session first
        self._last_error = None
        self._reply_entry = None
        self._task = start_stream(session, start, on_event=self._on_event, on_done=self._on_stream_done,
                                  on_error=self._on_stream_failed)
        self.transcript.show_thinking()  # until the first piece of the answer
        self.streamingChanged.emit(True)
        self._update_controls()

    def _on_event(self, event: ChatEvent) -> None:
        kind = event.kind
        if kind == "delta":
            if self._reply_entry is None:
                self._reply_entry = self.transcript.begin_reply(self.conversation.model)
            self.transcript.append_delta(self._reply_entry, event.text)
        elif kind in ("trimmed", "notice", "waiting") and event.notice is not None:
            self.transcript.add_notice(event.notice)
        elif kind == "progress" and event.progress is not None:  # how far the server has read the prompt, until
            self.transcript.show_progress(event.progress)  # the first piece of the answer
        elif kind == "done":
            self._on_reply_done(event.stats)
        elif kind == "error" and event.error is not None:
            self._show_error(event.error)

    def _on_reply_done(self, stats: ReplyStats | None) -> None:
        stopped = stats is not None and stats.finish_reason == FINISH_STOPPED
        if self._reply_entry is not None:
            self.transcript.set_status(self._reply_entry, STOPPED if stopped else "")
        if stats is not None and (self._reply_entry is not None or not stopped):
            self.transcript.add_stats(stats)
        self.replyFinished.emit(stats)

    def _show_error(self, error: ChatError) -> None:
        self._last_error = error
        if self._reply_entry is not None:
            self.transcript.set_status(self._reply_entry, INTERRUPTED if self._reply_entry.content else "")
            if not self._reply_entry.content:
                self.transcript.remove_entry(self._reply_entry)
        self.transcript.add_error(error)
        self.errorShown.emit(error)

    def _on_stream_done(self, outcome: StreamOutcome) -> None:
        self._task = None
        self._close_retired()
        self.transcript.hide_thinking()
        if outcome.context is not None:
            self.meter.set_use(outcome.context)
        if self._pending_entry is not None:
            self.transcript.set_status(self._pending_entry, PENDING if outcome.pending else "")
            if not outcome.pending:
                self._pending_entry = None
        self.streamingChanged.emit(False)
        self._update_controls()
        self.refresh_saved()

    def _on_stream_failed(self, error: BaseException) -> None:
        """A bug or an unexpected failure below the session: still a sentence, never a traceback."""
        self._task = None
        self._close_retired()
        self.transcript.hide_thinking()
        self.transcript.add_notice(self.tr("The chat stopped because of an unexpected problem: {error}").format(
            error=error))
        self.streamingChanged.emit(False)
        self._update_controls()

    # --- rendering helpers ---------------------------------------------------------------------

    def _show_conversation(self, conversation: Conversation) -> None:
        if self.is_streaming():
            return
        self.conversation = conversation
        if self.session is not None:
            self.session.conversation = conversation
        self.params_box.set_params(conversation.params)
        self.transcript.clear_all()
        self._pending_entry = self._reply_entry = self._last_error = None
        pending = conversation.pending_message()
        for message in conversation.messages:
            entry = self.transcript.add_message(message.role, message.content, message.status, message.model)
            if message.role == "assistant" and message.stats:
                self.transcript.add_stats(message.stats)
            if message is pending:
                self._pending_entry = entry
        if self.server_model is not None and not conversation.belongs_to(self.server_model):
            self.transcript.add_notice(other_model_notice(conversation.model, model_name(self.server_model)))
        conversation.set_model(self.server_model)
        self.meter.set_use(None)
        self._update_controls()

    def _on_load_failed(self, error: BaseException) -> None:
        self.transcript.add_notice(self.tr("This conversation could not be opened: {error}").format(error=error))

    def _server_up(self) -> bool:
        """The server this pane chats with is running or on its way; a stopped one answers nothing, and the Model
        step may already show another model (its own kind of chat comes with its server)."""
        return self.remote is not None or self.server_state is None or self.server_state not in IDLE_STATES

    def _update_controls(self) -> None:
        session = self.session
        streaming, connected = self.is_streaming(), session is not None
        has_text = bool(self.input.toPlainText().strip())
        self.send_button.setEnabled(connected and not streaming and has_text)
        self.stop_button.setEnabled(streaming)
        self.new_button.setEnabled(not streaming)
        self.saved_combo.setEnabled(not streaming)
        pending = session is not None and not streaming and session.conversation.pending_message() is not None
        client = session.client if session is not None else None
        self.mode_note.setVisible(isinstance(client, ChatClient) and client.text_completion and self._server_up())
        self.status.show_for(pending, connected, self.server_state, self._last_error)
