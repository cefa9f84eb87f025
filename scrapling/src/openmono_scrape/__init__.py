"""OpenMono scrape service: FastAPI over the Scrapling library (never name a package `scrapling`).

Modules: `app` (HTTP surface), `statuses` (the one table of error statuses, for both APIs),
`service` (one scrape, step by step), `engines` (the pinned HTTP fetcher, the Chromium browser and
its SSRF guards, Camoufox where installed), `escalation` (when to use a browser), `content` +
`decode` (bytes to text, via the `extract` package and `pdf`), `page` (engine result, time
budget), `firecrawl` (the Firecrawl-compatible routes), `errors`, `settings`.
"""

from openmono_scrape.app import create_app
from openmono_scrape.errors import ScrapeError
from openmono_scrape.service import ScrapeService
from openmono_scrape.settings import ScrapeSettings

__all__ = ["ScrapeError", "ScrapeService", "ScrapeSettings", "create_app"]
