"""OpenMono scrape service: FastAPI over the Scrapling library (never name a package `scrapling`).

Modules: `app` (HTTP surface), `service` (one scrape, step by step), `fetcher` (pinned HTTP engine),
`browser` + `guardroute` (Chromium engine and its SSRF route), `stealthy` (Camoufox where
installed), `escalation` (when to use a browser), `content` + `decode` (bytes to text, via the
`extract` package), `page` (engine result, time budget), `errors`, `settings`.
"""

from openmono_scrape.app import create_app
from openmono_scrape.errors import ScrapeError
from openmono_scrape.service import ScrapeService
from openmono_scrape.settings import ScrapeSettings

__all__ = ["ScrapeError", "ScrapeService", "ScrapeSettings", "create_app"]
