"""robots.txt as a crawl reads it: the group for our agent name, else the `*` group.

Python's `urllib.robotparser` applies a group's rules in file order (the first that matches the
path wins); `Allow` lines written before the broader `Disallow` they carve out, the usual style,
read as intended. A robots.txt that is missing or unreadable allows everything (the convention);
one over 512 KiB is cut there.
"""

from __future__ import annotations

from urllib.robotparser import RobotFileParser

AGENT = "OpenMono"
MAX_BYTES = 512 * 1024


class Robots:
    def __init__(self, text: str | None) -> None:
        self._parser: RobotFileParser | None = None
        if text:
            parser = RobotFileParser()
            parser.parse(text[:MAX_BYTES].splitlines())
            self._parser = parser

    def allows(self, url: str) -> bool:
        if self._parser is None:
            return True
        return self._parser.can_fetch(AGENT, url)

    def sitemaps(self) -> list[str]:
        if self._parser is None:
            return []
        return list(self._parser.site_maps() or [])
