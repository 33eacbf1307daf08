"""Ask a demo model the question people ask it, with the built-in engine, at temperature 0, in a child process.

A 135M model's greedy answer depends on the processor's kernels: on AVX-512 the Q4_1 file answers "What is the
capital of France?" with "L'Étoile, la Cité, …", an F16 copy of the same weights with "…Paris". So the demo
copy is judged by asking, not by its checksum. The child loads the file with llama-cpp-python (the file's own
chat template, as the built-in server uses it) and prints one JSON line; a crash ends only the child.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.core.process.frozen import child_argv

log = logging.getLogger(__name__)

QUESTION = "What is the capital of France?"
EXPECTED = "Paris"
MAX_TOKENS = 32
CTX = 512
TIMEOUT_S = 300.0
_ROOT = Path(__file__).resolve().parents[3]  # the folder holding the app package: the child imports app from it


@dataclass(frozen=True)
class AnswerCheck:
    """The question, the answer (None when the engine gave none: ``detail`` says why) and how long it took."""

    question: str
    answer: str | None
    seconds: float
    detail: str = ""
    tokens_per_s: float | None = None

    @property
    def passed(self) -> bool:
        return self.answer is not None and EXPECTED.lower() in self.answer.lower()

    def to_dict(self) -> dict:
        return {"question": self.question, "answer": self.answer, "passed": self.passed, "detail": self.detail,
                "seconds": round(self.seconds, 2), "tokens_per_s": self.tokens_per_s}


class AskCancelled(Exception):
    """The caller cancelled while the engine was answering; the child was stopped."""


def ask_capital(model: str | os.PathLike[str], *, threads: int = 1, cancel: Callable[[], bool] | None = None,
                timeout_s: float = TIMEOUT_S, python: str | None = None) -> AnswerCheck:
    """Ask ``model`` QUESTION with the built-in engine; raises AskCancelled when ``cancel`` says so.

    One thread by default, for the prompt too (llama-cpp-python's n_threads_batch defaults to every core): a few
    dozen tokens need no more, and llama.cpp's threads spin-wait for each other, so on a busy 2-core machine the
    answer took 2-9 s with two threads for the prompt and 0.6 s with one."""
    from app.core.process.child import ChildProcess

    started = time.monotonic()
    lines: deque[tuple[str, str]] = deque(maxlen=200)
    done = threading.Event()
    argv = child_argv("demo-answer", [str(model), str(threads)], python)
    try:
        child = ChildProcess(argv, on_line=lambda stream, text: lines.append((stream, text)),
                             on_exit=lambda *_: done.set(), cwd=str(_ROOT), register=False)
    except OSError as error:
        return AnswerCheck(QUESTION, None, time.monotonic() - started, f"the engine could not be started: {error}")
    try:
        while True:
            finished = done.wait(0.2)
            if cancel is not None and cancel():  # also when the answer came within this wait: a cancel wins
                raise AskCancelled
            if finished:
                break
            if time.monotonic() - started > timeout_s:
                return AnswerCheck(QUESTION, None, time.monotonic() - started, f"no answer within {timeout_s:.0f} s")
    finally:
        if child.running:
            child.stop(grace_s=1.0)
    return _parse(list(lines), child.returncode, time.monotonic() - started)


def _parse(lines: list[tuple[str, str]], returncode: int | None, seconds: float) -> AnswerCheck:
    for stream, text in reversed(lines):
        if stream == "stdout" and text.startswith("{"):
            try:
                data = json.loads(text)
                return AnswerCheck(QUESTION, data["answer"], seconds, "", data.get("tokens_per_s"))
            except (ValueError, KeyError, TypeError):
                log.warning("unreadable answer line from the engine: %r", text)
    from app.core.process.exit_status import decode_exit_status

    signal = decode_exit_status(returncode).signal if returncode is not None else None
    last = next((text for stream, text in reversed(lines) if stream == "stderr" and text.strip()), "")
    how = f"exit status {returncode}" + (f", {signal}" if signal else "")
    return AnswerCheck(QUESTION, None, seconds, f"the engine stopped without an answer ({how}) {last}".strip())


# --- the child side -------------------------------------------------------------------------------------------


def _child(argv: list[str]) -> int:
    path, threads = argv
    import llama_cpp

    llm = llama_cpp.Llama(model_path=path, n_ctx=CTX, n_threads=int(threads), n_threads_batch=int(threads), seed=0,
                          verbose=False)
    started = time.monotonic()
    out = llm.create_chat_completion(messages=[{"role": "user", "content": QUESTION}], temperature=0.0,
                                     max_tokens=MAX_TOKENS, seed=0)
    seconds = time.monotonic() - started
    assert isinstance(out, dict)  # one response, not chunks: stream was not asked for
    tokens = int(out["usage"]["completion_tokens"])
    print(json.dumps({"answer": out["choices"][0]["message"]["content"] or "",
                      "tokens_per_s": round(tokens / seconds, 1) if seconds > 0 else None}), flush=True)
    return 0
