"""Chat core (no Qt): streaming client, context guard, classified errors, saved conversations, self-test.

The GUI chat pane and ``gguf-launcher selftest`` both go through :class:`ChatSession`.
"""

from app.core.chat.client import BACKEND_EMBEDDED, BACKEND_LLAMA_SERVER, ChatClient, ServerInfo
from app.core.chat.conversation import Conversation, Message, list_conversations, load_conversation
from app.core.chat.errors import ChatError
from app.core.chat.params import ChatParams, ReplyStats
from app.core.chat.session import ChatEvent, ChatSession

__all__ = ["BACKEND_EMBEDDED", "BACKEND_LLAMA_SERVER", "ChatClient", "ChatError", "ChatEvent", "ChatParams",
           "ChatSession", "Conversation", "Message", "ReplyStats", "ServerInfo", "list_conversations",
           "load_conversation"]
