"""Classified chat failures: every problem a chat can meet becomes one typed value with a plain sentence.

The field report behind this product saw every failure come back as the same bare "500". Here each kind of
failure has its own sentence (English and Chinese), a next step, the request id to find it in the server log,
and the evidence (HTTP body, log lines) for anyone who wants to dig.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.diagnosis.value import Diagnosis, fix_to_dict
from app.core.problem import Fix, FixAction, JsonKeys, fix_action, problem_json
from app.core.text import T, Text

CONTEXT_TOO_LONG = "context_too_long"
LOADING = "loading"
AUTH = "auth"
SERVER_CRASHED = "server_crashed"
UNREACHABLE = "unreachable"
TOO_SLOW = "too_slow"
SERVER_ERROR = "server_error"
MALFORMED = "malformed"
BUSY = "busy"
KINDS = (CONTEXT_TOO_LONG, LOADING, AUTH, SERVER_CRASHED, UNREACHABLE, TOO_SLOW, SERVER_ERROR, MALFORMED, BUSY)


@dataclass
class ChatError(Exception):
    """One classified chat failure (a Problem); ``diagnosis`` is the supervisor's crash Diagnosis for a crash.

    ``action`` is the fix a UI can apply (``Fix.WAIT_LONGER`` with ``read_timeout_s=240``).
    """

    kind: str
    message: Text
    next_step: Text
    request_id: str | None = None
    evidence: tuple[str, ...] = ()
    diagnosis: Diagnosis | None = None
    action: FixAction | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown ChatError kind {self.kind!r}")
        super().__init__(self.message.render("en"))

    def __str__(self) -> str:
        return self.message.render()

    def to_dict(self, lang: str | None = None) -> dict[str, Any]:
        diagnosis = self.diagnosis.to_dict(lang) if self.diagnosis is not None else None
        return {"kind": self.kind, "request_id": self.request_id, **problem_json(self, lang, CHAT_ERROR_JSON),
                "diagnosis": diagnosis, "details": dict(self.details)}


def _action_json(action: FixAction | None) -> dict[str, Any] | None:
    """The JSON "fix_action": a crash's fix keeps its diagnosis' shape ({"ctx": 2048}), as it always had."""
    if action is None:
        return None
    if action.kind in (Fix.CHANGE_SETTINGS, Fix.REBUILD_ENGINE):
        return fix_to_dict(action)
    return action.to_dict()


CHAT_ERROR_JSON = JsonKeys(next_step="next_step", action="fix_action", action_json=_action_json)


def message_too_long(message_tokens: int, budget_tokens: int, ctx_per_slot: int, max_tokens: int,
                     request_id: str | None = None) -> ChatError:
    return ChatError(
        CONTEXT_TOO_LONG,
        T("Your message is {tokens} tokens long, but only {budget} tokens fit in the model's context "
          "({ctx} tokens, minus {max_tokens} reserved for the answer and a safety margin).",
          "您的消息有 {tokens} 个 token，但模型上下文只能容纳 {budget} 个"
          "（共 {ctx} 个，需为回答预留 {max_tokens} 个并保留安全余量）。",
          tokens=message_tokens, budget=budget_tokens, ctx=ctx_per_slot, max_tokens=max_tokens),
        T("Send a shorter message, lower the maximum answer length, or restart the model with a larger "
          "context that the memory plan says fits.",
          "请发送更短的消息、调低回答最大长度，或按内存规划选择一个放得下的更大上下文后重启模型。"),
        request_id=request_id,
        action=fix_action(Fix.LARGER_CONTEXT, needed_tokens=message_tokens + max_tokens),
        details={"message_tokens": message_tokens, "budget_tokens": budget_tokens,
                 "ctx_per_slot": ctx_per_slot, "max_tokens": max_tokens},
    )


def no_room_for_answer(ctx_per_slot: int, max_tokens: int) -> ChatError:
    return ChatError(
        CONTEXT_TOO_LONG,
        T("The maximum answer length ({max_tokens} tokens) leaves no room for your message in the model's "
          "context ({ctx} tokens).",
          "回答最大长度（{max_tokens} 个 token）占满了模型上下文（{ctx} 个 token），消息已无处容纳。",
          max_tokens=max_tokens, ctx=ctx_per_slot),
        T("Lower the maximum answer length, or restart the model with a larger context.",
          "请调低回答最大长度，或以更大的上下文重启模型。"),
        details={"ctx_per_slot": ctx_per_slot, "max_tokens": max_tokens},
    )


def loading(request_id: str | None, waited_s: float, evidence: tuple[str, ...] = ()) -> ChatError:
    return ChatError(
        LOADING,
        T("The model is still loading; waited {seconds:.0f} s for it.",
          "模型仍在加载中，已等待 {seconds:.0f} 秒。", seconds=waited_s),
        T("Wait until the status shows the model is ready, then send again.",
          "请等待状态显示模型已就绪后再发送。"),
        request_id=request_id, evidence=evidence,
    )


def auth(request_id: str | None, evidence: tuple[str, ...] = (), *, url: str | None = None,
         key_given: bool | None = None, status: int = 401) -> ChatError:
    """HTTP 401/403. With the address known, the sentence says which server and whether a key was sent at all."""
    details = {"status": status}
    if url is not None and not key_given:
        return ChatError(
            AUTH, T("The server at {url} wants an API key.", "{url} 的服务器需要 API 密钥。", url=url),
            T("Ask whoever runs that server for its API key and enter it, then connect again.",
              "请向该服务器的管理者索取 API 密钥并填入，然后重新连接。"),
            request_id=request_id, evidence=evidence, details=details)
    if url is not None:
        return ChatError(
            AUTH, T("The server at {url} refused this API key.", "{url} 的服务器拒绝了这个 API 密钥。", url=url),
            T("Check the key for typing mistakes (copy it again from where it was shown), then connect again.",
              "请检查密钥是否有误（从显示它的地方重新复制），然后重新连接。"),
            request_id=request_id, evidence=evidence, details=details)
    return ChatError(
        AUTH,
        T("The server refused the API key (HTTP {status}).", "服务器拒绝了 API 密钥（HTTP {status}）。", status=status),
        T("Use the same API key that the server was started with, or start it without one.",
          "请使用与服务器启动时相同的 API 密钥，或不设密钥重新启动。"),
        request_id=request_id, evidence=evidence, details=details,
    )


def busy(request_id: str | None, retry_after_s: int | None, evidence: tuple[str, ...] = ()) -> ChatError:
    """HTTP 429: a shared server answers as many requests at once as it has slots and turns the rest away."""
    seconds = max(1, int(retry_after_s or 5))
    return ChatError(
        BUSY,
        T("The server is busy answering other requests; try again in {seconds} s.",
          "服务器正忙于回答其他请求；请在 {seconds} 秒后重试。", seconds=seconds),
        T("Your message is kept; send it again in a moment.", "您的消息已保留，稍后再发送即可。"),
        request_id=request_id, evidence=evidence, details={"retry_after_s": seconds},
    )


def server_crashed(request_id: str | None, diagnosis: Diagnosis | None, evidence: tuple[str, ...] = ()) -> ChatError:
    if diagnosis is None:
        return ChatError(
            SERVER_CRASHED, T("The model server stopped while answering.", "模型服务器在回答时停止了。"),
            T("Your message is kept; send it again once the server is back.",
              "您的消息已保留，服务器恢复后可重新发送。"),
            request_id=request_id, evidence=evidence)
    return ChatError(SERVER_CRASHED, diagnosis.message, diagnosis.next_step, request_id=request_id,
                     evidence=evidence, diagnosis=diagnosis, action=diagnosis.action)


def unreachable(request_id: str | None, url: str, evidence: tuple[str, ...] = ()) -> ChatError:
    return ChatError(
        UNREACHABLE,
        T("Nothing answers at {url}: the model server is not running or the address is wrong.",
          "{url} 没有响应：模型服务器未运行或地址有误。", url=url),
        T("Start the model (or check the address), then send again; your message is kept.",
          "请先启动模型（或检查地址），然后重新发送；您的消息已保留。"),
        request_id=request_id, evidence=evidence,
    )


def too_slow(request_id: str | None, read_timeout_s: float) -> ChatError:
    return ChatError(
        TOO_SLOW,
        T("The server sent nothing for {seconds:.0f} s. It is still running, just slow (a long prompt or a "
          "model that runs mostly on the CPU).",
          "服务器 {seconds:.0f} 秒内没有任何输出。它仍在运行，只是很慢（提示很长，或模型主要在 CPU 上运行）。",
          seconds=read_timeout_s),
        T("Wait longer: send again with a longer timeout. For faster answers, put more layers on the GPU or "
          "use a smaller model.",
          "可以延长等待时间后重新发送。若想更快，请把更多层放到 GPU 上，或换用更小的模型。"),
        request_id=request_id,
        action=fix_action(Fix.WAIT_LONGER, read_timeout_s=max(60.0, read_timeout_s * 2)),
        details={"read_timeout_s": read_timeout_s},
    )


def server_error(request_id: str | None, status: int, server_message: str,
                 log_lines: tuple[str, ...] = ()) -> ChatError:
    return ChatError(
        SERVER_ERROR,
        T("The server failed to answer (HTTP {status}): {detail}",
          "服务器未能回答（HTTP {status}）：{detail}", status=status, detail=server_message or "-"),
        T("Look at the last server log lines below; if it repeats, restart the model.",
          "请查看下方最后几行服务器日志；如果反复出现，请重启模型。"),
        request_id=request_id, evidence=log_lines, details={"status": status},
    )


def malformed(request_id: str | None, what: str, evidence: tuple[str, ...] = ()) -> ChatError:
    return ChatError(
        MALFORMED,
        T("The server sent a reply this app cannot read ({what}).", "服务器返回了无法解析的回复（{what}）。",
          what=what),
        T("Check that the address points to a llama.cpp or llama-cpp-python server, then send again.",
          "请确认地址指向 llama.cpp 或 llama-cpp-python 服务器，然后重新发送。"),
        request_id=request_id, evidence=evidence,
    )
