"""Errors of the annotation commands: one line a reviewer or maintainer can act on."""

from __future__ import annotations

from sources.errors import MirageError


class AnnotationError(MirageError):
    """A user-facing failure of ``python -m annotation`` (bad build dir, bad option, server trouble)."""


class ServerError(AnnotationError):
    """Label Studio could not be reached or answered with an error.

    ``status`` is the HTTP status (``None`` when no answer came back at all).
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)
