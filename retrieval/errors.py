"""Errors raised by the retrieval library; each carries a message fit to show a user."""

from __future__ import annotations


class RetrievalError(Exception):
    """Base class of every error the retrieval library raises on purpose."""


class CorpusError(RetrievalError, ValueError):
    """The corpus path cannot be read at all (missing, empty, no parseable paper)."""


class QueryError(RetrievalError, ValueError):
    """A malformed query. ``position`` is the 0-based character offset of the problem, if known;
    ``example`` a corrected query to suggest, if one can be made. The message says it in words, with
    1-based character numbers (what a person counts)."""

    def __init__(self, message: str, position: int | None = None, example: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.position = position
        self.example = example

    def __str__(self) -> str:
        """The message, then the corrected example on the same line (for the command line)."""
        return f"{self.message} Try: {self.example}" if self.example else self.message


class EmptyQueryError(QueryError):
    """The query has no searchable word (empty, only stopwords or punctuation)."""


class UnknownPaperError(RetrievalError, KeyError):
    """No paper has the given id."""

    def __init__(self, paper_id: str) -> None:
        super().__init__(paper_id)
        self.paper_id = paper_id

    def __str__(self) -> str:
        return f"no paper has the id {self.paper_id!r}"
