"""Plain text completion for a base model (one without a chat template).

Such a model was never taught to answer in turns: through the chat endpoint the server lays the messages out in a
template the model does not know (llama-server falls back to ChatML), and the model writes that template's tokens
back. So the chat sends the transcript as one text to continue instead: llama-server's ``/completion`` (``prompt``,
``n_predict``; chunks carry ``content`` and, last, ``stop`` with ``stop_type``), llama-cpp-python's
``/v1/completions`` (``prompt``, ``max_tokens``; chunks carry ``choices[0].text``).
"""

from __future__ import annotations

import logging
from functools import lru_cache
from pathlib import Path
from typing import Any

from app.core.text import T

CHAT, TEXT = "chat", "text"
LLAMA_SERVER_PATH, EMBEDDED_PATH = "/completion", "/v1/completions"
TEXT_COMPLETION_NOTICE = T("Text completion: this model continues what you write.",
                           "文本续写：该模型会接着您写的内容继续写下去。")
_STOP_TYPES = {"limit": "length", "eos": "stop", "word": "stop"}  # llama-server's stop_type -> finish_reason
logger = logging.getLogger(__name__)


def chat_mode(has_chat_template: bool | None) -> str:
    """TEXT for a model that says it has no chat template; CHAT when it has one or nobody knows."""
    return TEXT if has_chat_template is False else CHAT


def model_chat_mode(model_path: str | None) -> str:
    """The chat mode of the model file at ``model_path`` (its header is read once per file version)."""
    if not model_path:
        return CHAT
    try:
        stat = Path(model_path).stat()
    except OSError:
        return CHAT
    return _mode_of(str(model_path), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=16)
def _mode_of(path: str, _size: int, _mtime_ns: int) -> str:
    from app.core.gguf.errors import GGUFError
    from app.core.gguf.reader import read_model_info

    try:
        return chat_mode(read_model_info(path).has_chat_template)
    except (GGUFError, OSError):
        logger.info("could not read %s for its chat template: chatting as usual", path, exc_info=True)
        return CHAT


def completion_prompt(messages: list[dict[str, str]]) -> str:
    """The transcript as one text: the model's continuations follow what came before them directly, each new
    piece the user writes starts on a new line."""
    text = ""
    for message in messages:
        content = message.get("content") or ""
        if message.get("role") == "assistant" or not text:
            text += content
        else:
            text += "\n" + content
    return text


def completion_request(llama_server: bool, messages: list[dict[str, str]], fields: dict[str, Any],
                       stream: bool) -> tuple[str, dict[str, Any]]:
    """(path, body) of a completion request; ``fields`` are the chat request's sampling fields."""
    body = {"prompt": completion_prompt(messages), "stream": stream, **fields}
    if llama_server:
        body["n_predict"] = body.pop("max_tokens")
        return LLAMA_SERVER_PATH, body
    return EMBEDDED_PATH, body


def completion_piece(payload: dict[str, Any]) -> tuple[str, str | None]:
    """(text, finish reason or None) of one streamed completion chunk, from either server."""
    choices = payload.get("choices")
    if isinstance(choices, list):
        choice = choices[0] if choices else {}
        return choice.get("text") or "", choice.get("finish_reason")
    finish = None
    if payload.get("stop"):
        finish = _STOP_TYPES.get(str(payload.get("stop_type")), "stop")
    return payload.get("content") or "", finish


def completion_usage(payload: dict[str, Any]) -> dict[str, int] | None:
    """``usage`` of a completion reply; llama-server's own format says it as tokens_evaluated / tokens_predicted."""
    usage = payload.get("usage")
    if isinstance(usage, dict) and usage.get("prompt_tokens") is not None:
        return usage
    if payload.get("tokens_evaluated") is not None:
        return {"prompt_tokens": int(payload["tokens_evaluated"]),
                "completion_tokens": int(payload.get("tokens_predicted") or 0)}
    return None
