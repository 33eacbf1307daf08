"""Chat with a server this app did not start: another llama-server, Ollama, LM Studio, any OpenAI-compatible one.

``connect(url, api_key)`` asks the server who it is and how large its context really is (a ``RemoteServer``);
``client_for_remote(remote)`` gives the chat's usual ``ChatClient`` for it, with the same guard and error classes."""

from app.core.remote.detect import connect, normalize_url
from app.core.remote.server import (
    GENERIC,
    LLAMA_SERVER,
    LM_STUDIO,
    OLLAMA,
    UNKNOWN_CTX_GUARD,
    RemoteServer,
    client_for_remote,
)

__all__ = ["GENERIC", "LLAMA_SERVER", "LM_STUDIO", "OLLAMA", "UNKNOWN_CTX_GUARD", "RemoteServer", "client_for_remote",
           "connect", "normalize_url"]
