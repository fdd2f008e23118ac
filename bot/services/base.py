"""What every service shares: the :class:`Context` it is built on and the :class:`Notice` result."""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot import render
from retrieval.models import Paper

if TYPE_CHECKING:
    from bot.engine import Engine
    from bot.settings import Settings


@dataclass
class Context:
    """The bot's settings, serving engine and store: everything a service may use."""

    settings: Settings
    engine: Engine
    store: Any  # bot.store.Store (one interface, whichever database backs it)
    started_at: dt.datetime
    _closed: bool = False

    def paper(self, paper_id: str) -> Paper:
        """The corpus paper with this id (surrounding spaces ignored); raises UnknownPaperError."""
        return self.engine.require(paper_id)

    def title(self, paper_id: str, fallback: str | None = None) -> str:
        """``**Title** (`id`)`` for messages: the corpus title, else ``fallback``, else the id."""
        paper = self.engine.get(paper_id)
        return render.named((paper.title if paper is not None else fallback or "").strip(), paper_id)

    async def close(self) -> None:
        """Stop following the shared index, then close the store, once."""
        if not self._closed:
            self._closed = True
            try:
                await self.engine.close()
            finally:
                await self.store.close()


@dataclass(frozen=True)
class Notice:
    """A sentence to show the user (privately), and nothing else.

    Attributes:
        text: Discord markdown; the console renders it as terminal text.
        public: True when it may be shown to the channel (most notices are only for the user).
    """

    text: str
    public: bool = False


@dataclass(frozen=True)
class Suggestion:
    """One autocomplete suggestion: what to show, and the value it fills in."""

    label: str
    value: str


@dataclass(frozen=True)
class Confirmation:
    """A destructive action that waits for the user's yes.

    Attributes:
        question: What will happen, asked before anything is changed.
        confirm: Does it; returns the sentence that replaces the question.
        cancelled: Shown when the user says no.
        expired: Shown when nobody answered in time.
    """

    question: str
    confirm: Callable[[], Awaitable[str]]
    cancelled: str = "Cancelled — nothing was deleted."
    expired: str = "No answer in time — nothing was deleted."
