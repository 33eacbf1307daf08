"""What the app knows about a server it did not start: where, which kind, its real context, its models."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.chat.client import BACKEND_LLAMA_SERVER, ChatClient
from app.core.text import T, Text

LLAMA_SERVER = "llama-server"
OLLAMA = "ollama"
LM_STUDIO = "lm-studio"
GENERIC = "openai-compatible"
KIND_NAMES = {LLAMA_SERVER: "llama.cpp (llama-server)", OLLAMA: "Ollama", LM_STUDIO: "LM Studio",
              GENERIC: "OpenAI-compatible"}
# A server that does not say its context is guarded as if it had this many tokens per request: Ollama's smallest
# default (2048 before 2025, 4096 on cards under 24 GiB since) and llama-cpp-python's --n_ctx default. Ollama
# truncates a longer prompt without an error, so guessing high would silently lose the start of the chat.
UNKNOWN_CTX_GUARD = 2048

# where the context figure came from (RemoteServer.ctx_source)
FROM_PROPS = "props"  # llama-server GET /props default_generation_settings.n_ctx (per slot)
FROM_SLOTS = "slots"  # llama-server GET /slots [].n_ctx
FROM_MODELS_META = "models_meta"  # llama-server GET /v1/models data[].meta.n_ctx (newer builds)
FROM_LM_STUDIO = "lm_studio_loaded"  # LM Studio GET /api/v0/models data[].loaded_context_length
FROM_OLLAMA_PS = "ollama_ps"  # Ollama GET /api/ps models[].context_length (what the loaded runner holds)
FROM_OLLAMA_NUM_CTX = "ollama_num_ctx"  # Ollama POST /api/show "parameters": "num_ctx N" (the Modelfile's)


@dataclass(frozen=True)
class RemoteServer:
    url: str  # base address without a trailing /v1
    api_key: str | None = field(default=None, repr=False)  # never in a repr, a log line or a report
    kind: str = GENERIC
    ctx: int | None = None  # tokens one request may use; None: the server did not say
    ctx_source: str | None = None
    trained_ctx: int | None = None  # the model's own maximum (GGUF metadata), for information only
    models: tuple[str, ...] = ()
    model: str | None = None  # the one the chat uses
    total_slots: int = 1

    @property
    def kind_name(self) -> str:
        return KIND_NAMES.get(self.kind, self.kind)

    @property
    def guard_ctx(self) -> int:
        """The context the chat's guard works with: the server's own figure, else a conservative one."""
        return self.ctx or min(UNKNOWN_CTX_GUARD, self.trained_ctx or UNKNOWN_CTX_GUARD)

    def summary(self) -> Text:
        """One sentence for the window and the CLI: what answers and how much context it gives."""
        model = self.model or "-"
        if self.ctx:
            return T("{kind} at {url}, model {model}: {ctx} tokens of context per request (read from the server).",
                     "{url} 上的 {kind}，模型 {model}：每个请求 {ctx} 个 token 的上下文（从服务器读取）。",
                     kind=self.kind_name, url=self.url, model=model, ctx=self.ctx)
        return T("{kind} at {url}, model {model}: the server does not say how large its context is, so the chat "
                 "sends at most {guard} tokens per request.",
                 "{url} 上的 {kind}，模型 {model}：服务器没有说明上下文大小，"
                 "因此聊天每个请求最多发送 {guard} 个 token。",
                 kind=self.kind_name, url=self.url, model=model, guard=self.guard_ctx)

    def with_model(self, model: str) -> RemoteServer:
        """Another of its models. Ollama and LM Studio said the context of the loaded one only: for another it is
        not known (guarded low) until asked again."""
        from dataclasses import replace

        if model == self.model or self.kind not in (OLLAMA, LM_STUDIO):
            return replace(self, model=model)
        return replace(self, model=model, ctx=None, ctx_source=None, trained_ctx=None)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe, without the key (only whether there is one)."""
        return {"url": self.url, "kind": self.kind, "ctx": self.ctx, "ctx_source": self.ctx_source,
                "guard_ctx": self.guard_ctx, "trained_ctx": self.trained_ctx, "models": list(self.models),
                "model": self.model, "total_slots": self.total_slots, "api_key_set": bool(self.api_key)}


def client_for_remote(remote: RemoteServer, **options: Any) -> ChatClient:
    """The chat's client for a remote server: its key, its model, and its context (or the conservative guard)."""
    # a server of no known kind is talked to as before (None: llama-cpp-python's routes are tried)
    backend = {LLAMA_SERVER: BACKEND_LLAMA_SERVER, GENERIC: None}.get(remote.kind, remote.kind)
    return ChatClient(remote.url, api_key=remote.api_key, backend=backend, ctx_per_slot=remote.guard_ctx,
                      model=remote.model, **options)
