"""The one request an attempt sends: a prompt of at least one micro-batch of tokens, then a few generated tokens.

Evaluating a full micro-batch makes the server touch its compute buffer the way real prompts do;
a tiny "hello" would pass a load that the first long message then breaks (llama.cpp #18354).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where a request is sent: reading a stored probe result must not load httpx
    import httpx

CHUNK = "The quick brown fox jumps over the lazy dog while seven wizards quietly judge boxing matches. "
# enough generated tokens for a generation speed to mean something (the probe compares placements by it), few enough
# to cost well under a second on the models the probe is for
GENERATED_TOKENS = 16


@dataclass(frozen=True)
class Evaluation:
    """What the test request proved: the prompt's token count, and the speeds the server measured (None when it does
    not report them: llama-cpp-python's server has no timings)."""

    prompt_tokens: int
    prompt_tps: float | None = None
    generation_tps: float | None = None
    generated_tokens: int | None = None  # how many tokens the generation speed was measured on


def _rate(timings: Any, key: str) -> float | None:
    value = timings.get(key) if isinstance(timings, dict) else None
    return round(float(value), 2) if isinstance(value, (int, float)) and value > 0 else None


def read_speeds(answer: Any, prompt_tokens: int) -> Evaluation:
    """llama-server's ``timings`` block (prompt_per_second, predicted_per_second, predicted_n) of a completion
    answer."""
    timings = answer.get("timings") if isinstance(answer, dict) else None
    predicted = timings.get("predicted_n") if isinstance(timings, dict) else None
    return Evaluation(prompt_tokens, _rate(timings, "prompt_per_second"), _rate(timings, "predicted_per_second"),
                      predicted if isinstance(predicted, int) and predicted > 0 else None)


class RequestFailed(Exception):
    """The test prompt failed. ``str()`` is the raw detail for the app's log (it may name an exception class, so it
    never goes into a sentence); ``kind`` says how, for the sentence: "gone" (the connection broke), "timeout",
    "http" (an error answer: ``status`` and the server's own ``server_message``) or "answer" (unreadable)."""

    def __init__(self, detail: str, *, kind: str, status: int | None = None, server_message: str = "") -> None:
        super().__init__(detail)
        self.kind, self.status, self.server_message = kind, status, server_message

    @property
    def server_gone(self) -> bool:  # the connection broke: the server probably died
        return self.kind == "gone"


def _server_message(response: httpx.Response) -> str:
    """What an error answer says: llama-server's {"error": {"message": ...}}, else the start of the body."""
    try:
        error = response.json().get("error")
        message = error.get("message") if isinstance(error, dict) else error
    except (ValueError, AttributeError):
        message = None
    return str(message or response.text).strip().replace("\n", " ")[:300]


def _tokenize(client: httpx.Client, url: str, path: str, text: str) -> int:
    body = {"content": text} if path == "/tokenize" else {"input": text}
    response = client.post(url + path, json=body)
    response.raise_for_status()
    return len(response.json()["tokens"])


def build_prompt(client: httpx.Client, url: str, tokenize_path: str, target_tokens: int) -> tuple[str, int]:
    """Text of close to ``target_tokens`` tokens (never more), measured with the server's own tokenizer."""
    per_chunk = max(_tokenize(client, url, tokenize_path, CHUNK), 1)
    text = CHUNK * (target_tokens // per_chunk + 2)
    count = _tokenize(client, url, tokenize_path, text)
    for _ in range(6):  # trim proportionally; converges in one or two rounds for any tokenizer
        if count <= target_tokens:
            break
        text = text[: max(int(len(text) * target_tokens / count * 0.995), 1)]
        count = _tokenize(client, url, tokenize_path, text)
    return text, count


def prompt_target(ubatch: int, ctx: int) -> int:
    """At least one micro-batch, but leave room for the generated tokens and a few specials."""
    return max(min(ubatch + 16, ctx - GENERATED_TOKENS - 8), 1)


def evaluate_once(url: str, tokenize_path: str, ubatch: int, ctx: int, timeout_s: float, *,
                  ignore_eos: bool = False, api_key: str | None = None) -> Evaluation:
    """Send one long prompt and generate a few tokens; returns the prompt's token count and the measured speeds.
    ``ignore_eos`` (llama-server only) makes it generate all of them, so speeds compare like with like."""
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    with httpx.Client(timeout=timeout_s, trust_env=False, headers=headers) as client:
        try:
            text, n_tokens = build_prompt(client, url, tokenize_path, prompt_target(ubatch, ctx))
            response = client.post(url + "/v1/completions", json={
                "prompt": text, "max_tokens": GENERATED_TOKENS, "temperature": 0.0,
            } | ({"ignore_eos": True} if ignore_eos else {}))
        except httpx.HTTPStatusError as error:  # the tokenizer answered with an error
            raise RequestFailed(f"HTTP {error.response.status_code}: {error.response.text[:300]}", kind="http",
                                status=error.response.status_code,
                                server_message=_server_message(error.response)) from error
        except (httpx.HTTPError, KeyError, ValueError) as error:
            kind = "timeout" if isinstance(error, httpx.TimeoutException) else (
                "gone" if isinstance(error, httpx.TransportError) else "answer")
            raise RequestFailed(f"{type(error).__name__}: {error}", kind=kind) from error
    if response.status_code != 200:
        raise RequestFailed(f"HTTP {response.status_code}: {response.text[:300]}", kind="http",
                            status=response.status_code, server_message=_server_message(response))
    try:
        answer = response.json()
        choices = answer["choices"]
    except (KeyError, TypeError, ValueError) as error:
        raise RequestFailed(f"unexpected answer: {response.text[:300]}", kind="answer") from error
    if not choices:
        raise RequestFailed("the answer had no choices", kind="answer")
    return read_speeds(answer, n_tokens)
