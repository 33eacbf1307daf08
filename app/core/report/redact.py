"""What never leaves the machine in a diagnostics report: secrets, the user's name and home folder, the host name.

``Redactor.text()`` rewrites any text; ``Redactor.value()`` a JSON-like value (dict keys that name a secret lose
their value whatever it is). Rules, in order:
1. secret values known to the app (API keys in settings and profiles, values of environment variables whose name
   says KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL) are replaced wherever they appear;
2. secrets by their shape: ``--api-key X`` / ``--api_key X`` / ``--api-key-file X`` (also as list items),
   ``Authorization: Bearer X``, ``api_key=X`` / ``"hf_token": "X"``, Hugging Face (``hf_…``), OpenAI-style
   (``sk-…``) and GitHub (``ghp_…``) tokens;
3. the home folder becomes ``~``, then the user name (where no letter touches it: also ``alice_models``) ``<user>``;
4. the host name becomes ``<host>`` unless the user keeps host names.
"""

from __future__ import annotations

import getpass
import logging
import os
import re
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

SECRET = "<secret>"
USER = "<user>"
HOST = "<host>"
MIN_SECRET_LENGTH = 4  # shorter values ("1", "on") are no secrets and would wreck the text if replaced
MIN_USER_NAME = 3  # a shorter one ("pi") would hit ordinary words; its home folder is still replaced
MIN_ENVIRONMENT_SECRET = 8  # an environment value replaced everywhere it appears must be long enough to be one

# a dict key or environment variable that holds a secret: the whole name, or its last part, is the secret's word
# ("api_key", "HF_TOKEN", "password"), so "max_tokens" or "tokenizer.ggml.tokens" keep their values
SECRET_NAME = re.compile(
    r"(?i)^(?:[\w.-]*[_.-])?(?:api[_-]?key|token|secret|password|passwd|authorization|cookie|credentials?)$")
_ENVIRONMENT_SECRET = re.compile(r"(?i)(key|token|secret|password|passwd|credential)")
_KEY_WORD = r"(?:api[_-]?key|[\w.-]*[_-]token|secret|password|passwd)"
# the flag's value after a space, "=", or as the next item of a JSON / Python list of arguments ("--api-key", "X")
_FLAG_VALUE = re.compile(
    r"(?i)(--api[-_]key(?:[-_]file)?|--hf[-_]token|-hft)(\s+|=|[\"']\s*,\s*[\"'])(\"[^\"]*\"|'[^']*'|[^\s\"']+)")
_BEARER = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{6,}")
_ASSIGNMENT = re.compile(
    rf"(?i)([\"']?\b[\w.-]*{_KEY_WORD}[\"']?\s*[:=]\s*)(\"[^\"]*\"|'[^']*'|(?=[^\s,;}}]*[A-Za-z])[^\s,;}}\"']+)")
_TOKEN_SHAPES = re.compile(r"\b(?:hf_[A-Za-z0-9]{16,}|sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,})\b")


def _environment_secrets(environ: Mapping[str, str]) -> list[str]:
    """Values of variables named like a secret (HF_TOKEN, OPENAI_API_KEY); paths (SSH_AUTH_SOCK) are none."""
    return [value for name, value in environ.items()
            if _ENVIRONMENT_SECRET.search(name) and len(value) >= MIN_ENVIRONMENT_SECRET and os.sep not in value
            and "/" not in value]


@dataclass
class Redactor:
    home: str = ""
    user: str = ""
    host: str = ""
    secrets: list[str] = field(default_factory=list)
    keep_host: bool = False

    @classmethod
    def for_this_machine(cls, secrets: Iterable[str | None] = (), *, keep_host: bool = False,
                         environ: Mapping[str, str] | None = None) -> Redactor:
        environ = os.environ if environ is None else environ
        try:
            user = getpass.getuser()
        except (OSError, KeyError) as error:  # no user name for this uid (a container): nothing to hide
            logger.debug("no user name: %s", error)
            user = ""
        known = [s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH] + _environment_secrets(environ)
        return cls(home=str(Path.home()), user=user, host=socket.gethostname(), secrets=known, keep_host=keep_host)

    def text(self, text: str) -> str:
        for secret in sorted(set(self.secrets), key=len, reverse=True):
            text = text.replace(secret, SECRET)
        text = _FLAG_VALUE.sub(lambda m: f"{m[1]}{m[2]}{SECRET}", text)
        text = _BEARER.sub(lambda m: f"{m[1]} {SECRET}", text)
        text = _ASSIGNMENT.sub(lambda m: m[1] + (f'"{SECRET}"' if m[2][:1] in "\"'" else SECRET), text)
        text = _TOKEN_SHAPES.sub(SECRET, text)
        text = self._places(text)
        if self.host and not self.keep_host and len(self.host) >= 2:
            text = re.sub(rf"(?i)\b{re.escape(self.host)}\b", HOST, text)
        return text

    def _places(self, text: str) -> str:
        for home in {self.home, self.home.replace("\\", "/"), self.home.replace("/", "\\")}:
            if len(home) > 1:
                text = text.replace(home, "~")
        if len(self.user) >= MIN_USER_NAME:  # bounded by non-letters: "alice_models" too, not "malice"
            text = re.sub(rf"(?<![A-Za-z]){re.escape(self.user)}(?![A-Za-z])", USER, text)
        return text

    def value(self, value: Any) -> Any:
        """A JSON-like value, redacted: keys that name a secret keep the key and lose their text value (numbers,
        such as a plan's ``kv_bytes_per_token``, are no secrets)."""
        if isinstance(value, Mapping):
            return {self.text(str(k)): (SECRET if SECRET_NAME.match(str(k)) and isinstance(v, str) and v
                                        else self.value(v)) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(item) for item in value]
        if isinstance(value, str):
            return self.text(value)
        return value
