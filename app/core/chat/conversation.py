"""Conversations and where they are kept: ``data_dir()/conversations/<id>.json``, written atomically.

Nothing the user typed is lost: a user message is saved as ``pending`` before it is sent and becomes
``answered`` only when the answer completed. An answer cut short by a crash or error stays visible as
``interrupted`` (it is not sent back to the model); one the user stopped is ``stopped`` (it is).

A conversation belongs to a model (``model_path``, set when the first server answers it); every answer records the
model that wrote it (``Message.model``, its file name), so a transcript can say so even after a model switch.
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from app.core.atomic import write_json_atomic
from app.core.bounded_json import read_json
from app.core.chat.params import ChatParams
from app.core.paths import data_dir
from app.core.text import T, Text

PENDING, ANSWERED, UNANSWERED = "pending", "answered", "unanswered"  # user messages
STREAMING, COMPLETE, STOPPED, INTERRUPTED = "streaming", "complete", "stopped", "interrupted"  # answers
_SENT_TO_MODEL = {ANSWERED, COMPLETE, STOPPED}
FORMAT_VERSION = 1


@dataclass
class Message:
    role: str
    content: str
    status: str
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    created: float = field(default_factory=time.time)
    stats: dict[str, Any] | None = None
    model: str | None = None  # an answer: the file name of the model that wrote it

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


@dataclass
class Conversation:
    id: str = field(default_factory=lambda: time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6])
    title: str = ""
    params: ChatParams = field(default_factory=ChatParams)
    messages: list[Message] = field(default_factory=list)
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    model_path: str | None = None  # the model this conversation is with (None: no server answered it yet)

    @property
    def model(self) -> str | None:
        """The model's file name, as answers and the window title show it."""
        return model_name(self.model_path)

    def belongs_to(self, model_path: str | None) -> bool:
        """True when ``model_path`` may carry on this conversation: it is its model, or nothing was said yet."""
        if model_path is None or self.model_path is None or not self.messages:
            return True
        return _same_file(self.model_path, model_path)

    def set_model(self, model_path: str | None) -> None:
        """The server answering from now on runs this model (kept when None: no server is no other model)."""
        if model_path is not None:
            self.model_path = model_path

    def add(self, role: str, content: str, status: str) -> Message:
        message = Message(role, content, status, model=self.model if role == "assistant" else None)
        self.messages.append(message)
        if role == "user" and not self.title:
            self.title = content.strip().splitlines()[0][:60] if content.strip() else ""
        return message

    def pending_message(self) -> Message | None:
        """The last user message if it still waits for an answer (it can be re-sent)."""
        for message in reversed(self.messages):
            if message.role == "user":
                return message if message.status == PENDING else None
        return None

    def history_for_model(self) -> list[dict[str, str]]:
        """What the model should see: system prompt, completed turns, and the pending message last."""
        history = [{"role": "system", "content": self.params.system_prompt}] if self.params.system_prompt else []
        pending = self.pending_message()
        for message in self.messages:
            if message.status in _SENT_TO_MODEL or message is pending:
                history.append({"role": message.role, "content": message.content})
        return history

    def to_dict(self) -> dict[str, Any]:
        return {"version": FORMAT_VERSION, "id": self.id, "title": self.title, "params": self.params.to_dict(),
                "created": self.created, "updated": self.updated, "model_path": self.model_path,
                "messages": [asdict(m) for m in self.messages]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Conversation:
        conversation = cls(id=data["id"], title=data.get("title", ""), params=ChatParams.from_dict(data.get("params")),
                           messages=[Message.from_dict(m) for m in data.get("messages", [])],
                           created=data.get("created", time.time()), updated=data.get("updated", time.time()),
                           model_path=data.get("model_path") if isinstance(data.get("model_path"), str) else None)
        for message in conversation.messages:  # the app stopped while this answer streamed
            if message.status == STREAMING:
                message.status = INTERRUPTED
        return conversation


def model_name(model_path: str | None) -> str | None:
    """A model's name as the window shows it: its file name."""
    return os.path.basename(model_path) if model_path else None


def new_model_notice(old: str | None, new: str | None) -> Text:
    """The server now runs another model, so the chat starts a new conversation with it."""
    return T("A new conversation with {new}. The one with {old} is kept with your saved conversations.",
             "已开始与 {new} 的新对话。与 {old} 的对话已保存在已保存的对话中。", new=new or "?", old=old or "?")


def other_model_notice(old: str | None, new: str | None) -> Text:
    """A saved conversation with one model is opened while the server runs another."""
    return T("This conversation was with {old}; from now on {new} answers.",
             "这段对话原来是与 {old} 进行的；从现在起由 {new} 回答。", new=new or "?", old=old or "?")


def _same_file(a: str, b: str) -> bool:
    return os.path.abspath(os.path.expanduser(a)) == os.path.abspath(os.path.expanduser(b))


def conversations_dir() -> Path:
    path = data_dir() / "conversations"
    path.mkdir(parents=True, exist_ok=True)
    return path


def save_conversation(conversation: Conversation, directory: Path | None = None) -> Path:
    conversation.updated = time.time()
    path = (directory or conversations_dir()) / f"{conversation.id}.json"
    write_json_atomic(path, conversation.to_dict())
    return path


MAX_CONVERSATION_BYTES = 64 * 1024 * 1024  # a very long chat; a FIFO or /dev/zero is refused


def load_conversation(conversation_id: str, directory: Path | None = None) -> Conversation:
    path = (directory or conversations_dir()) / f"{conversation_id}.json"
    return Conversation.from_dict(read_json(path, max_bytes=MAX_CONVERSATION_BYTES))


def list_conversations(directory: Path | None = None) -> list[dict[str, Any]]:
    """Newest first: id, title, updated, message count. Unreadable files are skipped, never fatal."""
    items = []
    for path in (directory or conversations_dir()).glob("*.json"):
        try:
            data = read_json(path, max_bytes=MAX_CONVERSATION_BYTES)
        except (OSError, ValueError):
            continue
        items.append({"id": data.get("id", path.stem), "title": data.get("title", ""),
                      "updated": data.get("updated", 0), "messages": len(data.get("messages", [])),
                      "model": model_name(data.get("model_path") if isinstance(data.get("model_path"), str) else None)})
    return sorted(items, key=lambda item: item["updated"], reverse=True)
