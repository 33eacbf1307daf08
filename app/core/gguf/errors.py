"""The one exception the GGUF reader raises: a file that cannot be read as GGUF, said in plain words."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.problem import UserError


@dataclass
class GGUFError(UserError):
    """A file that is not readable as GGUF.

    ``check_id`` names the check this failure belongs to (``magic``, ``version``, ``structure``,
    ``truncation``, ``path``) so the validator can turn it into a :class:`~app.core.problem.Check`;
    ``offset`` is the byte position where reading stopped, when known.
    """

    check_id: str = "structure"
    offset: int | None = None
