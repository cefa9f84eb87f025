"""What a search produced, whichever path answered: the hits, and who answered why."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SearchHit:
    """One result: where it points and what the engine said about it."""

    title: str
    url: str
    snippet: str = ""
    engines: tuple[str, ...] = ()


@dataclass(frozen=True)
class SearchPage:
    """A normalised answer: hits in rank order, plus what the engines said besides."""

    hits: list[SearchHit]
    unresponsive_engines: list[str] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
